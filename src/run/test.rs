//! One test from its settings to its verdict: the path that `prove P` and each assignment of the
//! work loop share. It owns the test's state directory (and `--fresh`), the PRP proof's points,
//! the engines (the one `--engine` gives, and for LL the second one of the exact check that
//! `--ll-check` asks for), the run (resumed from a saved state when there is one), the rerun that
//! confirms a "prime" LL residue before it is reported, the proof built and checked, and the
//! signed certificate. What else is published (the result line, proof files) is the caller's.

use crate::cert::{self, Outcome};
use crate::decide::{Decision, EngineKind};
use crate::engine::Engine;
use crate::exponent::TestKind;
use crate::fsutil;
use crate::progress::{Progress, ProgressLog};
use crate::proof::arith::{CpuArith, ProofArith};
use crate::proof::session::{self, BuiltProof, ProofSetup};
use crate::residue::Residue;
use crate::run::checkpoints::split_points;
use crate::run::double::Shadow;
use crate::run::replay_store::ReplayStore;
use crate::run::report::{self, TestInfo};
use crate::run::state::StateStore;
use crate::run::{double, run_checked, run_doubled, RunEnd, RunError, RunOptions, RunRecord, SpotMode};
use crate::trace;
use anyhow::{anyhow, Context, Result};
use ed25519_dalek::SigningKey;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How an LL result is checked (`--ll-check`; docs/testing.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlCheck {
    /// `Double` below [`double::AUTO_DOUBLE_BELOW`], else `Jacobi`; a "prime" LL residue is
    /// always confirmed by a doubly checked rerun before it is reported.
    Auto,
    /// Jacobi checks (they bound lost work; an error passes one with probability ~1/2).
    Jacobi,
    /// A second engine with another shift recomputes every segment (exact; twice the work).
    Double,
}

impl LlCheck {
    /// Does an LL test of M_p run with the second engine from the start?
    pub fn doubles(self, p: u32) -> bool {
        match self {
            LlCheck::Double => true,
            LlCheck::Jacobi => false,
            LlCheck::Auto => double::cheap(p),
        }
    }
}

/// A random shift count in [0, p).
pub fn random_shift(p: u32) -> Result<u32> {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).map_err(|e| anyhow!("no randomness for the shift count: {e}"))?;
    Ok((u64::from_le_bytes(b) % p as u64) as u32)
}

/// A PRP proof to build: its power (default: GIMPS's for p) and the disk its points may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProofSpec {
    pub power: Option<u32>,
    pub disk_budget: u64,
}

/// Everything that settles a test before any work.
#[derive(Debug, Clone)]
pub struct TestSpec {
    pub p: u32,
    pub kind: TestKind,
    /// The run's options; their state and proof stores are set when the test is opened, their
    /// start time and stop flag when it runs.
    pub opts: RunOptions,
    /// The engine, arithmetic and GPU, decided for this test ([`crate::decide`]).
    pub decision: Decision,
    pub ll_check: LlCheck,
    /// Where the test's state directory goes.
    pub state_root: PathBuf,
    /// Discard the saved states of this test and start from the beginning.
    pub fresh: bool,
    pub proof: Option<ProofSpec>,
    /// Testing: replace saved proof point INDEX by a wrong value before the proof is built.
    pub corrupt_proof_point: Option<usize>,
    /// Prefix of the progress labels ("" or "worker N: ").
    pub tag: String,
    /// Also log each checkpoint to this file (the work directory's progress.log).
    pub progress_log: Option<PathBuf>,
    /// What a consistent error tells the user to do to start the test again.
    pub fresh_hint: String,
}

/// A test whose state directory is open, before anything in it is changed (the caller may take
/// its lock, or look at it, first).
pub struct Prepared {
    spec: TestSpec,
    store: StateStore,
}

/// An open test: its state directory, proof points and engines.
pub struct Test {
    spec: TestSpec,
    store: StateStore,
    proof: Option<ProofSetup>,
    engine: Box<dyn Engine>,
    /// The second engine of the exact LL check, when the test runs with it from the start, and
    /// the GPU it has to itself (`None`: it shares the first engine's device, or is GMP's).
    second: Option<(Box<dyn Engine>, Option<usize>)>,
    /// What the engines are: the spec's decision, GMP's after a GPU failed to open under auto.
    decision: Decision,
}

/// How a test's run ended.
// One per test, moved once: boxing the record buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum TestEnd {
    Done(RunRecord),
    /// Stopped on request at `iteration`, of the test itself or, when `confirming`, of the rerun
    /// that confirms a "prime" LL residue (the test's own state stays saved).
    Interrupted {
        iteration: u64,
        confirming: bool,
    },
}

impl TestSpec {
    /// Open the test's state directory (created when missing).
    pub fn prepare(self) -> Result<Prepared> {
        let store = StateStore::open(&self.state_root, self.p, self.kind)?;
        Ok(Prepared { spec: self, store })
    }

    /// The test on a state directory the caller has opened (and locked or claimed) itself; it
    /// must be this test's under `state_root`.
    pub fn prepare_in(self, store: StateStore) -> Prepared {
        Prepared { spec: self, store }
    }
}

impl Prepared {
    pub fn store(&self) -> &StateStore {
        &self.store
    }

    /// Start afresh when asked, set up the proof's points and open the engines.
    pub fn open(self) -> Result<Test> {
        let Prepared { spec, store } = self;
        let (p, kind) = (spec.p, spec.kind);
        if spec.fresh {
            store.clear()?;
            StateStore::open(&spec.state_root, p, kind)?;
        }
        trace::mark("state store opened");
        let proof = match spec.proof {
            Some(ps) => {
                let s = session::setup(store.dir(), p, ps.power, ps.disk_budget).context("proof")?;
                if let Some(note) = &s.choice.note {
                    eprintln!("note: {}{note}", spec.tag);
                }
                Some(s)
            }
            None => None,
        };
        trace::mark("proof setup");
        trace::mark("engine opening");
        let mut decision = spec.decision.clone();
        if let Some(why) = &decision.why {
            eprintln!("{}{why}", spec.tag);
        }
        let (engine, fallback) = decision.open(spec.opts.shift)?;
        trace::mark("engine open");
        if let Some(why) = fallback {
            eprintln!("{}{why}", spec.tag);
        }
        let doubled = kind == TestKind::Ll && spec.ll_check.doubles(p);
        let mut test = Test { decision, spec, store, proof, engine, second: None };
        if doubled {
            test.second = Some(test.open_second(test.spec.opts.shift)?);
        }
        Ok(test)
    }
}

impl Test {
    pub fn store(&self) -> &StateStore {
        &self.store
    }

    /// The proof's setup (where its points are saved), for a PRP test with a proof.
    pub fn proof_setup(&self) -> Option<&ProofSetup> {
        self.proof.as_ref()
    }

    /// The kind of test.
    pub fn kind(&self) -> TestKind {
        self.spec.kind
    }

    /// The iterations the test runs.
    pub fn total(&self) -> u64 {
        self.spec.opts.total
    }

    /// A second engine for the exact LL check of a run that started with shift `shift` (on a GPU
    /// of its own where the host has another), and that GPU.
    fn open_second(&self, shift: u32) -> Result<(Box<dyn Engine>, Option<usize>)> {
        let (engine, gpu) = self.decision.open_second(double::other_shift(self.spec.p, shift))?;
        if let Some(g) = gpu {
            eprintln!("{}the second engine of the exact LL check runs on GPU {g}, beside the first", self.spec.tag);
        }
        Ok((engine, gpu))
    }

    fn progress(&self, what: &str) -> Result<Progress> {
        let progress = Progress::new(&format!("{}M{} {what}", self.spec.tag, self.spec.p), self.spec.opts.total);
        Ok(match &self.spec.progress_log {
            Some(path) => {
                let log = ProgressLog::open(path).with_context(|| format!("cannot append to {}", path.display()))?;
                progress.with_log(log)
            }
            None => progress,
        })
    }

    /// Run the test to its end (resumed from its newest usable saved state), stopping with a
    /// saved state when `stop` is set. A full LL test whose residue says prime and that ran
    /// without the second engine is run again from the start with it before it ends: its
    /// record then holds both runs' checks.
    pub fn run(&mut self, stop: Arc<AtomicBool>) -> Result<TestEnd> {
        let (p, kind, total) = (self.spec.p, self.spec.kind, self.spec.opts.total);
        let opts = RunOptions {
            started: report::now_rfc3339(),
            store: Some(self.store.clone()),
            stop: Some(stop),
            proof: self.proof.as_ref().map(|s| s.store.clone()),
            replay: Some(self.replay_store()),
            ..self.spec.opts.clone()
        };
        let confirm_opts = RunOptions { store: None, replay: None, faults: Vec::new(), stop_at: None, ..opts.clone() };
        let mut progress = self.progress(kind.worktype())?;
        trace::mark("run started");
        // Two GMP engines check each other on two cores, two GPU engines on two GPUs: the second
        // runs beside the first, on a thread of its own. GMP spot checks (GMP against GMP, each a
        // part of what the second engine recomputes) would only take a core from a GMP pair.
        let doubled = self.second.is_some();
        let cpu_pair = doubled && self.decision.engine == EngineKind::Gmp;
        let beside = cpu_pair || self.second.as_ref().is_some_and(|(_, gpu)| gpu.is_some());
        let shadow = match beside {
            true => self.second.take().map(|(e, _)| Shadow::background(e)),
            false => self.second.as_mut().map(|(e, _)| Shadow::inline(e.as_mut())),
        };
        let opts = match (opts.spot, cpu_pair) {
            (SpotMode::Sample, true) => RunOptions { spot: SpotMode::Off, ..opts },
            _ => opts,
        };
        let run_end = run_doubled(self.engine.as_mut(), shadow, opts, &mut progress);
        trace::mark("run finished");
        let mut rec = match run_end.map_err(|e| self.with_state_files(e))? {
            RunEnd::Done(rec) => rec,
            RunEnd::Interrupted { iteration } => return Ok(TestEnd::Interrupted { iteration, confirming: false }),
        };
        if let Some(k) = rec.resumed_from {
            eprintln!("{}resumed from a saved state at iteration {k}", self.spec.tag);
        }
        if kind == TestKind::Ll && total == kind.full_iterations(p) && !doubled && rec.last.is_zero() {
            // "Prime" is reported only once a second engine agreed with every segment.
            eprintln!(
                "{}M{p}: the LL residue says prime; confirming it with a second engine (--ll-check double) before it is printed",
                self.spec.tag
            );
            let (mut other, _) = self.open_second(rec.shift)?;
            let mut progress = self.progress("LL confirm")?;
            let opts = RunOptions { shift: rec.shift, started: rec.started.clone(), ..confirm_opts };
            let (first_seconds, first_checks) = (rec.seconds, std::mem::take(&mut rec.checks));
            let second = Some(other.as_mut() as &mut dyn Engine);
            rec = match run_checked(self.engine.as_mut(), second, opts, &mut progress)? {
                RunEnd::Done(r) => r,
                RunEnd::Interrupted { iteration } => return Ok(TestEnd::Interrupted { iteration, confirming: true }),
            };
            rec.seconds += first_seconds;
            // The result's check log holds both runs: what the first one caught (faults,
            // rollbacks) and the rerun's agreement.
            let rerun_events = std::mem::replace(&mut rec.checks.events, first_checks.events);
            rec.checks.events.extend(rerun_events);
            // (The final residue's checks are the rerun's: the first run's ended on the same value.)
            for (key, n) in first_checks.summary.into_iter().filter(|(k, _)| k != "final_checks") {
                rec.checks.bump(&key, n);
            }
            rec.checks.bump("confirmation_reruns", 1);
        }
        Ok(TestEnd::Done(rec))
    }

    /// Where the run keeps its replay points: the test's state directory.
    fn replay_store(&self) -> ReplayStore {
        ReplayStore::new(self.store.dir(), self.spec.p)
    }

    /// A consistent error names the saved states it leaves and how to start again.
    fn with_state_files(&self, e: RunError) -> anyhow::Error {
        match e {
            RunError::Consistent { .. } => {
                let files = self.store.file_names();
                let saved = if files.is_empty() { "none".into() } else { files.join(", ") };
                anyhow!(
                    "{e}; saved states of this test in {}: {saved}; {}",
                    self.store.dir().display(),
                    self.spec.fresh_hint
                )
            }
            e => e.into(),
        }
    }

    /// The verdict of a finished run.
    pub fn outcome(&self, rec: &RunRecord) -> Result<Outcome> {
        let outcome = Outcome::from_final(self.spec.kind, self.spec.opts.total, &rec.last)?;
        trace::mark("outcome computed");
        Ok(outcome)
    }

    /// The run's proof, built from its saved points and checked (None without a proof).
    pub fn build_proof(&mut self, rec: &RunRecord) -> Result<Option<BuiltProof>> {
        let Some(setup) = &self.proof else { return Ok(None) };
        if let Some(i) = self.spec.corrupt_proof_point {
            corrupt_point(setup, i)?;
        }
        let built = session::finish(&setup.store, self.engine.as_mut(), &rec.last)?;
        trace::mark("proof built");
        Ok(Some(built))
    }

    /// The report's description of the finished run.
    pub fn info(&self, rec: &RunRecord, proof: Option<BuiltProof>) -> TestInfo {
        let info = TestInfo::of_run(self.engine.as_ref(), rec, proof);
        trace::mark("test info (host described)");
        info
    }

    /// Sign the certificate and write it to `path`; the full residues it does not carry (the
    /// replay points) go to its sidecar `path.points`, and a sidecar left there by an earlier
    /// certificate is removed. Returns the certificate's hash.
    pub fn write_certificate(
        &self,
        path: &Path,
        key: &SigningKey,
        info: &TestInfo,
        rec: &mut RunRecord,
        outcome: &Outcome,
    ) -> Result<String> {
        let replay = self.replay_store();
        let sidecar = split_points(&mut rec.checkpoints, &self.spec.opts.layout, self.spec.opts.total, |c| {
            replay
                .load(c.iteration, &c.hash)
                .inspect_err(|why| {
                    eprintln!("warning: replay point at iteration {} left out of the sidecar: {why}", c.iteration)
                })
                .ok()
        });
        trace::mark("replay points read back");
        let body = report::cert_body(info, rec, outcome);
        trace::mark("certificate body built");
        let bytes = cert::seal(&body, key);
        trace::mark("certificate signed");
        fsutil::write_atomic(path, &bytes, 0o644)
            .with_context(|| format!("cannot write the certificate to {}", path.display()))?;
        let hash = cert::certificate_hash(&bytes);
        let points_path = cert::points::sidecar_path(path);
        if sidecar.is_empty() {
            // A sidecar left from an earlier certificate at this path would only be refused.
            fsutil::remove_durably(&points_path)
                .with_context(|| format!("cannot remove the stale {}", points_path.display()))?;
        } else {
            let n = sidecar.len();
            fsutil::write_atomic(&points_path, &cert::points::encode_points(&hash, self.spec.p, sidecar), 0o644)
                .with_context(|| format!("cannot write the replay points to {}", points_path.display()))?;
            eprintln!("replay points: {n} residues in {}", points_path.display());
        }
        trace::mark("certificate written");
        Ok(hash)
    }

    /// Give the engines back to the process's end: the driver releases a GPU with the process,
    /// while dropping an engine frees its buffers and context one call at a time (66 ms on an
    /// H200, measured with MERSENNE_CERT_TRACE). For a process that ends next.
    pub fn leak_engines(self) {
        std::mem::forget(self.engine);
        std::mem::forget(self.second);
    }
}

/// Testing: overwrite proof point `index` with a well-formed but wrong value (its checksum is
/// right, so only the proof's own verification can catch it).
fn corrupt_point(setup: &ProofSetup, index: usize) -> Result<()> {
    let store = &setup.store;
    let x = store.load(index)?;
    let iteration = store.points()[index];
    store.save(iteration, &CpuArith.mul(&x, &Residue::from_u64(store.exponent(), 2)))?;
    eprintln!("testing: replaced proof point {index} (iteration {iteration}) by a wrong value");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::Work;
    use crate::run::checkpoints::{default_residue_budget, CheckpointLayout};
    use crate::run::Fault;

    fn spec(dir: &Path, p: u32, kind: TestKind, ll_check: LlCheck) -> TestSpec {
        let total = kind.full_iterations(p);
        let layout = CheckpointLayout::choose(p, total, Some(100), default_residue_budget(p, false)).unwrap();
        TestSpec {
            p,
            kind,
            opts: RunOptions::simple(total, layout, 7),
            decision: Decision::gmp(Work::test(p, kind, total, false), None),
            ll_check,
            state_root: dir.to_path_buf(),
            fresh: false,
            proof: None,
            corrupt_proof_point: None,
            tag: String::new(),
            progress_log: None,
            fresh_hint: "start again".into(),
        }
    }

    fn finish(spec: TestSpec) -> RunRecord {
        let mut test = spec.prepare().unwrap().open().unwrap();
        match test.run(Arc::new(AtomicBool::new(false))).unwrap() {
            TestEnd::Done(rec) => rec,
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn ll_check_auto_doubles_below_the_threshold_only() {
        assert!(LlCheck::Auto.doubles(double::AUTO_DOUBLE_BELOW - 1));
        assert!(!LlCheck::Auto.doubles(double::AUTO_DOUBLE_BELOW));
        assert!(LlCheck::Double.doubles(u32::MAX) && !LlCheck::Jacobi.doubles(3));
    }

    #[test]
    fn an_injected_fault_is_caught_by_the_double_check() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path(), 521, TestKind::Ll, LlCheck::Auto);
        s.opts.faults = vec![Fault { iteration: 250, word: 3, bit: 17 }];
        let rec = finish(s);
        assert!(rec.last.is_zero(), "M521 is prime");
        let c = &rec.checks.summary;
        assert!(c["double_checks"] >= 5 && c["double_failures"] >= 1, "{c:?}");
    }

    #[test]
    fn a_prime_residue_without_the_double_check_is_confirmed_by_a_rerun() {
        let dir = tempfile::tempdir().unwrap();
        let rec = finish(spec(dir.path(), 607, TestKind::Ll, LlCheck::Jacobi));
        assert!(rec.last.is_zero(), "M607 is prime");
        assert_eq!(rec.checks.summary.get("confirmation_reruns"), Some(&1), "{:?}", rec.checks.summary);
        // A composite is not rerun.
        let rec = finish(spec(dir.path(), 613, TestKind::Ll, LlCheck::Jacobi));
        assert!(!rec.last.is_zero());
        assert_eq!(rec.checks.summary.get("confirmation_reruns"), None);
        assert_eq!(rec.checks.summary.get("double_checks"), None);
    }
}
