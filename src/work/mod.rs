//! GIMPS work: `prove --work-dir DIR` runs the assignments of `DIR/worktodo.txt` (or a worker's
//! `worktodo-N.txt`) one after the other until none is left, as prime95/mprime and PRPLL do, and
//! writes what AutoPrimeNet submits: result lines in `results.json.txt`, proofs in `proof/`.
//!
//! - [`worktodo`]: the lines (parsing, removal);
//! - [`results`]: the durable append and the results already there;
//! - [`job`]: one assignment run to its outputs;
//! - [`workers`]: one child process per GPU (`--devices all`).
//!
//! The order of the steps makes a kill at any point safe: the certificate and proof files are
//! written (atomically) first, then the result line is appended and fsynced, then the test's saved
//! state is cleared, then its worktodo line is removed. On restart a line whose result is already
//! in the results file (same assignment id, exponent and work type) is removed without a rerun;
//! any other line resumes from its saved state.

pub mod job;
pub mod results;
pub mod workers;
pub mod worktodo;

use crate::engine::EngineChoice;
use crate::progress::ProgressLog;
use crate::run::state::StateStore;
use crate::run::test::LlCheck;
use crate::run::{Fault, SpotMode};
use anyhow::{Context, Result};
use ed25519_dalek::SigningKey;
use job::JobEnd;
use results::{ResultKey, ResultsFile};
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
}

/// Everything the work loop needs.
pub struct WorkConfig {
    pub dir: PathBuf,
    /// The GPU (CUDA's numbering); with `worker` set it also picks `worktodo-N.txt`.
    pub device: usize,
    /// This is worker N: its work is `worktodo-N.txt` when that file exists at start.
    pub worker: Option<usize>,
    pub engine: EngineChoice,
    pub key: SigningKey,
    pub user: Option<String>,
    pub computer: Option<String>,
    /// Keep polling for new lines every this long instead of exiting when none is left.
    pub wait: Option<Duration>,
    pub spot: SpotMode,
    pub spot_threads: usize,
    /// LL: how results are checked, and the Jacobi checks in flight at once (as for `prove P`).
    pub ll_check: LlCheck,
    pub jacobi_threads: usize,
    pub save_every: Duration,
    pub gerbicz_block: u64,
    pub proof_disk_budget: u64,
    pub stop: Arc<AtomicBool>,
    pub crash_at: Option<CrashPoint>,
    /// Testing: faults injected into each test that runs as far as their iteration.
    pub faults: Vec<Fault>,
}

/// The paths of one worker in the work directory.
#[derive(Debug, Clone)]
pub struct Paths {
    pub worktodo: PathBuf,
    pub results: PathBuf,
    /// Saved states: `state/` for worktodo.txt, `state-N/` for worktodo-N.txt.
    pub state: PathBuf,
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
        let own = worker.map(|n| (n, dir.join(format!("worktodo-{n}.txt")))).filter(|(_, f)| f.exists());
        let (worktodo, state, tag) = match own {
            Some((n, file)) => (file, dir.join(format!("state-{n}")), format!("worker {n}: ")),
            None => (dir.join(WORKTODO), dir.join("state"), String::new()),
        };
        let paths = Paths {
            worktodo,
            results: dir.join(RESULTS),
            state,
            cert: dir.join("cert"),
            proof: dir.join("proof"),
            progress_log: dir.join(PROGRESS_LOG),
            tag,
        };
        for d in [&paths.state, &paths.cert, &paths.proof] {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        Ok(paths)
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

/// Run the work directory's assignments until none is left (or, with `wait`, until stopped).
pub fn run_loop(cfg: &WorkConfig) -> Result<LoopEnd> {
    let paths = Paths::new(&cfg.dir, cfg.worker)?;
    let results = ResultsFile::new(&paths.results);
    let mut warned = HashSet::new();
    let mut done = 0;
    eprintln!("{}work: {} (results {})", paths.tag, paths.worktodo.display(), paths.results.display());
    loop {
        if cfg.stop.load(Ordering::SeqCst) {
            return Ok(LoopEnd::Interrupted);
        }
        let Some(a) = next_assignment(&paths, &results, &mut warned)? else {
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
        eprintln!("{}M{} {}: {}", paths.tag, a.p, a.kind.worktype(), a.line);
        match job::run_job(cfg, &paths, &a)? {
            JobEnd::Interrupted { iteration } => {
                eprintln!(
                    "{}interrupted: M{} {} saved at iteration {iteration}; run the same command again to resume",
                    paths.tag,
                    a.p,
                    a.kind.worktype()
                );
                return Ok(LoopEnd::Interrupted);
            }
            JobEnd::Done { line, store, summary } => {
                results.append(&line).with_context(|| format!("cannot append to {}", paths.results.display()))?;
                crash_if(cfg, CrashPoint::AfterResult);
                store.clear()?;
                crash_if(cfg, CrashPoint::AfterState);
                worktodo::remove_line(&paths.worktodo, &a.line)
                    .with_context(|| format!("cannot update {}", paths.worktodo.display()))?;
                println!("{line}");
                eprintln!("{}{summary}", paths.tag);
                if let Ok(mut log) = ProgressLog::open(&paths.progress_log) {
                    log.line(&format!("{}{summary}", paths.tag));
                }
                done += 1;
            }
        }
    }
}

/// The first line of the worktodo file that is work without a result yet. Lines whose result
/// is already in the results file (a kill after the append) are removed on the way, with their
/// saved state; unusable lines stay, with a warning the first time they are seen.
fn next_assignment(
    paths: &Paths,
    results: &ResultsFile,
    warned: &mut HashSet<String>,
) -> Result<Option<worktodo::Assignment>> {
    let lines =
        worktodo::read_lines(&paths.worktodo).with_context(|| format!("cannot read {}", paths.worktodo.display()))?;
    let done = results.keys().with_context(|| format!("cannot read {}", paths.results.display()))?;
    let name = paths.worktodo.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for raw in lines {
        match parse_line(&raw) {
            Line::Ignored => {}
            Line::Unusable(why) => {
                if warned.insert(raw.clone()) {
                    eprintln!("warning: {name}: left in place: '{raw}': {why}");
                }
            }
            Line::Work(a) if done.contains(&ResultKey::of_assignment(&a)) => {
                eprintln!(
                    "{}M{} {}: its result is already in {RESULTS}; removing the line '{}'",
                    paths.tag,
                    a.p,
                    a.kind.worktype(),
                    a.line
                );
                StateStore::open(&paths.state, a.p, a.kind)?.clear()?;
                worktodo::remove_line(&paths.worktodo, &a.line)?;
            }
            Line::Work(a) => return Ok(Some(a)),
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
