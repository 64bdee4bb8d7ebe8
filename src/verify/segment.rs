//! One segment of a certificate's checkpoint chain and its replay on an engine: what the
//! replay ([`super::replay`]) cuts the chain into and the scheduler ([`super::schedule`]) hands
//! out, and why a replay fails.

use crate::engine::{Engine, EngineError, Value};
use crate::residue::{Residue, ResidueError};
use thiserror::Error;

/// Why a replay failed; names the first failing check.
#[derive(Debug, Error)]
pub enum ReplayError {
    #[error("replay mismatch at iteration {iteration}: the recomputed residue's hash differs from the certificate's")]
    HashMismatch { iteration: u64 },
    #[error("checkpoint at iteration {iteration}: {source}")]
    BadResidue { iteration: u64, source: ResidueError },
    #[error("the stated result does not follow from the final residue: certificate says {stated}, the residue gives {derived}")]
    Result { stated: String, derived: String },
    #[error("replay engine: {0}")]
    Engine(#[from] EngineError),
    #[error("--jobs must be at least 1")]
    Jobs,
    #[error("--sample 0 replays nothing: the signature alone is no verification (give K of at least 1, or no --sample for a full replay)")]
    SampleZero,
    #[error("thread pool: {0}")]
    Pool(String),
    #[error("the segment from iteration {from} was not replayed: no worker was left to take it")]
    NotReplayed { from: u64 },
}

/// A stretch of the chain that can be replayed on its own.
#[derive(Debug, Clone)]
pub struct Segment {
    /// Iteration of the start value (0 for s_0 / x_0).
    pub from: u64,
    pub start: Residue,
    /// The checkpoints inside the segment, in order: (iteration, hash); the last one ends it.
    pub checks: Vec<(u64, [u8; 32])>,
}

impl Segment {
    pub fn iterations(&self) -> u64 {
        self.checks.last().map_or(0, |c| c.0) - self.from
    }
}

/// Replay one segment on `engine` (built for the certificate's exponent and kind), telling
/// `advanced` the iterations done at each checkpoint (for progress).
/// The iterations to the next checkpoint are queued behind each read ([`Engine::read_then_queue`]),
/// so a GPU goes on while the host converts and hashes the residue it read, instead of idling
/// through every read (and through whatever slows the host's side: other GPUs' feeder threads,
/// CPU replay threads).
pub fn replay_segment_with(
    seg: &Segment,
    engine: &mut dyn Engine,
    advanced: &mut dyn FnMut(u64),
) -> Result<(), ReplayError> {
    engine.load(&seg.start)?;
    let (mut at, mut queued) = (seg.from, seg.from);
    for (j, &(iteration, hash)) in seg.checks.iter().enumerate() {
        if queued < iteration {
            engine.iterate_queued(iteration - queued)?;
        }
        let x = match seg.checks.get(j + 1) {
            Some(&(next, _)) => {
                queued = next;
                engine.read_then_queue(Value::State, next - iteration)?
            }
            None => engine.read()?,
        };
        advanced(iteration - at);
        at = iteration;
        if x.hash() != hash {
            return Err(ReplayError::HashMismatch { iteration });
        }
    }
    Ok(())
}

/// A random u64 from the OS (the shift counts of the replay and the proof check).
pub(crate) fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    // Without OS randomness the replay still works; it only loses the shift's independence.
    let _ = getrandom::getrandom(&mut b);
    u64::from_le_bytes(b)
}
