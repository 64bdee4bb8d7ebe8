//! Gerbicz error check for PRP (CONVENTIONS.md). From a verified anchor (a, x_a) the engine
//! keeps d = x_a · x_{a+L} · … · x_{a+jL} in its accumulator (one multiplication per L
//! squarings). At a check after B blocks, d_{B−1}^(2^L) · x_a must equal d_B: L squarings of
//! d_{B−1} and one multiplication, both on the engine, which keeps d_{B−1} and x_k in its
//! scratch slots meanwhile; the host compares two residues. Any wrong block fails the check.

use crate::engine::{Engine, EngineError, Value};
use crate::residue::Residue;
use crate::trace;

/// The engine's scratch slots a check uses: d_{B−1}, and x_k while the engine squares d_{B−1}.
/// (A proof is built after the run and fills slots of its own.)
const SLOT_D_PREV: usize = 0;
const SLOT_X: usize = 1;

/// Default block length L.
pub const DEFAULT_BLOCK: u64 = 1000;

/// The longest block for M_p: the larger of [`DEFAULT_BLOCK`] and ⌈√p⌉ (65536 for the largest
/// u32). Checks come every L² iterations, so beyond √p the only check is the last one, which
/// costs L squarings, and the run goes on up to L − 1 iterations past p to reach it: a longer
/// block buys nothing and costs up to L squarings (and time in which Ctrl-C waits).
pub fn max_block(p: u32) -> u64 {
    let root = (p as u64).isqrt();
    DEFAULT_BLOCK.max(if root * root < p as u64 { root + 1 } else { root })
}

/// The Gerbicz state of a PRP run.
#[derive(Debug, Clone)]
pub struct Gerbicz {
    block: u64,
    anchor_k: u64,
    anchor_x: Residue,
    next_check: u64,
}

impl Gerbicz {
    /// Start from a verified state (a, x_a) that the engine holds now; sets acc := x_a.
    /// The first check comes after one block, so that a start or resume is verified quickly.
    pub fn anchor(engine: &mut dyn Engine, block: u64, k: u64, x: Residue) -> Result<Self, EngineError> {
        engine.acc_reset()?;
        Ok(Gerbicz { block, anchor_k: k, anchor_x: x, next_check: k + block })
    }

    pub fn block(&self) -> u64 {
        self.block
    }

    /// The last verified state.
    pub fn verified(&self) -> (u64, &Residue) {
        (self.anchor_k, &self.anchor_x)
    }

    /// The next block boundary after k.
    pub fn next_boundary(&self, k: u64) -> u64 {
        self.anchor_k + ((k - self.anchor_k) / self.block + 1) * self.block
    }

    /// Is k a block boundary (where the accumulator takes x_k)?
    pub fn is_boundary(&self, k: u64) -> bool {
        k > self.anchor_k && (k - self.anchor_k).is_multiple_of(self.block)
    }

    /// Is a check due at boundary k? (At least every L² iterations, and whenever the caller
    /// needs a verified state: the end of the test, a save, an interruption.)
    pub fn check_due(&self, k: u64) -> bool {
        k >= self.next_check
    }

    /// At a boundary that is not a check: acc := acc · x_k.
    pub fn absorb(&mut self, engine: &mut dyn Engine) -> Result<(), EngineError> {
        engine.acc_mul()
    }

    /// At boundary k: absorb x_k and check the identity. On success the anchor moves to
    /// (k, x_k) and `true` is returned; on failure nothing moves (the caller rolls back to
    /// [`Gerbicz::verified`], which also resets the accumulator). The engine's state is x_k
    /// again afterwards.
    pub fn check(&mut self, engine: &mut dyn Engine, k: u64) -> Result<bool, EngineError> {
        engine.stash(Value::Acc, SLOT_D_PREV)?;
        engine.acc_mul()?;
        engine.stash(Value::State, SLOT_X)?;
        engine.unstash(SLOT_D_PREV)?;
        // The L squarings of d run while the host converts d·x_k and then the anchor (a GPU
        // queues the anchor's upload behind them).
        let d_new = engine.read_then_queue(Value::Acc, self.block)?;
        trace::mark("gerbicz: d read, L squarings of d queued");
        engine.acc_load(&self.anchor_x)?;
        trace::mark("gerbicz: anchor converted, upload queued");
        engine.acc_mul()?;
        let ok = engine.acc_read()? == d_new;
        trace::mark("gerbicz: anchor loaded, product read and compared");
        engine.unstash(SLOT_X)?;
        if ok {
            self.anchor_k = k;
            self.anchor_x = engine.read()?;
            trace::mark("gerbicz: new anchor read");
            self.next_check = k + self.block * self.block;
            engine.acc_reset()?;
        }
        Ok(ok)
    }

    /// After a rollback to the verified state: the engine holds x_a again; restart the product.
    pub fn restart(&mut self, engine: &mut dyn Engine) -> Result<(), EngineError> {
        engine.load(&self.anchor_x)?;
        engine.acc_reset()?;
        self.next_check = self.anchor_k + self.block;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_ref::GmpEngine;
    use crate::exponent::TestKind;

    fn run_blocks(fault_at: Option<u64>) -> bool {
        let p = 1279;
        let mut e = GmpEngine::new(p, TestKind::Prp, 17);
        let x0 = Residue::from_u64(p, 3);
        e.load(&x0).unwrap();
        let mut g = Gerbicz::anchor(&mut e, 10, 0, x0).unwrap();
        let mut k = 0;
        loop {
            let next = g.next_boundary(k);
            for i in k..next {
                e.iterate(1).unwrap();
                if Some(i + 1) == fault_at {
                    e.inject_fault(3, 9).unwrap();
                }
            }
            k = next;
            if k == 50 {
                let x = e.read().unwrap();
                let ok = g.check(&mut e, k).unwrap();
                // The check leaves the state at x_k; a pass also anchors there.
                assert!(e.read().unwrap() == x, "state moved");
                assert!(!ok || (g.verified() == (50, &x) && e.acc_read().unwrap() == x), "not anchored at x_50");
                return ok;
            }
            g.absorb(&mut e).unwrap();
        }
    }

    #[test]
    fn passes_clean_and_catches_every_fault_position() {
        assert!(run_blocks(None));
        for f in 1..50 {
            assert!(!run_blocks(Some(f)), "fault after iteration {f} not caught");
        }
    }
}
