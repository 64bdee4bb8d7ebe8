//! The Mersenne prime field GF(M61), M61 = 2^61 − 1: one element type with `const fn`
//! arithmetic. 2^61 ≡ 1, so a reduction is shift-and-add (x mod M61 = (x & M61) + (x >> 61),
//! folded once more if needed) and a product by 2^k is a rotation of the 61-bit value. M61 ≡ 3
//! mod 4, so −1 is not a square and GF(M61²) = GF(M61)\[i\] ([`super::gfp2`]) holds the roots of
//! unity of the M61·M31 transform. The CUDA kernels are to transcribe exactly these formulas.

/// The exponent q of M_q = 2^q − 1 (also the multiplicative order of 2).
pub const Q: u32 = 61;
/// The modulus 2^61 − 1.
pub const P: u64 = (1 << Q) - 1;

/// A canonical element of GF(M61): the wrapped value is always < P.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct M61(u64);

impl std::fmt::Debug for M61 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "M61({})", self.0)
    }
}

impl M61 {
    pub const ZERO: M61 = M61(0);
    pub const ONE: M61 = M61(1);

    /// x < 2P → the canonical x mod P.
    const fn fold(x: u64) -> M61 {
        M61(if x >= P { x - P } else { x })
    }

    /// The element v mod P (any u64): (v & P) + (v >> 61) ≤ P + 7 < 2P.
    pub const fn new(v: u64) -> M61 {
        M61::fold((v & P) + (v >> Q))
    }

    /// The canonical representative in [0, P).
    pub const fn value(self) -> u64 {
        self.0
    }

    /// Sum of two canonical values: < 2P < 2^62, one conditional subtraction.
    pub const fn add(self, o: M61) -> M61 {
        M61::fold(self.0 + o.0)
    }

    pub const fn sub(self, o: M61) -> M61 {
        M61(if self.0 >= o.0 { self.0 - o.0 } else { self.0 + P - o.0 })
    }

    pub const fn neg(self) -> M61 {
        M61(if self.0 == 0 { 0 } else { P - self.0 })
    }

    /// x mod P for any u128: two shift-and-add folds (a product of canonical values, < 2^122,
    /// needs only the first: (x & P) + (x >> 61) < 2^62), then the conditional subtraction.
    pub const fn reduce128(x: u128) -> M61 {
        let y = (x & P as u128) + (x >> Q); // < 2^67 + 2^61
        let z = (y & P as u128) + (y >> Q); // < 2^61 + 2^7 < 2P
        M61::fold(z as u64)
    }

    /// The product x ≤ (P − 1)² needs one fold: x >> 61 < P, so (x & P) + (x >> 61) < 2P.
    pub const fn mul(self, o: M61) -> M61 {
        let x = self.0 as u128 * o.0 as u128;
        M61::fold((x as u64 & P) + (x >> Q) as u64)
    }

    pub const fn square(self) -> M61 {
        self.mul(self)
    }

    pub const fn pow(self, mut e: u64) -> M61 {
        let (mut base, mut acc) = (self, M61::ONE);
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
    pub const fn inverse(self) -> Option<M61> {
        if self.0 == 0 {
            None
        } else {
            Some(self.pow(P - 2))
        }
    }

    /// self·2^k = self·2^(k mod 61): the 61-bit value rotated left by k mod 61. A rotation of a
    /// canonical value (not all ones) is canonical.
    pub const fn mul_pow2(self, k: u32) -> M61 {
        let k = k % Q;
        if k == 0 {
            self
        } else {
            M61(((self.0 << k) & P) | (self.0 >> (Q - k)))
        }
    }
}

super::mersenne::impl_base_field!(M61, name: "m61", modulus: P, cube_root: M61(CUBE_ROOT));

/// A primitive cube root of unity: 5^((P − 1)/3) (3 | 2^60 − 1).
const CUBE_ROOT: u64 = 0x172b_8c56_8d95_4adb;

impl super::mersenne::Mersenne for M61 {
    const Q: u32 = Q;
    const EXT_NAME: &'static str = "gf(m61^2)";
    /// 4 + i raised to (P² − 1)/2^62 = 2^60 − 1: its 2^59-th power is (1 + i)/√2.
    const SYLOW_GEN: (u64, u64) = (0x16e3_6609_2b9f_14b4, 0x1b8d_9824_ae7c_52d2);
    fn value(self) -> u64 {
        self.0
    }
}

/// Words at the edges of the reduction's branches: around 0, 2^31, 2^32, P, 2P, 2^62, 2^63 and
/// 2^64, and values with every bit set in some range (for the tests and the GPU self-test).
pub fn edge_words() -> Vec<u64> {
    let mut v = vec![0, 1, 2, 3, (1 << 31) - 1, 1 << 31, 1 << 32, P / 2, P / 2 + 1, P - 2, P - 1, P, P + 1];
    v.extend([2 * P - 1, 2 * P, 2 * P + 1, 1 << 61, (1 << 62) - 1, 1 << 62, 1 << 63, u64::MAX, u64::MAX - 1]);
    v.extend([u64::MAX - P, 0x5555_5555_5555_5555, 0xAAAA_AAAA_AAAA_AAAA, 0x1234_5678_9ABC_DEF0, P ^ 1]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::m61m31::mersenne::base_checks;
    use quickcheck::quickcheck;

    const PP: u128 = P as u128;

    #[test]
    fn edge_cases_against_u128() {
        base_checks::edge_cases::<M61>(&edge_words());
    }

    #[test]
    fn reduce128_extremes() {
        for x in [0u128, 1, PP, PP + 1, (PP - 1) * (PP - 1), PP * PP, u128::MAX, u128::MAX - 1, 1u128 << 122, PP << 64]
        {
            assert_eq!(M61::reduce128(x).value() as u128, x % PP, "{x}");
        }
    }

    #[test]
    fn constants() {
        base_checks::constants::<M61>();
    }

    quickcheck! {
        fn ops_match_u128(a: u64, b: u64, c: u64, k: u32) -> bool {
            base_checks::ops_match_u128::<M61>(a, b, c, k)
        }

        fn reduce128_matches(x: u128) -> bool {
            M61::reduce128(x).value() as u128 == x % PP
        }

        fn signed_embedding(v: i64) -> bool {
            base_checks::signed_embedding::<M61>(v)
        }
    }
}
