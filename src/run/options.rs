//! What a run needs besides the engine ([`RunOptions`]): how far it goes, where its checkpoints
//! fall, how its error checks are scheduled, where it saves, and the faults and stops that tests
//! inject. The driver ([`crate::run`]) re-exports these types.

use crate::proof::points::ProofStore;
use crate::run::checkpoints::CheckpointLayout;
use crate::run::replay_store::ReplayStore;
use crate::run::state::StateStore;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// How spot checks are scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpotMode {
    Off,
    /// Sample as the CPU threads keep up; never stall the engine.
    Sample,
    /// Cover every iteration (the engine waits for the CPU when needed).
    Full,
}

/// A fault to inject (tests): flip `bit` of internal word `word` after iteration `iteration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub iteration: u64,
    pub word: usize,
    pub bit: u32,
}

/// Everything a run needs besides the engine.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub total: u64,
    pub layout: CheckpointLayout,
    pub shift: u32,
    /// The user named the shift (`--shift N`): a saved state with another shift is refused.
    pub shift_fixed: bool,
    pub started: String,
    /// Gerbicz block length L (PRP).
    pub gerbicz_block: u64,
    pub store: Option<StateStore>,
    pub save_every: Duration,
    pub spot: SpotMode,
    pub spot_threads: usize,
    /// LL: Jacobi checks in flight at once, each on its own CPU thread (at least one).
    pub jacobi_threads: usize,
    pub faults: Vec<Fault>,
    pub stop: Option<Arc<AtomicBool>>,
    /// Testing: behave as if `stop` was set once this iteration is reached.
    pub stop_at: Option<u64>,
    /// PRP: save the residue at each proof point here (only once a Gerbicz check covers it).
    pub proof: Option<ProofStore>,
    /// Write the replay points here as they are made, the chain keeping only their hashes
    /// (None: the chain holds them).
    pub replay: Option<ReplayStore>,
}

impl RunOptions {
    /// Plain options: no disk state, no spot checks, no faults (library use and tests).
    pub fn simple(total: u64, layout: CheckpointLayout, shift: u32) -> Self {
        RunOptions {
            total,
            layout,
            shift,
            shift_fixed: false,
            started: String::new(),
            gerbicz_block: crate::run::gerbicz::DEFAULT_BLOCK,
            store: None,
            save_every: Duration::from_secs(60),
            spot: SpotMode::Off,
            spot_threads: 0,
            jacobi_threads: 1,
            faults: Vec::new(),
            stop: None,
            stop_at: None,
            proof: None,
            replay: None,
        }
    }
}
