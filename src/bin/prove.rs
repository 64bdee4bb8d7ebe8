//! `prove P`: run a Lucas–Lehmer (or `--prp` base-3 PRP) test of 2^P − 1, print one GIMPS-style
//! JSON result line on stdout, and write a signed certificate (`--cert FILE`).

use anyhow::{bail, Context, Result};
use clap::Parser;
use mersenne_cert::cert;
use mersenne_cert::engine::EngineChoice;
use mersenne_cert::exponent::{parse_exponent, TestKind};
use mersenne_cert::progress::Progress;
use mersenne_cert::report::{self, TestInfo};
use mersenne_cert::run::{self, CheckpointLayout, DEFAULT_RESIDUE_BUDGET};
use mersenne_cert::{fsutil, host, select};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "prove", version, about = "Test 2^P-1 for primality (Lucas-Lehmer, or base-3 PRP) and write a signed certificate")]
struct Args {
    /// The exponent P (a prime).
    exponent: String,
    /// Write the signed certificate to FILE.
    #[arg(long, value_name = "FILE")]
    cert: Option<PathBuf>,
    /// Run the base-3 PRP test instead of Lucas-Lehmer.
    #[arg(long)]
    prp: bool,
    /// Which engine squares: the GPU when usable (auto), GMP on the CPU, or the GPU only.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    engine: EngineChoice,
    /// Ed25519 signing key file (default: created on first use in the config directory).
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// Iterations between checkpoints (default: about 2000 checkpoints per test).
    #[arg(long, value_name = "N")]
    checkpoint_every: Option<u64>,
    /// Shift count: random (default), or a number in [0, P).
    #[arg(long, default_value = "random")]
    shift: String,
    /// Also append the JSON result line to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Stop after N iterations (a partial test; the result says "partial").
    #[arg(long, value_name = "N")]
    iterations: Option<u64>,
    /// Size budget in bytes for the full residues embedded in the certificate.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_RESIDUE_BUDGET)]
    residue_budget: u64,
}

fn parse_shift(text: &str, p: u32) -> Result<u32> {
    if text == "random" {
        let mut b = [0u8; 8];
        getrandom::getrandom(&mut b).map_err(|e| anyhow::anyhow!("no randomness for the shift count: {e}"))?;
        return Ok((u64::from_le_bytes(b) % p as u64) as u32);
    }
    let s: u64 = text.parse().with_context(|| format!("--shift must be 'random' or a number, got '{text}'"))?;
    if s >= p as u64 {
        bail!("--shift {s} is out of range: it must be in [0, {p})");
    }
    Ok(s as u32)
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("prove: error: {e:#}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    let args = Args::parse();
    let p = parse_exponent(&args.exponent)?;
    let kind = if args.prp { TestKind::Prp } else { TestKind::Ll };
    let shift = parse_shift(&args.shift, p)?;
    let full = kind.full_iterations(p);
    let total = match args.iterations {
        None => full,
        Some(0) => bail!("--iterations must be at least 1"),
        Some(n) if n > full => bail!("--iterations {n} exceeds the {full} iterations of a full {} test of M{p}", kind.worktype()),
        Some(n) => n,
    };
    let layout = CheckpointLayout::choose(p, total.max(1), args.checkpoint_every, args.residue_budget)?;

    // Fail fast on everything that does not need the computation.
    let key = match &args.cert {
        Some(path) => {
            fsutil::probe_writable(path).with_context(|| format!("cannot write the certificate to {}", path.display()))?;
            let (key, key_path, created) = cert::load_or_create(args.key.as_deref())?;
            if created {
                eprintln!("created a new signing key at {}", key_path.display());
            }
            Some(key)
        }
        None => None,
    };

    let (mut engine, fallback) = select::open_engine(args.engine, p, kind, shift)?;
    if let Some(why) = fallback {
        eprintln!("no GPU engine ({why}); using the CPU engine");
    }
    let started = report::now_rfc3339();
    let mut progress = Progress::new(&format!("M{p} {}", kind.worktype()), total, 0);
    let rec = run::run(engine.as_mut(), total, layout, &mut progress)?;
    let outcome = run::outcome(kind, &rec.last, total == full);
    let info = TestInfo {
        p,
        kind,
        shift,
        engine: engine.describe(),
        fft_length: engine.fft_length(),
        host: host::describe(),
        started,
        finished: report::now_rfc3339(),
    };

    let mut cert_ref = None;
    if let (Some(path), Some(key)) = (&args.cert, &key) {
        let body = report::cert_body(&info, &rec, &outcome);
        let bytes = cert::seal(&body, key);
        fsutil::write_atomic(path, &bytes, 0o644).with_context(|| format!("cannot write the certificate to {}", path.display()))?;
        cert_ref = Some((path.display().to_string(), cert::certificate_hash(&bytes)));
    }
    let line = report::result_line(&info, &rec, &outcome, cert_ref.as_ref().map(|(a, b)| (a.as_str(), b.as_str())));
    println!("{line}");
    if let Some(path) = &args.json {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("cannot append to {}", path.display()))?;
        writeln!(f, "{line}")?;
    }
    let verdict = match (outcome.status.as_str(), kind) {
        ("P", TestKind::Ll) => "is prime",
        ("P", TestKind::Prp) => "is a probable prime",
        ("C", _) => "is composite",
        _ => "partial",
    };
    eprintln!(
        "M{p} {verdict} ({} {} iterations, res64 {}, shift {shift}, {:.2} s, {:.4} ms/iter){}",
        kind.worktype(),
        rec.iterations,
        outcome.res64,
        rec.seconds,
        rec.seconds * 1e3 / rec.iterations.max(1) as f64,
        cert_ref.as_ref().map(|(p, _)| format!("; certificate {p}")).unwrap_or_default()
    );
    Ok(())
}
