//! The verifier's replay: recompute a certificate's checkpoint chain independently. The chain is
//! cut into segments at the checkpoints that carry a full residue (in the certificate or its
//! replay-points sidecar); each segment is recomputed from its stored start (or from s_0 / x_0)
//! with a random shift count, segments in parallel on the host's GPUs and CPU cores
//! ([`super::schedule`]), and every recorded hash inside it must match. Finally the stated result
//! must follow from the final residue.

use super::schedule::{self, Devices, Workers};
use crate::cert::CertBody;
use crate::cert::Outcome;
use crate::engine::{Engine, EngineChoice, EngineError};
use crate::residue::{Residue, ResidueError};
use std::collections::BTreeMap;
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

/// Cut the certificate's chain into independently replayable segments. Assumes the body passed
/// its structure check (increasing checkpoints, residues of the right length).
pub fn segments(body: &CertBody) -> Result<Vec<Segment>, ReplayError> {
    segments_from(body, &BTreeMap::new())
}

/// [`segments`], also cutting at the replay points `points` (residues by iteration, checked
/// against the certificate's hashes by [`crate::cert::points::open_points`]).
pub fn segments_from(body: &CertBody, points: &BTreeMap<u64, Residue>) -> Result<Vec<Segment>, ReplayError> {
    let p = body.exponent;
    let mut out = Vec::new();
    let mut cur = Segment { from: 0, start: Residue::start(p, body.kind), checks: Vec::new() };
    for cp in &body.checkpoints {
        cur.checks.push((cp.iteration, cp.hash));
        let start = match (&cp.residue, points.get(&cp.iteration)) {
            (Some(bytes), _) => Some(
                Residue::from_bytes(p, bytes)
                    .map_err(|source| ReplayError::BadResidue { iteration: cp.iteration, source })?,
            ),
            (None, point) => point.cloned(),
        };
        if let Some(r) = start {
            let next = Segment { from: cp.iteration, start: r, checks: Vec::new() };
            out.push(std::mem::replace(&mut cur, next));
        }
    }
    if !cur.checks.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// Replay one segment on `engine` (built for the certificate's exponent and kind).
pub fn replay_segment(seg: &Segment, engine: &mut dyn Engine) -> Result<(), ReplayError> {
    replay_segment_with(seg, engine, &mut |_| {})
}

/// [`replay_segment`], telling `advanced` the iterations done at each checkpoint (for progress).
pub fn replay_segment_with(
    seg: &Segment,
    engine: &mut dyn Engine,
    advanced: &mut dyn FnMut(u64),
) -> Result<(), ReplayError> {
    engine.load(&seg.start)?;
    let mut at = seg.from;
    for &(iteration, hash) in &seg.checks {
        engine.iterate(iteration - at)?;
        advanced(iteration - at);
        at = iteration;
        if engine.read()?.hash() != hash {
            return Err(ReplayError::HashMismatch { iteration });
        }
    }
    Ok(())
}

/// The final residue of the certificate (the last checkpoint always carries it), or the start
/// value for a test without iterations (LL of p = 2).
pub fn final_residue(body: &CertBody) -> Result<Residue, ReplayError> {
    match body.checkpoints.last() {
        Some(cp) => {
            let bytes = cp.residue.as_ref().ok_or(ReplayError::HashMismatch { iteration: cp.iteration })?;
            Residue::from_bytes(body.exponent, bytes)
                .map_err(|source| ReplayError::BadResidue { iteration: cp.iteration, source })
        }
        None => Ok(Residue::start(body.exponent, body.kind)),
    }
}

/// Does the stated result (status, res64, res2048, residue type) follow from the final residue?
pub fn check_result(body: &CertBody) -> Result<(), ReplayError> {
    let last = final_residue(body)?;
    let derived = Outcome::from_final(body.kind, body.iterations, &last).map_err(|e| ReplayError::Result {
        stated: format!("{} res64 {}", body.result.status, body.result.res64),
        derived: e.to_string(),
    })?;
    if derived != body.result {
        return Err(ReplayError::Result {
            stated: format!("{} res64 {}", body.result.status, body.result.res64),
            derived: format!("{} res64 {}", derived.status, derived.res64),
        });
    }
    Ok(())
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub engine: EngineChoice,
    /// CPU threads (those driving GPUs included).
    pub jobs: usize,
    /// Replay only this many randomly chosen segments (a spot check).
    pub sample: Option<usize>,
    /// The GPUs to use.
    pub devices: Devices,
    /// Replay points from the sidecar (residues by iteration, checked against the certificate).
    pub points: BTreeMap<u64, Residue>,
}

impl ReplayOptions {
    /// All segments, no sidecar, every GPU: the plain replay on `engine` with `jobs` threads.
    pub fn new(engine: EngineChoice, jobs: usize) -> Self {
        ReplayOptions { engine, jobs, sample: None, devices: Devices::All, points: BTreeMap::new() }
    }
}

/// What a replay covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayReport {
    pub segments_total: usize,
    pub segments_replayed: usize,
    pub iterations_total: u64,
    pub iterations_replayed: u64,
    pub hashes_checked: u64,
    pub engine: String,
}

pub(crate) fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    // Without OS randomness the replay still works; it only loses the shift's independence.
    let _ = getrandom::getrandom(&mut b);
    u64::from_le_bytes(b)
}

/// Pick `k` of `n` indices at random (partial Fisher–Yates), in increasing order.
fn sample_indices(n: usize, k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    for i in 0..k.min(n) {
        let j = i + (random_u64() % (n - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(k.min(n));
    idx.sort_unstable();
    idx
}

/// Replay the certificate's chain (all of it, or a random sample of segments) on the workers
/// `opts` allows ([`Workers::choose`]) and check its result. The first failure stops the replay.
pub fn replay(body: &CertBody, opts: &ReplayOptions) -> Result<ReplayReport, ReplayError> {
    if opts.jobs == 0 {
        return Err(ReplayError::Jobs);
    }
    check_result(body)?;
    let all = segments_from(body, &opts.points)?;
    let chosen: Vec<&Segment> = match opts.sample {
        Some(k) => sample_indices(all.len(), k).into_iter().map(|i| &all[i]).collect(),
        None => all.iter().collect(),
    };
    let (p, kind) = (body.exponent, body.kind);
    let workers = Workers::choose(opts.engine, &opts.devices, opts.jobs, p, kind, &chosen)?;
    if let Some(note) = &workers.note {
        eprintln!("{note}");
    }
    let done = schedule::run(&chosen, p, kind, &workers, true);
    let mut hashes = 0;
    let mut left = None;
    for (seg, run) in chosen.iter().zip(done.runs) {
        match run {
            Some(run) => {
                run.verdict?;
                hashes += seg.checks.len() as u64;
            }
            None => left = left.or(Some(seg.from)),
        }
    }
    if let Some(from) = left {
        return Err(ReplayError::NotReplayed { from });
    }
    Ok(ReplayReport {
        segments_total: all.len(),
        segments_replayed: chosen.len(),
        iterations_total: body.iterations,
        iterations_replayed: chosen.iter().map(|s| s.iterations()).sum(),
        hashes_checked: hashes,
        engine: done.engines,
    })
}
