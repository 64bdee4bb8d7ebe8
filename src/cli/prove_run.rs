//! `prove P` (and `prove P --tune`, `prove P --proof-from-points DIR`): the test the arguments
//! describe, every argument and output checked before any work, run through
//! [`crate::run::test`] (as each assignment of `--work-dir` is), then published through
//! [`crate::run::publish`] (as the work loop does): the certificate, the proof file, the result
//! line on stdout and `--json`, the saved states cleared and the summary on stderr.

use super::interrupt::{interrupt_flag, EXIT_INTERRUPTED};
use super::prove::{Args, LlCheck};
use crate::cert::{self, Outcome};
use crate::decide::{self, Work};
use crate::exponent::{parse_exponent, TestKind};
use crate::proof::pietrzak::final_span;
use crate::proof::session;
use crate::run::publish::{self, Outputs};
use crate::run::report::{self, TestInfo};
use crate::run::request::Request;
use crate::run::state::{self, StateLock, StateStore};
use crate::run::test::{Test, TestEnd, TestSpec};
use crate::run::RunRecord;
use crate::{fsutil, gpu, trace};
use anyhow::{anyhow, bail, Context, Result};
use ed25519_dalek::SigningKey;
use std::path::Path;

/// Run what `prove`'s arguments ask for: the work loop of `--work-dir`, `--tune`,
/// `--proof-from-points`, or a test of M_p to its published outputs. An interruption exits
/// here with [`EXIT_INTERRUPTED`], its state saved.
pub fn run(args: &Args) -> Result<()> {
    if let Some(dir) = &args.work_dir {
        return super::work_dir::run(args, dir);
    }
    let p = parse_exponent(args.exponent.as_deref().unwrap_or_default())?;
    trace::mark("args parsed");
    if args.tune {
        return tune(p);
    }
    if let Some(dir) = &args.proof_from_points {
        return proof_from_points(args, p, dir);
    }
    let spec = test_spec(args, p)?;
    let kind = spec.kind;
    let key = check_outputs(args, &spec)?;
    let (mut test, lock) = open_test(args, spec)?;
    let rec = run_test(&mut test, p, kind)?;
    // Step 5: the verdict, and the proof built and checked before anything is published.
    let next = "run again with --no-proof to publish it without a proof, or with --fresh to redo it with one";
    let (outcome, info) = publish::conclude(&mut test, &rec, next)?;
    finish(args, &test, key.as_ref(), rec, &outcome, &info)?;
    // The test is finished and its state cleared: its lock file goes too (interrupted or failed
    // runs keep theirs beside the state they leave).
    lock.release().with_context(|| format!("cannot remove the lock file {}", test.store().lock_path().display()))?;
    // Everything is written and the process ends next: the driver releases the GPU with it.
    test.leak_engines();
    Ok(())
}

/// The check counters, and the share of the iterations that GMP spot checks recomputed.
fn summary(c: &cert::CheckLog, iterations: u64) -> String {
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

fn print(line: &str) -> Result<()> {
    super::print_line(line).context("cannot write to standard output")
}

/// Iterations timed per candidate shape by --tune.
const TUNE_ITERS: u64 = 3000;

/// `prove P --tune`: time the candidate pass shapes for P's length on the GPU and store the best.
fn tune(p: u32) -> Result<()> {
    let t = gpu::tune(p, TUNE_ITERS).context("--tune times the GPU")?;
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
    if kind == TestKind::Ll && args.gerbicz_block.is_some() {
        bail!("--gerbicz-block is for PRP (--prp); an LL test has no Gerbicz check");
    }
    if kind == TestKind::Prp && args.ll_check != LlCheck::Auto {
        bail!("--ll-check is for LL tests; PRP is checked by Gerbicz");
    }
    let settings = args.settings(Some(p))?;
    if let Some(f) = settings.faults.iter().find(|f| f.iteration == 0 || f.iteration > total) {
        bail!(
            "--inject-fault {}: the iteration must be in 1..={total} (the iterations of this test), or the fault is never injected",
            f.iteration
        );
    }
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
    let printed = super::print_line(&line);
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
