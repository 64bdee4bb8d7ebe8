//! Resuming a run: pick the newest saved state of the test that passes its check on load (LL:
//! the Jacobi symbol; PRP: the saved state is recomputed from the one a Gerbicz block before it),
//! falling back to the previous save when the newest is damaged or fails.

use crate::cert::{Check, CheckLog, CheckOutcome};
use crate::engine::Engine;
use crate::exponent::TestKind;
use crate::run::jacobi::ll_jacobi_ok;
use crate::run::state::{SavedState, StateError};
use crate::run::{RunError, RunOptions};

/// Resume from the newest usable saved state, verifying it; None when there is none.
pub(crate) fn resume(
    engine: &mut dyn Engine,
    opts: &RunOptions,
    checks: &mut CheckLog,
) -> Result<Option<SavedState>, RunError> {
    let Some(store) = &opts.store else { return Ok(None) };
    for cand in store.candidates() {
        let s = match cand {
            Ok(s) => s,
            Err(e) => {
                checks.log(0, Check::Load, CheckOutcome::Fail, e.to_string());
                eprintln!("warning: {e}; trying an older save");
                continue;
            }
        };
        let theirs = (s.total, s.every, s.full_every, s.gerbicz_block);
        let ours = (opts.total, opts.layout.every, opts.layout.full_every, opts.gerbicz_block);
        if theirs != ours {
            return Err(RunError::Mismatch(format!(
                "saved: {} iterations, checkpoint every {}, gerbicz block {}; asked: {} iterations, checkpoint every {}, gerbicz block {}",
                s.total, s.every, s.gerbicz_block, opts.total, opts.layout.every, opts.gerbicz_block
            )));
        }
        let x = s.residue().map_err(|why| StateError::Corrupt { path: store.dir().into(), why })?;
        let ok = match (engine.kind(), s.previous().ok().flatten()) {
            (TestKind::Ll, _) => {
                checks.bump("jacobi_checks", 1);
                s.iteration == 0 || ll_jacobi_ok(&x)
            }
            (TestKind::Prp, Some(prev)) => {
                engine.load(&prev)?;
                engine.iterate(s.gerbicz_block)?;
                engine.read()? == x
            }
            (TestKind::Prp, None) => s.iteration == 0,
        };
        if !ok {
            checks.log(s.iteration, Check::Load, CheckOutcome::Fail, "saved residue failed its check on load".into());
            eprintln!("warning: the save at iteration {} failed its check on load; trying an older save", s.iteration);
            continue;
        }
        return Ok(Some(s));
    }
    Ok(None)
}
