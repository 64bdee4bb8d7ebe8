//! What the transform needs of a field: the [`Field`] trait. An exact IBDWT squares in a prime
//! field (or its quadratic extension) whose roots of unity give the transform and whose
//! elements are small enough that a convolution of digits comes back exactly. Goldilocks
//! (2^64 − 2^32 + 1, [`super::goldilocks::field`]) is the first implementation; the
//! Mersenne-prime fields GF(M61), GF(M31) ([`super::m61m31::m61`], [`super::m61m31::m31`]) and
//! their quadratic extensions ([`super::m61m31::gfp2`]) are the second arithmetic's.

/// A finite field as the transform uses it. Elements are `Copy` values in canonical form, so
/// `==` is equality in the field.
pub trait Field: Copy + Eq + std::fmt::Debug + Default + Send + Sync + 'static {
    /// A short name for messages and result lines ("goldilocks").
    const NAME: &'static str;
    /// The characteristic p (the element's components are in [0, p)).
    const MODULUS: u64;
    /// 1 for GF(p), 2 for GF(p²).
    const DEGREE: u32;
    /// The largest k for which a primitive 2^k-th root of unity exists.
    const TWO_ADICITY: u32;
    /// Lazy reduction: how many canonical components may be summed in a 64-bit word before the
    /// sum must be reduced (Goldilocks 1: none; M61 8; M31, in 64-bit words, 2^33).
    const LAZY_SUMS: u64 = u64::MAX / (Self::MODULUS - 1);
    const ZERO: Self;
    const ONE: Self;

    /// The element v mod p, for any u64 (embedded in the base field).
    fn from_u64(v: u64) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// The multiplicative inverse; `None` for zero.
    fn inverse(self) -> Option<Self>;
    /// A primitive 2^k-th root of unity, k ≤ [`Field::TWO_ADICITY`].
    fn root_of_unity(k: u32) -> Option<Self>;
    /// A primitive cube root of unity, where 3 divides the group order (transforms of length
    /// 3·2^k); `None` where the implementation does not provide one.
    fn cube_root_of_unity() -> Option<Self> {
        None
    }
    /// A primitive (odd·2^k)-th root of unity for odd ∈ {1, 3}: the product of a cube root and
    /// a 2^k-th root (coprime orders).
    fn root_of_unity_odd(odd: u32, k: u32) -> Option<Self> {
        match odd {
            1 => Self::root_of_unity(k),
            3 => Some(Self::cube_root_of_unity()?.mul(Self::root_of_unity(k)?)),
            _ => None,
        }
    }
    /// The conjugate: the Frobenius z → z^p, the identity on GF(p), a + bi → a − bi on GF(p²).
    fn conj(self) -> Self {
        self
    }
    /// The element v mod p for a signed v (a balanced digit).
    fn from_i64(v: i64) -> Self {
        let m = Self::from_u64(v.unsigned_abs());
        if v < 0 {
            m.neg()
        } else {
            m
        }
    }

    fn square(self) -> Self {
        self.mul(self)
    }

    /// self·2^k: the "shift" of an IBDWT whose weights or twiddles are powers of two.
    fn mul_pow2(self, k: u32) -> Self {
        self.mul(Self::from_u64(2).pow(u64::from(k)))
    }

    fn pow(self, mut e: u64) -> Self {
        let (mut base, mut acc) = (self, Self::ONE);
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.mul(base);
            }
            base = base.square();
            e >>= 1;
        }
        acc
    }
}

/// The field axioms and the root and shift contracts on three elements: what every [`Field`]
/// implementation's property tests check (against a reference of its own as well).
#[cfg(test)]
pub(crate) fn laws_hold<F: Field>(a: F, b: F, c: F, k: u32) -> bool {
    let k_root = k % (F::TWO_ADICITY + 1);
    let root_ok = match F::root_of_unity(k_root) {
        Some(w) => w.pow(1 << k_root) == F::ONE && (k_root == 0 || w.pow(1 << (k_root - 1)) == F::ONE.neg()),
        None => false,
    };
    let cube_ok = F::cube_root_of_unity().is_none_or(|c| c != F::ONE && c.pow(3) == F::ONE);
    let conj_ok = a.conj().conj() == a
        && a.mul(b).conj() == a.conj().mul(b.conj())
        && a.add(b).conj() == a.conj().add(b.conj())
        && a.conj() == a.pow(F::MODULUS);
    let shift = k % 200;
    let doubled = (0..shift).fold(a, |x, _| x.add(x));
    a.add(b) == b.add(a)
        && a.mul(b) == b.mul(a)
        && a.add(b).add(c) == a.add(b.add(c))
        && a.mul(b).mul(c) == a.mul(b.mul(c))
        && a.mul(b.add(c)) == a.mul(b).add(a.mul(c))
        && a.sub(b).add(b) == a
        && a.add(a.neg()) == F::ZERO
        && a.square() == a.mul(a)
        && (a == F::ZERO || a.mul(a.inverse().expect("non-zero is invertible")) == F::ONE)
        && a.mul_pow2(shift) == doubled
        && root_ok
        && cube_ok
        && conj_ok
        && F::root_of_unity(F::TWO_ADICITY + 1).is_none()
}
