//! `verify FILE`: check a certificate's signature and structure, then its arithmetic: a PRP
//! certificate with a proof by verifying the proof (about p/2^power squarings; `--replay` also
//! replays the checkpoints), any other by replaying its checkpoint chain independently (all of
//! it, or `--sample K` random segments). `verify --gimps-proof FILE` checks a GIMPS proof file.

use anyhow::{Context, Result};
use clap::Parser;
use mersenne_cert::cert::{self, Status};
use mersenne_cert::engine::EngineChoice;
use mersenne_cert::exponent::TestKind;
use mersenne_cert::proof::Proof;
use mersenne_cert::verify::proof::{check_certificate, verify_proof, ProofCheck};
use mersenne_cert::verify::replay::{replay, ReplayOptions};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "verify",
    version,
    about = "Verify a mersenne-cert certificate (signature, structure, proof or independent replay) or a GIMPS PRP proof file"
)]
struct Args {
    /// The certificate file.
    #[arg(required_unless_present = "gimps_proof", conflicts_with = "gimps_proof")]
    file: Option<PathBuf>,
    /// Verify a GIMPS "PRP PROOF" VERSION=2 file (e.g. from PRPLL, prime95 or prove --gimps-proof) instead of a certificate.
    #[arg(long, value_name = "FILE")]
    gimps_proof: Option<PathBuf>,
    /// With a proof in the certificate: also replay the checkpoint chain in full.
    #[arg(long)]
    replay: bool,
    /// Replay threads on the CPU (default: all cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Replay only K randomly chosen segments (a spot check, not a full verification).
    #[arg(long, value_name = "K")]
    sample: Option<usize>,
    /// Require the certificate to be signed by this Ed25519 public key (64 hex digits).
    #[arg(long, value_name = "PUBKEY_HEX")]
    trust: Option<String>,
    /// Which engine replays and verifies proofs: the GPU when usable (auto), GMP on the CPU, or the GPU only.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    engine: EngineChoice,
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("verify: FAILED: {e:#}");
        std::process::exit(1);
    }
}

fn proof_line(c: &ProofCheck) -> String {
    let r = &c.report;
    format!(
        "proof: ok, M{} power {}, {} squarings after the reduction (2^-{} of the test's {}), {:.2} s on {}",
        r.p, r.power, r.squarings, r.power, r.p, c.seconds, c.arith
    )
}

/// `verify --gimps-proof FILE`.
fn verify_gimps_file(path: &Path, engine: EngineChoice) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let proof =
        Proof::from_gimps_bytes(&bytes).with_context(|| format!("{} is not a valid GIMPS proof", path.display()))?;
    let c = verify_proof(&proof, engine).context("proof")?;
    eprintln!("{}", proof_line(&c));
    let o = &c.report.outcome;
    println!(
        "verified: M{} is {} (GIMPS PRP proof, power {}, type-1 res64 {}, type-3 res64 {:016X})",
        c.report.p,
        if o.probable_prime { "a probable prime" } else { "composite" },
        c.report.power,
        o.type1.res64_hex(),
        o.type3_res64
    );
    Ok(())
}

fn real_main() -> Result<()> {
    let args = Args::parse();
    if let Some(path) = &args.gimps_proof {
        return verify_gimps_file(path, args.engine);
    }
    let file = args.file.as_ref().context("no certificate given")?;
    let trust = args.trust.as_deref().map(cert::parse_public_key_hex).transpose()?;
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let (body, key) = cert::open(&bytes, trust.as_ref()).context("signature")?;
    body.validate().context("structure")?;
    let key_hex = hex::encode(key.as_bytes());
    eprintln!(
        "signature: ok (Ed25519 key {key_hex}{})",
        if trust.is_some() { ", trusted" } else { ", not pinned: pass --trust to require it" }
    );
    let proof = match body.proof {
        Some(_) => {
            let c = check_certificate(&body, args.engine).context("proof")?;
            eprintln!("{}; B matches the final residue and the stated result", proof_line(&c));
            Some(c)
        }
        None => None,
    };
    let what = match (body.result.status, body.kind) {
        (Status::Prime, TestKind::Ll) => "prime".to_string(),
        (Status::Prime, TestKind::Prp) => "a probable prime".to_string(),
        (Status::Composite, _) => "composite".to_string(),
        (Status::Partial, _) => format!("partial ({} iterations)", body.iterations),
    };
    let mut coverage = Vec::new();
    if let Some(c) = &proof {
        coverage.push(format!("proof power {0}: verified with 2^-{0} of the test's squarings", c.report.power));
    }
    if proof.is_none() || args.replay || args.sample.is_some() {
        let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        let start = std::time::Instant::now();
        let rep = replay(&body, &ReplayOptions { engine: args.engine, jobs, sample: args.sample }).context("replay")?;
        let secs = start.elapsed().as_secs_f64();
        let pct = if rep.iterations_total == 0 {
            100.0
        } else {
            100.0 * rep.iterations_replayed as f64 / rep.iterations_total as f64
        };
        if args.sample.is_some() {
            eprintln!(
                "SPOT CHECK ONLY: replayed {} of {} segments ({pct:.2}% of the iterations); the rest is unchecked",
                rep.segments_replayed, rep.segments_total
            );
        }
        eprintln!(
            "replay: ok, {} iterations in {} segments, {} checkpoint hashes matched, {secs:.2} s on {}",
            rep.iterations_replayed, rep.segments_replayed, rep.hashes_checked, rep.engine
        );
        coverage.push(format!("{pct:.2}% replayed"));
    } else {
        eprintln!(
            "replay: skipped, the proof covers the result (the {} checkpoint hashes are not checked; --replay replays them)",
            body.checkpoints.len()
        );
    }
    println!(
        "verified: M{} is {what} ({}, res64 {}, {}, signed by {key_hex})",
        body.exponent,
        body.kind.worktype(),
        body.result.res64,
        coverage.join(", ")
    );
    Ok(())
}
