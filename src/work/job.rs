//! One assignment of the work loop, run to its published outputs through the same path as
//! `prove P` ([`crate::run::test`]: the test resumed from its saved state when there is one, LL's
//! checks and the confirmation of a "prime" residue, the proof, the certificate
//! `cert/<p>-<worktype>.cbor`), then for PRP its GIMPS proof `proof/<p>-<power>.proof` (written
//! atomically and read back before any line names it), and the result line. Appending the line
//! and clearing the state are the loop's.

use super::worktodo::Assignment;
use super::{Paths, WorkConfig};
use crate::decide::{decide, Ask, Devices, Work};
use crate::exponent::TestKind;
use crate::fsutil;
use crate::proof::session::BuiltProof;
use crate::proof::Proof;
use crate::run::checkpoints::{default_residue_budget, CheckpointLayout};
use crate::run::report::{self, LineContext};
use crate::run::state::StateStore;
use crate::run::test::{random_shift, ProofSpec, TestEnd, TestSpec};
use crate::run::RunOptions;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::Path;

/// How a job ended.
pub enum JobEnd {
    /// The outputs are written; the line is to be appended, then `store` cleared.
    Done { line: Value, store: StateStore, summary: String },
    /// Stopped on request with a verified state saved at `iteration`.
    Interrupted { iteration: u64 },
}

/// The test of assignment `a`: a full test at a random shift, with its state in `store` (which
/// the loop has claimed) and the work directory's progress log, and for PRP a proof of the
/// default power.
fn test_spec(cfg: &WorkConfig, paths: &Paths, a: &Assignment, store: &StateStore) -> Result<TestSpec> {
    let (p, kind) = (a.p, a.kind);
    let full = kind.full_iterations(p);
    let want_proof = kind == TestKind::Prp;
    let layout = CheckpointLayout::choose(p, full, None, default_residue_budget(p, want_proof))?;
    Ok(TestSpec {
        p,
        kind,
        opts: RunOptions {
            gerbicz_block: cfg.gerbicz_block,
            save_every: cfg.save_every,
            spot: cfg.spot,
            spot_threads: cfg.spot_threads,
            jacobi_threads: cfg.jacobi_threads,
            faults: cfg.faults.iter().filter(|f| f.iteration <= full).copied().collect(),
            ..RunOptions::simple(full, layout, random_shift(p)?)
        },
        decision: decide(&ask(cfg), &Work::test(p, kind, full, kind == TestKind::Ll && cfg.ll_check.doubles(p)))?,
        ll_check: cfg.ll_check,
        state_root: store.dir().parent().unwrap_or(store.dir()).to_path_buf(),
        fresh: false,
        proof: want_proof.then_some(ProofSpec { power: None, disk_budget: cfg.proof_disk_budget }),
        corrupt_proof_point: None,
        tag: paths.tag.clone(),
        progress_log: Some(paths.progress_log.clone()),
        fresh_hint: "remove them to start this test again".into(),
    })
}

/// `--engine`, `--arith` and the worker's GPU, for [`decide`].
fn ask(cfg: &WorkConfig) -> Ask {
    Ask { engine: cfg.engine, arith: cfg.arith, devices: Devices::List(vec![cfg.device]) }
}

/// Run assignment `a`, resuming from its saved states in `store`, to its outputs.
pub fn run_job(cfg: &WorkConfig, paths: &Paths, a: &Assignment, store: StateStore) -> Result<JobEnd> {
    let (p, kind) = (a.p, a.kind);
    let mut test = test_spec(cfg, paths, a, &store)?.prepare_in(store).open()?;
    let mut rec = match test.run(cfg.stop.clone())? {
        TestEnd::Done(rec) => rec,
        TestEnd::Interrupted { iteration, .. } => return Ok(JobEnd::Interrupted { iteration }),
    };
    let outcome = test.outcome(&rec)?;
    let built = test.build_proof(&rec).with_context(|| {
        format!(
            "M{p}: the proof failed its check; nothing is published and the line stays (res64 {}, state kept in {})",
            outcome.res64,
            test.store().dir().display()
        )
    })?;
    let info = test.info(&rec, built);
    let cert_path = paths.cert.join(format!("{p}-{}.cbor", kind.worktype()));
    let cert_hash = test.write_certificate(&cert_path, &cfg.key, &info, &mut rec, &outcome)?;
    if let Some(b) = &info.proof {
        write_proof_file(&paths.proof.join(format!("{p}-{}.proof", b.power())), b)?;
    }
    let ctx = LineContext {
        aid: a.aid.as_deref(),
        user: cfg.user.as_deref(),
        computer: cfg.computer.as_deref(),
        proof_file: info.proof.as_ref(),
        certificate: Some(&cert_hash),
    };
    let line = report::result_line(&info, &rec, &outcome, &ctx);
    let summary = format!(
        "M{p} {} {} (res64 {}, {:.2} s, {:.1} us/iter; {}; proof {:.2} s); certificate {}",
        kind.worktype(),
        outcome.status,
        outcome.res64,
        rec.seconds,
        rec.seconds * 1e6 / rec.iterations_here.max(1) as f64,
        rec.times.describe(rec.seconds),
        info.proof.as_ref().map_or(0.0, |b| b.seconds),
        cert_path.display()
    );
    let store = test.store().clone();
    // Everything is written; the GPU context goes with the engine.
    drop(test);
    Ok(JobEnd::Done { line, store, summary })
}

/// Write the GIMPS proof file atomically and read it back: its bytes must decode to the same
/// proof and have the MD5 the result line will name.
fn write_proof_file(path: &Path, b: &BuiltProof) -> Result<()> {
    fsutil::write_atomic(path, &b.bytes, 0o644)
        .with_context(|| format!("cannot write the proof {}", path.display()))?;
    let back = std::fs::read(path).with_context(|| format!("cannot read back the proof {}", path.display()))?;
    let same = back == b.bytes && Proof::from_gimps_bytes(&back).is_ok_and(|q| q == b.proof);
    if !same {
        bail!("the proof file {} does not read back as written", path.display());
    }
    Ok(())
}
