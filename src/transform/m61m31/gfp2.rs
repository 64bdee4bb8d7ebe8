//! GF(M_q²) = GF(M_q)\[i\], i² = −1, over a Mersenne prime field M_q = 2^q − 1 ≡ 3 mod 4 (so −1
//! is not a square): one generic type [`Gfp2`] over the small [`Mersenne`] trait that
//! [`super::m61::M61`] and [`super::m31::M31`] implement.
//!
//! Facts the transform uses (each checked in the tests): the group order is
//! M_q² − 1 = 2^(q+1)·(2^(q−1) − 1), so roots of unity of order 2^k (k ≤ q + 1) exist, and of
//! order 3·2^k since 3 | 2^(q−1) − 1 (the cube roots lie in GF(M_q) itself). Conjugation
//! a + bi → a − bi is the Frobenius z → z^(M_q); for ω of order dividing M_q + 1 = 2^q,
//! conj(ω) = ω^(M_q) = ω^(−1). The chosen 2^(q+1)-th root g ([`Mersenne::SYLOW_GEN`]) has
//! g^(2^(q−2)) = (1 + i)/√2 with 1/√2 = 2^((q−1)/2), so the primitive 8th roots of the
//! transform are products by shifts and adds.

use crate::transform::field::Field;
use crate::transform::m61m31::mersenne::Mersenne;

/// re + im·i in GF(M_q²); both components canonical, so `==` is equality.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Gfp2<B> {
    pub re: B,
    pub im: B,
}

impl<B: Mersenne> Gfp2<B> {
    pub const fn new(re: B, im: B) -> Gfp2<B> {
        Gfp2 { re, im }
    }

    /// An element of the base field.
    pub fn real(re: B) -> Gfp2<B> {
        Gfp2 { re, im: B::ZERO }
    }

    /// self·i = −im + re·i: a swap and a negation.
    pub fn mul_i(self) -> Gfp2<B> {
        Gfp2 { re: self.im.neg(), im: self.re }
    }

    /// self·b for b in the base field: two base products.
    pub fn scale(self, b: B) -> Gfp2<B> {
        Gfp2 { re: self.re.mul(b), im: self.im.mul(b) }
    }

    /// The primitive 2^(q+1)-th root of unity g that the 2^k-th roots are powers of.
    fn sylow_generator() -> Gfp2<B> {
        Gfp2 { re: B::from_u64(B::SYLOW_GEN.0), im: B::from_u64(B::SYLOW_GEN.1) }
    }
}

impl<B: Mersenne> Field for Gfp2<B> {
    const NAME: &'static str = B::EXT_NAME;
    const MODULUS: u64 = B::MODULUS;
    const DEGREE: u32 = 2;
    const TWO_ADICITY: u32 = B::Q + 1;
    const ZERO: Gfp2<B> = Gfp2 { re: B::ZERO, im: B::ZERO };
    const ONE: Gfp2<B> = Gfp2 { re: B::ONE, im: B::ZERO };

    fn from_u64(v: u64) -> Gfp2<B> {
        Gfp2::real(B::from_u64(v))
    }
    fn add(self, o: Gfp2<B>) -> Gfp2<B> {
        Gfp2 { re: self.re.add(o.re), im: self.im.add(o.im) }
    }
    fn sub(self, o: Gfp2<B>) -> Gfp2<B> {
        Gfp2 { re: self.re.sub(o.re), im: self.im.sub(o.im) }
    }
    fn neg(self) -> Gfp2<B> {
        Gfp2 { re: self.re.neg(), im: self.im.neg() }
    }
    /// (a + bi)(c + di) = (ac − bd) + ((a + b)(c + d) − ac − bd)i: three base products.
    fn mul(self, o: Gfp2<B>) -> Gfp2<B> {
        let (ac, bd) = (self.re.mul(o.re), self.im.mul(o.im));
        let cross = self.re.add(self.im).mul(o.re.add(o.im));
        Gfp2 { re: ac.sub(bd), im: cross.sub(ac).sub(bd) }
    }
    /// (a + bi)² = (a + b)(a − b) + 2ab·i: two base products.
    fn square(self) -> Gfp2<B> {
        let re = self.re.add(self.im).mul(self.re.sub(self.im));
        let ab = self.re.mul(self.im);
        Gfp2 { re, im: ab.add(ab) }
    }
    /// 1/(a + bi) = (a − bi)/(a² + b²); the norm is non-zero for non-zero z (−1 is no square).
    fn inverse(self) -> Option<Gfp2<B>> {
        let norm = self.re.square().add(self.im.square()).inverse()?;
        Some(self.conj().scale(norm))
    }
    fn root_of_unity(k: u32) -> Option<Gfp2<B>> {
        if k > B::Q + 1 {
            return None;
        }
        Some((k..=B::Q).fold(Gfp2::sylow_generator(), |w, _| w.square()))
    }
    fn cube_root_of_unity() -> Option<Gfp2<B>> {
        Some(Gfp2::real(B::cube_root_of_unity()?))
    }
    fn conj(self) -> Gfp2<B> {
        Gfp2 { re: self.re, im: self.im.neg() }
    }
    fn mul_pow2(self, k: u32) -> Gfp2<B> {
        Gfp2 { re: self.re.mul_pow2(k), im: self.im.mul_pow2(k) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::field::laws_hold;
    use crate::transform::m61m31::m31::{self, M31};
    use crate::transform::m61m31::m61::{self, M61};
    use quickcheck::quickcheck;

    /// (a + bi)(c + di) mod p by the schoolbook formula in u128: the reference.
    fn ref_mul(p: u64, (a, b): (u64, u64), (c, d): (u64, u64)) -> (u64, u64) {
        let (p, a, b, c, d) = (p as u128, a as u128 % p as u128, b as u128, c as u128, d as u128);
        let (b, c, d) = (b % p, c % p, d % p);
        (((a * c % p + p * p - b * d % p) % p) as u64, ((a * d + b * c) % p) as u64)
    }

    fn elem<B: Mersenne>(re: u64, im: u64) -> Gfp2<B> {
        Gfp2::new(B::from_u64(re), B::from_u64(im))
    }

    fn pair<B: Mersenne>(z: Gfp2<B>) -> (u64, u64) {
        (z.re.value(), z.im.value())
    }

    fn matches_reference<B: Mersenne>(a: (u64, u64), b: (u64, u64)) -> bool {
        let (x, y) = (elem::<B>(a.0, a.1), elem::<B>(b.0, b.1));
        let p = B::MODULUS;
        pair(x.mul(y)) == ref_mul(p, a, b)
            && pair(x.square()) == ref_mul(p, a, a)
            && x.mul_i() == x.mul(Gfp2::new(B::ZERO, B::ONE))
            && (x == Gfp2::ZERO || x.mul(x.inverse().unwrap()) == Gfp2::ONE)
    }

    /// The root facts of the module doc for one base field.
    fn roots_hold<B: Mersenne>() {
        let q = B::Q;
        let one = Gfp2::<B>::ONE;
        for k in 0..=q + 1 {
            let w = Gfp2::<B>::root_of_unity(k).unwrap();
            assert_eq!(w.pow(1 << k), one, "k={k}");
            if k > 0 {
                assert_eq!(w.pow(1 << (k - 1)), one.neg(), "k={k} not primitive");
            }
            // conj(ω) = ω^(−1) for ω of order dividing 2^q.
            if k <= q {
                assert_eq!(w.conj().mul(w), one, "k={k}");
            }
            for odd in [1, 3] {
                let r = Gfp2::<B>::root_of_unity_odd(odd, k).unwrap();
                assert_eq!(r.pow(u64::from(odd) << k), one);
                assert!(k == 0 || r.pow(u64::from(odd) << (k - 1)) != one);
                assert!(odd == 1 || r.pow(1 << k) != one);
            }
        }
        assert!(Gfp2::<B>::root_of_unity(q + 2).is_none());
        // The 8th root (1 + i)/√2, 1/√2 = 2^((q−1)/2).
        let h = B::ONE.mul_pow2((q - 1) / 2);
        assert_eq!(h.square().mul_pow2(1), B::ONE);
        assert_eq!(Gfp2::<B>::root_of_unity(3).unwrap(), Gfp2::new(h, h));
        // The group order: M² − 1 = 2^(q+1)·(2^(q−1) − 1), and 3 divides the odd part.
        let m = B::MODULUS as u128;
        assert_eq!(m * m - 1, ((1u128 << (q - 1)) - 1) << (q + 1));
        assert_eq!(((1u128 << (q - 1)) - 1) % 3, 0);
        // i is not in the base field: −1 is not a square there.
        assert_eq!(B::ONE.neg().pow((B::MODULUS - 1) / 2), B::ONE.neg());
    }

    #[test]
    fn roots_and_constants() {
        roots_hold::<M61>();
        roots_hold::<M31>();
    }

    #[test]
    fn edge_elements() {
        for (p, words) in [(m61::P, m61::edge_words()), (m31::P as u64, m31::edge_words())] {
            for (i, &a) in words.iter().enumerate() {
                for &b in &words {
                    let c = words[(i * 5 + 1) % words.len()];
                    let (x, y) = ((a, b), (c, a ^ b));
                    if p == m61::P {
                        assert!(matches_reference::<M61>(x, y), "{x:?} {y:?}");
                        assert!(laws_hold(elem::<M61>(a, b), elem(c, a), elem(b, c), (a ^ c) as u32));
                    } else {
                        assert!(matches_reference::<M31>(x, y), "{x:?} {y:?}");
                        assert!(laws_hold(elem::<M31>(a, b), elem(c, a), elem(b, c), (a ^ c) as u32));
                    }
                }
            }
        }
    }

    quickcheck! {
        fn m61_products_match_u128(a: (u64, u64), b: (u64, u64)) -> bool {
            matches_reference::<M61>(a, b)
        }

        fn m31_products_match_u128(a: (u64, u64), b: (u64, u64)) -> bool {
            matches_reference::<M31>(a, b)
        }

        fn m61_laws(a: (u64, u64), b: (u64, u64), c: (u64, u64), k: u32) -> bool {
            laws_hold(elem::<M61>(a.0, a.1), elem(b.0, b.1), elem(c.0, c.1), k)
        }

        fn m31_laws(a: (u64, u64), b: (u64, u64), c: (u64, u64), k: u32) -> bool {
            laws_hold(elem::<M31>(a.0, a.1), elem(b.0, b.1), elem(c.0, c.1), k)
        }
    }
}
