//! The exact LL check (`--ll-check double`): a second engine instance with another shift count
//! recomputes each segment from the last confirmed state, and the segment's end is confirmed only
//! when both engines' residues hash the same. The two compute on different data (the shift
//! rotates every word), so one fault cannot make them agree; a disagreement rolls the run back to
//! the confirmed state. Costs a second pass over every iteration (docs/testing.md).

use crate::engine::{Engine, EngineError};
use crate::residue::Residue;

/// Below this exponent `--ll-check auto` checks every LL segment twice: a whole test there takes
/// seconds to minutes on a GPU (and at most minutes on the CPU up to ~100,000), so exactness costs
/// little; above it the Jacobi checks run and only a "prime" result is recomputed.
pub const AUTO_DOUBLE_BELOW: u32 = 1_000_000;

/// Does `--ll-check auto` check M_p's LL test twice?
pub fn cheap(p: u32) -> bool {
    p < AUTO_DOUBLE_BELOW
}

/// The shift count for the second engine: as far from the first as the exponent allows.
pub fn other_shift(p: u32, shift: u32) -> u32 {
    ((shift as u64 + (p as u64 / 2).max(1)) % p.max(1) as u64) as u32
}

/// The second engine of a doubly checked LL run.
pub struct Shadow<'a> {
    engine: &'a mut dyn Engine,
}

impl<'a> Shadow<'a> {
    pub fn new(engine: &'a mut dyn Engine) -> Self {
        Shadow { engine }
    }

    /// Does the second engine, started from the confirmed `from` = (k₀, x_k₀), reach the same
    /// residue as `to` after `k − k₀` iterations?
    pub fn agrees(&mut self, from: &(u64, Residue), k: u64, to: &Residue) -> Result<bool, EngineError> {
        debug_assert!(k >= from.0);
        self.engine.load(&from.1)?;
        self.engine.iterate(k - from.0)?;
        Ok(self.engine.read()?.hash() == to.hash())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_ref::GmpEngine;
    use crate::exponent::TestKind;

    #[test]
    fn other_shift_differs_and_is_in_range() {
        for p in [3u32, 5, 7, 89, 521, 86243] {
            for s in [0, 1, p / 2, p - 1] {
                let t = other_shift(p, s);
                assert!(t < p && t != s, "p={p} s={s} t={t}");
            }
        }
    }

    #[test]
    fn agrees_with_a_right_segment_and_not_with_a_flipped_one() {
        let p = 4423;
        let mut main = GmpEngine::new(p, TestKind::Ll, 5);
        let mut second = GmpEngine::new(p, TestKind::Ll, other_shift(p, 5));
        let start = Residue::from_u64(p, 4);
        main.load(&start).unwrap();
        main.iterate(100).unwrap();
        let right = main.read().unwrap();
        let mut shadow = Shadow::new(&mut second);
        assert!(shadow.agrees(&(0, start.clone()), 100, &right).unwrap());
        main.inject_fault(3, 17).unwrap();
        let wrong = main.read().unwrap();
        assert!(!shadow.agrees(&(0, start), 100, &wrong).unwrap());
    }
}
