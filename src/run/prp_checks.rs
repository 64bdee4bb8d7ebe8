//! PRP's check scheduling inside the driver: at each Gerbicz block boundary, absorb the block or
//! check the identity (when due, at the end, before a planned save, or when pending proof points
//! grow too large), roll back to the verified state on failure, and write the points and the save
//! a passing check allows.

use crate::cert::{Check, CheckOutcome};
use crate::run::options::SpotMode;
use crate::run::timing::Share;
use crate::run::{Driver, RunEnd, RunError};
use crate::trace;
use std::time::Instant;

/// Proof points wait in memory for the Gerbicz check that covers them; past this many bytes
/// the check is done early (at the next block boundary) so that they can go to disk.
const MAX_PENDING_POINT_BYTES: usize = 256 << 20;

impl Driver<'_, '_> {
    /// PRP, at a Gerbicz block boundary k: absorb x_k, or check (when due, at the end, or
    /// before a planned save), roll back on failure, save when planned.
    pub(super) fn gerbicz_boundary(&mut self, k: u64) -> Result<Option<RunEnd>, RunError> {
        let (total, end) = (self.opts.total, self.end());
        let stop = self.stop_requested();
        let save_time = self.opts.store.is_some() && self.last_save.elapsed() >= self.opts.save_every;
        let points_full =
            self.pending_points.iter().map(|(_, r)| r.words().len() * 8).sum::<usize>() >= MAX_PENDING_POINT_BYTES;
        let g = self.gerbicz.as_mut().expect("PRP run has a Gerbicz state");
        let block = g.block();
        let planned = self.save_prev.as_ref().is_some_and(|(b, _)| *b + block == k);
        if !(g.check_due(k) || k >= end || planned || points_full) {
            let t = Instant::now();
            g.absorb(self.engine)?;
            self.times.add(Share::Engine, t);
            // Saves (and stops) happen at verified states before the end: a state saved at or
            // past the end would lack the snapshot of x_total.
            if (stop || save_time) && self.save_prev.is_none() && k + block < total {
                // Check and save at the next boundary, keeping x_k to re-verify the save on load.
                self.save_prev = Some((k, self.engine.read()?));
            }
            return Ok(None);
        }
        let last = k >= end;
        if last {
            trace::mark("run: final gerbicz check");
        }
        let t = Instant::now();
        let ok = g.check(self.engine, k)?;
        self.times.add(Share::Engine, t);
        if last {
            trace::mark("run: final gerbicz check done");
        }
        let (anchor_k, anchor_x) = (g.verified().0, g.verified().1.clone());
        self.checks.bump("gerbicz_checks", 1);
        if !ok {
            self.checks.bump("gerbicz_failures", 1);
            self.checks.log(
                k,
                Check::Gerbicz,
                CheckOutcome::Fail,
                format!("identity failed for the blocks after iteration {anchor_k}"),
            );
            self.rollback(Check::Gerbicz, anchor_k, anchor_x)?;
            return Ok(None);
        }
        // Verified: the points read since the last check go to disk before any state that
        // claims this iteration does.
        self.flush_points(k)?;
        if last {
            trace::mark("run: proof points written");
        }
        if planned {
            let prev = self.save_prev.take().map(|(_, r)| r);
            self.settle_spots(self.opts.spot == SpotMode::Full)?;
            if self.k != k {
                return Ok(None);
            }
            self.save(&anchor_x, prev)?;
            if self.stop_requested() {
                return Ok(Some(RunEnd::Interrupted { iteration: k }));
            }
        }
        Ok(None)
    }
}
