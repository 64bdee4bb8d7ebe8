//! Where a run's checkpoints fall (every K iterations, the last at the final iteration), which
//! of them carry the full residue in the certificate (spaced to fit its size budget) and which
//! are replay points for the sidecar file (`--replay-points`), and the split of a finished
//! chain between the two.

use crate::cert::Checkpoint;
use crate::residue::{byte_count, Residue};
use serde_bytes::ByteBuf;
use thiserror::Error;

/// Invalid checkpoint parameters.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid checkpoint parameters: {0}")]
pub struct LayoutError(pub String);

/// Default size budget for the full residues embedded in a certificate.
pub const DEFAULT_RESIDUE_BUDGET: u64 = 64 << 20;
/// The budget when none is given: [`DEFAULT_RESIDUE_BUDGET`] for the replay, or with a PRP
/// proof only the final residue: the proof replaces the replay (`verify --replay` then replays
/// the test from its start), and the certificate stays about the size of a GIMPS proof file
/// (at p = 20,996,011 power 10: 29 MB instead of 96 MB). Always at least the final residue
/// (above p = 2^29 one residue is larger than [`DEFAULT_RESIDUE_BUDGET`]).
pub fn default_residue_budget(p: u32, with_proof: bool) -> u64 {
    let one = byte_count(p) as u64;
    if with_proof {
        one
    } else {
        DEFAULT_RESIDUE_BUDGET.max(one)
    }
}

/// Never embed more than this many full residues (replay segments), whatever the budget: the
/// certificate format's bound ([`crate::cert::MAX_FULL_RESIDUES`]).
pub use crate::cert::MAX_FULL_RESIDUES;
/// The default checkpoint interval aims at about this many checkpoints per test.
const TARGET_CHECKPOINTS: u64 = 2000;
/// ... but is at least this many iterations: a checkpoint costs a read of the residue (on a GPU
/// a wait of ~20 µs, ~3 one-block iterations at small p), so short tests take fewer.
const MIN_EVERY: u64 = 64;

/// Where the checkpoints of a run fall and which carry the full residue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointLayout {
    /// Iterations between checkpoints (the last checkpoint is at the final iteration).
    pub every: u64,
    /// Every how many checkpoints a full residue is stored (the final one always is).
    pub full_every: u64,
    /// Every how many checkpoints a replay point is kept for the sidecar (0: none).
    pub point_every: u64,
}

/// Default `--replay-points` without a proof: enough starting points for a 64-way replay.
pub const DEFAULT_REPLAY_POINTS: u64 = 64;

impl CheckpointLayout {
    /// The layout for `iterations` iterations of p: `every` as given or chosen for ~2000
    /// checkpoints (at least MIN_EVERY iterations apart), full residues spaced to fit `budget` bytes and [`MAX_FULL_RESIDUES`].
    pub fn choose(p: u32, iterations: u64, every: Option<u64>, budget: u64) -> Result<Self, LayoutError> {
        let every = match every {
            Some(0) => return Err(LayoutError("--checkpoint-every must be at least 1".into())),
            Some(k) => k,
            None => (iterations / TARGET_CHECKPOINTS).max(MIN_EVERY),
        };
        let count = iterations.div_ceil(every).max(1);
        let bytes = byte_count(p) as u64;
        let max_full = (budget / bytes).min(MAX_FULL_RESIDUES);
        if max_full == 0 {
            return Err(LayoutError(format!(
                "residue budget {budget} bytes is smaller than one residue ({bytes} bytes)"
            )));
        }
        Ok(CheckpointLayout { every, full_every: count.div_ceil(max_full), point_every: 0 })
    }

    /// The same layout with at most `points` replay points (evenly spaced checkpoints, besides
    /// those the certificate holds) kept for the sidecar.
    pub fn with_replay_points(self, iterations: u64, points: u64) -> Self {
        let count = iterations.div_ceil(self.every).max(1);
        let point_every = if points == 0 { 0 } else { count.div_ceil(points) };
        CheckpointLayout { point_every, ..self }
    }

    /// Is iteration k (1-based count of squarings done) a checkpoint of a run of `total`?
    pub fn is_checkpoint(&self, k: u64, total: u64) -> bool {
        k == total || k.is_multiple_of(self.every)
    }

    /// Does the run keep the full residue of the checkpoint at iteration k (for the certificate
    /// or as a replay point)?
    pub fn is_full(&self, k: u64, total: u64) -> bool {
        self.in_certificate(k, total) || self.is_point(k)
    }

    /// Does the certificate carry the full residue of the checkpoint at iteration k?
    pub fn in_certificate(&self, k: u64, total: u64) -> bool {
        k == total || (k.is_multiple_of(self.every) && (k / self.every).is_multiple_of(self.full_every))
    }

    /// Is the checkpoint at iteration k a replay point the certificate does not carry (its
    /// residue goes to the sidecar)?
    pub fn is_replay_point(&self, k: u64, total: u64) -> bool {
        self.is_point(k) && !self.in_certificate(k, total)
    }

    /// Is the checkpoint at iteration k a replay point?
    fn is_point(&self, k: u64) -> bool {
        self.point_every != 0 && k.is_multiple_of(self.every) && (k / self.every).is_multiple_of(self.point_every)
    }
}

/// Split a finished chain: residues the certificate does not carry are taken out of it and
/// returned as (iteration, residue bytes), in order, for the sidecar. A replay point whose residue
/// the chain does not hold (the run kept it on disk) is asked of `load`, which answers None when
/// it has no good copy: that point is then left out.
pub fn split_points(
    chain: &mut [Checkpoint],
    layout: &CheckpointLayout,
    total: u64,
    mut load: impl FnMut(&Checkpoint) -> Option<Residue>,
) -> Vec<(u64, ByteBuf)> {
    chain
        .iter_mut()
        .filter(|c| !layout.in_certificate(c.iteration, total))
        .filter_map(|c| match c.residue.take() {
            Some(r) => Some((c.iteration, r)),
            None if layout.is_replay_point(c.iteration, total) => {
                load(c).map(|x| (c.iteration, ByteBuf::from(x.to_bytes())))
            }
            None => None,
        })
        .collect()
}

/// A checkpoint record for residue r at iteration k.
pub fn checkpoint(k: u64, r: &Residue, full: bool) -> Checkpoint {
    Checkpoint { iteration: k, hash: r.hash(), residue: full.then(|| ByteBuf::from(r.to_bytes())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_counts() {
        let l = CheckpointLayout::choose(9689, 9687, None, DEFAULT_RESIDUE_BUDGET).unwrap();
        assert_eq!(l.every, MIN_EVERY);
        let cps: Vec<u64> = (1..=9687).filter(|&k| l.is_checkpoint(k, 9687)).collect();
        assert_eq!(cps.len(), 9687 / 64 + 1);
        assert_eq!(*cps.last().unwrap(), 9687);
        let full = cps.iter().filter(|&&k| l.is_full(k, 9687)).count() as u64;
        assert_eq!(full, cps.len() as u64, "all of them fit the budget");
        // A long test: about 2000 checkpoints, at most MAX_FULL_RESIDUES full ones (+ the last).
        let l = CheckpointLayout::choose(20_996_011, 20_996_010, None, DEFAULT_RESIDUE_BUDGET).unwrap();
        assert_eq!(l.every, 20_996_010 / 2000);
        let cps = (l.every..=20_996_010u64).step_by(l.every as usize).chain([20_996_010]);
        let full = cps.filter(|&k| l.is_full(k, 20_996_010)).count() as u64;
        assert!((2..=MAX_FULL_RESIDUES + 1).contains(&full), "{full}");
        // Tests shorter than one interval have only their final checkpoint.
        let l = CheckpointLayout::choose(13, 11, None, DEFAULT_RESIDUE_BUDGET).unwrap();
        assert_eq!((1..=11).filter(|&k| l.is_checkpoint(k, 11)).collect::<Vec<_>>(), vec![11]);
        // A tight budget: at most 3 residues of 1212 bytes.
        let l = CheckpointLayout::choose(9689, 9687, Some(100), 3 * 1212).unwrap();
        let full = (1..=9687).filter(|&k| l.is_full(k, 9687)).count();
        assert!(full <= 4, "{full}");
        assert!(CheckpointLayout::choose(9689, 9687, Some(0), 1 << 20).is_err());
        // With a proof, the default keeps only the final residue.
        let l =
            CheckpointLayout::choose(20_996_011, 20_996_011, None, default_residue_budget(20_996_011, true)).unwrap();
        let fulls: Vec<u64> = (l.every..=20_996_011u64)
            .step_by(l.every as usize)
            .chain([20_996_011])
            .filter(|&k| l.is_full(k, 20_996_011))
            .collect();
        assert_eq!(fulls, vec![20_996_011]);
        assert_eq!(default_residue_budget(20_996_011, false), DEFAULT_RESIDUE_BUDGET);
        // Above 2^29 one residue is larger than the default budget: the default still fits it.
        for p in [(1 << 29) + 11, 999_999_937] {
            for proof in [false, true] {
                let budget = default_residue_budget(p, proof);
                assert!(budget >= byte_count(p) as u64);
                assert!(CheckpointLayout::choose(p, p as u64, None, budget).is_ok(), "{p} {proof}");
            }
        }
        assert!(CheckpointLayout::choose(9689, 9687, None, 100).is_err());
    }

    #[test]
    fn replay_points_split_from_the_certificate() {
        let total = 9687;
        // Room for 3 residues of 1212 bytes in the certificate, 16 replay points asked for.
        let l = CheckpointLayout::choose(9689, total, Some(100), 3 * 1212).unwrap().with_replay_points(total, 16);
        let x = Residue::from_u64(9689, 5);
        let mut chain: Vec<Checkpoint> = (1..=total)
            .filter(|&k| l.is_checkpoint(k, total))
            .map(|k| checkpoint(k, &x, l.is_full(k, total)))
            .collect();
        let kept = chain.iter().filter(|c| c.residue.is_some()).count();
        let points = split_points(&mut chain, &l, total, |_| panic!("all in memory"));
        let in_cert: Vec<u64> = chain.iter().filter(|c| c.residue.is_some()).map(|c| c.iteration).collect();
        assert_eq!(in_cert.len() + points.len(), kept);
        assert!(in_cert.len() <= 4 && in_cert.contains(&total), "{in_cert:?}");
        assert!((12..=16).contains(&points.len()), "{}", points.len());
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(points.iter().all(|(k, _)| !l.in_certificate(*k, total) && k.is_multiple_of(100)));
        // Without replay points nothing moves.
        let l0 = CheckpointLayout::choose(9689, total, Some(100), 3 * 1212).unwrap();
        let mut chain: Vec<Checkpoint> = (1..=total)
            .filter(|&k| l0.is_checkpoint(k, total))
            .map(|k| checkpoint(k, &x, l0.is_full(k, total)))
            .collect();
        assert!(split_points(&mut chain, &l0, total, |_| panic!("no points")).is_empty());
        // Points kept on disk are loaded; one without a good copy is left out.
        let mut chain: Vec<Checkpoint> = (1..=total)
            .filter(|&k| l.is_checkpoint(k, total))
            .map(|k| checkpoint(k, &x, l.in_certificate(k, total)))
            .collect();
        let mut asked = Vec::new();
        let loaded = split_points(&mut chain, &l, total, |c| {
            asked.push(c.iteration);
            (asked.len() != 2).then(|| x.clone())
        });
        assert_eq!(asked, points.iter().map(|(k, _)| *k).collect::<Vec<_>>());
        assert_eq!(loaded.len(), points.len() - 1);
        assert!(!loaded.iter().any(|(k, _)| *k == asked[1]));
    }
}
