//! One assignment of the work loop, run to its published outputs through the same path as
//! `prove P` ([`crate::run::request`], [`crate::run::test`]: the test resumed from its saved state
//! when there is one, LL's checks and the confirmation of a "prime" residue, the proof;
//! [`crate::run::publish`]: the certificate `cert/<p>-<worktype>.cbor`, for PRP its GIMPS proof
//! `proof/<p>-<power>.proof`, and the result line). Appending the line and clearing the state are
//! the loop's.

use super::worktodo::Assignment;
use super::{Paths, WorkConfig};
use crate::decide::{Ask, Devices};
use crate::run::publish::{self, Outputs};
use crate::run::request::{Request, Settings};
use crate::run::state::StateStore;
use crate::run::test::{random_shift, TestEnd, TestSpec};
use anyhow::Result;
use serde_json::Value;

/// How a job ended.
pub enum JobEnd {
    /// The outputs are written; the line is to be appended, then `store` cleared.
    Done { line: Value, store: StateStore, summary: String },
    /// Stopped on request with a verified state saved at `iteration`.
    Interrupted { iteration: u64 },
}

/// The test of assignment `a`: a full test at a random shift, with its state in `store` (which
/// the loop has claimed) and the work directory's progress log, a certificate, and for PRP a
/// proof of the default power.
fn test_spec(cfg: &WorkConfig, paths: &Paths, a: &Assignment, store: &StateStore) -> Result<TestSpec> {
    let state_root = store.dir().parent().unwrap_or(store.dir()).to_path_buf();
    let request = Request {
        certificate: true,
        replay_points: Some(0),
        tag: paths.tag.clone(),
        progress_log: Some(paths.progress_log.clone()),
        fresh_hint: "remove them to start this test again".into(),
        ..Request::full(a.p, a.kind, random_shift(a.p)?, state_root)
    };
    let settings = Settings {
        ask: Ask { engine: cfg.engine, arith: cfg.arith, devices: Devices::List(vec![cfg.device]) },
        ll_check: cfg.ll_check,
        spot: cfg.spot,
        spot_threads: cfg.spot_threads,
        jacobi_threads: cfg.jacobi_threads,
        save_every: cfg.save_every,
        gerbicz_block: cfg.gerbicz_block,
        proof_disk_budget: cfg.proof_disk_budget,
        faults: cfg.faults.clone(),
    };
    request.spec(&settings)
}

/// Run assignment `a`, resuming from its saved states in `store`, to its outputs.
pub fn run_job(cfg: &WorkConfig, paths: &Paths, a: &Assignment, store: StateStore) -> Result<JobEnd> {
    let (p, kind) = (a.p, a.kind);
    let mut test = test_spec(cfg, paths, a, &store)?.prepare_in(store).open()?;
    let mut rec = match test.run(cfg.stop.clone())? {
        TestEnd::Done(rec) => rec,
        TestEnd::Interrupted { iteration, .. } => return Ok(JobEnd::Interrupted { iteration }),
    };
    let next = format!("the line stays (state kept in {})", test.store().dir().display());
    let (outcome, info) = publish::conclude(&mut test, &rec, &next)?;
    let cert_path = paths.cert.join(format!("{p}-{}.cbor", kind.worktype()));
    let proof_path = info.proof.as_ref().map(|b| paths.proof.join(format!("{p}-{}.proof", b.power())));
    let out = Outputs {
        certificate: Some((&cert_path, &cfg.key)),
        proof_file: proof_path.as_deref(),
        aid: a.aid.as_deref(),
        user: cfg.user.as_deref(),
        computer: cfg.computer.as_deref(),
    };
    let line = publish::publish(&test, &mut rec, &outcome, &info, &out)?.line;
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
