//! What the transform needs of a field: the [`Field`] trait. An exact IBDWT squares in a prime
//! field (or its quadratic extension) whose roots of unity give the transform and whose
//! elements are small enough that a convolution of digits comes back exactly. Goldilocks
//! (2^64 − 2^32 + 1, [`super::goldilocks`]) is the first implementation; the Mersenne-prime
//! fields GF(M61²) and GF(M31²) slot in beside it.

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
        && F::root_of_unity(F::TWO_ADICITY + 1).is_none()
}
