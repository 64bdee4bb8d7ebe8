//! The Mersenne prime base fields GF(2^q − 1) as GF(p²) ([`super::gfp2`]) and the transform
//! need them: the [`Mersenne`] trait that [`super::m61::M61`] and [`super::m31::M31`] implement,
//! the macro that gives both their [`Field`] impl, and the checks both fields' tests share.

use crate::transform::field::Field;

/// [`Field`] for a Mersenne prime field type `$t` (M61, M31) from its inherent `const fn`s
/// (`new`, `add`, `sub`, `neg`, `mul`, `inverse`, `mul_pow2`, `ZERO`, `ONE`): one impl for both.
/// M_q − 1 = 2·(2^(q−1) − 1), so the only 2-power roots of unity are ±1.
macro_rules! impl_base_field {
    ($t:ident, name: $name:literal, modulus: $m:expr, cube_root: $c:expr) => {
        impl $crate::transform::field::Field for $t {
            const NAME: &'static str = $name;
            const MODULUS: u64 = $m;
            const DEGREE: u32 = 1;
            const TWO_ADICITY: u32 = 1;
            const ZERO: $t = $t::ZERO;
            const ONE: $t = $t::ONE;

            fn from_u64(v: u64) -> $t {
                $t::new(v)
            }
            fn add(self, o: $t) -> $t {
                $t::add(self, o)
            }
            fn sub(self, o: $t) -> $t {
                $t::sub(self, o)
            }
            fn neg(self) -> $t {
                $t::neg(self)
            }
            fn mul(self, o: $t) -> $t {
                $t::mul(self, o)
            }
            fn inverse(self) -> Option<$t> {
                $t::inverse(self)
            }
            fn root_of_unity(k: u32) -> Option<$t> {
                match k {
                    0 => Some($t::ONE),
                    1 => Some($t::ONE.neg()),
                    _ => None,
                }
            }
            fn cube_root_of_unity() -> Option<$t> {
                Some($c)
            }
            fn mul_pow2(self, k: u32) -> $t {
                $t::mul_pow2(self, k)
            }
        }
    };
}
pub(crate) use impl_base_field;

/// A Mersenne prime base field GF(2^q − 1), as GF(p²) needs it.
pub trait Mersenne: Field {
    /// q: the modulus is 2^q − 1, and 2 has order q.
    const Q: u32;
    /// The extension's name for messages ("gf(m61^2)").
    const EXT_NAME: &'static str;
    /// (re, im) of a primitive 2^(q+1)-th root of unity g in GF(M_q²) with
    /// g^(2^(q−2)) = (1 + i)/√2.
    const SYLOW_GEN: (u64, u64);
    /// The canonical representative in [0, M_q).
    fn value(self) -> u64;
}

/// The checks both Mersenne base fields' tests make against u128 arithmetic (on their own edge
/// words and on random words), so their two test modules don't repeat them.
#[cfg(test)]
pub(crate) mod base_checks {
    use super::Mersenne;
    use crate::transform::field::laws_hold;

    /// Reduction, add, sub, mul, neg and the shift of a and b against u128, and the field laws
    /// on a, b and c.
    pub(crate) fn ops_match_u128<B: Mersenne>(a: u64, b: u64, c: u64, k: u32) -> bool {
        let pp = u128::from(B::MODULUS);
        let (x, y) = (B::from_u64(a), B::from_u64(b));
        let (ac, bc) = (u128::from(a) % pp, u128::from(b) % pp);
        u128::from(x.value()) == ac
            && u128::from(x.add(y).value()) == (ac + bc) % pp
            && u128::from(x.sub(y).value()) == (ac + pp - bc) % pp
            && u128::from(x.mul(y).value()) == ac * bc % pp
            && u128::from(x.mul_pow2(k).value()) == ac * (1u128 << (k % B::Q)) % pp
            && x.neg().add(x) == B::ZERO
            && laws_hold(x, y, B::from_u64(c), k)
    }

    /// Every pair of the edge words, and every shift of each one up to past 2q.
    pub(crate) fn edge_cases<B: Mersenne>(vals: &[u64]) {
        for &a in vals {
            for &b in vals {
                let c = vals[(a ^ b) as usize % vals.len()];
                assert!(ops_match_u128::<B>(a, b, c, (a ^ b) as u32), "{}: {a} {b} {c}", B::NAME);
            }
            for k in 0..2 * B::Q + 8 {
                assert!(ops_match_u128::<B>(a, 1, 1, k), "{}: {a}·2^{k}", B::NAME);
            }
        }
    }

    /// The modulus is 2^q − 1 ≡ 3 mod 4 (−1 is not a square, no 4th root of unity), 2 has order
    /// q, the cube root is primitive, zero has no inverse.
    pub(crate) fn constants<B: Mersenne>() {
        let m = B::MODULUS;
        assert_eq!(m, (1u64 << B::Q) - 1);
        assert_eq!(m % 4, 3);
        assert_eq!(B::ONE.neg().pow((m - 1) / 2), B::ONE.neg());
        assert!(B::root_of_unity(2).is_none());
        assert_eq!(B::from_u64(2).pow(u64::from(B::Q)), B::ONE);
        let c = B::cube_root_of_unity().expect("a cube root");
        assert!(c != B::ONE && c.pow(3) == B::ONE);
        assert!(B::ZERO.inverse().is_none());
    }

    /// A balanced digit's embedding is v mod M_q.
    pub(crate) fn signed_embedding<B: Mersenne>(v: i64) -> bool {
        i128::from(B::from_i64(v).value()) == i128::from(v).rem_euclid(i128::from(B::MODULUS))
    }
}
