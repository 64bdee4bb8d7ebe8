//! GIMPS work: `prove --work-dir DIR` runs the assignments of `DIR/worktodo.txt` (and, for worker
//! N, first those of its own `worktodo-N.txt`) one after the other until none is left, as
//! prime95/mprime and PRPLL do, and writes what AutoPrimeNet submits: result lines in
//! `results.json.txt`, proofs in `proof/`. Several workers (one per GPU) may share the directory.
//!
//! - [`worktodo`]: the lines (parsing, removal);
//! - [`apn_lock`]: AutoPrimeNet's `worktodo.txt.lck`, taken around our edits of a worktodo file;
//! - [`claim`]: the directory lock and the claims that let several workers share one worktodo;
//! - [`results`]: the durable append and the results already there;
//! - [`job`]: one assignment run to its outputs;
//! - [`workers`]: one child process per GPU (`--devices all`);
//! - [`primenet`]: the PrimeNet client (`--primenet`).
//!
//! The order of the steps makes a kill at any point safe: the certificate and proof files are
//! written (atomically) first, then the result line is appended and fsynced, then the test's saved
//! state is cleared, then its worktodo line is removed. On restart a line whose result is already
//! in the results file (a result of ours for it: [`results::Done::is_for`]) is removed without a rerun;
//! any other line resumes from its saved state.
//! A line given an assignment id meanwhile (by AutoPrimeNet) is the same assignment: the result
//! carries the id and the rewritten line is removed. Reading and claiming a line, appending a result
//! and removing a line happen under the directory lock; a test runs under its claim alone.

pub mod apn_lock;
pub mod claim;
pub mod job;
pub mod primenet;
pub mod results;
pub mod workers;
pub mod worktodo;

use crate::progress::ProgressLog;
use crate::run::request::Settings;
use crate::run::state::{StateLock, StateStore};
use anyhow::{Context, Result};
use claim::{Claims, DirLock};
use ed25519_dalek::SigningKey;
use job::JobEnd;
use results::ResultsFile;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use worktodo::{parse_line, Line};

/// The file names in a work directory (as prime95, PRPLL and AutoPrimeNet use them).
pub const WORKTODO: &str = "worktodo.txt";
pub const RESULTS: &str = "results.json.txt";
pub const PROGRESS_LOG: &str = "progress.log";

/// Where a crash is simulated (tests of the restart logic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashPoint {
    /// Right after the result line is appended (before the state is cleared).
    AfterResult,
    /// After the state is cleared, before the worktodo line is removed.
    AfterState,
    /// With PrimeNet: after the server answered a result, before it is marked sent.
    AfterSend,
}

/// Everything the work loop needs.
pub struct WorkConfig {
    pub dir: PathBuf,
    /// This is worker N: its own `worktodo-N.txt` comes before the shared `worktodo.txt`.
    pub worker: Option<usize>,
    /// What every assignment's test is run with: the engine asked for (its `devices` the one
    /// GPU of this worker; under `--arith auto` the tuner's arithmetic for each exponent), the
    /// checks, the saves, and (testing) faults injected into each test that runs that far. The
    /// proof checks of the PrimeNet client use the same engine ask.
    pub settings: Settings,
    pub key: SigningKey,
    pub user: Option<String>,
    pub computer: Option<String>,
    /// Keep polling for new lines every this long instead of exiting when none is left.
    pub wait: Option<Duration>,
    pub stop: Arc<AtomicBool>,
    pub crash_at: Option<CrashPoint>,
    /// Talk to PrimeNet (`--primenet`): assignments in, results and proofs out.
    pub primenet: Option<primenet::Config>,
}

/// A worktodo file and the root of the saved states of its tests.
#[derive(Debug, Clone)]
pub struct Source {
    pub worktodo: PathBuf,
    pub state: PathBuf,
}

impl Source {
    /// The file's name, as claims and warnings give it.
    pub fn name(&self) -> String {
        self.worktodo.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// The paths of one worker in the work directory.
#[derive(Debug, Clone)]
pub struct Paths {
    pub dir: PathBuf,
    /// Worker N's own `worktodo-N.txt` (its tests' states in `state-N/`), taken first.
    pub own: Option<Source>,
    /// The shared `worktodo.txt` (states in `state/`), taken from under the directory lock.
    pub shared: Source,
    pub results: PathBuf,
    pub cert: PathBuf,
    pub proof: PathBuf,
    pub progress_log: PathBuf,
    /// Prefix of this worker's progress lines ("" or "worker N: ").
    pub tag: String,
}

impl Paths {
    /// The paths for `worker` in `dir`, creating the folders that outputs go to.
    pub fn new(dir: &Path, worker: Option<usize>) -> Result<Paths> {
        if !dir.is_dir() {
            anyhow::bail!("--work-dir {}: not a directory", dir.display());
        }
        let own = worker
            .map(|n| Source { worktodo: dir.join(format!("worktodo-{n}.txt")), state: dir.join(format!("state-{n}")) });
        let paths = Paths {
            dir: dir.to_path_buf(),
            shared: Source { worktodo: dir.join(WORKTODO), state: dir.join("state") },
            results: dir.join(RESULTS),
            cert: dir.join("cert"),
            proof: dir.join("proof"),
            progress_log: dir.join(PROGRESS_LOG),
            tag: worker.map(|n| format!("worker {n}: ")).unwrap_or_default(),
            own,
        };
        let own_state = paths.own.as_ref().filter(|o| o.worktodo.exists()).map(|o| &o.state);
        for d in [&paths.shared.state, &paths.cert, &paths.proof].into_iter().chain(own_state) {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        Ok(paths)
    }

    /// The worktodo files in the order they are taken from: the worker's own, then the shared one.
    fn sources(&self) -> impl Iterator<Item = &Source> {
        self.own.iter().chain(std::iter::once(&self.shared))
    }

    fn worker(&self) -> String {
        match self.tag.trim_end_matches(": ") {
            "" => "worker".into(),
            w => w.into(),
        }
    }
}

/// How the loop ended.
#[derive(Debug, PartialEq, Eq)]
pub enum LoopEnd {
    /// No usable line is left; `done` results were written by this process.
    Finished { done: usize },
    /// Stopped on request; the test in progress saved its state.
    Interrupted,
}

/// A line this worker has claimed: its test's state lock is held until the line is removed.
struct Claimed {
    a: worktodo::Assignment,
    source: Source,
    store: StateStore,
    lock: StateLock,
}

/// Run the work directory's assignments until none is left (or, with `wait`, until stopped).
pub fn run_loop(cfg: &WorkConfig) -> Result<LoopEnd> {
    let paths = Paths::new(&cfg.dir, cfg.worker)?;
    let results = ResultsFile::new(&paths.results);
    let claims = Claims::new(&paths.dir);
    let mut warned = HashSet::new();
    let mut done = 0;
    let files: Vec<String> = paths.sources().map(|s| s.worktodo.display().to_string()).collect();
    eprintln!("{}work: {} (results {})", paths.tag, files.join(", then "), paths.results.display());
    let current: primenet::progress::Current = Default::default();
    let mut net = cfg.primenet.clone().map(|mut c| {
        c.crash_after_send = cfg.crash_at == Some(CrashPoint::AfterSend);
        primenet::Client::new(c, &paths.dir, cfg.settings.ask.clone())
    });
    let _progress = cfg.primenet.clone().map(|c| {
        let stop = Arc::new(AtomicBool::new(false));
        let thread =
            primenet::progress::spawn(c, &paths.dir, paths.progress_log.clone(), current.clone(), stop.clone());
        StopOnDrop(stop, Some(thread))
    });
    // Results a killed run left unsent go first.
    if let Some(net) = &mut net {
        warn_net("results", net.flush(&paths, false).map(drop));
    }
    loop {
        if cfg.stop.load(Ordering::SeqCst) {
            return Ok(LoopEnd::Interrupted);
        }
        if let Some(net) = &mut net {
            warn_net("assignments", net.fetch(&paths).map(drop));
            warn_net("hand-back", net.unreserve_late(&paths).map(drop));
        }
        let Some(c) = claim_next(&paths, &results, &claims, &mut warned)? else {
            if let Some(net) = &mut net {
                warn_net("results", net.flush(&paths, true).map(drop));
            }
            match cfg.wait {
                Some(every) => {
                    if !sleep_unless_stopped(every, &cfg.stop) {
                        return Ok(LoopEnd::Interrupted);
                    }
                    continue;
                }
                None => return Ok(LoopEnd::Finished { done }),
            }
        };
        let a = &c.a;
        eprintln!("{}M{} {}: {} ({})", paths.tag, a.p, a.kind.worktype(), a.line, c.source.name());
        if let Ok(mut now) = current.lock() {
            *now = a.aid.clone().map(|aid| (aid, a.p, a.kind));
        }
        match job::run_job(cfg, &paths, a, &c.source.worktodo, c.store.clone())? {
            JobEnd::Interrupted { iteration } => {
                let g = lock_dir(&paths)?;
                claims.release(&g, &c.source.name(), &a.line)?;
                eprintln!(
                    "{}interrupted: M{} {} saved at iteration {iteration}; run the same command again to resume",
                    paths.tag,
                    a.p,
                    a.kind.worktype()
                );
                return Ok(LoopEnd::Interrupted);
            }
            JobEnd::Done { line, store, summary, current } => {
                {
                    let _g = lock_dir(&paths)?;
                    results.append(&line).with_context(|| format!("cannot append to {}", paths.results.display()))?;
                }
                crash_if(cfg, CrashPoint::AfterResult);
                store.clear()?;
                crash_if(cfg, CrashPoint::AfterState);
                let g = lock_dir(&paths)?;
                remove_claimed(&g, &claims, c, &current)?;
                drop(g);
                println!("{line}");
                eprintln!("{}{summary}", paths.tag);
                if let Ok(mut log) = ProgressLog::open(&paths.progress_log) {
                    log.line(&format!("{}{summary}", paths.tag));
                }
                done += 1;
                if let Some(net) = &mut net {
                    warn_net("results", net.flush(&paths, false).map(drop));
                }
            }
        }
    }
}

/// A PrimeNet step that failed: noted, the loop goes on (what was not sent stays queued).
fn warn_net(what: &str, r: std::result::Result<(), primenet::http::NetError>) {
    if let Err(e) = r {
        eprintln!("primenet: {what}: {e}");
    }
}

/// Stops a thread when dropped, and waits for it.
struct StopOnDrop(Arc<AtomicBool>, Option<std::thread::JoinHandle<()>>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
        if let Some(t) = self.1.take() {
            let _ = t.join();
        }
    }
}

fn lock_dir(paths: &Paths) -> Result<DirLock> {
    DirLock::take(&paths.dir).with_context(|| format!("cannot lock {}", paths.dir.join(claim::LOCK_FILE).display()))
}

/// Remove a claimed line whose result is written: its lock file, its claim record, then the line
/// as it stands now (`current`, read again: AutoPrimeNet may have given it an id meanwhile; a kill
/// in between leaves the line, which the next scan finds done and removes).
fn remove_claimed(g: &DirLock, claims: &Claims, c: Claimed, current: &worktodo::Assignment) -> Result<()> {
    let file = &c.source.worktodo;
    claim::release_finished(g, c.lock).context("cannot remove a finished test's lock")?;
    claims.release(g, &c.source.name(), &c.a.line).context("cannot update the claims record")?;
    let update = || -> std::io::Result<()> {
        if let Some(now) = worktodo::find_current(file, current)? {
            worktodo::remove_line(file, &now.line)?;
        }
        Ok(())
    };
    update().with_context(|| format!("cannot update {}", file.display()))
}

/// Under the directory lock: claim the first line of the worker's own file, else of the shared
/// file, that is work without a result and that no live worker holds. Lines whose result is
/// already in the results file (a kill after the append) are removed on the way, with their
/// saved state; unusable lines stay, with a warning the first time they are seen.
fn claim_next(
    paths: &Paths,
    results: &ResultsFile,
    claims: &Claims,
    warned: &mut HashSet<String>,
) -> Result<Option<Claimed>> {
    let g = lock_dir(paths)?;
    let done = results.done().with_context(|| format!("cannot read {}", paths.results.display()))?;
    for source in paths.sources() {
        let lines = worktodo::read_lines(&source.worktodo)
            .with_context(|| format!("cannot read {}", source.worktodo.display()))?;
        let name = source.name();
        for raw in lines {
            let a = match parse_line(&raw) {
                Line::Ignored => continue,
                Line::Unusable(why) => {
                    if warned.insert(raw.clone()) {
                        eprintln!("warning: {name}: left in place: '{raw}': {why}");
                    }
                    continue;
                }
                Line::Work(a) => a,
            };
            if let Some(note) = a.note.as_ref().filter(|_| warned.insert(raw.clone())) {
                eprintln!("note: {name}: '{raw}': {note}");
            }
            let at = StateStore::at(&source.state, a.p, a.kind);
            let Some(lock) = claim::try_claim(&at)? else { continue };
            let store = StateStore::open(&source.state, a.p, a.kind)?;
            let c = Claimed { a, source: source.clone(), store, lock };
            if done.iter().any(|d| d.is_for(&c.a)) {
                eprintln!(
                    "{}M{} {}: its result is already in {RESULTS}; removing the line '{}'",
                    paths.tag,
                    c.a.p,
                    c.a.kind.worktype(),
                    c.a.line
                );
                c.store.clear()?;
                let current = c.a.clone();
                remove_claimed(&g, claims, c, &current)?;
                continue;
            }
            claims.record(&g, &name, &c.a.line, &paths.worker()).context("cannot update the claims record")?;
            return Ok(Some(c));
        }
    }
    Ok(None)
}

fn crash_if(cfg: &WorkConfig, at: CrashPoint) {
    if cfg.crash_at == Some(at) {
        eprintln!("testing: crashing at {at:?}");
        std::process::abort();
    }
}

/// Sleep `d` in short steps; false if a stop was requested meanwhile.
fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100).min(until - Instant::now()));
    }
    !stop.load(Ordering::SeqCst)
}
