//! Arithmetic modulo M_p = 2^p − 1 on rug integers: squaring and multiplication reduced by
//! shift-and-add (x = hi·2^p + lo ≡ hi + lo), never by a generic division. Scratch space is kept
//! so that the hot loop does not allocate.

use crate::residue::fold_mersenne;
use rug::{Assign, Integer};

/// Reduction context for one exponent.
#[derive(Debug, Clone)]
pub struct ModMp {
    p: u32,
    mp: Integer,
    hi: Integer,
}

impl ModMp {
    pub fn new(p: u32) -> Self {
        let mp = (Integer::from(1) << p) - 1u32;
        ModMp { p, mp, hi: Integer::new() }
    }

    pub fn exponent(&self) -> u32 {
        self.p
    }

    /// M_p itself.
    pub fn modulus(&self) -> &Integer {
        &self.mp
    }

    /// Reduce x ∈ [0, M_p^2] (any product of two reduced values) into [0, M_p).
    pub fn reduce(&mut self, x: &mut Integer) {
        fold_mersenne(x, self.p, &mut self.hi);
    }

    /// x ← x² mod M_p.
    pub fn square(&mut self, x: &mut Integer) {
        x.square_mut();
        self.reduce(x);
    }

    /// x ← x·y mod M_p.
    pub fn mul(&mut self, x: &mut Integer, y: &Integer) {
        *x *= y;
        self.reduce(x);
    }

    /// x ← x − 2^e mod M_p, for x ∈ [0, M_p) and e < p. Usually O(1): clear bit e, or borrow
    /// from the next set bit above it; only x < 2^e takes the full subtraction.
    pub fn sub_pow2(&mut self, x: &mut Integer, e: u32) {
        match x.find_one(e) {
            Some(j) => {
                // x − 2^e: bit j (the lowest set bit ≥ e) clears, bits e..j become ones.
                x.set_bit(j, false);
                for b in e..j {
                    x.set_bit(b, true);
                }
            }
            None => {
                self.hi.assign(1);
                self.hi <<= e;
                *x -= &self.hi;
                *x += &self.mp;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;
    use rug::integer::Order;
    use rug::ops::RemRounding;

    fn value(p: u32, seed: &[u64]) -> Integer {
        let m = ModMp::new(p);
        Integer::from_digits(seed, Order::Lsf).rem_euc(m.modulus())
    }

    quickcheck! {
        fn square_matches_rem(seed: Vec<u64>, p: u16) -> bool {
            let p = (p % 5000) as u32 + 2;
            let mut m = ModMp::new(p);
            let x = value(p, &seed);
            let want = Integer::from(x.square_ref()).rem_euc(m.modulus());
            let mut got = x;
            m.square(&mut got);
            got == want
        }

        fn mul_matches_rem(a: Vec<u64>, b: Vec<u64>, p: u16) -> bool {
            let p = (p % 5000) as u32 + 2;
            let mut m = ModMp::new(p);
            let (x, y) = (value(p, &a), value(p, &b));
            let want = Integer::from(&x * &y).rem_euc(m.modulus());
            let mut got = x;
            m.mul(&mut got, &y);
            got == want
        }

        fn sub_pow2_matches(seed: Vec<u64>, p: u16, e: u32) -> bool {
            let p = (p % 5000) as u32 + 2;
            let e = e % p;
            let mut m = ModMp::new(p);
            let x = value(p, &seed);
            let want = (&x - (Integer::from(1) << e)).rem_euc(m.modulus());
            let mut got = x;
            m.sub_pow2(&mut got, e);
            got == want
        }
    }

    #[test]
    fn all_ones_squared_is_canonical() {
        // (M_p − 1)^2 = 1 mod M_p; and values that fold to exactly M_p become 0.
        for p in [2u32, 3, 31, 61, 64, 89, 127, 521] {
            let mut m = ModMp::new(p);
            let mut x = Integer::from(m.modulus() - 1u32);
            m.square(&mut x);
            assert_eq!(x, 1, "p={p}");
            let mut y = m.modulus().clone();
            m.reduce(&mut y);
            assert_eq!(y, 0);
        }
    }
}
