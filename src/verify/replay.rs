//! The verifier's replay: recompute a certificate's checkpoint chain independently. The chain is
//! cut into segments at the checkpoints that carry a full residue (in the certificate or its
//! replay-points sidecar); each segment is recomputed from its stored start (or from s_0 / x_0)
//! with a random shift count, segments in parallel on the host's GPUs and CPU cores
//! ([`super::schedule`]), and every recorded hash inside it must match. Finally the stated result
//! must follow from the final residue.

use super::schedule::{self, Devices, Workers};
use crate::cert::CertBody;
use crate::cert::Outcome;
use crate::engine::{Engine, EngineChoice, EngineError, Value};
use crate::residue::{Residue, ResidueError};
use crate::transform::plan::Arith;
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

/// Does the stated result (status, res64, res2048, residue type) follow from the final residue,
/// in the residue type the certificate names ([`Outcome::in_residue_type`])?
pub fn check_result(body: &CertBody) -> Result<(), ReplayError> {
    let last = final_residue(body)?;
    let stated =
        || format!("{} res64 {} (residue type {:?})", body.result.status, body.result.res64, body.result.residue_type);
    let derived = Outcome::in_residue_type(body.kind, body.iterations, &last, body.result.residue_type)
        .map_err(|e| ReplayError::Result { stated: stated(), derived: e.to_string() })?;
    if derived != body.result {
        return Err(ReplayError::Result {
            stated: stated(),
            derived: format!("{} res64 {}", derived.status, derived.res64),
        });
    }
    Ok(())
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub engine: EngineChoice,
    /// The arithmetic of the transform engines (GPU, twin); any arithmetic replays any
    /// certificate (the prover's one is recorded in it).
    pub arith: Arith,
    /// CPU threads (those driving GPUs included).
    pub jobs: usize,
    /// Replay only this many segments (a spot check): the last one, which ends at the final
    /// residue, and the rest chosen at random; at least the number of segments is a full replay.
    pub sample: Option<usize>,
    /// The GPUs to use.
    pub devices: Devices,
    /// Replay points from the sidecar (residues by iteration, checked against the certificate).
    pub points: BTreeMap<u64, Residue>,
}

impl ReplayOptions {
    /// All segments, no sidecar, every GPU: the plain replay on `engine` with `jobs` threads.
    pub fn new(engine: EngineChoice, jobs: usize) -> Self {
        ReplayOptions {
            engine,
            arith: Arith::Goldilocks,
            jobs,
            sample: None,
            devices: Devices::All,
            points: BTreeMap::new(),
        }
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

/// The `k` of `n` segments a spot check replays, in increasing order: always the last (it ends
/// at the final residue, from which the verdict follows, so a forged final residue is always
/// caught), and k − 1 of the others at random (partial Fisher–Yates); all of them when k ≥ n.
fn sample_indices(n: usize, k: usize) -> Vec<usize> {
    if k >= n {
        return (0..n).collect();
    }
    let others = n - 1;
    let mut idx: Vec<usize> = (0..others).collect();
    let pick = k.saturating_sub(1);
    for i in 0..pick {
        let j = i + (random_u64() % (others - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(pick);
    idx.push(n - 1);
    idx.sort_unstable();
    idx
}

/// Replay the certificate's chain (all of it, or a random sample of segments) on the workers
/// `opts` allows ([`Workers::choose`]) and check its result. The first failure stops the replay.
pub fn replay(body: &CertBody, opts: &ReplayOptions) -> Result<ReplayReport, ReplayError> {
    if opts.jobs == 0 {
        return Err(ReplayError::Jobs);
    }
    if opts.sample == Some(0) {
        return Err(ReplayError::SampleZero);
    }
    check_result(body)?;
    let all = segments_from(body, &opts.points)?;
    let chosen: Vec<&Segment> = match opts.sample {
        Some(k) => sample_indices(all.len(), k).into_iter().map(|i| &all[i]).collect(),
        None => all.iter().collect(),
    };
    let (p, kind) = (body.exponent, body.kind);
    crate::trace::mark("replay: segments built");
    let workers = Workers::choose(opts.engine, opts.arith, &opts.devices, opts.jobs, p, kind, &chosen)?;
    crate::trace::mark("replay: workers chosen");
    if let Some(note) = &workers.note {
        eprintln!("{note}");
    }
    let done = schedule::run(&chosen, p, kind, &workers, true);
    for line in done.busy(&chosen) {
        eprintln!("replay: {line}");
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cert::samples::sample;
    use crate::cert::Status;
    use crate::exponent::TestKind;
    use quickcheck::quickcheck;

    quickcheck! {
        fn a_sample_always_holds_the_last_segment(n: u8, k: u8) -> bool {
            let (n, k) = (n as usize % 40 + 1, k as usize % 50);
            let idx = sample_indices(n, k);
            let want = if k >= n { n } else { k.max(1) };
            idx.len() == want
                && idx.last() == Some(&(n - 1))
                && idx.windows(2).all(|w| w[0] < w[1])
        }
    }

    fn opts(sample: Option<usize>) -> ReplayOptions {
        ReplayOptions { sample, ..ReplayOptions::new(EngineChoice::Cpu, 1) }
    }

    /// The body with its final residue replaced by `x` and the result to match (a forgery that
    /// passes the structure check).
    fn forge_final(body: &CertBody, x: &Residue) -> CertBody {
        let mut b = body.clone();
        let last = b.checkpoints.last_mut().unwrap();
        last.hash = x.hash();
        last.residue = Some(serde_bytes::ByteBuf::from(x.to_bytes()));
        b.result = Outcome::from_final(b.kind, b.iterations, x).unwrap();
        b.validate().unwrap();
        b
    }

    #[test]
    fn a_forged_final_residue_fails_every_sample() {
        // M_1009 is composite: its LL residue is not 0; the forgery says it is.
        let body = sample(TestKind::Ll, 1009, 1007, 20);
        assert_eq!(body.result.status, Status::Composite);
        let forged = forge_final(&body, &Residue::from_u64(1009, 0));
        assert_eq!(forged.result.status, Status::Prime);
        let n = segments(&body).unwrap().len();
        assert!(n > 10);
        for _ in 0..20 {
            assert!(matches!(replay(&forged, &opts(Some(1))), Err(ReplayError::HashMismatch { iteration: 1007 })));
        }
        assert!(matches!(replay(&forged, &opts(Some(0))), Err(ReplayError::SampleZero)));
        let one = replay(&body, &opts(Some(1))).unwrap();
        assert_eq!((one.segments_replayed, one.segments_total), (1, n));
        let all = replay(&body, &opts(Some(n + 5))).unwrap();
        assert_eq!((all.segments_replayed, all.iterations_replayed), (n, 1007));
    }

    #[test]
    fn residue_types_1_and_3_follow_one_rule() {
        let body = sample(TestKind::Prp, 127, 127, 10);
        assert_eq!(body.result.residue_type, Some(1));
        check_result(&body).unwrap();
        replay(&body, &opts(None)).unwrap();
        let mut t3 = body.clone();
        t3.result.residue_type = Some(3);
        t3.result.res64 = "0000000000000009".into();
        t3.result.res2048 = format!("{:0>512}", "9");
        t3.validate().unwrap();
        check_result(&t3).unwrap();
        replay(&t3, &opts(None)).unwrap();
        // A type-3 certificate stating the type-1 residue fails on both paths.
        let mut wrong = body.clone();
        wrong.result.residue_type = Some(3);
        assert!(wrong.validate().is_err());
        assert!(matches!(check_result(&wrong), Err(ReplayError::Result { .. })));
    }
}
