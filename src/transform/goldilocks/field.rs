//! The Goldilocks prime field P = 2^64 − 2^32 + 1: one element type with `const fn` arithmetic
//! (128-bit products folded with 2^64 ≡ 2^32 − 1 and 2^96 ≡ −1), powers, inverses, the
//! primitive 2^k-th roots of unity and the n-th roots of 2 that the IBDWT weights are made of.
//! The CUDA kernels (kernels/goldilocks/field.cuh) transcribe exactly these formulas.

/// The modulus.
pub const P: u64 = 0xFFFF_FFFF_0000_0001;
/// 2^64 − P = 2^32 − 1.
const EPSILON: u64 = 0xFFFF_FFFF;
/// 7 generates the multiplicative group (order P − 1 = 2^32·3·5·17·257·65537).
const GENERATOR: u64 = 7;
/// The largest k with 2^k | P − 1.
pub const TWO_ADICITY: u32 = 32;
/// The largest k for which 2^(1/2^k) exists: 2 has order 192 = 2^6·3, so 2 = h^u with h of
/// order 192, and a 2^k-th root of it exists while 2^k divides (P − 1)/192 = 2^26·…
pub const MAX_ROOT_OF_TWO_LOG: u32 = 26;

/// A canonical element of GF(P): the wrapped value is always < P.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Gl(u64);

impl std::fmt::Debug for Gl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gl({})", self.0)
    }
}

impl Gl {
    pub const ZERO: Gl = Gl(0);
    pub const ONE: Gl = Gl(1);

    /// The element v mod P (any u64).
    pub const fn new(v: u64) -> Gl {
        Gl(if v >= P { v - P } else { v })
    }

    /// The canonical representative in [0, P).
    pub const fn value(self) -> u64 {
        self.0
    }

    /// A signed integer mod P.
    pub const fn from_i64(v: i64) -> Gl {
        if v >= 0 {
            Gl::new(v as u64)
        } else {
            Gl::new(v.unsigned_abs()).neg()
        }
    }

    /// The representative in (−P/2, P/2]: the signed integer this element stands for when it is
    /// known to be that small (convolution outputs, see plan.rs).
    pub const fn to_i64_centered(self) -> i64 {
        if self.0 > P / 2 {
            (self.0 as i64).wrapping_sub(P as i64)
        } else {
            self.0 as i64
        }
    }

    pub const fn add(self, o: Gl) -> Gl {
        let (s, carry) = self.0.overflowing_add(o.0);
        // With a carry the true sum is s + 2^64 ≡ s + EPSILON, and s + EPSILON < 2^64 then.
        let s = if carry { s + EPSILON } else { s };
        Gl(if s >= P { s - P } else { s })
    }

    pub const fn sub(self, o: Gl) -> Gl {
        let (d, borrow) = self.0.overflowing_sub(o.0);
        // With a borrow d = a − b + 2^64; a − b + P = d − EPSILON, which is ≥ 0.
        Gl(if borrow { d - EPSILON } else { d })
    }

    pub const fn neg(self) -> Gl {
        Gl(if self.0 == 0 { 0 } else { P - self.0 })
    }

    /// Fold a 128-bit value x = lo + 2^64·(hh·2^32 + hl) with 2^96 ≡ −1, 2^64 ≡ 2^32 − 1:
    /// x ≡ lo − hh + hl·(2^32 − 1).
    pub const fn reduce128(x: u128) -> Gl {
        let lo = x as u64;
        let hi = (x >> 64) as u64;
        let hh = hi >> 32;
        let hl = hi & EPSILON;
        let (t0, borrow) = lo.overflowing_sub(hh);
        // Borrow: t0 = lo − hh + 2^64; subtract 2^64 ≡ EPSILON (t0 ≥ 2^64 − 2^32 > EPSILON).
        let t0 = if borrow { t0 - EPSILON } else { t0 };
        let t1 = hl * EPSILON; // ≤ (2^32 − 1)^2 < 2^64
        let (s, carry) = t0.overflowing_add(t1);
        // Carry: s + 2^64 ≡ s + EPSILON, and s < 2^64 − 2^33 here so this cannot overflow.
        let s = if carry { s + EPSILON } else { s };
        Gl(if s >= P { s - P } else { s })
    }

    pub const fn mul(self, o: Gl) -> Gl {
        Gl::reduce128(self.0 as u128 * o.0 as u128)
    }

    pub const fn square(self) -> Gl {
        self.mul(self)
    }

    pub const fn pow(self, mut e: u64) -> Gl {
        let mut base = self;
        let mut acc = Gl::ONE;
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.mul(base);
            }
            base = base.square();
            e >>= 1;
        }
        acc
    }

    /// The multiplicative inverse (Fermat); `None` for zero.
    pub const fn inverse(self) -> Option<Gl> {
        if self.0 == 0 {
            None
        } else {
            Some(self.pow(P - 2))
        }
    }

    /// A primitive 2^k-th root of unity, k ≤ 32.
    pub const fn root_of_unity(k: u32) -> Option<Gl> {
        if k > TWO_ADICITY {
            return None;
        }
        Some(Gl(GENERATOR).pow((P - 1) >> k))
    }

    /// An element g with g^(2^k) = 2, k ≤ 26: the base of the IBDWT weights 2^(e/n) = g^e.
    pub const fn root_of_two(k: u32) -> Option<Gl> {
        if k > MAX_ROOT_OF_TWO_LOG {
            return None;
        }
        // h generates the subgroup of order 192, which holds 2; find u with h^u = 2.
        let order = (P - 1) / 192;
        let h = Gl(GENERATOR).pow(order);
        let mut u = 0u64;
        let mut hu = Gl::ONE;
        while u < 192 {
            if hu.0 == 2 {
                // g = 7^(u·order/2^k): then g^(2^k) = h^u = 2; 2^26 divides `order`.
                return Some(Gl(GENERATOR).pow(u * (order >> k)));
            }
            hu = hu.mul(h);
            u += 1;
        }
        None
    }
}

impl crate::transform::field::Field for Gl {
    const NAME: &'static str = "goldilocks";
    const MODULUS: u64 = P;
    const DEGREE: u32 = 1;
    const TWO_ADICITY: u32 = TWO_ADICITY;
    const ZERO: Gl = Gl::ZERO;
    const ONE: Gl = Gl::ONE;

    fn from_u64(v: u64) -> Gl {
        Gl::new(v)
    }
    fn add(self, o: Gl) -> Gl {
        Gl::add(self, o)
    }
    fn sub(self, o: Gl) -> Gl {
        Gl::sub(self, o)
    }
    fn neg(self) -> Gl {
        Gl::neg(self)
    }
    fn mul(self, o: Gl) -> Gl {
        Gl::mul(self, o)
    }
    fn inverse(self) -> Option<Gl> {
        Gl::inverse(self)
    }
    fn root_of_unity(k: u32) -> Option<Gl> {
        Gl::root_of_unity(k)
    }
    /// 3 divides P − 1: 7^((P − 1)/3).
    fn cube_root_of_unity() -> Option<Gl> {
        Some(Gl(GENERATOR).pow((P - 1) / 3))
    }
    /// 2 has order 192: x·2^k = x·2^(k mod 192), and for a shift below 64 one 128-bit product.
    fn mul_pow2(self, k: u32) -> Gl {
        match k % 192 {
            s @ 0..64 => Gl::reduce128((self.0 as u128) << s),
            s => Gl::mul(self, Gl::new(2).pow(u64::from(s))),
        }
    }
}

/// Words at the edges of the field's branches: around 0, EPSILON, 2^32, 2^63, P and 2^64 (words
/// P .. 2^64 − 1 included: `Gl::new` and products take any u64), for the tests here and for
/// `gpu-selftest kernels`, which checks the device's field operations on every pair of them.
pub fn edge_words() -> Vec<u64> {
    let mut v = vec![0, 1, 2, 3, EPSILON - 1, EPSILON, EPSILON + 1, 1 << 32, (1 << 32) + 1, 1 << 63];
    v.extend([P - 2, P - 1, P, P + 1, (P - 1) / 2, P / 2 + 1, P + EPSILON / 2, u64::MAX, u64::MAX - 1]);
    v.extend([u64::MAX - EPSILON, 0xFFFF_FFFE_FFFF_FFFF, P - EPSILON, P - (1 << 32), 0x8000_0000_7FFF_FFFF]);
    v.extend([0x1234_5678_9ABC_DEF0, 0xFFFF_FFFF_7FFF_FFFF]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    const PP: u128 = P as u128;

    #[test]
    fn edge_cases_against_u128() {
        let vals = edge_words();
        for &a in &vals {
            for &b in &vals {
                let (x, y) = (Gl::new(a), Gl::new(b));
                let (ac, bc) = (a as u128 % PP, b as u128 % PP);
                assert_eq!(x.add(y).value() as u128, (ac + bc) % PP, "{a}+{b}");
                assert_eq!(x.sub(y).value() as u128, (ac + PP - bc) % PP, "{a}-{b}");
                assert_eq!(x.mul(y).value() as u128, ac * bc % PP, "{a}*{b}");
            }
        }
    }

    #[test]
    fn field_trait_on_edge_words() {
        use crate::transform::field::{laws_hold, Field};
        let vals = edge_words();
        for (i, &a) in vals.iter().enumerate() {
            for &b in &vals {
                let c = vals[(i * 7 + 3) % vals.len()];
                assert!(laws_hold(Gl::new(a), Gl::new(b), Gl::new(c), (a ^ b) as u32), "{a} {b} {c}");
            }
            // The shift against u128 at every count of one period of 2 (order 192).
            for k in 0..200u32 {
                let want = (a as u128 % PP) * (1u128 << (k % 192 % 64)) % PP;
                let want = (0..(k % 192) / 64).fold(want, |w, _| w * (1u128 << 64) % PP);
                assert_eq!(Field::mul_pow2(Gl::new(a), k).value() as u128, want, "{a}·2^{k}");
            }
        }
        assert_eq!(<Gl as Field>::LAZY_SUMS, 1);
    }

    #[test]
    fn reduce128_extremes() {
        for x in [0u128, u128::MAX, (PP - 1) * (PP - 1), PP * PP, 1u128 << 96, (1u128 << 96) - 1, PP << 64] {
            assert_eq!(Gl::reduce128(x).value() as u128, x % PP, "{x}");
        }
    }

    #[test]
    fn roots() {
        for k in 0..=TWO_ADICITY {
            let w = Gl::root_of_unity(k).unwrap();
            assert_eq!(w.pow(1 << k), Gl::ONE);
            if k > 0 {
                assert_eq!(w.pow(1 << (k - 1)), Gl::ONE.neg(), "k={k} not primitive");
            }
        }
        assert!(Gl::root_of_unity(33).is_none());
        for k in 0..=MAX_ROOT_OF_TWO_LOG {
            assert_eq!(Gl::root_of_two(k).unwrap().pow(1 << k), Gl::new(2), "k={k}");
        }
        assert!(Gl::root_of_two(27).is_none());
        // 8 is a primitive 64th root of unity, 2 has order 192.
        assert_eq!(Gl::new(8).pow(32), Gl::ONE.neg());
        assert_eq!(Gl::new(2).pow(96), Gl::ONE.neg());
    }

    #[test]
    fn signed_round_trip() {
        for v in [0i64, 1, -1, i64::MAX / 2, -(i64::MAX / 2), (P / 2) as i64, -((P / 2) as i64)] {
            assert_eq!(Gl::from_i64(v).to_i64_centered(), v);
        }
        assert_eq!(Gl::from_i64(i64::MIN).value() as u128, (PP - (1u128 << 63)) % PP);
        assert!(Gl::ZERO.inverse().is_none());
    }

    quickcheck! {
        fn add_sub_mul_match_u128(a: u64, b: u64) -> bool {
            let (x, y) = (Gl::new(a), Gl::new(b));
            let (ac, bc) = (a as u128 % PP, b as u128 % PP);
            x.add(y).value() as u128 == (ac + bc) % PP
                && x.sub(y).value() as u128 == (ac + PP - bc) % PP
                && x.mul(y).value() as u128 == ac * bc % PP
                && x.neg().add(x) == Gl::ZERO
        }

        fn field_laws(a: u64, b: u64, c: u64, k: u32) -> bool {
            crate::transform::field::laws_hold(Gl::new(a), Gl::new(b), Gl::new(c), k)
        }

        fn reduce128_matches(x: u128) -> bool {
            Gl::reduce128(x).value() as u128 == x % PP
        }

        fn inverse_and_pow(a: u64, e: u16) -> bool {
            let x = Gl::new(a);
            let mut naive = Gl::ONE;
            for _ in 0..e { naive = naive.mul(x); }
            x.pow(e as u64) == naive && (x == Gl::ZERO || x.mul(x.inverse().unwrap()) == Gl::ONE)
        }
    }
}
