//! GF(p) on the FP64 units: residues are integers held in `f64`s (signed, not canonical), and the
//! product a·b mod p is six IEEE-754 operations, each exact or correctly rounded
//! (h = a·b; l = fma(a, b, −h); q = round(h·(1/p)); r = fma(−q, p, h) + l). The GPU kernels
//! (kernels/fp64/) run the same operations in the same order, so both give the same bits.
//!
//! The ranges (docs/arithmetic.md, section "FP64", "The product and its ranges", has the proof):
//! - every value is an integer with |x| < 2^53, so it is exact in an `f64`; a sum or difference
//!   is exact while its result stays below 2^53 ([`Fp64::add`], [`Fp64::sub`]);
//! - [`Fp64::mul`] takes |a|·|b| ≤ 2^50·p and returns r ≡ a·b (mod p) with |r| ≤ 3p/4;
//! - [`Fp64::reduce`] takes any |x| < 2^53 and returns r ≡ x with |r| ≤ (p + 1)/2;
//!   [`Fp64::center`] returns the unique r ≡ x with |r| ≤ (p − 1)/2.
//!
//! The rounding of q to the nearest integer uses ROUND = 1.5·2^52: for |y| ≤ 2^51, y + ROUND lies
//! in [2^52, 2^53], where the doubles are the integers, so fma(h, 1/p, ROUND) − ROUND is h·(1/p)
//! rounded to an integer (once, inside the fma) and the subtraction is exact (Sterbenz).

/// 1.5·2^52: adding it to |y| ≤ 2^51 and subtracting it again rounds y to an integer.
pub const ROUND: f64 = 6_755_399_441_055_744.0;
/// Integers of magnitude below this are exact in an f64 (and so is every sum that stays below it).
pub const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
/// The product's precondition |a|·|b| ≤ MUL_SPAN·p.
pub const MUL_SPAN: f64 = 1_125_899_906_842_624.0; // 2^50
/// The largest prime the arithmetic takes: below it a reduced value (|x| ≤ (p + 1)/2) squares
/// within the product's precondition ((p + 1)²/4 ≤ 2^50·p).
pub const MAX_PRIME: u64 = (1 << 52) - 1;

/// GF(p) for an odd prime p < 2^52, with the two constants its product uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fp64 {
    p: f64,
    /// fl(1/p): 1/p·(1 + δ), |δ| ≤ 2^−53.
    pinv: f64,
}

impl Fp64 {
    /// The field of p (an odd prime below [`MAX_PRIME`]; primality is the caller's: the primes
    /// are fixed in [`super::primes`] and checked there).
    pub fn new(p: u64) -> Fp64 {
        assert!(p % 2 == 1 && p > 2 && p <= MAX_PRIME, "FP64 prime {p} outside 3..2^52");
        let p = p as f64;
        Fp64 { p, pinv: 1.0 / p }
    }

    pub fn modulus(&self) -> u64 {
        self.p as u64
    }

    /// p as an f64 (exact).
    pub fn p(&self) -> f64 {
        self.p
    }

    /// fl(1/p), as the kernels take it.
    pub fn pinv(&self) -> f64 {
        self.pinv
    }

    /// r ≡ a·b (mod p), |r| ≤ 3p/4, for integers with |a|·|b| ≤ 2^50·p. h = fl(a·b) is an integer
    /// with |h| ≤ 2^50·p, l = a·b − h exactly (|l| ≤ ulp(h)/2 ≤ |h|·2^−53 ≤ p/8), q = round(h/p·(1 + δ))
    /// is within 1/2 + 2^50·2^−53 = 5/8 of h/p, so |h − q·p| ≤ 5p/8 is an integer that the fma
    /// returns exactly, and r = (h − q·p) + l is the exact sum: |r| ≤ 5p/8 + p/8.
    #[inline]
    pub fn mul(&self, a: f64, b: f64) -> f64 {
        debug_assert!((a * b).abs() <= MUL_SPAN * self.p, "FP64 product {a}·{b} beyond 2^50·p");
        let h = a * b;
        let l = a.mul_add(b, -h);
        let q = h.mul_add(self.pinv, ROUND) - ROUND;
        (-q).mul_add(self.p, h) + l
    }

    /// a² mod p: [`Fp64::mul`] of a by itself (|a| ≤ 2^25·√p).
    #[inline]
    pub fn square(&self, a: f64) -> f64 {
        self.mul(a, a)
    }

    /// a + b, exact (no reduction): the caller keeps |a + b| < 2^53 (the lazy schedule).
    #[inline]
    pub fn add(&self, a: f64, b: f64) -> f64 {
        debug_assert!((a + b).abs() < EXACT, "FP64 sum {a} + {b} beyond 2^53");
        a + b
    }

    /// a − b, exact while |a − b| < 2^53.
    #[inline]
    pub fn sub(&self, a: f64, b: f64) -> f64 {
        debug_assert!((a - b).abs() < EXACT, "FP64 difference {a} − {b} beyond 2^53");
        a - b
    }

    /// r ≡ x (mod p), |r| ≤ (p + 1)/2, for an integer |x| < 2^53: q = round(x·(1/p)) is within
    /// 1/2 + 2^53·2^−53/p of x/p, so |x − q·p| ≤ p/2 + 1, an integer, and p odd makes it ≤ (p + 1)/2.
    /// Two operations (an fma and a subtraction for q, an fma for r).
    #[inline]
    pub fn reduce(&self, x: f64) -> f64 {
        debug_assert!(x.abs() < EXACT, "FP64 value {x} beyond 2^53");
        let q = x.mul_add(self.pinv, ROUND) - ROUND;
        (-q).mul_add(self.p, x)
    }

    /// The unique r ≡ x (mod p) with |r| ≤ (p − 1)/2 ([`Fp64::reduce`] and one select:
    /// reduce leaves ±(p + 1)/2 at most).
    #[inline]
    pub fn center(&self, x: f64) -> f64 {
        let r = self.reduce(x);
        let half = (self.p - 1.0) * 0.5;
        if r > half {
            r - self.p
        } else if r < -half {
            r + self.p
        } else {
            r
        }
    }

    /// The canonical representative in [0, p) of an integer |x| < 2^53.
    pub fn canonical(&self, x: f64) -> u64 {
        let r = self.center(x);
        if r < 0.0 {
            (r + self.p) as u64
        } else {
            r as u64
        }
    }

    /// v mod p as the centered residue (|r| ≤ (p − 1)/2), for any i64.
    pub fn from_i64(&self, v: i64) -> f64 {
        let p = self.modulus() as i64;
        let r = v.rem_euclid(p);
        (if r > p / 2 { r - p } else { r }) as f64
    }

    /// Radix-2 decimation in frequency: (x, y) → (x + y, (x − y)·w). The sum is exact and not
    /// reduced; the product needs |x − y|·|w| ≤ 2^50·p.
    #[inline]
    pub fn dif(&self, x: f64, y: f64, w: f64) -> (f64, f64) {
        (self.add(x, y), self.mul(self.sub(x, y), w))
    }

    /// The butterfly of either direction by the twiddle ω^0 = 1, without the product: (x + y,
    /// x − y), neither reduced.
    #[inline]
    pub fn sum_diff(&self, x: f64, y: f64) -> (f64, f64) {
        (self.add(x, y), self.sub(x, y))
    }

    /// Radix-2 decimation in time: (x, y) → (x + y·w, x − y·w), t = y·w reduced (|t| ≤ 3p/4),
    /// the sum and difference not.
    #[inline]
    pub fn dit(&self, x: f64, y: f64, w: f64) -> (f64, f64) {
        let t = self.mul(y, w);
        (self.add(x, t), self.sub(x, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::fp64::primes::{pow_mod, PRIMES};
    use quickcheck::quickcheck;
    use rug::Integer;

    /// a·b mod p (canonical) by u128.
    fn mul_ref(p: u64, a: i64, b: i64) -> u64 {
        let prod = i128::from(a) * i128::from(b);
        prod.rem_euclid(i128::from(p)) as u64
    }

    fn check_mul(f: &Fp64, a: i64, b: i64) {
        let p = f.modulus();
        let r = f.mul(a as f64, b as f64);
        assert_eq!(r.fract(), 0.0, "p={p} a={a} b={b}: {r} is no integer");
        assert!(r.abs() <= 0.75 * p as f64, "p={p} a={a} b={b}: |{r}| > 3p/4");
        assert_eq!(f.canonical(r), mul_ref(p, a, b), "p={p} a={a} b={b}");
    }

    /// The largest |a| with a² ≤ 2^50·p, and the largest b with a·b ≤ 2^50·p for a given a.
    fn square_edge(p: u64) -> i64 {
        (Integer::from(p) << 50u32).sqrt().to_i64().unwrap()
    }

    fn partner_edge(p: u64, a: i64) -> i64 {
        ((u128::from(p) << 50) / a.unsigned_abs() as u128).min((1 << 53) - 1) as i64
    }

    /// Products whose h/p lies next to a half-integer, where q's rounding can go either way:
    /// a large, b ≡ ((p ± 1)/2 + d)·a^(−1) (mod p) centered, so a·b ≡ (p ± 1)/2 + d.
    fn half_way_products(p: u64) -> Vec<(i64, i64)> {
        let sq = square_edge(p);
        let mut v = Vec::new();
        for a in [sq, sq - 1, sq / 2 + 1, (1 << 40) + 1, 3, p as i64 - 2] {
            let inv = pow_mod(a.rem_euclid(p as i64) as u64, p - 2, p);
            for d in -3i64..=3 {
                let t = ((p / 2) as i64 + d).rem_euclid(p as i64) as u64;
                let b = (u128::from(t) * u128::from(inv) % u128::from(p)) as i64;
                let b = if b > (p / 2) as i64 { b - p as i64 } else { b };
                if (a as i128 * b as i128).unsigned_abs() <= u128::from(p) << 50 {
                    v.extend([(a, b), (-a, b)]);
                }
            }
        }
        v
    }

    #[test]
    fn products_at_the_edges() {
        for prime in PRIMES {
            let f = Fp64::new(prime.p);
            let p = prime.p as i64;
            let sq = square_edge(prime.p);
            let mut pairs = vec![(sq, sq), (-sq, sq), (sq, -sq), (-sq, -sq), (sq - 1, sq), (0, sq), (1, 1), (p, p)];
            for a in [1i64, 2, 3, p / 2, p - 1, p, p + 1, 2 * p, 3 * p / 4, sq / 3, sq, 1 << 51, (1 << 52) - 1] {
                let b = partner_edge(prime.p, a);
                pairs.extend([(a, b), (-a, b), (a, -b), (-a, -b), (a, b - 1), (a, b / 2)]);
            }
            pairs.extend(half_way_products(prime.p));
            for (a, b) in pairs {
                check_mul(&f, a, b);
            }
        }
    }

    #[test]
    fn reduce_and_center_at_the_edges() {
        for prime in PRIMES {
            let f = Fp64::new(prime.p);
            let p = prime.p as i64;
            let top = (1i64 << 53) - 1;
            let mut xs = vec![0, 1, -1, p, -p, p / 2, p / 2 + 1, -(p / 2) - 1, top, -top, top - p / 2];
            for k in [1i64, 2, 3, top / p / 2, top / p - 1] {
                for d in -2..=2 {
                    xs.extend([k * p + p / 2 + d, -(k * p + p / 2 + d), k * p + d]);
                }
            }
            for x in xs {
                let r = f.reduce(x as f64);
                assert!(r.abs() <= (p + 1).div_euclid(2) as f64, "p={p} x={x}: {r}");
                assert_eq!((r as i64 - x).rem_euclid(p), 0, "p={p} x={x}: {r}");
                let c = f.center(x as f64);
                assert!(c.abs() <= ((p - 1) / 2) as f64 && (c as i64 - x).rem_euclid(p) == 0, "{x}: {c}");
                assert_eq!(f.from_i64(x), c, "{x}");
            }
        }
    }

    /// q = round(h·fl(1/p)) can differ by one from the integer nearest h/p where h/p is next to
    /// a half-integer; the bound |r| ≤ 3p/4 covers it. Count such products among the half-way
    /// ones and products near the top of the span, to show the tests reach that case.
    #[test]
    fn rounding_of_q_can_be_off_by_one_and_is_harmless() {
        let mut off = 0;
        for prime in PRIMES {
            let f = Fp64::new(prime.p);
            let sq = square_edge(prime.p);
            let mut pairs = half_way_products(prime.p);
            pairs.extend((0..20_000i64).map(|i| (sq - i * 7919, sq - i * 104_729)));
            for (a, b) in pairs {
                let h = (a as f64) * (b as f64);
                let q = h.mul_add(f.pinv(), ROUND) - ROUND;
                // ⌊h/p + 1/2⌋ = ⌊(2h + p)/(2p)⌋
                let nearest = (2 * h as i128 + prime.p as i128).div_euclid(2 * prime.p as i128);
                off += usize::from(q as i128 != nearest);
                check_mul(&f, a, b);
            }
        }
        println!("q differed from the integer nearest h/p in {off} products");
        assert!(off > 0, "no product reached the rounding case");
    }

    quickcheck! {
        fn product_matches_u128(a: i64, b: i64, which: u8) -> bool {
            let prime = PRIMES[which as usize % PRIMES.len()];
            let f = Fp64::new(prime.p);
            // Scale the inputs into the span |a|·|b| ≤ 2^50·p: a to at most the square edge, b
            // to at most a's partner edge.
            let sq = square_edge(prime.p);
            let a = a % sq;
            let a = if a == 0 { 1 } else { a };
            let edge = partner_edge(prime.p, a);
            let b = b % edge;
            let r = f.mul(a as f64, b as f64);
            r.abs() <= 0.75 * prime.p as f64 && f.canonical(r) == mul_ref(prime.p, a, b)
        }

        fn reduce_matches(x: i64, which: u8) -> bool {
            let prime = PRIMES[which as usize % PRIMES.len()];
            let f = Fp64::new(prime.p);
            let x = x >> 11; // |x| < 2^53
            let r = f.reduce(x as f64);
            r.abs() <= prime.p.div_ceil(2) as f64 && (r as i64 - x).rem_euclid(prime.p as i64) == 0
        }

        fn butterflies_match(x: i64, y: i64, w: i64, which: u8) -> bool {
            let prime = PRIMES[which as usize % PRIMES.len()];
            let f = Fp64::new(prime.p);
            let p = prime.p as i64;
            let (x, y, w) = (x % p, y % p, f.from_i64(w));
            let m = |v: i128| v.rem_euclid(i128::from(p)) as u64;
            let (s, d) = f.dif(x as f64, y as f64, w);
            let dif_ok = f.canonical(s) == m(i128::from(x + y))
                && f.canonical(d) == m((i128::from(x - y)) * w as i128);
            let (a, b) = f.dit(x as f64, y as f64, w);
            let t = i128::from(y) * w as i128;
            dif_ok && f.canonical(a) == m(i128::from(x) + t) && f.canonical(b) == m(i128::from(x) - t)
        }
    }
}
