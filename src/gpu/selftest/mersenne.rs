//! The reference for `gpu-selftest`'s check of the second arithmetic's device operations
//! (kernels/m61m31/fields.cuh, run by field_ops_m61m31 in kernels/m61m31/field_check.cuh): GF(M61),
//! GF(M31), GF(M_q²) = GF(M_q)[i] and the CRT, computed from their definitions with u128/i128
//! remainders, and the words that kernel must write for given inputs.

/// A Mersenne prime field GF(2^q − 1) by u128 remainders.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fq {
    q: u32,
}

pub(crate) const M61: Fq = Fq { q: 61 };
pub(crate) const M31: Fq = Fq { q: 31 };

/// Words per input index of field_ops_m61m31: 22 for each field, then the CRT's two.
pub(crate) const OUT_WORDS: usize = 46;
/// Words per field of field_ops_m61m31 (field_ops_fq in kernels/m61m31/field_check.cuh).
const FIELD_WORDS: usize = 22;

/// A complex value (re, im) of GF(M_q²), canonical components.
pub(crate) type Cx = (u64, u64);

impl Fq {
    pub fn p(self) -> u64 {
        (1u64 << self.q) - 1
    }
    fn r(self, x: u128) -> u64 {
        (x % self.p() as u128) as u64
    }
    pub fn add(self, a: u64, b: u64) -> u64 {
        self.r(a as u128 + b as u128)
    }
    pub fn sub(self, a: u64, b: u64) -> u64 {
        self.r(a as u128 % self.p() as u128 + self.p() as u128 - b as u128 % self.p() as u128)
    }
    pub fn mul(self, a: u64, b: u64) -> u64 {
        self.r(a as u128 * b as u128)
    }
    /// a · 2^e by repeated doubling (no shift tricks).
    pub fn shl(self, a: u64, e: u32) -> u64 {
        (0..e).fold(self.r(a as u128), |x, _| self.add(x, x))
    }
    pub fn cx_add(self, x: Cx, y: Cx) -> Cx {
        (self.add(x.0, y.0), self.add(x.1, y.1))
    }
    pub fn cx_sub(self, x: Cx, y: Cx) -> Cx {
        (self.sub(x.0, y.0), self.sub(x.1, y.1))
    }
    /// (a + bi)(c + di) = (ac − bd) + (ad + bc)i.
    pub fn cx_mul(self, x: Cx, y: Cx) -> Cx {
        (self.sub(self.mul(x.0, y.0), self.mul(x.1, y.1)), self.add(self.mul(x.0, y.1), self.mul(x.1, y.0)))
    }
    /// The primitive 8th root of unity (1 + i)/√2, with 1/√2 = 2^((q−1)/2): (2^((q−1)/2))² =
    /// 2^q / 2 = 1/2.
    pub fn w8(self) -> Cx {
        let h = self.shl(1, (self.q - 1) / 2);
        (h, h)
    }
    /// Σ_j x_j i^(jk) for k = 0..4, by the definition (i^m for m = jk mod 4 as a complex value).
    pub fn dft4(self, x: [Cx; 4]) -> [Cx; 4] {
        let p1 = self.p() - 1;
        let powers = [(1, 0), (0, 1), (p1, 0), (0, p1)];
        std::array::from_fn(|k| {
            x.iter().enumerate().fold((0, 0), |s, (j, &v)| self.cx_add(s, self.cx_mul(v, powers[j * k % 4])))
        })
    }
    fn reduce(self, x: Cx) -> Cx {
        (self.r(x.0 as u128), self.r(x.1 as u128))
    }

    /// field_ops_fq's 22 words for complex inputs x, y, z, u and shift e (kernels/goldilocks/field_check.cuh):
    /// x.re ± x.im, x.re · x.im, x.re · 2^e, x·y (twice: by 3 and by 4 products), x·w8, the
    /// butterfly (x + y, (x − y)·z), the DFT of (x, y, z, u).
    fn ops(self, x: Cx, y: Cx, z: Cx, u: Cx, e: u32) -> [u64; FIELD_WORDS] {
        let [x, y, z, u] = [x, y, z, u].map(|v| self.reduce(v));
        let xy = self.cx_mul(x, y);
        let bfly = [self.cx_add(x, y), self.cx_mul(self.cx_sub(x, y), z)];
        let dft = self.dft4([x, y, z, u]);
        let mut out = vec![self.add(x.0, x.1), self.sub(x.0, x.1), self.mul(x.0, x.1), self.shl(x.0, e)];
        for c in [xy, xy, self.cx_mul(x, self.w8())].into_iter().chain(bfly).chain(dft) {
            out.extend([c.0, c.1]);
        }
        out.try_into().expect("22 words")
    }
}

/// The integer x with |x| ≤ (M61·M31 − 1)/2, x ≡ a (mod M61) and x ≡ b (mod M31): the one
/// of b + M31·t, t = (a − b)·M31^(−1) mod M61 (the inverse by Fermat), and that minus M61·M31.
pub(crate) fn crt(a: u64, b: u64) -> i128 {
    let inv = pow(M61, M31.p(), M61.p() - 2);
    let t = M61.mul(M61.sub(a, b % M31.p()), inv);
    let m = M61.p() as i128 * M31.p() as i128;
    let x = (b % M31.p()) as i128 + M31.p() as i128 * t as i128;
    if x > m / 2 {
        x - m
    } else {
        x
    }
}

fn pow(f: Fq, base: u64, mut e: u64) -> u64 {
    let (mut acc, mut b) = (1u64, f.r(base as u128));
    while e > 0 {
        if e & 1 == 1 {
            acc = f.mul(acc, b);
        }
        b = f.mul(b, b);
        e >>= 1;
    }
    acc
}

/// The words field_ops_m61m31 must write for inputs a, b (partial M61 values, below 2^61 + 8).
pub(crate) fn expected(a: &[u64], b: &[u64]) -> Vec<u64> {
    let n = a.len();
    let at = |i: usize, k: usize| (a[(i + k) % n], b[(i + k) % n]);
    let low = |(x, y): Cx| (x & M31.p(), y & M31.p());
    (0..n)
        .flat_map(|i| {
            let c: [Cx; 4] = std::array::from_fn(|k| at(i, k));
            let x = crt(a[i], b[i] & M31.p()) as u128;
            let m61 = M61.ops(c[0], c[1], c[2], c[3], (i % 61) as u32);
            let m31 = M31.ops(low(c[0]), low(c[1]), low(c[2]), low(c[3]), (i % 31) as u32);
            m61.into_iter().chain(m31).chain([x as u64, (x >> 64) as u64])
        })
        .collect()
}

/// Edge inputs for the check: partial M61 values at and around 0, M61 and the partial bound,
/// and words whose low 31 bits are M31's edges.
pub(crate) fn edge_inputs() -> Vec<u64> {
    let p = M61.p();
    vec![0, 1, 2, p - 1, p, p + 1, p + 7, 1 << 60, p / 2, M31.p(), M31.p() - 1, 1 << 31, p - M31.p()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    #[test]
    fn roots_of_unity() {
        for f in [M61, M31] {
            let w = f.w8();
            let w2 = f.cx_mul(w, w);
            assert_eq!(w2, (0, 1), "w8² = i");
            assert_eq!(f.cx_mul(w2, w2), (f.p() - 1, 0), "w8⁴ = −1");
        }
    }

    #[test]
    fn crt_by_hand() {
        assert_eq!(crt(0, 0), 0);
        assert_eq!(crt(5, 5), 5);
        assert_eq!(crt(M61.p() - 1, M31.p() - 1), -1);
        assert_eq!(crt(M61.p() - 7, M31.p() - 7), -7);
        // 2^40: its residues are 2^40 mod M61 = 2^40 and 2^40 mod M31 = 2^9.
        assert_eq!(crt(1 << 40, 1 << 9), 1 << 40);
    }

    #[test]
    fn dft4_by_hand() {
        // The DFT of a unit impulse at j = 1 is (1, i, −1, −i).
        let p1 = M61.p() - 1;
        assert_eq!(M61.dft4([(0, 0), (1, 0), (0, 0), (0, 0)]), [(1, 0), (0, 1), (p1, 0), (0, p1)]);
    }

    #[test]
    fn expected_layout() {
        let a = edge_inputs();
        let w = expected(&a, &a);
        assert_eq!(w.len(), OUT_WORDS * a.len());
        // Index 1 (a = b = 1): 1 + 1, 1 − 1, 1 · 1, 1 · 2^1 in M61; the same in M31 (e = 1).
        assert_eq!(&w[OUT_WORDS..OUT_WORDS + 4], &[2, 0, 1, 2]);
        assert_eq!(&w[OUT_WORDS + FIELD_WORDS..OUT_WORDS + FIELD_WORDS + 4], &[2, 0, 1, 2]);
    }

    quickcheck! {
        fn crt_is_the_centered_solution(a: u64, b: u64) -> bool {
            let (a, b) = (a % (M61.p() + 8), b % (M31.p() + 1));
            let x = crt(a, b);
            let m = M61.p() as i128 * M31.p() as i128;
            2 * x.abs() < m
                && x.rem_euclid(M61.p() as i128) == (a % M61.p()) as i128
                && x.rem_euclid(M31.p() as i128) == (b % M31.p()) as i128
        }
        fn shl_is_a_product_by_a_power(a: u64, e: u8) -> bool {
            [M61, M31].iter().all(|&f| f.shl(a, u32::from(e % 64)) == f.mul(a, pow(f, 2, u64::from(e % 64))))
        }
    }
}
