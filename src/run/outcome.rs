//! What a run returns (src/run/mod.rs): the record of a finished run, how a run ended, and why one
//! failed.

use crate::cert::{CheckLog, Checkpoint};
use crate::engine::EngineError;
use crate::proof::points::StoreError;
use crate::residue::Residue;
use crate::run::state::StateError;
use thiserror::Error;

/// Rollbacks to the same iteration after which an error is called consistent (not transient).
pub(crate) const MAX_ROLLBACKS_AT_ONE_PLACE: u32 = 3;

/// Why a run failed.
#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("consistent error: the {check} check failed {MAX_ROLLBACKS_AT_ONE_PLACE} times after rolling back to iteration {iteration}; this looks like a deterministic bug or broken hardware, not a transient fault")]
    Consistent { check: String, iteration: u64 },
    /// A check failed consistently right after the saved state this run resumed from: the
    /// driver falls back to an older save ([`crate::run::run_checked`]); never shown to a user.
    #[error("consistent error: the {check} check failed {MAX_ROLLBACKS_AT_ONE_PLACE} times after resuming from the save at iteration {iteration}")]
    LoadedStateFails { check: String, iteration: u64 },
    #[error("a saved state for this test exists with different parameters ({0}); pass --fresh to discard it or use another --state-dir")]
    Mismatch(String),
    #[error("the saved state at iteration {iteration} cannot continue its proof ({source}); pass --fresh to redo the test with a proof, or --no-proof to finish it without one")]
    ProofResume { iteration: u64, source: StoreError },
    #[error("no saved state in {dir} passed its checks on load ({files}); nothing was changed: move them aside, or pass --fresh to start the test again")]
    NoUsableState { dir: std::path::PathBuf, files: String },
    #[error("saving a proof point: {0}")]
    ProofPoint(StoreError),
    #[error("a proof needs a full PRP test (p iterations); this run is {kind} for {total} of {full} iterations")]
    ProofNotFull { kind: &'static str, total: u64, full: u64 },
}

/// What a finished run produced.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub checkpoints: Vec<Checkpoint>,
    pub last: Residue,
    pub iterations: u64,
    pub checks: CheckLog,
    /// The start shift count (the saved one after a resume).
    pub shift: u32,
    pub started: String,
    /// Wall time of this process's iterations, in seconds, and how many it did.
    pub seconds: f64,
    pub iterations_here: u64,
    /// Of `seconds`, the loop alone, checks in it included: from its start to the end of its last
    /// iteration, before the final checks (LL's Jacobi check of the last residue, PRP's last
    /// Gerbicz check) and the wait for spot checks in flight; 0 when no iteration ran here.
    pub loop_seconds: f64,
    /// The iteration this process resumed from, if it did.
    pub resumed_from: Option<u64>,
    /// Of `seconds`, the driver thread's time by share (engine, host checks).
    pub times: crate::run::timing::LoopTimes,
}

/// How a run ended.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one value per run: boxing the record would save nothing
pub enum RunEnd {
    Done(RunRecord),
    /// Stopped on request after saving a verified state at `iteration`.
    Interrupted {
        iteration: u64,
    },
}
