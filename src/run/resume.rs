//! Resuming a run: pick the newest saved state of the test that passes its checks on load (its
//! exponent and test kind; its residue against the hash its own checkpoint chain stored for that
//! iteration; LL: the Jacobi symbol; PRP: the saved state is recomputed from the one a Gerbicz
//! block before it), falling back to the previous save when the newest is damaged or fails. When
//! saves exist but none passes, the run stops naming them rather than start over silently.

use crate::cert::{Check, CheckLog, CheckOutcome};
use crate::engine::Engine;
use crate::exponent::TestKind;
use crate::residue::Residue;
use crate::run::jacobi::ll_jacobi_ok;
use crate::run::state::{SavedState, StateError};
use crate::run::{RunError, RunOptions};

/// Resume from the newest usable saved state (below iteration `below`, when given: the saves
/// from there on were given up), verifying it; None when there is none.
pub(crate) fn resume(
    engine: &mut dyn Engine,
    opts: &RunOptions,
    checks: &mut CheckLog,
    below: Option<u64>,
) -> Result<Option<SavedState>, RunError> {
    let Some(store) = &opts.store else { return Ok(None) };
    let candidates = store.candidates();
    if candidates.is_empty() {
        return Ok(None);
    }
    for cand in candidates {
        let s = match cand {
            Ok(s) if below.is_some_and(|b| s.iteration >= b) => continue,
            Ok(s) => s,
            Err(e) => {
                checks.log(0, Check::Load, CheckOutcome::Fail, e.to_string());
                eprintln!("warning: {e}; trying an older save");
                continue;
            }
        };
        let (p, kind) = (engine.exponent(), engine.kind());
        if (s.exponent, s.kind) != (p, kind) {
            let why = format!("it holds M{} {}, not M{p} {}", s.exponent, s.kind.worktype(), kind.worktype());
            checks.log(s.iteration, Check::Load, CheckOutcome::Fail, why.clone());
            eprintln!("warning: a save in {} is not of this test ({why}); trying an older save", store.dir().display());
            continue;
        }
        if opts.shift_fixed && s.shift != opts.shift {
            return Err(RunError::Mismatch(format!(
                "saved with shift {}; asked: --shift {}; drop --shift to resume",
                s.shift, opts.shift
            )));
        }
        let theirs = (s.total, s.every, s.full_every, s.gerbicz_block);
        let ours = (opts.total, opts.layout.every, opts.layout.full_every, opts.gerbicz_block);
        if theirs != ours {
            return Err(RunError::Mismatch(format!(
                "saved: {} iterations, checkpoint every {}, gerbicz block {}; asked: {} iterations, checkpoint every {}, gerbicz block {}",
                s.total, s.every, s.gerbicz_block, opts.total, opts.layout.every, opts.gerbicz_block
            )));
        }
        let x = s.residue().map_err(|why| StateError::Corrupt { path: store.dir().into(), why })?;
        if !matches_own_chain(&s, &x) {
            checks.log(s.iteration, Check::Load, CheckOutcome::Fail, "residue differs from its chain's hash".into());
            eprintln!(
                "warning: the save at iteration {} does not match the hash its checkpoint chain holds for it; trying an older save",
                s.iteration
            );
            continue;
        }
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
    Err(RunError::NoUsableState { dir: store.dir().to_path_buf(), files: store.file_names().join(", ") })
}

/// Does x agree with the hash the state's own checkpoint chain stores for its iteration? A state
/// saved at a checkpoint has one (LL always; PRP when the save falls on one); iteration 0 is the
/// start value, which the driver rebuilds and checks itself.
fn matches_own_chain(s: &SavedState, x: &Residue) -> bool {
    match s.chain.iter().rev().find(|c| c.iteration == s.iteration) {
        Some(c) => c.hash == x.hash(),
        None => s.kind == TestKind::Prp || s.iteration == 0,
    }
}
