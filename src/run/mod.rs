//! The driver: runs a test on an engine from the start value (or a saved state) to the target
//! iteration in chunks; records the checkpoint chain; runs the error checks (Gerbicz for PRP,
//! Jacobi for LL at every checkpoint spare threads allow, optionally a second engine that
//! recomputes every LL segment, GMP spot checks for both) and rolls back to the last confirmed
//! state when one fails; saves resumable states to disk; stops cleanly when asked (Ctrl-C).
//! [`test`](mod@test) takes one test from its settings to its verdict and certificate around the driver:
//! the path that `prove P` and each assignment of the work loop share, [`request`] builds its
//! settings from either front end and [`publish`] writes what a finished test publishes.

pub mod checkpoints;
pub mod double;
pub mod gerbicz;
pub mod jacobi;
mod ll_checks;
mod options;
mod outcome;
mod point_writer;
mod prp_checks;
pub mod publish;
pub mod replay_store;
pub mod report;
pub mod request;
mod resume;
pub mod spot;
mod spot_checks;
pub mod state;
pub mod test;
pub mod timing;

use crate::cert::{Check, CheckLog, CheckOutcome, Checkpoint};
use crate::engine::{Engine, EngineError, Value};
use crate::exponent::TestKind;
use crate::progress::Progress;
use crate::residue::Residue;
use crate::run::checkpoints::checkpoint;
use crate::run::double::Shadow;
use crate::run::gerbicz::Gerbicz;
use crate::run::jacobi::Background;
use crate::run::ll_checks::LlStep;
pub use crate::run::options::{Fault, RunOptions, SpotMode};
use crate::run::outcome::MAX_ROLLBACKS_AT_ONE_PLACE;
pub use crate::run::outcome::{RunEnd, RunError, RunRecord};
use crate::run::point_writer::PointWriter;
use crate::run::spot::SpotPool;
use crate::run::state::{SavedState, StateError};
use crate::run::timing::{LoopTimes, Share};
use crate::trace;
use serde_bytes::ByteBuf;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The state of a run in progress.
struct Driver<'a, 's> {
    engine: &'a mut dyn Engine,
    opts: RunOptions,
    kind: TestKind,
    k: u64,
    chain: Vec<Checkpoint>,
    checks: CheckLog,
    shift: u32,
    started: String,
    /// PRP: the Gerbicz state (its anchor is the verified state).
    gerbicz: Option<Gerbicz>,
    /// LL: the confirmed state, the rollback target: the start, a loaded state that passed its
    /// checks, a checkpoint whose own Jacobi check and the next one passed, or one the second
    /// engine agreed with.
    trusted: (u64, Residue),
    /// LL: the newest checkpoint whose own Jacobi check passed, confirmed by the next pass (its
    /// state, when one is to be saved, goes to disk then).
    candidate: Option<(u64, Residue, Option<SavedState>)>,
    /// LL: Jacobi checks in flight, oldest first, each with the state to save if one is due.
    jacobi: VecDeque<(u64, Option<SavedState>, Background)>,
    /// LL with `--ll-check double`: the second engine.
    shadow: Option<&'a mut Shadow<'s>>,
    /// Segments the second engine checks, oldest first: each one's end (k, x_k), with the
    /// state to save once it is confirmed, if one is due.
    doubles: VecDeque<(u64, Residue, Option<SavedState>)>,
    /// Rollbacks per target iteration.
    rollbacks: BTreeMap<u64, u32>,
    /// The iteration of the saved state this run resumed from, if any.
    resumed_from: Option<u64>,
    spot: Option<SpotPool>,
    /// Spot jobs in flight: target iteration → the iteration it started from.
    spot_pending: BTreeMap<u64, (u64, Residue)>,
    /// Engine hashes at spot targets, and GMP results waiting for the engine to get there.
    engine_hashes: BTreeMap<u64, [u8; 32]>,
    spot_results: Vec<(u64, u64, [u8; 32])>,
    faults_done: Vec<bool>,
    last_save: Instant,
    /// PRP: x at the boundary before a planned save (so the save can be re-verified on load).
    save_prev: Option<(u64, Residue)>,
    final_residue: Option<Residue>,
    /// When the engine last reached the end (the loop's timer stops there).
    last_iteration: Option<Instant>,
    /// Proof points read since the last passed Gerbicz check, not yet verified.
    pending_points: Vec<(u64, Residue)>,
    /// Writes the verified proof points (PRP with a proof).
    point_writer: Option<PointWriter>,
    /// The iteration the engine is queued to, past k, when a read queued the next batch behind
    /// its copy (Engine::read_then_queue).
    queued: Option<u64>,
    /// The newest checkpoint (iteration, res64 of x_k) not yet passed to the progress log.
    newest_checkpoint: Option<(u64, u64)>,
    /// The driver thread's time by share.
    times: LoopTimes,
}

impl Driver<'_, '_> {
    fn p(&self) -> u32 {
        self.engine.exponent()
    }

    /// The iteration the engine must reach: PRP runs on to the first Gerbicz block boundary at
    /// or after the end, so that the final check covers the last iterations.
    fn end(&self) -> u64 {
        match &self.gerbicz {
            Some(g) if self.opts.total > g.verified().0 => {
                let a = g.verified().0;
                a + (self.opts.total - a).div_ceil(g.block()) * g.block()
            }
            _ => self.opts.total,
        }
    }

    fn save_due(&self) -> bool {
        self.opts.store.is_some() && self.last_save.elapsed() >= self.opts.save_every
    }

    fn stop_requested(&self) -> bool {
        self.opts.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst))
            || self.opts.stop_at.is_some_and(|s| self.k >= s)
    }

    /// After a passed Gerbicz check at k: the pending points (all at or before k) are
    /// verified; hand them to the writer.
    fn flush_points(&mut self, k: u64) -> Result<(), RunError> {
        let Some(writer) = &self.point_writer else { return Ok(()) };
        let t = Instant::now();
        for (i, x) in self.pending_points.drain(..) {
            debug_assert!(i <= k);
            writer.save(i, x).map_err(RunError::ProofPoint)?;
        }
        self.times.add(Share::Points, t);
        Ok(())
    }

    /// Wait until the points handed to the writer are on disk.
    fn sync_points(&mut self) -> Result<(), RunError> {
        let Some(writer) = &self.point_writer else { return Ok(()) };
        let t = Instant::now();
        writer.sync().map_err(RunError::ProofPoint)?;
        self.times.add(Share::Points, t);
        Ok(())
    }

    fn next_stop(&self) -> u64 {
        let k = self.k;
        let mut next = self.end();
        if k < self.opts.total {
            let every = self.opts.layout.every;
            next = next.min(((k / every + 1) * every).min(self.opts.total));
        }
        if let Some(g) = &self.gerbicz {
            next = next.min(g.next_boundary(k));
        }
        if let Some((&t, _)) = self.spot_pending.range(k + 1..).next() {
            next = next.min(t);
        }
        if let Some(t) = self.opts.proof.as_ref().and_then(|s| s.next_point(k)) {
            next = next.min(t);
        }
        for (f, done) in self.opts.faults.iter().zip(&self.faults_done) {
            if !done && f.iteration > k {
                next = next.min(f.iteration);
            }
        }
        next
    }

    /// The resumable state at the current iteration, holding x (and, PRP, the x a block before).
    fn state_now(&self, x: &Residue, previous: Option<Residue>) -> SavedState {
        SavedState {
            version: 1,
            exponent: self.p(),
            kind: self.kind,
            shift: self.shift,
            total: self.opts.total,
            every: self.opts.layout.every,
            full_every: self.opts.layout.full_every,
            gerbicz_block: self.opts.gerbicz_block,
            started: self.started.clone(),
            iteration: self.k,
            residue: ByteBuf::from(x.to_bytes()),
            previous: previous.map(|r| ByteBuf::from(r.to_bytes())),
            chain: self.chain.clone(),
            checks: self.checks.clone(),
        }
    }

    fn write_state(&mut self, s: &SavedState) -> Result<(), RunError> {
        if self.opts.store.is_none() {
            return Ok(());
        }
        // A state at k claims the proof points up to k: they go to disk first.
        self.sync_points()?;
        let Some(store) = &self.opts.store else { return Ok(()) };
        let t = Instant::now();
        store.save(s)?;
        self.last_save = Instant::now();
        self.times.add(Share::Saves, t);
        Ok(())
    }

    /// The checkpoint record of x at k. A replay point goes to disk now, when the run keeps its
    /// points there: the chain (and so every saved state) then holds only its hash.
    fn checkpoint(&mut self, x: &Residue) -> Result<Checkpoint, RunError> {
        let (k, total, layout) = (self.k, self.opts.total, self.opts.layout);
        match &self.opts.replay {
            Some(store) if layout.is_replay_point(k, total) => {
                let t = Instant::now();
                store.save(k, x).map_err(|source| StateError::Io { path: store.path(k), source })?;
                self.times.add(Share::Saves, t);
                Ok(checkpoint(k, x, false))
            }
            _ => Ok(checkpoint(k, x, layout.is_full(k, total))),
        }
    }

    fn save(&mut self, x: &Residue, previous: Option<Residue>) -> Result<(), RunError> {
        let s = self.state_now(x, previous);
        self.write_state(&s)
    }

    /// Roll back to iteration `to` holding `x`: the chain after it is dropped, the spot checks
    /// in flight are forgotten, and the engine restarts from x.
    fn rollback(&mut self, check: Check, to: u64, x: Residue) -> Result<(), RunError> {
        let n = self.rollbacks.entry(to).or_insert(0);
        *n += 1;
        if *n >= MAX_ROLLBACKS_AT_ONE_PLACE {
            if self.resumed_from == Some(to) {
                return Err(RunError::LoadedStateFails { check: check.to_string(), iteration: to });
            }
            return Err(RunError::Consistent { check: check.to_string(), iteration: to });
        }
        self.checks.log(
            self.k,
            check,
            CheckOutcome::Rollback,
            format!("rolled back from iteration {} to {to}", self.k),
        );
        self.checks.bump("rollbacks", 1);
        self.k = to;
        // A batch queued past the old k runs before the state below replaces it.
        self.queued = None;
        self.chain.retain(|c| c.iteration <= to);
        if let Some(pool) = &mut self.spot {
            pool.discard();
        }
        self.spot_pending.clear();
        self.spot_results.clear();
        self.engine_hashes.retain(|&i, _| i <= to);
        self.save_prev = None;
        self.final_residue = None;
        self.jacobi.clear(); // their threads finish unheard
        self.candidate = None;
        self.doubles.clear();
        if let Some(shadow) = &mut self.shadow {
            shadow.discard();
        }
        // Points after the verified state are recomputed (and read again) on the way back.
        self.pending_points.clear();
        match &mut self.gerbicz {
            Some(g) => g.restart(self.engine)?,
            None => {
                self.engine.load(&x)?;
                self.trusted = (to, x);
            }
        }
        Ok(())
    }

    /// Where the engine may go on to while the host handles x_k (read at k): the next stop,
    /// `spot` (the target of the spot check about to start) included; None where the step goes
    /// on using the engine at k (the end, a Gerbicz boundary, a stop).
    fn continue_to(&self, spot: Option<u64>, stop: bool) -> Option<u64> {
        let k = self.k;
        if stop || k >= self.end() || self.gerbicz.as_ref().is_some_and(|g| g.is_boundary(k)) {
            return None;
        }
        let next = self.next_stop();
        Some(spot.map_or(next, |t| next.min(t)))
    }

    fn step(&mut self) -> Result<Option<RunEnd>, RunError> {
        let next = self.next_stop();
        // The engine may already be queued part or all of the way (by the last read).
        let from = self.queued.take().unwrap_or(self.k);
        if from > next {
            return Err(EngineError::Other(format!(
                "internal: the engine was queued to {from}, past the next stop {next}"
            ))
            .into());
        }
        let t = Instant::now();
        if next >= self.end() {
            // The last batch is waited for, so that the loop's time is the engine's.
            self.engine.iterate(next - from)?;
            self.last_iteration = Some(Instant::now());
            trace::mark("run: last iteration done");
        } else if next > from {
            // A read at this stop, if any, waits for the batch; a GPU meanwhile needs no
            // extra round trip.
            self.engine.iterate_queued(next - from)?;
        }
        self.times.add(Share::Engine, t);
        self.k = next;
        let k = next;
        for i in 0..self.opts.faults.len() {
            let f = self.opts.faults[i];
            if !self.faults_done[i] && f.iteration == k {
                self.faults_done[i] = true;
                self.engine.inject_fault(f.word, f.bit)?;
                self.checks.log(
                    k,
                    Check::Fault,
                    CheckOutcome::Injected,
                    format!("flipped bit {} of word {}", f.bit, f.word),
                );
                self.checks.bump("faults_injected", 1);
            }
        }
        let total = self.opts.total;
        let is_cp = k <= total && self.opts.layout.is_checkpoint(k, total);
        let is_spot_target = self.spot_pending.contains_key(&k);
        let is_point = self.opts.proof.as_ref().is_some_and(|s| s.points().binary_search(&k).is_ok());
        let ll = self.kind == TestKind::Ll;
        if ll && (self.settle_jacobi(false)? || self.settle_doubles(usize::MAX)?) {
            return Ok(None);
        }
        // Read once: a stop requested during this step is honoured at the next checkpoint.
        let stop = self.stop_requested();
        if is_cp || is_spot_target || is_point {
            let t = Instant::now();
            let spot = if is_cp { self.plan_spot() } else { None };
            self.times.add(Share::Spot, t);
            let t = Instant::now();
            // The next batch goes out behind the copy of x_k, so the engine runs while the host
            // converts, hashes and files it (a GPU otherwise waits ~0.7-2 ms per read at 1-3M).
            let x = match self.continue_to(spot.map(|m| k + m), stop) {
                Some(to) => {
                    let x = self.engine.read_then_queue(Value::State, to - k)?;
                    self.queued = Some(to);
                    x
                }
                None => self.engine.read()?,
            };
            self.times.add(Share::Engine, t);
            if is_point {
                self.pending_points.push((k, x.clone()));
            }
            if is_spot_target {
                self.engine_hashes.insert(k, x.hash());
            }
            if is_cp {
                let cp = self.checkpoint(&x)?;
                self.chain.push(cp);
                self.newest_checkpoint = Some((k, x.res64()));
                if k == total {
                    self.final_residue = Some(x.clone());
                }
                if let Some(m) = spot {
                    self.start_spot(m, &x);
                }
            }
            if ll && is_cp {
                match self.ll_checkpoint(x, stop)? {
                    LlStep::Go => {}
                    LlStep::RolledBack => return Ok(None),
                    LlStep::Stopped => return Ok(Some(RunEnd::Interrupted { iteration: k })),
                }
            }
        }
        if self.gerbicz.as_ref().is_some_and(|g| g.is_boundary(k)) {
            if let Some(end) = self.gerbicz_boundary(k)? {
                return Ok(Some(end));
            }
            if self.k != k {
                return Ok(None);
            }
        }
        self.settle_spots(false)?;
        Ok(None)
    }
}

/// Run the test described by `opts` on `engine` (resuming from `opts.store` when a saved state
/// exists), with the error checks on.
pub fn run(engine: &mut dyn Engine, opts: RunOptions, progress: &mut Progress) -> Result<RunEnd, RunError> {
    run_checked(engine, None, opts, progress)
}

/// [`run`], with LL's exact check: `second`, an engine for the same test with another shift
/// count, recomputes every segment before its end is confirmed ([`double`]).
pub fn run_checked(
    engine: &mut dyn Engine,
    second: Option<&mut dyn Engine>,
    opts: RunOptions,
    progress: &mut Progress,
) -> Result<RunEnd, RunError> {
    run_doubled(engine, second.map(Shadow::inline), opts, progress)
}

/// [`run_checked`] with the second engine given as a [`Shadow`] (inline, or on a thread of its
/// own with [`Shadow::background`]).
///
/// A state loaded from disk that passes its checks on load but after which a check then fails
/// consistently (three rollbacks to it) is given up for an older save, as a damaged one is on
/// load; when no older save passes, the run stops naming the files.
pub fn run_doubled(
    engine: &mut dyn Engine,
    mut second: Option<Shadow<'_>>,
    opts: RunOptions,
    progress: &mut Progress,
) -> Result<RunEnd, RunError> {
    let mut below = None;
    let mut given_up = CheckLog::default();
    loop {
        if let Some(shadow) = second.as_mut() {
            shadow.discard(); // segments of an attempt given up
        }
        match run_from(&mut *engine, second.as_mut(), opts.clone(), progress, below, std::mem::take(&mut given_up)) {
            Err(RunError::LoadedStateFails { check, iteration }) => {
                let why = format!("the {check} check failed {MAX_ROLLBACKS_AT_ONE_PLACE} times after resuming here");
                eprintln!("warning: the save at iteration {iteration}: {why}; trying an older save");
                given_up.log(iteration, Check::Load, CheckOutcome::Fail, why);
                below = Some(iteration);
            }
            end => return end,
        }
    }
}

/// One attempt of [`run_doubled`], resuming from the newest save below iteration `below` (any
/// when None); `given_up` holds the check events of the attempts before it.
fn run_from<'a, 's>(
    engine: &'a mut dyn Engine,
    second: Option<&'a mut Shadow<'s>>,
    opts: RunOptions,
    progress: &mut Progress,
    below: Option<u64>,
    given_up: CheckLog,
) -> Result<RunEnd, RunError> {
    let p = engine.exponent();
    let kind = engine.kind();
    let mut checks = given_up;
    let saved = crate::run::resume::resume(engine, &opts, &mut checks, below)?;
    trace::mark("run: saved states looked at");
    let (k, x, chain, shift, started, resumed_from) = match saved {
        Some(s) => {
            let x = s.residue().map_err(|why| StateError::Corrupt { path: "state".into(), why })?;
            let mut c = s.checks.clone();
            c.events.extend(checks.events);
            checks = c;
            checks.log(s.iteration, Check::Load, CheckOutcome::Ok, "resumed from a saved state".into());
            checks.bump("resumes", 1);
            (s.iteration, x, s.chain, s.shift, s.started, Some(s.iteration))
        }
        None => (0, Residue::start(p, kind), Vec::new(), opts.shift, opts.started.clone(), None),
    };
    if let Some(points) = &opts.proof {
        let full = kind.full_iterations(p);
        if kind != TestKind::Prp || opts.total != full || points.exponent() != p {
            return Err(RunError::ProofNotFull { kind: kind.worktype(), total: opts.total, full });
        }
        // The points up to the resumed iteration were saved by the run that saved the state.
        points.check_through(k).map_err(|source| RunError::ProofResume { iteration: k, source })?;
    }
    engine.load(&x)?;
    let gerbicz = match kind {
        TestKind::Prp => Some(Gerbicz::anchor(engine, opts.gerbicz_block, k, x.clone())?),
        TestKind::Ll => None,
    };
    trace::mark("run: start value loaded");
    let spot = (opts.spot != SpotMode::Off).then(|| SpotPool::new(p, kind, opts.spot_threads));
    trace::mark("run: spot threads started");
    let n_faults = opts.faults.len();
    let t0 = Instant::now();
    let mut d = Driver {
        engine,
        kind,
        k,
        chain,
        checks,
        shift,
        started,
        gerbicz,
        trusted: (k, x.clone()),
        candidate: None,
        jacobi: VecDeque::new(),
        shadow: second.filter(|_| kind == TestKind::Ll),
        doubles: VecDeque::new(),
        rollbacks: BTreeMap::new(),
        resumed_from,
        spot,
        spot_pending: BTreeMap::new(),
        engine_hashes: BTreeMap::new(),
        spot_results: Vec::new(),
        faults_done: vec![false; n_faults],
        last_save: Instant::now(),
        save_prev: None,
        final_residue: (k == opts.total).then(|| x.clone()),
        last_iteration: None,
        pending_points: Vec::new(),
        point_writer: opts.proof.clone().map(PointWriter::new),
        queued: None,
        newest_checkpoint: None,
        times: LoopTimes::default(),
        opts,
    };
    // Spot checks start at the first iteration too (with full coverage the windows tile the run).
    if let Some(m) = d.plan_spot() {
        d.start_spot(m, &x);
    }
    progress.start_at(d.k);
    loop {
        if d.k >= d.end() && d.final_residue.is_none() {
            return Err(
                EngineError::Other(format!("internal: reached iteration {} without the final residue", d.k)).into()
            );
        }
        if d.k >= d.end() {
            // Everything computed; every spot check in flight must agree before we finish.
            trace::mark("run: waiting for spot checks");
            d.settle_spots(true)?;
            trace::mark("run: spot checks settled");
            if d.k >= d.end() && d.final_residue.is_some() && d.spot_results.is_empty() {
                break;
            }
            continue;
        }
        if let Some(end) = d.step()? {
            progress.finish();
            return Ok(end);
        }
        progress.update(d.k.min(d.opts.total));
        if let Some((k, res64)) = d.newest_checkpoint.take() {
            progress.checkpoint(k, res64);
        }
    }
    progress.finish();
    trace::mark("run: loop finished");
    if !d.pending_points.is_empty() {
        return Err(EngineError::Other(format!(
            "internal: {} proof points were never covered by a Gerbicz check",
            d.pending_points.len()
        ))
        .into());
    }
    // The proof is built from the files: every point is on disk before the run ends.
    d.sync_points()?;
    let last = d.final_residue.take().expect("loop ends with the final residue");
    let total = d.opts.total;
    Ok(RunEnd::Done(RunRecord {
        checkpoints: d.chain,
        last,
        iterations: total,
        checks: d.checks,
        shift: d.shift,
        started: d.started,
        seconds: t0.elapsed().as_secs_f64(),
        iterations_here: total - resumed_from.unwrap_or(0),
        loop_seconds: d.last_iteration.map_or(0.0, |t| (t - t0).as_secs_f64()),
        resumed_from,
        times: d.times,
    }))
}
