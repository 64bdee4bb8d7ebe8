//! One assignment of the work loop, run to its published outputs through the same path as
//! `prove P` ([`crate::run::request`], [`crate::run::test`]: the test resumed from its saved state
//! when there is one, LL's checks and the confirmation of a "prime" residue, the proof;
//! [`crate::run::publish`]: the certificate `cert/<p>-<worktype>[-<aid>].cbor`, for PRP its GIMPS
//! proof `proof/<p>-<power>.proof`, and the result line). The worktodo line is read again once
//! the test is done, so that an id AutoPrimeNet gave the line meanwhile goes into the
//! certificate's name and the result. A certificate or proof file that a result line names is
//! never overwritten (the next free name `…-2`, `…-3` is taken). Appending the line and clearing
//! the state are the loop's.

use super::worktodo::Assignment;
use super::{Paths, WorkConfig};
use crate::run::publish::{self, Outputs};
use crate::run::report;
use crate::run::request::Request;
use crate::run::state::StateStore;
use crate::run::test::{random_shift, TestEnd, TestSpec};
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How a job ended.
pub enum JobEnd {
    /// The outputs are written; the line is to be appended, then `store` cleared. `current` is
    /// the assignment as its worktodo line stood when the result was made.
    Done { line: Value, store: StateStore, summary: String, current: Box<Assignment> },
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
    request.spec(&cfg.settings)
}

/// Run assignment `a`, resuming from its saved states in `store`, to its outputs.
/// `source` is the worktodo file the line is in.
pub fn run_job(cfg: &WorkConfig, paths: &Paths, a: &Assignment, source: &Path, store: StateStore) -> Result<JobEnd> {
    let (p, kind) = (a.p, a.kind);
    let mut test = test_spec(cfg, paths, a, &store)?.prepare_in(store).open()?;
    let mut rec = match test.run(cfg.stop.clone())? {
        TestEnd::Done(rec) => rec,
        TestEnd::Interrupted { iteration, .. } => return Ok(JobEnd::Interrupted { iteration }),
    };
    let next = format!("the line stays (state kept in {})", test.store().dir().display());
    let (outcome, info) = publish::conclude(&mut test, &rec, &next)?;
    let current = super::worktodo::find_current(source, a)
        .with_context(|| format!("cannot read {}", source.display()))?
        .unwrap_or_else(|| a.clone());
    let named = published(&paths.results)?;
    let stem = match &current.aid {
        Some(aid) => format!("{p}-{}-{aid}", kind.worktype()),
        None => format!("{p}-{}", kind.worktype()),
    };
    let cert_path = free_path(&paths.cert, &stem, "cbor", &named)?;
    let proof_path = match &info.proof {
        Some(b) => Some(free_path(&paths.proof, &format!("{p}-{}", b.power()), "proof", &named)?),
        None => None,
    };
    let out = Outputs {
        certificate: Some((&cert_path, &cfg.key)),
        proof_file: proof_path.as_deref(),
        aid: current.aid.as_deref(),
        user: cfg.user.as_deref(),
        computer: cfg.computer.as_deref(),
    };
    let mut line = publish::publish(&test, &mut rec, &outcome, &info, &out)?.line;
    // Which line this result is for, when it has no id (results::Done::is_for).
    line[report::PROGRAM_NAME]["worktodo"] = current.key.clone().into();
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
    Ok(JobEnd::Done { line, store, summary, current: Box::new(current) })
}

/// What the results file names: the blake3 of every certificate and the MD5 of every proof.
fn published(results: &Path) -> Result<HashSet<String>> {
    let text = match std::fs::read_to_string(results) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", results.display())),
    };
    let mut named = HashSet::new();
    for v in text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
        let cert = v.get(report::PROGRAM_NAME).and_then(|o| o.get("certificate")).and_then(|c| c.get("blake3"));
        named.extend(cert.and_then(Value::as_str).map(String::from));
        named.extend(v.get("proof").and_then(|p| p.get("md5")).and_then(Value::as_str).map(String::from));
    }
    Ok(named)
}

/// `dir/stem.ext`, or `dir/stem-2.ext`, `-3`, … : the first that does not exist or holds a file
/// no result line names (one a killed run left before its line was written).
fn free_path(dir: &Path, stem: &str, ext: &str, named: &HashSet<String>) -> Result<PathBuf> {
    for n in 1u32.. {
        let path = match n {
            1 => dir.join(format!("{stem}.{ext}")),
            n => dir.join(format!("{stem}-{n}.{ext}")),
        };
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let md5 = hex::encode(<md5::Md5 as md5::Digest>::digest(&bytes));
        if !named.contains(&crate::cert::certificate_hash(&bytes)) && !named.contains(&md5) {
            return Ok(path);
        }
    }
    unreachable!("some name is free")
}
