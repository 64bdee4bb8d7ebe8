//! LL's check scheduling inside the driver: the background Jacobi checks of the checkpoints
//! (a pass confirms the candidate before it, a failure rolls back to the confirmed state), the
//! second engine's verdicts on each segment with `--ll-check double`, and the checked ending (the
//! last residue before the end or a stop is checked there and then). It decides which state is
//! confirmed and when a save that waited for that confirmation goes to disk.

use crate::cert::{Check, CheckOutcome};
use crate::residue::Residue;
use crate::run::double::{Segment, MAX_AHEAD};
use crate::run::jacobi::{ll_jacobi_ok, Background};
use crate::run::options::SpotMode;
use crate::run::timing::Share;
use crate::run::{Driver, RunError};
use crate::trace;
use std::time::Instant;

/// What the step does after an LL checkpoint's checks.
pub(super) enum LlStep {
    /// Go on.
    Go,
    /// A check failed and the run went back: the step ends here.
    RolledBack,
    /// A stop was asked for: the checked state is saved, the run ends.
    Stopped,
}

impl Driver<'_, '_> {
    /// LL, at checkpoint k (the driver's k) holding x: hand the segment to the second engine (when
    /// there is one), check x itself when the run ends or stops here (after every check of an
    /// earlier state), and otherwise start x's Jacobi check in the background.
    pub(super) fn ll_checkpoint(&mut self, x: Residue, stop: bool) -> Result<LlStep, RunError> {
        let (k, total) = (self.k, self.opts.total);
        if self.double_check(&x, stop || k == total)? {
            return Ok(LlStep::RolledBack);
        }
        if !(stop || k == total) {
            if self.shadow.is_none() {
                self.start_jacobi(&x);
            }
            return Ok(LlStep::Go);
        }
        // The last state before exiting is checked here and now, after every check of an
        // earlier state still running (the one before it included): a checked ending.
        trace::mark("run: final jacobi check");
        if self.settle_jacobi(true)? {
            return Ok(LlStep::RolledBack);
        }
        self.checks.bump("jacobi_checks", 1);
        let t = Instant::now();
        let ok = ll_jacobi_ok(&x);
        self.times.add(Share::Verdicts, t);
        trace::mark("run: final jacobi check done");
        if !ok {
            self.jacobi_failed(k)?;
            return Ok(LlStep::RolledBack);
        }
        self.checks.log(k, Check::Jacobi, CheckOutcome::Ok, "final".into());
        if k == total {
            // Checks that passed on the final residue: its own Jacobi symbol, the one of
            // the checkpoint before it, and the second engine's agreement.
            let before = self.candidate.as_ref().is_some_and(|(c, _, _)| *c < k) as u64;
            let double = (self.shadow.is_some() && self.trusted.0 == k) as u64;
            self.checks.summary.insert("final_checks".into(), 1 + before + double);
        }
        if !stop {
            return Ok(LlStep::Go);
        }
        // Spot checks in flight are settled later (a failure rolls back in memory to the start
        // of its window); only full coverage waits for them here.
        self.settle_spots(self.opts.spot == SpotMode::Full)?;
        if self.k != k {
            return Ok(LlStep::RolledBack); // a spot check rolled back
        }
        self.save(&x, None)?;
        self.trusted = (k, x);
        Ok(LlStep::Stopped)
    }

    /// LL: take the verdicts of the background Jacobi checks that are in, oldest first (all of
    /// them when `wait`). A pass confirms the candidate before it (which becomes the rollback
    /// target, and its state, if any, goes to disk) and makes its own state the candidate; a
    /// failure rolls the run back to the confirmed state. Returns whether it rolled back.
    pub(super) fn settle_jacobi(&mut self, wait: bool) -> Result<bool, RunError> {
        while self.jacobi.front().is_some_and(|(_, _, job)| wait || job.is_finished()) {
            let (k, state, job) = self.jacobi.pop_front().expect("checked above");
            self.checks.bump("jacobi_checks", 1);
            let t = Instant::now();
            let verdict = job.verdict();
            self.times.add(Share::Verdicts, t);
            let Some((true, x)) = verdict else {
                self.jacobi_failed(k)?;
                return Ok(true);
            };
            self.checks.log(k, Check::Jacobi, CheckOutcome::Ok, String::new());
            if let Some((ck, cx, cstate)) = self.candidate.take() {
                if let Some(st) = cstate {
                    self.write_state(&st)?;
                }
                self.trusted = (ck, cx);
            }
            self.candidate = Some((k, x, state));
        }
        Ok(false)
    }

    /// LL, at checkpoint k holding x: start its Jacobi check when a thread is free, with the
    /// state to save attached when a save is due and none is on its way.
    fn start_jacobi(&mut self, x: &Residue) {
        if self.jacobi.len() >= self.opts.jacobi_threads.max(1) {
            return;
        }
        let saving = self.jacobi.iter().any(|(_, s, _)| s.is_some())
            || self.candidate.as_ref().is_some_and(|(_, _, s)| s.is_some());
        let state = (self.save_due() && !saving).then(|| self.state_now(x, None));
        self.jacobi.push_back((self.k, state, Background::start(x.clone())));
    }

    /// LL with a second engine, at checkpoint k holding x: the segment from the previous
    /// checkpoint goes to the second engine; x is confirmed (and saved when a save was due) once
    /// it and every segment before it agree; a disagreement rolls the run back. With `wait`
    /// (the end, a stop) every verdict is waited for, otherwise those that leave at most
    /// [`MAX_AHEAD`] segments unsettled. Returns whether it rolled back.
    fn double_check(&mut self, x: &Residue, wait: bool) -> Result<bool, RunError> {
        let k = self.k;
        let Some(shadow) = self.shadow.as_mut() else { return Ok(false) };
        let (from, start) = self.doubles.back().map_or_else(|| self.trusted.clone(), |(f, y, _)| (*f, y.clone()));
        let t = Instant::now();
        shadow.submit(Segment { from, start, to: k, hash: x.hash() })?;
        self.times.add(Share::Verdicts, t);
        let saving = self.doubles.iter().any(|(_, _, s)| s.is_some());
        let state = (self.save_due() && k < self.opts.total && !saving).then(|| self.state_now(x, None));
        self.doubles.push_back((k, x.clone(), state));
        self.settle_doubles(if wait { 0 } else { MAX_AHEAD })
    }

    /// LL with a second engine: take its verdicts that are in, oldest first, waiting for them
    /// while more than `ahead` segments are unsettled (0: every one). Returns whether it rolled
    /// back.
    pub(super) fn settle_doubles(&mut self, ahead: usize) -> Result<bool, RunError> {
        while !self.doubles.is_empty() {
            let wait = self.doubles.len() > ahead;
            let t = Instant::now();
            let verdict = self.shadow.as_mut().map_or(Ok(None), |s| s.next_verdict(wait))?;
            self.times.add(Share::Verdicts, t);
            let Some(agrees) = verdict else { break };
            let (k, x, state) = self.doubles.pop_front().expect("checked above");
            let from = self.trusted.0;
            self.checks.bump("double_checks", 1);
            self.checks.bump("double_iterations", k - from);
            if !agrees {
                self.checks.bump("double_failures", 1);
                self.checks.log(
                    k,
                    Check::Double,
                    CheckOutcome::Fail,
                    format!("the second engine disagrees from iteration {from}"),
                );
                let (to, tx) = self.trusted.clone();
                self.rollback(Check::Double, to, tx)?;
                return Ok(true);
            }
            self.checks.log(k, Check::Double, CheckOutcome::Ok, format!("from iteration {from}"));
            self.trusted = (k, x);
            self.candidate = None;
            if let Some(st) = state {
                self.write_state(&st)?;
            }
        }
        Ok(false)
    }

    pub(super) fn jacobi_failed(&mut self, k: u64) -> Result<(), RunError> {
        self.checks.bump("jacobi_failures", 1);
        self.checks.log(k, Check::Jacobi, CheckOutcome::Fail, "(s-2 | M_p) != -1".into());
        let (to, tx) = self.trusted.clone();
        self.rollback(Check::Jacobi, to, tx)
    }
}
