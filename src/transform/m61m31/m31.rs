//! The Mersenne prime field GF(M31), M31 = 2^31 − 1: one element type with `const fn`
//! arithmetic on 32-bit values (products in 64 bits). 2^31 ≡ 1, so a reduction is
//! shift-and-add (x mod M31 = (x & M31) + (x >> 31), folded once more if needed) and a product
//! by 2^k is a rotation of the 31-bit value. M31 ≡ 3 mod 4, so GF(M31²) = GF(M31)\[i\]
//! ([`super::gfp2`]). The CUDA kernels are to transcribe exactly these formulas.

/// The exponent q of M_q = 2^q − 1 (also the multiplicative order of 2).
pub const Q: u32 = 31;
/// The modulus 2^31 − 1.
pub const P: u32 = (1 << Q) - 1;

/// A canonical element of GF(M31): the wrapped value is always < P.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct M31(u32);

impl std::fmt::Debug for M31 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "M31({})", self.0)
    }
}

impl M31 {
    pub const ZERO: M31 = M31(0);
    pub const ONE: M31 = M31(1);

    /// x < 2P → the canonical x mod P.
    const fn fold(x: u32) -> M31 {
        M31(if x >= P { x - P } else { x })
    }

    /// The element v mod P for any u64: two shift-and-add folds (< 2^33 + 2^31, then
    /// < 2^31 + 7 < 2P) and the conditional subtraction.
    pub const fn new(v: u64) -> M31 {
        let y = (v & P as u64) + (v >> Q);
        let z = (y & P as u64) + (y >> Q);
        M31::fold(z as u32)
    }

    /// The canonical representative in [0, P).
    pub const fn value(self) -> u32 {
        self.0
    }

    /// Sum of two canonical values: < 2P < 2^32, one conditional subtraction.
    pub const fn add(self, o: M31) -> M31 {
        M31::fold(self.0 + o.0)
    }

    pub const fn sub(self, o: M31) -> M31 {
        M31(if self.0 >= o.0 { self.0 - o.0 } else { self.0 + P - o.0 })
    }

    pub const fn neg(self) -> M31 {
        M31(if self.0 == 0 { 0 } else { P - self.0 })
    }

    /// A product of canonical values is < 2^62: reduced by [`M31::new`]'s folds.
    pub const fn mul(self, o: M31) -> M31 {
        M31::new(self.0 as u64 * o.0 as u64)
    }

    pub const fn square(self) -> M31 {
        self.mul(self)
    }

    pub const fn pow(self, mut e: u64) -> M31 {
        let (mut base, mut acc) = (self, M31::ONE);
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
    pub const fn inverse(self) -> Option<M31> {
        if self.0 == 0 {
            None
        } else {
            Some(self.pow(P as u64 - 2))
        }
    }

    /// self·2^k = self·2^(k mod 31): the 31-bit value rotated left by k mod 31.
    pub const fn mul_pow2(self, k: u32) -> M31 {
        let k = k % Q;
        if k == 0 {
            self
        } else {
            M31(((self.0 << k) & P) | (self.0 >> (Q - k)))
        }
    }
}

super::mersenne::impl_base_field!(M31, name: "m31", modulus: P as u64, cube_root: M31(CUBE_ROOT));

/// A primitive cube root of unity: 5^((P − 1)/3) (3 | 2^30 − 1).
const CUBE_ROOT: u32 = 0x5a35_d667;

impl super::mersenne::Mersenne for M31 {
    const Q: u32 = Q;
    const EXT_NAME: &'static str = "gf(m31^2)";
    /// 2 + i raised to (P² − 1)/2^32 = 2^30 − 1: its 2^29-th power is (1 + i)/√2.
    const SYLOW_GEN: (u64, u64) = (0x0143_547c, 0x0286_a8f8);
    fn value(self) -> u64 {
        self.0 as u64
    }
}

/// Words at the edges of the reduction's branches: around 0, P, 2P, 2^32, 2^62 and 2^64, and
/// values with every bit set in some range (for the tests and the GPU self-test).
pub fn edge_words() -> Vec<u64> {
    let p = P as u64;
    let mut v = vec![0, 1, 2, 3, p / 2, p / 2 + 1, p - 2, p - 1, p, p + 1, 2 * p - 1, 2 * p, 2 * p + 1];
    v.extend([1 << 31, (1 << 32) - 1, 1 << 32, p * p, (p - 1) * (p - 1), 1 << 62, (1 << 62) - 1, 1 << 63]);
    v.extend([u64::MAX, u64::MAX - 1, 0x5555_5555_5555_5555, 0xAAAA_AAAA_AAAA_AAAA, 0x7FFF_FFFF_7FFF_FFFF]);
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
        base_checks::edge_cases::<M31>(&edge_words());
    }

    #[test]
    fn every_product_of_extremes() {
        // Every product of values within 3 of 0, P/2 and P − 1: the fold's both branches.
        let near = |c: u32| (c.saturating_sub(3)..=(c + 3).min(P - 1)).collect::<Vec<_>>();
        let vals: Vec<u32> = [0, P / 2, P - 1].into_iter().flat_map(near).collect();
        for &a in &vals {
            for &b in &vals {
                let want = a as u128 * b as u128 % PP;
                assert_eq!(M31(a).mul(M31(b)).value() as u128, want, "{a}*{b}");
            }
        }
    }

    #[test]
    fn constants() {
        base_checks::constants::<M31>();
    }

    quickcheck! {
        fn ops_match_u128(a: u64, b: u64, c: u64, k: u32) -> bool {
            base_checks::ops_match_u128::<M31>(a, b, c, k)
        }

        fn signed_embedding(v: i64) -> bool {
            base_checks::signed_embedding::<M31>(v)
        }
    }
}
