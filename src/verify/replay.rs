//! The verifier's replay: recompute a certificate's checkpoint chain independently. The chain is
//! cut into segments at the checkpoints that carry a full residue (in the certificate or its
//! replay-points sidecar); each segment is recomputed from its stored start (or from s_0 / x_0)
//! with a random shift count, segments in parallel on the host's GPUs and CPU cores
//! ([`super::schedule`]), and every recorded hash inside it must match. Finally the stated result
//! must follow from the final residue.

use super::schedule;
pub(crate) use super::segment::random_u64;
pub use super::segment::{ReplayError, Segment};
use crate::cert::CertBody;
use crate::cert::Outcome;
use crate::decide::{Ask, Devices};
use crate::engine::arith::ArithChoice;
use crate::engine::EngineChoice;
use crate::residue::Residue;
use std::collections::BTreeMap;

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
    /// `--engine`, `--arith` (of the transform engines: any arithmetic replays any certificate;
    /// the prover's is recorded in it) and `--devices`.
    pub ask: Ask,
    /// CPU threads (those driving GPUs included).
    pub jobs: usize,
    /// Replay only this many segments (a spot check): the last one, which ends at the final
    /// residue, and the rest chosen at random; at least the number of segments is a full replay.
    pub sample: Option<usize>,
    /// Replay points from the sidecar (residues by iteration, checked against the certificate).
    pub points: BTreeMap<u64, Residue>,
}

impl ReplayOptions {
    /// All segments, no sidecar, every GPU: the plain replay on `engine` with `jobs` threads.
    pub fn new(engine: EngineChoice, jobs: usize) -> Self {
        ReplayOptions {
            ask: Ask { engine, arith: ArithChoice::Auto, devices: Devices::All },
            jobs,
            sample: None,
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
    /// The arithmetic of the transform engines that replayed (`None`: GMP alone).
    pub transform: Option<crate::transform::plan::Arith>,
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
/// `opts` allows ([`schedule::workers`]) and check its result. The first failure stops the replay.
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
    let workers = schedule::workers(&opts.ask, opts.jobs, p, kind, &chosen)?;
    let done = schedule::run(&chosen, &workers, true);
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
        transform: workers.transform(),
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
