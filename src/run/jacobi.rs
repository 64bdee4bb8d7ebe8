//! Jacobi check for LL: every s_k with k ≥ 1 satisfies (s_k − 2 | M_p) = −1, because
//! s_k − 2 = (ω^(2^(k−1)) − ω^(−2^(k−1)))² · … is a non-residue times a square (CONVENTIONS.md).
//! A corrupted residue passes with probability ~1/2, so it bounds lost work but certifies
//! nothing; it runs on each saved checkpoint and on load. At large p GMP needs seconds to
//! minutes for one symbol (~22 s at 82,589,933 on one core), so during a run it goes to its own
//! CPU thread ([`Background`]) while the engine keeps iterating.

use crate::residue::Residue;
use rug::Integer;

/// (s − 2 | M_p) = −1 ? True for every correct LL residue s_k, k ≥ 1.
pub fn ll_jacobi_ok(s: &Residue) -> bool {
    let p = s.exponent();
    let m = (Integer::from(1) << p) - 1u32;
    let mut x = s.to_integer() - 2u32;
    if x < 0 {
        x += &m;
    }
    x.jacobi(&m) == -1
}

/// A Jacobi check of an LL residue running on its own thread, which holds the residue.
#[derive(Debug)]
pub struct Background(std::thread::JoinHandle<(bool, Residue)>);

impl Background {
    pub fn start(s: Residue) -> Background {
        Background(std::thread::spawn(move || (ll_jacobi_ok(&s), s)))
    }

    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    /// Wait for the verdict and the residue back; None when the thread died (a failed check).
    pub fn verdict(self) -> Option<(bool, Residue)> {
        self.0.join().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_ref::GmpEngine;
    use crate::engine::Engine;
    use crate::exponent::TestKind;

    #[test]
    fn holds_along_ll_sequences_and_catches_some_flips() {
        let mut caught = 0;
        for p in [7u32, 31, 89, 127, 521, 1279, 4253, 4423] {
            let mut e = GmpEngine::new(p, TestKind::Ll, 1);
            e.load(&Residue::from_u64(p, 4)).unwrap();
            for _ in 1..(p - 2).min(40) {
                e.iterate(1).unwrap();
                let s = e.read().unwrap();
                assert!(ll_jacobi_ok(&s), "p={p}");
                let bad = Residue::from_integer(p, &(s.to_integer() ^ Integer::from(8)));
                caught += !ll_jacobi_ok(&bad) as u32;
            }
        }
        // About half of the corrupted residues must be caught.
        assert!(caught > 60, "{caught}");
    }

    #[test]
    fn background_gives_the_same_verdict() {
        let p = 4423;
        let mut e = GmpEngine::new(p, TestKind::Ll, 0);
        e.load(&Residue::from_u64(p, 4)).unwrap();
        e.iterate(100).unwrap();
        let s = e.read().unwrap();
        let bad = Residue::from_integer(p, &(s.to_integer() + 1u32));
        assert_eq!(Background::start(s.clone()).verdict(), Some((true, s)));
        assert_eq!(Background::start(bad.clone()).verdict(), Some((ll_jacobi_ok(&bad), bad)));
    }
}
