//! Spot check scheduling inside the driver: where a GMP spot check starts (full coverage tiles
//! the run, sampling takes what the pool keeps up with), and the comparison of finished checks
//! with the engine's residues, rolling back on a mismatch.

use crate::cert::{Check, CheckOutcome};
use crate::residue::Residue;
use crate::run::options::SpotMode;
use crate::run::spot::SpotJob;
use crate::run::timing::Share;
use crate::run::{Driver, RunError};
use std::time::Instant;

/// GMP seconds a spot check aims to take.
const SPOT_JOB_SECS: f64 = 1.0;

impl Driver<'_, '_> {
    /// Compare finished spot checks with the engine's residues; roll back on a mismatch.
    pub(super) fn settle_spots(&mut self, wait: bool) -> Result<(), RunError> {
        let Some(pool) = &mut self.spot else { return Ok(()) };
        let t = Instant::now();
        let fresh = if wait { pool.drain() } else { pool.poll() };
        self.times.add(Share::Spot, t);
        self.spot_results.extend(fresh.into_iter().map(|r| (r.from, r.to, r.hash)));
        let mut keep = Vec::new();
        for (from, to, hash) in std::mem::take(&mut self.spot_results) {
            let Some(engine_hash) = self.engine_hashes.get(&to).copied() else {
                keep.push((from, to, hash));
                continue;
            };
            let Some((_, x_from)) = self.spot_pending.remove(&to) else { continue };
            self.checks.bump("spot_checks", 1);
            self.checks.bump("spot_iterations", to - from);
            if engine_hash != hash {
                self.checks.bump("spot_failures", 1);
                self.checks.log(
                    to,
                    Check::Spot,
                    CheckOutcome::Fail,
                    format!("GMP from iteration {from} disagrees with the engine at {to}"),
                );
                // LL goes back to the confirmed state if it precedes the window: the error lies
                // inside the window. A state confirmed after the window's start (by Jacobi checks,
                // which a corrupted residue passes with probability ~1/4) may carry this very error,
                // so then the window's start is the target.
                let (target, x) = match &self.gerbicz {
                    Some(g) => (g.verified().0, g.verified().1.clone()),
                    None if self.trusted.0 <= from => self.trusted.clone(),
                    None => (from, x_from),
                };
                return self.rollback(Check::Spot, target, x);
            }
        }
        self.spot_results = keep;
        Ok(())
    }

    /// Before reading x_k at a checkpoint: the length of the spot check to start from here, if
    /// one will start (full coverage first waits for room in the pool).
    pub(super) fn plan_spot(&mut self) -> Option<u64> {
        let (k, total, every) = (self.k, self.opts.total, self.opts.layout.every);
        if k >= total || self.spot_pending.values().any(|(f, _)| *f == k) {
            return None;
        }
        let full = self.opts.spot == SpotMode::Full;
        let pool = self.spot.as_mut()?;
        if full {
            // Cover every iteration: windows tile the run from one checkpoint to the next.
            while !pool.has_room() {
                let got = pool.drain_one();
                self.spot_results.extend(got.into_iter().map(|r| (r.from, r.to, r.hash)));
            }
        } else if !pool.has_room() {
            return None;
        }
        Some(if full { every.min(total - k) } else { pool.choose_iterations(SPOT_JOB_SECS, every).min(total - k) })
    }

    /// After reading x_k: start the spot check of m iterations that plan_spot chose.
    pub(super) fn start_spot(&mut self, m: u64, x: &Residue) {
        let k = self.k;
        if let Some(pool) = &mut self.spot {
            if pool.submit(SpotJob { from: k, start: x.clone(), iterations: m }) {
                self.spot_pending.insert(k + m, (k, x.clone()));
            }
        }
    }
}
