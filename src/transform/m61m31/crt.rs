//! Recombination of the M61·M31 arithmetic's two residues: an integer c with
//! |c| ≤ (M61·M31 − 1)/2 from c mod M61 and c mod M31 (Garner), centered into i128.
//!
//! With a = c mod M61, b = c mod M31: c ≡ b + M31·t (mod M61·M31) for
//! t = (a − b)·M31^(−1) mod M61, and M31^(−1) mod M61 = 2^31 + 1, because
//! (2^31 − 1)(2^31 + 1) = 2^62 − 1 ≡ 2 − 1 = 1 (2^61 ≡ 1). So t = (a − b)·2^31 + (a − b), a
//! rotation and an addition in GF(M61), and b + M31·t ≤ (M31 − 1) + M31·(M61 − 1) < M61·M31:
//! the representative in [0, M61·M31), centered by one comparison.

use crate::transform::m61m31::m31::{self, M31};
use crate::transform::m61m31::m61::{self, M61};

/// M61·M31 ≈ 2^92.
pub const MODULUS: u128 = m61::P as u128 * m31::P as u128;
/// The largest |c| that is recovered: (M61·M31 − 1)/2 (M61·M31 is odd).
pub const MAX_ABS: u128 = (MODULUS - 1) / 2;

/// The integer c in [−MAX_ABS, MAX_ABS] with c ≡ a (mod M61) and c ≡ b (mod M31).
pub fn recombine(a: M61, b: M31) -> i128 {
    let d = a.sub(M61::new(u64::from(b.value())));
    let t = d.mul_pow2(31).add(d);
    let c = u128::from(b.value()) + m31::P as u128 * u128::from(t.value());
    if c > MAX_ABS {
        c as i128 - MODULUS as i128
    } else {
        c as i128
    }
}

/// c mod M61 and c mod M31 for |c| ≤ MAX_ABS: what the two transforms compute.
pub fn split(c: i128) -> (M61, M31) {
    let r61 = c.rem_euclid(m61::P as i128) as u64;
    let r31 = c.rem_euclid(m31::P as i128) as u64;
    (M61::new(r61), M31::new(r31))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;
    use rug::Integer;

    /// The reference: the centered representative by rug.
    fn reference(a: M61, b: M31) -> Integer {
        let (p61, p31) = (Integer::from(m61::P), Integer::from(m31::P));
        let m = Integer::from(&p61 * &p31);
        // Search b + M31·t ≡ a (mod M61) through the inverse rug computes.
        let inv = Integer::from(p31.invert_ref(&p61).unwrap());
        let t = ((Integer::from(a.value()) - b.value()) * inv).modulo(&p61);
        let c = t * &p31 + b.value();
        if c > Integer::from(&m >> 1) {
            c - m
        } else {
            c
        }
    }

    #[test]
    fn inverse_is_the_closed_form() {
        let x = M61::new(m31::P as u64).mul(M61::new((1 << 31) + 1));
        assert_eq!(x, M61::ONE);
    }

    #[test]
    fn edges() {
        let m = MAX_ABS as i128;
        let (p61, p31) = (m61::P as i128, m31::P as i128);
        let mut cs = vec![0, 1, -1, m, -m, m - 1, 1 - m, p61, -p61, p31, -p31, p61 * p31 / 2, p61 * 3 - 1];
        cs.extend([1i128 << 90, -(1i128 << 90), p61 * (p31 / 2), -p61 * (p31 / 2)]);
        for c in cs {
            let (a, b) = split(c);
            assert_eq!(recombine(a, b), c, "{c}");
            assert_eq!(reference(a, b), c, "{c}");
        }
        // Every pair of residues at the edges of both ranges.
        for a in [0, 1, 2, m61::P - 1, m61::P - 2, m61::P / 2, m61::P / 2 + 1] {
            for b in [0, 1, 2, m31::P - 1, m31::P - 2, m31::P / 2, m31::P / 2 + 1] {
                let (x, y) = (M61::new(a), M31::new(u64::from(b)));
                assert_eq!(Integer::from(recombine(x, y)), reference(x, y), "{a} {b}");
            }
        }
    }

    quickcheck! {
        fn round_trip_over_the_centered_range(hi: i64, lo: u32) -> bool {
            // Values spread over the whole range (hi·2^28 reaches ±2^91) and near its ends.
            let c = ((hi as i128) << 28) + i128::from(lo >> 4);
            let c = c.clamp(-(MAX_ABS as i128), MAX_ABS as i128);
            let near_end = MAX_ABS as i128 - i128::from(lo);
            [c, near_end, -near_end].iter().all(|&c| {
                let (a, b) = split(c);
                recombine(a, b) == c
            })
        }

        fn any_residues_match_rug(a: u64, b: u32) -> bool {
            let (x, y) = (M61::new(a), M31::new(u64::from(b)));
            let c = recombine(x, y);
            reference(x, y) == c && split(c) == (x, y)
        }
    }
}
