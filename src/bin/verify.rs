//! `verify FILE`: check a certificate's signature and structure, then replay its checkpoint
//! chain independently (all of it, or `--sample K` random segments) and check its result.

use anyhow::{Context, Result};
use clap::Parser;
use mersenne_cert::cert;
use mersenne_cert::check::replay::{replay, ReplayOptions};
use mersenne_cert::engine::EngineChoice;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "verify", version, about = "Verify a mersenne-cert certificate: signature, structure, and an independent replay")]
struct Args {
    /// The certificate file.
    file: PathBuf,
    /// Replay threads on the CPU (default: all cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Replay only K randomly chosen segments (a spot check, not a full verification).
    #[arg(long, value_name = "K")]
    sample: Option<usize>,
    /// Require the certificate to be signed by this Ed25519 public key (64 hex digits).
    #[arg(long, value_name = "PUBKEY_HEX")]
    trust: Option<String>,
    /// Which engine replays: the GPU when usable (auto), GMP on all CPU cores, or the GPU only.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    engine: EngineChoice,
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("verify: FAILED: {e:#}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    let args = Args::parse();
    let trust = args.trust.as_deref().map(cert::parse_public_key_hex).transpose()?;
    let bytes = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let (body, key) = cert::open(&bytes, trust.as_ref()).context("signature")?;
    body.validate().context("structure")?;
    let key_hex = hex::encode(key.as_bytes());
    eprintln!("signature: ok (Ed25519 key {key_hex}{})", if trust.is_some() { ", trusted" } else { ", not pinned: pass --trust to require it" });
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let start = std::time::Instant::now();
    let rep = replay(&body, &ReplayOptions { engine: args.engine, jobs, sample: args.sample }).context("replay")?;
    let secs = start.elapsed().as_secs_f64();
    let what = match (body.result.status.as_str(), body.kind.worktype()) {
        ("P", "LL") => "prime".to_string(),
        ("P", _) => "a probable prime".to_string(),
        ("C", _) => "composite".to_string(),
        _ => format!("partial ({} iterations)", body.iterations),
    };
    let coverage = if rep.iterations_total == 0 { 100.0 } else { 100.0 * rep.iterations_replayed as f64 / rep.iterations_total as f64 };
    if args.sample.is_some() {
        eprintln!(
            "SPOT CHECK ONLY: replayed {} of {} segments ({coverage:.2}% of the iterations); the rest is unchecked",
            rep.segments_replayed, rep.segments_total
        );
    }
    eprintln!(
        "replay: ok, {} iterations in {} segments, {} checkpoint hashes matched, {secs:.2} s on {}",
        rep.iterations_replayed, rep.segments_replayed, rep.hashes_checked, rep.engine
    );
    println!(
        "verified: M{} is {what} ({}, res64 {}, {coverage:.2}% replayed, signed by {key_hex})",
        body.exponent,
        body.kind.worktype(),
        body.result.res64
    );
    Ok(())
}
