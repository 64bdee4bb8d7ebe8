//! The driver: runs a test on an engine from the start value (or a resumed state) to the target
//! iteration in chunks, records the checkpoint chain (hash of every checkpoint, the full residue
//! of a spaced subset), reports progress, and turns the final residue into a result.

use crate::cert::{CheckLog, Checkpoint, Outcome};
use crate::engine::{Engine, EngineError};
use crate::exponent::TestKind;
use crate::progress::Progress;
use crate::residue::{byte_count, Residue};
use serde_bytes::ByteBuf;
use thiserror::Error;

/// Default size budget for the full residues embedded in a certificate.
pub const DEFAULT_RESIDUE_BUDGET: u64 = 64 << 20;
/// Never embed more than this many full residues (replay segments), whatever the budget.
pub const MAX_FULL_RESIDUES: u64 = 1024;
/// The default checkpoint interval aims at about this many checkpoints per test.
const TARGET_CHECKPOINTS: u64 = 2000;

/// Why a run failed.
#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("invalid run parameters: {0}")]
    Spec(String),
}

/// Where the checkpoints of a run fall and which carry the full residue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointLayout {
    /// Iterations between checkpoints (the last checkpoint is at the final iteration).
    pub every: u64,
    /// Every how many checkpoints a full residue is stored (the final one always is).
    pub full_every: u64,
}

impl CheckpointLayout {
    /// The layout for `iterations` iterations of p: `every` as given or chosen for ~2000
    /// checkpoints, full residues spaced to fit `budget` bytes and [`MAX_FULL_RESIDUES`].
    pub fn choose(p: u32, iterations: u64, every: Option<u64>, budget: u64) -> Result<Self, RunError> {
        let every = match every {
            Some(0) => return Err(RunError::Spec("--checkpoint-every must be at least 1".into())),
            Some(k) => k,
            None => (iterations / TARGET_CHECKPOINTS).max(1),
        };
        let count = iterations.div_ceil(every).max(1);
        let bytes = byte_count(p) as u64;
        let max_full = (budget / bytes).min(MAX_FULL_RESIDUES);
        if max_full == 0 {
            return Err(RunError::Spec(format!(
                "residue budget {budget} bytes is smaller than one residue ({bytes} bytes)"
            )));
        }
        Ok(CheckpointLayout { every, full_every: count.div_ceil(max_full) })
    }

    /// Is iteration k (1-based count of squarings done) a checkpoint of a run of `total`?
    pub fn is_checkpoint(&self, k: u64, total: u64) -> bool {
        k == total || k % self.every == 0
    }

    /// Does the checkpoint at iteration k carry the full residue?
    pub fn is_full(&self, k: u64, total: u64) -> bool {
        k == total || (k % self.every == 0 && (k / self.every) % self.full_every == 0)
    }
}

/// What one run produced.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub checkpoints: Vec<Checkpoint>,
    pub last: Residue,
    pub iterations: u64,
    pub checks: CheckLog,
    /// Wall time of the iterations, in seconds.
    pub seconds: f64,
}

/// The starting value of a test, as a residue.
pub fn start_residue(p: u32, kind: TestKind) -> Residue {
    Residue::from_u64(p, kind.start_value())
}

/// A checkpoint record for residue r at iteration k.
pub fn checkpoint(k: u64, r: &Residue, full: bool) -> Checkpoint {
    Checkpoint { iteration: k, hash: r.hash(), residue: full.then(|| ByteBuf::from(r.to_bytes())) }
}

/// Run `total` iterations from the start value on `engine`, recording checkpoints per `layout`.
pub fn run(
    engine: &mut dyn Engine,
    total: u64,
    layout: CheckpointLayout,
    progress: &mut Progress,
) -> Result<RunRecord, RunError> {
    let p = engine.exponent();
    let start = std::time::Instant::now();
    let first = start_residue(p, engine.kind());
    engine.load(&first)?;
    let mut checkpoints = Vec::new();
    let mut last = first;
    let mut k = 0;
    while k < total {
        let next = (k / layout.every + 1) * layout.every;
        let step = next.min(total) - k;
        engine.iterate(step)?;
        k += step;
        let r = engine.read()?;
        checkpoints.push(checkpoint(k, &r, layout.is_full(k, total)));
        last = r;
        progress.update(k);
    }
    progress.finish();
    Ok(RunRecord { checkpoints, last, iterations: total, checks: CheckLog::default(), seconds: start.elapsed().as_secs_f64() })
}

/// The result a final residue implies, GIMPS style. `full` says whether the run reached the
/// end of the test (otherwise the status is "partial" and res64 is that of the residue itself).
pub fn outcome(kind: TestKind, last: &Residue, full: bool) -> Outcome {
    let p = last.exponent();
    if !full {
        return Outcome { status: "partial".into(), res64: last.res64_hex(), res2048: last.res2048_hex(), residue_type: None };
    }
    match kind {
        TestKind::Ll => {
            // p = 2 is special: M_2 = 3 is prime and the test has no iterations.
            let prime = p == 2 || last.is_zero();
            Outcome { status: status(prime), res64: last.res64_hex(), res2048: last.res2048_hex(), residue_type: None }
        }
        TestKind::Prp => {
            let prime = last.equals_u64(9);
            let t1 = prp_type1(last);
            Outcome { status: status(prime), res64: t1.res64_hex(), res2048: t1.res2048_hex(), residue_type: Some(1) }
        }
    }
}

fn status(prime: bool) -> String {
    if prime { "P" } else { "C" }.into()
}

/// The type-1 PRP residue 3^(M_p − 1) = x_p / 9 from the type-3 residue x_p = 3^(M_p + 1).
pub fn prp_type1(x_p: &Residue) -> Residue {
    let p = x_p.exponent();
    let m = (rug::Integer::from(1) << p) - 1u32;
    match rug::Integer::from(9).invert(&m) {
        Ok(inv9) => Residue::from_integer(p, &(x_p.to_integer() * inv9)),
        // 9 is not invertible only for p = 2 (M_2 = 3), where every residue is 0.
        Err(_) => x_p.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_counts() {
        let l = CheckpointLayout::choose(9689, 9687, None, DEFAULT_RESIDUE_BUDGET).unwrap();
        assert_eq!(l.every, 4);
        let cps: Vec<u64> = (1..=9687).filter(|&k| l.is_checkpoint(k, 9687)).collect();
        assert!(cps.len() >= 1000 && cps.len() <= 10000, "{}", cps.len());
        assert_eq!(*cps.last().unwrap(), 9687);
        let full = cps.iter().filter(|&&k| l.is_full(k, 9687)).count() as u64;
        assert!(full <= MAX_FULL_RESIDUES + 1 && full >= 2);
        // A tight budget: at most 3 residues of 1212 bytes.
        let l = CheckpointLayout::choose(9689, 9687, Some(100), 3 * 1212).unwrap();
        let full = (1..=9687).filter(|&k| l.is_full(k, 9687)).count();
        assert!(full <= 4, "{full}");
        assert!(CheckpointLayout::choose(9689, 9687, Some(0), 1 << 20).is_err());
        assert!(CheckpointLayout::choose(9689, 9687, None, 100).is_err());
    }

    #[test]
    fn type1_of_nine_is_one() {
        for p in [3u32, 5, 7, 13, 89, 127] {
            assert!(prp_type1(&Residue::from_u64(p, 9)).equals_u64(1));
        }
    }
}
