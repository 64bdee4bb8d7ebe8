//! `prove P`: run a Lucas–Lehmer (or `--prp` base-3 PRP) test of 2^P − 1, print one GIMPS-style
//! JSON result line on stdout, and write a signed certificate (`--cert FILE`). The test itself
//! runs through [`mersenne_cert::run::test`], as each assignment of `--work-dir` does; this file
//! is the command line: the arguments checked, the outputs written, the summary told.

use anyhow::{anyhow, bail, Context, Result};
use ed25519_dalek::SigningKey;
use mersenne_cert::cert::{self, Outcome};
use mersenne_cert::cli::prove::{Args, LlCheck};
use mersenne_cert::cli::EngineArg;
use mersenne_cert::decide::{self, Work};
use mersenne_cert::exponent::{parse_exponent, TestKind};
use mersenne_cert::proof::pietrzak::final_span;
use mersenne_cert::proof::session;
use mersenne_cert::run::publish::{self, Outputs};
use mersenne_cert::run::report::{self, TestInfo};
use mersenne_cert::run::request::{Request, Settings};
use mersenne_cert::run::state::{self, StateLock, StateStore};
use mersenne_cert::run::test::{Test, TestEnd, TestSpec};
use mersenne_cert::run::RunRecord;
use mersenne_cert::{cli, fsutil, host, trace, work};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit status after an interruption that saved the state (128 + SIGINT).
const EXIT_INTERRUPTED: i32 = 130;
/// A second interrupt sooner than this after the first is the same signal delivered twice.
const DUPLICATE_INTERRUPT: Duration = Duration::from_secs(1);
/// The check counters, and the share of the iterations that GMP spot checks recomputed.
fn summary(c: &mersenne_cert::cert::CheckLog, iterations: u64) -> String {
    if c.summary.is_empty() {
        return "none ran".into();
    }
    let mut parts: Vec<String> = c.summary.iter().map(|(k, v)| format!("{k} {v}")).collect();
    if let Some(&spot) = c.summary.get("spot_iterations") {
        parts.push(format!("spot coverage {:.1}%", 100.0 * spot as f64 / iterations.max(1) as f64));
    }
    parts.join(", ")
}

/// Check an output file before the test (a regular file or new, in a writable directory), and
/// remove the temporaries that a run killed while writing it left beside it.
fn check_output(path: &Path, what: &str) -> Result<()> {
    fsutil::probe_writable(path).with_context(|| format!("cannot write {what} to {}", path.display()))?;
    let stale = fsutil::remove_stale_temps(path)
        .with_context(|| format!("cannot remove the stale temporaries of {}", path.display()))?;
    if stale > 0 {
        eprintln!(
            "removed {stale} temporary file(s) of {} left by a run that was killed while writing it",
            path.display()
        );
    }
    Ok(())
}

/// `--keep-proof-points DIR`: DIR must be new, and its parent a writable directory on the state
/// directory's file system (the points are moved there by a rename).
fn check_new_dir(dir: &Path, state_dir: &Path) -> Result<()> {
    if dir.symlink_metadata().is_ok() {
        bail!("--keep-proof-points {}: it exists already; name a new directory", dir.display());
    }
    fsutil::probe_writable(dir).with_context(|| format!("--keep-proof-points {}: cannot create it", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let parent = dir.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let (a, b) = (std::fs::metadata(parent)?, std::fs::metadata(state_dir)?);
        if a.dev() != b.dev() {
            bail!(
                "--keep-proof-points {}: it is on another file system than the state directory {}; the points are moved by a rename",
                dir.display(),
                state_dir.display()
            );
        }
    }
    Ok(())
}

fn main() {
    trace::init();
    let result = real_main();
    // After real_main's locals (the engine and its GPU context among them) are dropped.
    trace::mark("exit");
    if let Err(e) = result {
        eprintln!("prove: error: {}", cli::error_line(&e));
        std::process::exit(1);
    }
}

fn print(line: &str) -> Result<()> {
    cli::print_line(line).context("cannot write to standard output")
}

/// Iterations timed per candidate shape by --tune.
const TUNE_ITERS: u64 = 3000;

/// `prove P --tune`: time the candidate pass shapes for P's length on the GPU and store the best.
fn tune(p: u32) -> Result<()> {
    let t = mersenne_cert::gpu::tune(p, TUNE_ITERS).context("--tune times the GPU")?;
    if t.timings.is_empty() {
        print(&format!("M{p}: n = 2^{} runs on the one-block kernel; there is nothing to tune", t.log2))?;
        return Ok(());
    }
    print(&format!("M{p}, n = 2^{}: µs per iteration by stages per line ({TUNE_ITERS} iterations each)", t.log2))?;
    for (k, timing) in &t.timings {
        match timing {
            Ok(us) => print(&format!(
                "{k:>4} {us:>10.1}{}",
                if t.chosen == Some(*k) { "  <- kept for this length" } else { "" }
            ))?,
            Err(why) => print(&format!("{k:>4} {:>10}  ({why})", "-"))?,
        }
    }
    Ok(())
}

/// `prove P --proof-from-points DIR --gimps-proof FILE`: the proof of power `--proof-power`
/// (default: the power the points were saved for) built from a finished run's kept points on
/// the engine, checked, and written as a GIMPS proof file.
fn proof_from_points(args: &Args, p: u32, dir: &Path) -> Result<()> {
    let out = args.gimps_proof.as_deref().context("--proof-from-points writes the proof to --gimps-proof FILE")?;
    check_output(out, "the proof file")?;
    // The proof's work: about p squarings at most (its checks), on the engine that does them first.
    let mut decision = decide::decide(&args.ask(), &Work::test(p, TestKind::Prp, p.into(), false))?;
    if let Some(why) = &decision.why {
        eprintln!("{why}");
    }
    let (mut engine, fallback) = decision.open(0)?;
    if let Some(why) = fallback {
        eprintln!("{why}");
    }
    let (b, saved_power) = session::from_kept_points(dir, p, args.proof_power, engine.as_mut())
        .with_context(|| format!("the proof from the points in {}", dir.display()))?;
    fsutil::write_atomic(out, &b.bytes, 0o644)
        .with_context(|| format!("cannot write the proof file {}", out.display()))?;
    print(&format!(
        "proof: power {}, {} bytes, built and checked in {:.2} s on the {}, from the points in {} (saved for a power-{saved_power} proof); B res64 {:016X}; GIMPS proof file {}",
        b.power(),
        b.bytes.len(),
        b.seconds,
        if b.on_engine { "engine" } else { "CPU" },
        dir.display(),
        b.proof.b().res64(),
        out.display()
    ))
}

/// A flag that Ctrl-C sets: the run saves a verified state and stops. A second, later Ctrl-C
/// quits at once.
fn interrupt_flag() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        let first = std::sync::OnceLock::new();
        ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                // A signal sent to the process group (GNU `timeout` without --foreground, a
                // supervisor) arrives twice at once: only a later, deliberate one quits.
                if first.get().is_some_and(|t: &Instant| t.elapsed() < DUPLICATE_INTERRUPT) {
                    return;
                }
                eprintln!("\nsecond interrupt: exiting without saving");
                std::process::exit(EXIT_INTERRUPTED);
            }
            let _ = first.set(Instant::now());
            eprintln!("\ninterrupt: saving a verified checkpoint, then exiting (Ctrl-C again to quit at once)");
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    Ok(stop)
}

/// `prove --work-dir DIR`: the GIMPS work loop (or, with --devices, one worker process per GPU).
fn work_main(args: &Args, dir: &std::path::Path) -> Result<()> {
    let cores = host::cores();
    if let Some(devices) = &args.devices {
        let count = match devices.as_str() {
            "all" => mersenne_cert::gpu::device_count().context("--devices all counts the GPUs")?,
            n => n
                .parse()
                .ok()
                .filter(|&n: &usize| n > 0)
                .with_context(|| format!("--devices must be 'all' or a count, got '{n}'"))?,
        };
        let mut rest = work::workers::without_devices(&std::env::args_os().skip(1).collect::<Vec<_>>());
        // The workers share the cores.
        if args.jacobi_threads.is_none() {
            rest.extend(["--jacobi-threads".into(), (cores / 4 / count).max(1).to_string().into()]);
        }
        if args.spot_threads.is_none() {
            rest.extend(["--spot-threads".into(), host::spot_threads_per_worker(cores, count).to_string().into()]);
        }
        let _stop = interrupt_flag()?; // the workers save on Ctrl-C; the parent waits for them
        let exe = std::env::current_exe().context("cannot find this program to start its workers")?;
        std::process::exit(work::workers::run_workers(&exe, dir, count, &rest)?);
    }
    let (key, key_path, created) = cert::load_or_create(args.key.as_deref())?;
    if created {
        eprintln!("created a new signing key at {}", key_path.display());
    }
    let save_every = args.save_every()?;
    let wait = args.wait()?;
    let gerbicz_block = args.gerbicz_block(None)?;
    let crash_at = match args.crash_at.as_deref() {
        None => None,
        Some("result") => Some(work::CrashPoint::AfterResult),
        Some("state") => Some(work::CrashPoint::AfterState),
        Some("sent") => Some(work::CrashPoint::AfterSend),
        Some(other) => bail!("--crash-at must be 'result', 'state' or 'sent', got '{other}'"),
    };
    let primenet = args.primenet.config(args.user.as_deref(), args.computer.as_deref())?;
    let faults = args.faults()?;
    if let Some(f) = faults.iter().find(|f| f.iteration == 0) {
        bail!("--inject-fault {}: the iteration must be at least 1", f.iteration);
    }
    let (jacobi_threads, mut spot_threads) = args.check_threads()?;
    // A worker of one GPU (--device N) takes one GPU's share of the cores: its peers on the
    // other GPUs run beside it.
    if args.spot_threads.is_none() && args.device.is_some() && args.engine != EngineArg::Cpu {
        let gpus = mersenne_cert::gpu::device_count().unwrap_or(1);
        if gpus > 1 {
            spot_threads = host::spot_threads_per_worker(cores, gpus);
            eprintln!("note: spot checks on {spot_threads} threads: one GPU's share of the {cores} cores ({gpus} GPUs, one worker each)");
        }
    }
    let cfg = work::WorkConfig {
        dir: dir.to_path_buf(),
        device: args.device.unwrap_or(0),
        worker: args.device,
        engine: args.engine.into(),
        arith: args.arith.into(),
        key,
        user: args.user.clone(),
        computer: args.computer.clone(),
        wait,
        spot: args.spot.into(),
        spot_threads,
        ll_check: args.ll_check.into(),
        jacobi_threads,
        save_every,
        gerbicz_block,
        proof_disk_budget: args.proof_disk_budget,
        stop: interrupt_flag()?,
        crash_at,
        faults,
        primenet,
    };
    match work::run_loop(&cfg)? {
        work::LoopEnd::Finished { done } => {
            eprintln!("work: no usable line left; {done} result(s) written this time");
            Ok(())
        }
        work::LoopEnd::Interrupted => std::process::exit(EXIT_INTERRUPTED),
    }
}

/// Step 1, parse: the test the arguments describe, every argument checked before any work.
fn test_spec(args: &Args, p: u32) -> Result<TestSpec> {
    let kind = if args.prp { TestKind::Prp } else { TestKind::Ll };
    if p == 2 && kind == TestKind::Prp {
        bail!("M2 = 3 is prime by inspection: the base-3 PRP test is undefined for it (3 divides M2); run 'prove 2' alone");
    }
    if p == 2 && args.cert.is_some() {
        bail!("M2 = 3 is prime by inspection: the Lucas-Lehmer test has no iterations to certify, so no certificate is written for it; run 'prove 2' without --cert");
    }
    let request = Request {
        iterations: args.iterations,
        shift_fixed: args.shift != "random",
        checkpoint_every: args.checkpoint_every,
        residue_budget: args.residue_budget,
        replay_points: args.replay_points,
        certificate: args.cert.is_some(),
        no_proof: args.no_proof,
        proof_power: args.proof_power,
        stop_at: args.stop_after,
        fresh: args.fresh,
        corrupt_proof_point: args.corrupt_proof_point,
        fresh_hint: "pass --fresh to start the test again".into(),
        ..Request::full(p, kind, args.shift(p)?, args.state_dir.clone().unwrap_or_else(state::default_root))
    };
    let total = request.total()?;
    let proof_args = args.proof_power.is_some() || args.gimps_proof.is_some() || args.keep_proof_points.is_some();
    if !request.wants_proof()? && (proof_args || args.corrupt_proof_point.is_some()) {
        bail!(
            "--proof-power, --gimps-proof and --keep-proof-points need a full PRP test with a proof (--prp, without --iterations or --no-proof)"
        );
    }
    let save_every = args.save_every()?;
    if kind == TestKind::Ll && args.gerbicz_block.is_some() {
        bail!("--gerbicz-block is for PRP (--prp); an LL test has no Gerbicz check");
    }
    let gerbicz_block = args.gerbicz_block(Some(p))?;
    if kind == TestKind::Prp && args.ll_check != LlCheck::Auto {
        bail!("--ll-check is for LL tests; PRP is checked by Gerbicz");
    }
    let faults = args.faults()?;
    if let Some(f) = faults.iter().find(|f| f.iteration == 0 || f.iteration > total) {
        bail!(
            "--inject-fault {}: the iteration must be in 1..={total} (the iterations of this test), or the fault is never injected",
            f.iteration
        );
    }
    let (jacobi_threads, spot_threads) = args.check_threads()?;
    let settings = Settings {
        ask: args.ask(),
        ll_check: args.ll_check.into(),
        spot: args.spot.into(),
        spot_threads,
        jacobi_threads,
        save_every,
        gerbicz_block,
        proof_disk_budget: args.proof_disk_budget,
        faults,
    };
    // The engine, arithmetic and GPU are decided here, once (a forced arithmetic checked now).
    request.spec(&settings)
}

/// The outputs are files of their own: none is another output (the certificate and its replay
/// points `CERT.points`, the JSON lines, the GIMPS proof), the signing key or the test's lock,
/// and none lies in the test's state directory, which is deleted when the test ends.
fn check_distinct(args: &Args, spec: &TestSpec) -> Result<()> {
    let sidecar = args.cert.as_deref().map(cert::points::sidecar_path);
    let outputs: Vec<(&str, &Path)> = [
        ("--cert", args.cert.as_deref()),
        ("the certificate's replay points", sidecar.as_deref()),
        ("--json", args.json.as_deref()),
        ("--gimps-proof", args.gimps_proof.as_deref()),
    ]
    .into_iter()
    .filter_map(|(what, path)| Some((what, path?)))
    .collect();
    let key = args.key.clone().or_else(|| cert::default_key_path().ok());
    let store = StateStore::at(&spec.state_root, spec.p, spec.kind);
    let lock = store.lock_path();
    let mut ours = vec![("the test's lock file", lock.as_path())];
    ours.extend(key.as_deref().map(|k| ("the signing key", k)));
    fsutil::check_distinct(&outputs, &ours, &[("the state directory", store.dir())]).map_err(|e| anyhow!("{e}"))
}

/// Step 2: the outputs checked before the test (fail fast on everything that does not need the
/// computation), and the signing key a certificate needs.
fn check_outputs(args: &Args, spec: &TestSpec) -> Result<Option<SigningKey>> {
    check_distinct(args, spec)?;
    if let Some(path) = &args.gimps_proof {
        check_output(path, "the proof file")?;
    }
    if let Some(path) = &args.json {
        fsutil::probe_appendable(path).with_context(|| format!("cannot append to {}", path.display()))?;
    }
    let Some(path) = &args.cert else { return Ok(None) };
    check_output(path, "the certificate")?;
    let (key, key_path, created) = cert::load_or_create(args.key.as_deref())?;
    if created {
        eprintln!("created a new signing key at {}", key_path.display());
    } else if fsutil::readable_by_others(&key_path) {
        eprintln!(
            "warning: the signing key {} is readable by other users; whoever reads it can sign in your name (chmod 600 it)",
            key_path.display()
        );
    }
    trace::mark(if created { "signing key created" } else { "signing key loaded" });
    Ok(Some(key))
}

/// Step 3: the test's state directory, locked for this process (held until it ends), and its
/// engines.
fn open_test(args: &Args, spec: TestSpec) -> Result<(Test, StateLock)> {
    let prepared = spec.prepare()?;
    let lock = prepared.store().lock()?;
    if let Some(dir) = &args.keep_proof_points {
        check_new_dir(dir, prepared.store().dir())?;
    }
    Ok((prepared.open()?, lock))
}

/// Step 4: run the test, resumed from its saved state when there is one, to its (confirmed)
/// end; an interruption exits here, with the state saved.
fn run_test(test: &mut Test, p: u32, kind: TestKind) -> Result<RunRecord> {
    let stop = interrupt_flag()?;
    trace::mark("ctrl-c handler installed");
    match test.run(stop)? {
        TestEnd::Done(rec) => Ok(rec),
        TestEnd::Interrupted { iteration, confirming: false } => {
            eprintln!(
                "interrupted: M{p} {} saved at iteration {iteration} of {} in {}; run the same command again to resume",
                kind.worktype(),
                test.total(),
                test.store().dir().display()
            );
            std::process::exit(EXIT_INTERRUPTED);
        }
        TestEnd::Interrupted { iteration, confirming: true } => {
            eprintln!("interrupted while confirming the result at iteration {iteration}; run the same command again");
            std::process::exit(EXIT_INTERRUPTED);
        }
    }
}

/// Step 6: the certificate, the proof file and the result line ([`publish::publish`]), the line
/// on stdout and --json, the saved states cleared (the proof points kept when asked), and the
/// summary on stderr.
fn finish(
    args: &Args,
    test: &Test,
    key: Option<&SigningKey>,
    mut rec: RunRecord,
    outcome: &Outcome,
    info: &TestInfo,
) -> Result<()> {
    let p = info.p;
    let out = Outputs {
        certificate: args.cert.as_deref().zip(key),
        proof_file: args.gimps_proof.as_deref(),
        ..Default::default()
    };
    let published = publish::publish(test, &mut rec, outcome, info, &out)?;
    // A stdout that cannot be written (a full disk) is reported at the end: the certificate is
    // written, and the JSON file and the clean-up still happen.
    let line = published.line.to_string();
    let printed = cli::print_line(&line);
    if let Some(path) = &args.json {
        fsutil::append_line(path, &line)
            .with_context(|| format!("cannot append the result line to {}", path.display()))?;
    }
    trace::mark("result printed");
    // The result is out: the saved states of this test, and its proof points (unless kept), are
    // no longer needed. The states go first (a run killed in between must not resume from a
    // state whose proof points are gone).
    let store = test.store();
    store.forget()?;
    if let (Some(dir), Some(setup)) = (&args.keep_proof_points, test.proof_setup()) {
        std::fs::rename(setup.store.dir(), dir).with_context(|| {
            format!("cannot move the proof points from {} to {}", setup.store.dir().display(), dir.display())
        })?;
        eprintln!("proof points kept in {}", dir.display());
    }
    store.clear()?;
    trace::mark("state cleared");
    if let Some(b) = &info.proof {
        eprintln!(
            "proof: power {}, {} bytes, built and checked in {:.2} s on the {}; a verifier needs {} squarings (2^-{} of the test){}",
            b.power(),
            b.bytes.len(),
            b.seconds,
            if b.on_engine { "engine" } else { "CPU" },
            final_span(p, b.power()),
            b.power(),
            args.gimps_proof.as_ref().map(|f| format!("; GIMPS proof file {}", f.display())).unwrap_or_default()
        );
    }
    // ms/iter over the whole run, and over the loop alone (its checks in, the final ones out).
    eprintln!(
        "M{p} {} ({} {} iterations, res64 {}, shift {}, {:.2} s, {:.4} ms/iter, loop {:.4} ms/iter; checks: {}; {}){}",
        publish::verdict(outcome.status, info.kind),
        info.kind.worktype(),
        rec.iterations,
        outcome.res64,
        rec.shift,
        rec.seconds,
        rec.seconds * 1e3 / rec.iterations_here.max(1) as f64,
        rec.loop_seconds * 1e3 / rec.iterations_here.max(1) as f64,
        summary(&rec.checks, rec.iterations_here),
        rec.times.describe(rec.seconds),
        args.cert
            .as_ref()
            .filter(|_| published.certificate.is_some())
            .map(|c| format!("; certificate {}", c.display()))
            .unwrap_or_default()
    );
    if let Some(note) = report::ll_coverage_note(report::ll_exact_coverage(info.kind, &rec.checks, rec.iterations)) {
        eprintln!("note: {note}");
    }
    trace::mark("summary printed");
    printed.context("cannot write the result line to standard output")
}

fn real_main() -> Result<()> {
    let args: Args = cli::parse_args("prove");
    if let Some(dir) = &args.work_dir {
        return work_main(&args, dir);
    }
    let p = parse_exponent(args.exponent.as_deref().unwrap_or_default())?;
    trace::mark("args parsed");
    if args.tune {
        return tune(p);
    }
    if let Some(dir) = &args.proof_from_points {
        return proof_from_points(&args, p, dir);
    }
    let spec = test_spec(&args, p)?;
    let kind = spec.kind;
    let key = check_outputs(&args, &spec)?;
    let (mut test, lock) = open_test(&args, spec)?;
    let rec = run_test(&mut test, p, kind)?;
    // Step 5: the verdict, and the proof built and checked before anything is published.
    let next = "run again with --no-proof to publish it without a proof, or with --fresh to redo it with one";
    let (outcome, info) = publish::conclude(&mut test, &rec, next)?;
    finish(&args, &test, key.as_ref(), rec, &outcome, &info)?;
    // The test is finished and its state cleared: its lock file goes too (interrupted or failed
    // runs keep theirs beside the state they leave).
    lock.release().with_context(|| format!("cannot remove the lock file {}", test.store().lock_path().display()))?;
    // Everything is written and the process ends next: the driver releases the GPU with it.
    test.leak_engines();
    Ok(())
}
