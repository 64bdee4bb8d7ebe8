//! The one seeded generator for reproducible random inputs (tests, `gpu-selftest`, the
//! verifier's choice of samples when a seed is given): splitmix64, whose every seed gives a
//! full-period, well-mixed stream, so a failure can be replayed from the seed it printed.
//! Not for anything secret: keys and shifts come from the OS (`getrandom`).

use crate::residue::Residue;
use rug::integer::Order;
use rug::Integer;

/// splitmix64 (Steele, Lea and Flood, 2014).
#[derive(Debug, Clone)]
pub struct SeededRng(u64);

impl SeededRng {
    pub const fn new(seed: u64) -> SeededRng {
        SeededRng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in [0, m), m > 0 (the modulo bias is below 2^-32 for m < 2^32).
    pub fn below(&mut self, m: u64) -> u64 {
        self.next_u64() % m
    }

    /// A residue mod M_p with all p bits random (reduced mod M_p).
    pub fn residue(&mut self, p: u32) -> Residue {
        let words: Vec<u64> = (0..p.div_ceil(64)).map(|_| self.next_u64()).collect();
        Residue::from_integer(p, &Integer::from_digits(&words, Order::Lsf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // The first outputs for seed 0 (Vigna's reference implementation).
        let mut r = SeededRng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn residues_fill_their_bits_and_are_reduced() {
        let mut r = SeededRng::new(7);
        for p in [5u32, 61, 64, 127, 521, 4423] {
            let x = r.residue(p);
            let v = x.to_integer();
            assert!(v < (Integer::from(1) << p) - 1u32, "p={p}");
            assert!(v.significant_bits() + 8 >= p, "p={p}: {} bits", v.significant_bits());
        }
        assert!((0..1000).all(|_| r.below(10) < 10));
    }
}
