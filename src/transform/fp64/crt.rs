//! Recombination of the FP64 arithmetic's two residues (a [`Pair`] P1, P2): the integer c with
//! |c| ≤ (M − 1)/2, M = P1·P2, from any integers x1 ≡ c (mod P1), x2 ≡ c (mod P2), |x1|, |x2| <
//! 2^53 (Garner with balanced digits). a = center_P1(x1) and t = center_P2((x2 − a)·P1^(−1)) lie
//! in [−(P − 1)/2, (P − 1)/2], and c = a + P1·t: every integer of [−(M − 1)/2, (M − 1)/2] is one
//! such pair, so c needs no correction. The product (x2' − a)·P1^(−1) is [`Fp64::mul`]
//! with |x2' − a| ≤ (P2 + 1)/2 + (P1 − 1)/2 and |P1^(−1)| ≤ (P2 − 1)/2: within 2^50·P2 as
//! P1 + P2 ≤ 2^52 (both pairs; primes.rs checks it). The GPU does the same steps in f64, then
//! a + P1·t in 64-bit integers.

use super::field::Fp64;
use super::primes::{pow_mod, Pair};

/// The two fields of a pair and P1^(−1) mod P2 (centered).
#[derive(Clone, Copy, Debug)]
pub struct Crt {
    pub f1: Fp64,
    pub f2: Fp64,
    pub inv: f64,
}

impl Crt {
    pub fn new(pair: &Pair) -> Crt {
        let [p1, p2] = pair.primes.map(|pr| pr.p);
        let f2 = Fp64::new(p2);
        let inv = pow_mod(p1 % p2, p2 - 2, p2);
        Crt { f1: Fp64::new(p1), f2, inv: f2.from_i64(inv as i64) }
    }

    /// The balanced digits (a, t) of c = a + P1·t: the f64 steps the GPU shares.
    #[inline]
    pub fn digits(&self, x1: f64, x2: f64) -> (f64, f64) {
        let a = self.f1.center(x1);
        let d = self.f2.sub(self.f2.reduce(x2), a);
        (a, self.f2.center(self.f2.mul(d, self.inv)))
    }

    /// c with c ≡ x1 (mod P1), c ≡ x2 (mod P2), |c| ≤ (P1·P2 − 1)/2.
    pub fn recombine(&self, x1: f64, x2: f64) -> i128 {
        let (a, t) = self.digits(x1, x2);
        a as i128 + i128::from(self.f1.modulus()) * t as i128
    }

    /// c mod P1 and c mod P2 as centered residues: what the two transforms compute.
    pub fn split(&self, c: i128) -> (f64, f64) {
        let r = |p: u64| {
            let r = c.rem_euclid(i128::from(p)) as i64;
            (if r > (p / 2) as i64 { r - p as i64 } else { r }) as f64
        };
        (r(self.f1.modulus()), r(self.f2.modulus()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::primes::PAIRS;
    use super::*;
    use quickcheck::quickcheck;
    use rug::Integer;

    /// The reference: the centered representative of the CRT solution, by rug.
    fn reference(pair: &Pair, x1: i64, x2: i64) -> i128 {
        let (p1, p2) = (Integer::from(pair.primes[0].p), Integer::from(pair.primes[1].p));
        let m = Integer::from(&p1 * &p2);
        let inv = Integer::from(p1.invert_ref(&p2).unwrap());
        let t = ((Integer::from(x2) - x1) * inv).modulo(&p2);
        let c = (t * &p1 + x1).modulo(&m);
        let c = if c > Integer::from(&m >> 1) { c - m } else { c };
        c.to_i128().unwrap()
    }

    #[test]
    fn edges() {
        for pair in PAIRS {
            let crt = Crt::new(&pair);
            let m = pair.max_abs() as i128;
            let (p1, p2) = (pair.primes[0].p as i128, pair.primes[1].p as i128);
            let mut cs = vec![0, 1, -1, m, -m, m - 1, 1 - m, p1, -p1, p2, -p2, p1 * (p2 / 2), -p1 * (p2 / 2)];
            cs.extend([p1 * p2 / 2 - p1, (p1 / 2) + p1 * (p2 / 2), 1i128 << 88, -(1i128 << 88)]);
            for c in cs {
                let (x1, x2) = crt.split(c);
                assert_eq!(crt.recombine(x1, x2), c, "{c}");
                assert_eq!(reference(&pair, x1 as i64, x2 as i64), c, "{c}");
                // Any representatives below 2^53 (lazy values) give the same c.
                for (k1, k2) in [(1i64, -1i64), (-3, 5), ((1 << 53) / p1 as i64 - 1, -((1 << 53) / p2 as i64 - 1))] {
                    let (y1, y2) = (x1 + (k1 * p1 as i64) as f64, x2 + (k2 * p2 as i64) as f64);
                    if y1.abs() < 9.0e15 && y2.abs() < 9.0e15 {
                        assert_eq!(crt.recombine(y1, y2), c, "{c} via {y1}, {y2}");
                    }
                }
            }
            // Every pair of residues at the edges of both ranges.
            for a in [0i64, 1, 2, p1 as i64 / 2, -(p1 as i64 / 2), p1 as i64 - 1] {
                for b in [0i64, 1, 2, p2 as i64 / 2, -(p2 as i64 / 2), p2 as i64 - 1] {
                    assert_eq!(crt.recombine(a as f64, b as f64), reference(&pair, a, b), "{a} {b}");
                }
            }
        }
    }

    quickcheck! {
        fn round_trip_over_the_centered_range(hi: i64, lo: u32, which: u8) -> bool {
            let pair = PAIRS[usize::from(which) % PAIRS.len()];
            let (crt, max) = (Crt::new(&pair), pair.max_abs() as i128);
            let c = ((hi as i128) << 38) + i128::from(lo);
            let c = c.clamp(-max, max);
            let near_end = max - i128::from(lo);
            [c, near_end, -near_end].iter().all(|&c| {
                let (x1, x2) = crt.split(c);
                crt.recombine(x1, x2) == c
            })
        }

        fn any_residues_match_rug(x1: i64, x2: i64, which: u8) -> bool {
            let pair = PAIRS[usize::from(which) % PAIRS.len()];
            let (x1, x2) = (x1 >> 11, x2 >> 11); // any integers below 2^53
            Crt::new(&pair).recombine(x1 as f64, x2 as f64) == reference(&pair, x1, x2)
        }
    }
}
