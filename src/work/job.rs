//! One assignment of the work loop, run to its published outputs: the test (resumed from its
//! saved state when there is one), its certificate `cert/<p>-<worktype>.cbor`, for PRP its GIMPS
//! proof `proof/<p>-<power>.proof` (written atomically and read back before any line names it),
//! and the result line. Appending the line and clearing the state are the loop's.

use super::worktodo::Assignment;
use super::{Paths, WorkConfig};
use crate::cert::{self, Outcome};
use crate::engine::select;
use crate::exponent::TestKind;
use crate::fsutil;
use crate::progress::{Progress, ProgressLog};
use crate::proof::session::{self, BuiltProof};
use crate::proof::Proof;
use crate::run::checkpoints::{default_residue_budget, CheckpointLayout};
use crate::run::report::{self, LineContext, TestInfo};
use crate::run::state::StateStore;
use crate::run::{self, RunEnd, RunOptions};
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

/// A random shift count in [0, p).
fn random_shift(p: u32) -> Result<u32> {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).map_err(|e| anyhow::anyhow!("no randomness for the shift count: {e}"))?;
    Ok((u64::from_le_bytes(b) % p as u64) as u32)
}

/// Run assignment `a`, resuming from its saved states in `store`, to its outputs.
pub fn run_job(cfg: &WorkConfig, paths: &Paths, a: &Assignment, store: StateStore) -> Result<JobEnd> {
    let (p, kind) = (a.p, a.kind);
    let full = kind.full_iterations(p);
    let want_proof = kind == TestKind::Prp;
    let layout = CheckpointLayout::choose(p, full, None, default_residue_budget(p, want_proof))?;
    let proof = match want_proof {
        true => {
            let s = session::setup(store.dir(), p, None, cfg.proof_disk_budget).context("proof")?;
            if let Some(note) = &s.choice.note {
                eprintln!("note: M{p}: {note}");
            }
            Some(s)
        }
        false => None,
    };
    let shift = random_shift(p)?;
    let (mut engine, fallback) = select::open_engine_on(cfg.engine, cfg.device, p, kind, shift)?;
    if let Some(why) = fallback {
        eprintln!("no GPU engine ({why}); using the CPU engine");
    }
    let label = format!("{}M{p} {}", paths.tag, kind.worktype());
    let log = ProgressLog::open(&paths.progress_log)
        .with_context(|| format!("cannot append to {}", paths.progress_log.display()))?;
    let mut progress = Progress::new(&label, full).with_log(log);
    let opts = RunOptions {
        started: report::now_rfc3339(),
        gerbicz_block: cfg.gerbicz_block,
        store: Some(store.clone()),
        save_every: cfg.save_every,
        spot: cfg.spot,
        spot_threads: cfg.spot_threads,
        stop: Some(cfg.stop.clone()),
        proof: proof.as_ref().map(|s| s.store.clone()),
        ..RunOptions::simple(full, layout, shift)
    };
    let rec = match run::run(engine.as_mut(), opts, &mut progress)? {
        RunEnd::Done(rec) => rec,
        RunEnd::Interrupted { iteration } => return Ok(JobEnd::Interrupted { iteration }),
    };
    let outcome = Outcome::from_final(kind, full, &rec.last)?;
    let built = match &proof {
        Some(setup) => Some(session::finish(&setup.store, engine.as_mut(), &rec.last).with_context(|| {
            format!(
                "M{p}: the proof failed its check; nothing is published and the line stays (res64 {}, state kept in {})",
                outcome.res64,
                store.dir().display()
            )
        })?),
        None => None,
    };
    let info = TestInfo::of_run(engine.as_ref(), &rec, built);
    let cert_path = paths.cert.join(format!("{p}-{}.cbor", kind.worktype()));
    let bytes = cert::seal(&report::cert_body(&info, &rec, &outcome), &cfg.key);
    fsutil::write_atomic(&cert_path, &bytes, 0o644)
        .with_context(|| format!("cannot write the certificate {}", cert_path.display()))?;
    let cert_hash = cert::certificate_hash(&bytes);
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
    // Everything is written; the GPU context goes with the engine.
    drop(engine);
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
