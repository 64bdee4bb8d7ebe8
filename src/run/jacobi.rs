//! Jacobi check for LL: every s_k with k ≥ 1 satisfies (s_k − 2 | M_p) = −1, because
//! s_k − 2 = (ω^(2^(k−1)) − ω^(−2^(k−1)))² · … is a non-residue times a square (CONVENTIONS.md).
//! A corrupted residue passes with probability ~1/2, so it bounds lost work but certifies
//! nothing; it runs on the checkpoints of a run (as many as spare threads allow) and on load.
//! Checks after an error are NOT independent: s_{j+1} − 2 = (s_j − 2)·s_{j−1}², so for any chain
//! computed by s ← s² − 2, right or wrong, the symbol is fixed two iterations after the last
//! error (docs/testing.md; `symbol_is_frozen_two_iterations_after_a_fault` below). At large p GMP needs seconds to
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

    /// (s − 2 | M_p) as −1, 0 or 1.
    fn symbol(s: &Integer, m: &Integer) -> i32 {
        let mut x = Integer::from(s - 2u32) % m;
        if x < 0 {
            x += m;
        }
        x.jacobi(m)
    }

    /// After a fault replaces s_k by t, the symbols at k and k+1 are (t − 2 | M) and (t² − 4 | M),
    /// and from k+2 on every symbol equals the one at k+1: later checks add nothing. A corrupted
    /// chain therefore escapes every later check with probability ~1/2 however many there are.
    #[test]
    fn symbol_is_frozen_two_iterations_after_a_fault() {
        let mut escaped = 0;
        let mut trials = 0;
        for (i, p) in [89u32, 521, 523, 1279, 2203, 4253].into_iter().enumerate() {
            let m = (Integer::from(1) << p) - 1u32;
            for j in 0..20u32 {
                let k = 3 + (j as usize * 7 + i) % 40;
                let mut s = Integer::from(4);
                for _ in 0..k {
                    s = (Integer::from(&s * &s) - 2u32) % &m;
                }
                // The fault: flip one bit of s_k.
                s ^= Integer::from(1) << ((j * 37 + 11) % p);
                s %= &m;
                let mut symbols = vec![symbol(&s, &m)];
                for _ in 0..30 {
                    s = (Integer::from(&s * &s) - 2u32 + &m) % &m;
                    symbols.push(symbol(&s, &m));
                }
                assert!(
                    symbols[2..].iter().all(|&x| x == symbols[1]),
                    "p={p} k={k}: symbols change after k+1: {symbols:?}"
                );
                trials += 1;
                escaped += (symbols[1] == -1) as u32;
            }
        }
        // About half of the faulted chains pass every check from k+1 on.
        assert!(escaped * 4 > trials && escaped * 4 < 3 * trials, "{escaped} of {trials}");
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
