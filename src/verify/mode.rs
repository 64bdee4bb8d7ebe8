//! `verify`'s modes behind one type: [`Mode`] (a certificate, one shard of its replay, a merge of
//! the shards, a GIMPS proof file, or a new shard key) run with the [`Options`] they share by
//! [`Mode::run`], which says on stderr what each check found and returns how the run ends: the
//! verdict line for stdout and its exit status ([`Ending`]). Inputs must be regular files no
//! larger than the largest valid file.

use super::proof::{certificate_proof, check_certificate, verify_proof, ProofCheck, FULL_REPLAY_BELOW};
use super::replay::{replay, ReplayError, ReplayOptions};
use super::shard::{self, ShardKey, ShardSpec};
use crate::cert::{self, Status, MAX_FULL_RESIDUES};
use crate::decide::{self, Ask};
use crate::engine::EngineChoice;
use crate::exponent::{TestKind, MAX_EXPONENT};
use crate::proof::pietrzak::MAX_POWER;
use crate::proof::Proof;
use crate::residue::{byte_count, Residue};
use crate::transform::plan::Arith;
use crate::{fsutil, gpu, host, trace};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Exit status of a `--sample` that replayed only part of the chain: the spot check passed, but
/// that is no verification (README, docs/certificate.md).
pub const SPOT_CHECKED: i32 = 3;

/// Exit status of a "composite" taken from a proof alone at p ≥ [`FULL_REPLAY_BELOW`]: the proof
/// checked, but that is no verification within the threat model's bound (docs/certificate.md);
/// `--replay` makes it one.
pub const PROOF_CHECKED: i32 = 4;

/// What `verify` is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode<'a> {
    /// Make a new random shard key in this file.
    NewShardKey(&'a Path),
    /// A GIMPS proof file on its own.
    GimpsProof(&'a Path),
    /// A certificate's replay accepted from the part reports of all its shards.
    Merge(&'a Path, &'a [PathBuf]),
    /// One shard of a certificate's replay, its part report written to a file.
    Shard(&'a Path, ShardSpec, &'a Path),
    /// A certificate: its proof, its replay (all of it, or `--sample K` segments), or both.
    Certificate(&'a Path),
}

/// How the checks are made, whatever the mode.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// The engines that replay and verify proofs (`--engine`, `--arith`, `--devices`).
    pub ask: Ask,
    /// `--trust`: the public key (hex) the certificate must be signed by.
    pub trust: Option<&'a str>,
    /// `--replay`: replay the checkpoint chain even when a proof covers the result.
    pub replay: bool,
    /// `--sample K`: replay only K segments.
    pub sample: Option<usize>,
    /// `--jobs`: replay threads (default: all cores).
    pub jobs: Option<usize>,
    /// `--points`: the replay-points sidecar (default: the one beside the certificate).
    pub points: Option<&'a Path>,
    /// `--shard-key`: the run's shard key, for `--shard` and `--merge`.
    pub shard_key: Option<&'a Path>,
}

/// How a successful run ends: the line for stdout ([`Ending::line`]), and the exit status
/// ([`Ending::status`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// "verified" (a full replay, a proof check, a merge of every shard), or a shard's part
    /// written: exit 0.
    Verified(String),
    /// "spot-checked, not verified": exit [`SPOT_CHECKED`].
    SpotChecked(String),
    /// "proof-checked, not verified": exit [`PROOF_CHECKED`].
    ProofChecked(String),
    /// A new shard key written (said on stderr): exit 0, nothing on stdout.
    KeyWritten,
}

impl Ending {
    /// The line for stdout, if any.
    pub fn line(&self) -> Option<&str> {
        match self {
            Ending::Verified(l) | Ending::SpotChecked(l) | Ending::ProofChecked(l) => Some(l),
            Ending::KeyWritten => None,
        }
    }

    /// The exit status.
    pub fn status(&self) -> i32 {
        match self {
            Ending::Verified(_) | Ending::KeyWritten => 0,
            Ending::SpotChecked(_) => SPOT_CHECKED,
            Ending::ProofChecked(_) => PROOF_CHECKED,
        }
    }
}

impl Mode<'_> {
    /// Run the mode: every check it makes said on stderr, its verdict returned; a failed check
    /// is an error.
    pub fn run(self, opts: &Options) -> Result<Ending> {
        if let Mode::NewShardKey(path) = self {
            return new_shard_key(path);
        }
        decide::check_engine(opts.ask.arith, opts.ask.engine)?;
        match self {
            Mode::NewShardKey(_) => unreachable!("handled above"),
            Mode::GimpsProof(path) => verify_gimps_file(path, opts),
            Mode::Merge(file, parts) => run_merge(&Opened::read(file, opts, false)?, parts, opts),
            Mode::Shard(file, spec, out) => run_shard(&Opened::read(file, opts, true)?, spec, out, opts),
            Mode::Certificate(file) => run_certificate(&Opened::read(file, opts, false)?, opts),
        }
    }
}

/// A certificate read, its signature and structure checked, and what every mode needs of it.
struct Opened<'a> {
    file: &'a Path,
    body: cert::CertBody,
    cert_hash: String,
    /// The signer's public key, hex.
    key_hex: String,
    /// What the certificate says M_p is ("prime", "composite", …).
    what: String,
    /// Replay threads.
    jobs: usize,
    /// The GPUs being opened for the replay, while the certificate is read.
    _warm: Option<gpu::WarmUp>,
}

impl<'a> Opened<'a> {
    /// Read `file` for a certificate mode (`shard`: one shard of its replay).
    fn read(file: &'a Path, opts: &Options, shard: bool) -> Result<Opened<'a>> {
        let trust = opts.trust.map(cert::parse_public_key_hex).transpose()?;
        if opts.sample == Some(0) {
            bail!(ReplayError::SampleZero);
        }
        let jobs = match opts.jobs {
            Some(n) => {
                let (n, note) = host::clamp_threads("--jobs", n).map_err(anyhow::Error::msg)?;
                if let Some(note) = note {
                    eprintln!("note: {note}");
                }
                n
            }
            None => host::cores(),
        };
        // Opening the GPUs takes ~1 s; a replay on them starts it now, beside the host's reading.
        let warm = warm_gpus(opts, shard, file).then(|| gpu::WarmUp::start(opts.ask.devices.ordinals()));
        let bytes = read_input(file, max_certificate_bytes())?;
        let (body, key) = cert::open(&bytes, trust.as_ref()).context("signature")?;
        body.validate().context("structure")?;
        trace::mark("verify: certificate read, signature checked");
        let key_hex = hex::encode(key.as_bytes());
        eprintln!(
            "signature: ok (Ed25519 key {key_hex}{})",
            if trust.is_some() { ", trusted" } else { ", not pinned: pass --trust to require it" }
        );
        prover_arith(&body)?;
        let cert_hash = cert::certificate_hash(&bytes);
        let what = match (body.result.status, body.kind) {
            (Status::Prime, TestKind::Ll) => "prime".to_string(),
            (Status::Prime, TestKind::Prp) => "a probable prime".to_string(),
            (Status::Composite, _) => "composite".to_string(),
            (Status::Partial, _) => format!("partial ({} iterations)", body.iterations),
        };
        Ok(Opened { file, body, cert_hash, key_hex, what, jobs, _warm: warm })
    }
}

/// `verify CERT --merge PART...`: the replay accepted from the part reports of all its shards.
fn run_merge(o: &Opened, part_files: &[PathBuf], opts: &Options) -> Result<Ending> {
    let (what, key_hex) = (&o.what, &o.key_hex);
    let key = shard_key(opts)?;
    // The same certificate checks as every other path: the embedded proof too.
    let proof = match o.body.proof {
        Some(_) => {
            let c = check_certificate(&o.body, &opts.ask).context("proof")?;
            eprintln!("{}; B matches the final residue and the stated result", proof_line(&c));
            Some(c)
        }
        None => None,
    };
    let points = load_points(opts, o.file, &o.cert_hash, &o.body)?;
    let mut parts = Vec::new();
    for path in part_files {
        let b = read_input(path, MAX_PART_BYTES)?;
        parts.push((path.display().to_string(), b));
    }
    let m = shard::merge(&o.body, &o.cert_hash, &points, &parts, &key)?;
    eprintln!(
        "merge: ok, {} parts cover all {} segments, {} checkpoint hashes matched ({:.2} s of replay, longest part {:.2} s)",
        m.parts, m.segments, m.hashes_checked, m.seconds_total, m.seconds_max
    );
    let coverage = proof.as_ref().map(|c| format!("{}, ", proof_coverage(c))).unwrap_or_default();
    Ok(Ending::Verified(format!(
        "verified: M{} is {what} ({}, res64 {}, {coverage}100.00% replayed in {} shards, signed by {key_hex})",
        o.body.exponent,
        o.body.kind.worktype(),
        o.body.result.res64,
        m.parts
    )))
}

/// `verify CERT --shard I/N --out PART`: one slice of the replay, its part report written.
fn run_shard(o: &Opened, spec: ShardSpec, out: &Path, opts: &Options) -> Result<Ending> {
    let key = shard_key(opts)?;
    // The checks of the embedded proof that need no squaring; the merge verifies it.
    if o.body.proof.is_some() {
        certificate_proof(&o.body).context("proof")?;
    }
    fsutil::probe_writable(out).with_context(|| format!("cannot write the part to {}", out.display()))?;
    let replay_opts = replay_options(opts, o.jobs, load_points(opts, o.file, &o.cert_hash, &o.body)?);
    let part = shard::replay_shard(&o.body, &o.cert_hash, spec, &replay_opts, &key).context("replay")?;
    fsutil::write_atomic(out, part.to_json().as_bytes(), 0o644)
        .with_context(|| format!("cannot write the part to {}", out.display()))?;
    let failed: Vec<String> = part
        .segments
        .iter()
        .filter(|s| s.verdict != "ok")
        .map(|s| format!("{}-{}: {}", s.from, s.to, s.verdict))
        .collect();
    let iterations: u64 = part.segments.iter().map(|s| s.to - s.from).sum();
    eprintln!(
        "shard {spec}: {} segments, {iterations} iterations in {:.2} s on {}; part written to {}",
        part.segments.len(),
        part.seconds,
        part.engine,
        out.display()
    );
    if !failed.is_empty() {
        bail!("shard {spec}: {} segment(s) failed: {}", failed.len(), failed.join("; "));
    }
    Ok(Ending::Verified(format!(
        "shard {spec} of M{}: all {} segments matched; merge the parts with verify --merge",
        o.body.exponent,
        part.segments.len()
    )))
}

/// `verify CERT`: the embedded proof checked, and the chain replayed (all of it, or `--sample K`
/// segments) unless the proof covers the result.
fn run_certificate(o: &Opened, opts: &Options) -> Result<Ending> {
    let (what, key_hex) = (&o.what, &o.key_hex);
    let proof = match o.body.proof {
        Some(_) => {
            let c = check_certificate(&o.body, &opts.ask).context("proof")?;
            same_arith_note(&o.body, c.transform);
            eprintln!("{}; B matches the final residue and the stated result", proof_line(&c));
            Some(c)
        }
        None => None,
    };
    let mut coverage = Vec::new();
    if let Some(c) = &proof {
        coverage.push(proof_coverage(c));
    }
    // A spot check that left segments out establishes nothing on its own (issue 35): only a proof
    // check that verifies ([`ProofCheck::verifies`]) or a full replay makes this "verified".
    let proof_verifies = proof.as_ref().is_some_and(|c| c.verifies());
    let mut spot_only = false;
    let mut replayed_in_full = false;
    if proof.is_none() || opts.replay || opts.sample.is_some() {
        let start = std::time::Instant::now();
        let replay_opts = replay_options(opts, o.jobs, load_points(opts, o.file, &o.cert_hash, &o.body)?);
        trace::mark("verify: replay points read");
        let rep = replay(&o.body, &replay_opts).context("replay")?;
        same_arith_note(&o.body, rep.transform);
        trace::mark("verify: replay done");
        let secs = start.elapsed().as_secs_f64();
        let pct = if rep.iterations_total == 0 {
            100.0
        } else {
            100.0 * rep.iterations_replayed as f64 / rep.iterations_total as f64
        };
        if let Some(k) = opts.sample {
            if rep.segments_replayed < rep.segments_total {
                spot_only = !proof_verifies;
                eprintln!(
                    "SPOT CHECK ONLY: replayed {} of {} segments (the last, which ends at the final residue, and {} at random; {pct:.2}% of the iterations); the rest is unchecked",
                    rep.segments_replayed,
                    rep.segments_total,
                    rep.segments_replayed - 1
                );
            } else {
                eprintln!("--sample {k} covers all {} segments: a full replay", rep.segments_total);
            }
        }
        replayed_in_full = rep.segments_replayed == rep.segments_total;
        eprintln!(
            "replay: ok, {} iterations in {} segments, {} checkpoint hashes matched, {secs:.2} s on {}",
            rep.iterations_replayed, rep.segments_replayed, rep.hashes_checked, rep.engine
        );
        coverage.push(format!("{pct:.2}% replayed{}", if spot_only { " at random" } else { "" }));
    } else {
        let covered = match proof.as_ref().is_some_and(|c| c.replayed) {
            true => "B was recomputed in full",
            false => "the proof covers the result",
        };
        eprintln!(
            "replay: skipped, {covered} (the {} checkpoint hashes are not checked; --replay replays them)",
            o.body.checkpoints.len()
        );
    }
    let claim = format!(
        "M{} is {what} ({}, res64 {}, {}, signed by {key_hex})",
        o.body.exponent,
        o.body.kind.worktype(),
        o.body.result.res64,
        coverage.join(", ")
    );
    if spot_only {
        return Ok(Ending::SpotChecked(format!("spot-checked, not verified: the certificate says {claim}")));
    }
    if !proof_verifies && !replayed_in_full {
        eprintln!("{PROOF_ONLY_NOTE}; --replay replays the checkpoint chain and verifies it");
        return Ok(Ending::ProofChecked(format!("proof-checked, not verified: the certificate says {claim}")));
    }
    Ok(Ending::Verified(format!("verified: {claim}")))
}

/// The largest shard key file (64 hex digits and a newline).
const MAX_SHARD_KEY_BYTES: u64 = 65;

/// `verify --new-shard-key KEY`: a new random key, written with mode 0600; never replaces a file.
fn new_shard_key(path: &Path) -> Result<Ending> {
    if std::fs::symlink_metadata(path).is_ok() {
        bail!("{} already exists; a shard key is never replaced (remove it, or use it)", path.display());
    }
    let key = ShardKey::generate()?;
    fsutil::write_atomic(path, key.to_file_text().as_bytes(), 0o600)
        .with_context(|| format!("cannot write the shard key to {}", path.display()))?;
    eprintln!("shard key written to {} (give it to every --shard and to --merge)", path.display());
    Ok(Ending::KeyWritten)
}

/// The run's shard key (`--shard-key`), required by `--shard` and `--merge`.
fn shard_key(opts: &Options) -> Result<ShardKey> {
    let path = opts.shard_key.context(
        "--shard and --merge need --shard-key KEY, the run's key (make one first with verify --new-shard-key KEY)",
    )?;
    let bytes = read_input(path, MAX_SHARD_KEY_BYTES)?;
    ShardKey::parse(&bytes).with_context(|| format!("shard key {}", path.display()))
}

/// The largest GIMPS proof file: the header and MAX_POWER + 1 residues of the largest exponent.
fn max_proof_bytes() -> u64 {
    4096 + (MAX_POWER as u64 + 1) * byte_count(MAX_EXPONENT as u32) as u64
}

/// The largest certificate: at most MAX_FULL_RESIDUES full residues of the largest exponent
/// plus its final one, a proof, at most one checkpoint (under 80 bytes of CBOR) per iteration,
/// and 256 MiB for the rest (the check log).
fn max_certificate_bytes() -> u64 {
    let residues = (MAX_FULL_RESIDUES + 1) * byte_count(MAX_EXPONENT as u32) as u64;
    residues + max_proof_bytes() + 80 * MAX_EXPONENT + (256 << 20)
}

/// A shard's part report lists its segments' verdicts and hashes: far below this.
const MAX_PART_BYTES: u64 = 64 << 20;

/// A certificate at least this large is replayed on the GPUs under `--engine auto` as a rule, so
/// they are opened ahead (see [`warm_gpus`]).
const WARM_BYTES: u64 = 8 << 20;

/// Whether to open the GPUs while the certificate is read ([`gpu::WarmUp`]): a replay is asked for
/// (`--replay`, `--sample`, a shard) on GPUs: `--engine gpu`, or `auto` with a certificate of
/// WARM_BYTES or more. Below that `auto` may well replay on the CPU threads in less time than the
/// opening takes, and would then wait for it at the end. At worst (a big certificate of a small
/// exponent, replayed on the CPU) that wait is one GPU start-up, what the GPU engine would cost.
fn warm_gpus(opts: &Options, shard: bool, file: &Path) -> bool {
    let replay = opts.replay || opts.sample.is_some() || shard;
    replay
        && match opts.ask.engine {
            EngineChoice::Gpu => true,
            EngineChoice::Auto => std::fs::metadata(file).is_ok_and(|m| m.len() >= WARM_BYTES),
            _ => false,
        }
}

/// A certificate or proof file: a regular file (never a FIFO or a device) of at most `max` bytes.
fn read_input(path: &Path, max: u64) -> Result<Vec<u8>> {
    fsutil::read_regular(path, max).with_context(|| format!("cannot read {}", path.display()))
}

fn proof_line(c: &ProofCheck) -> String {
    let r = &c.report;
    let replayed = match c.replayed {
        true if c.report.p < FULL_REPLAY_BELOW => format!(", and B recomputed by a full replay of the test (p < {FULL_REPLAY_BELOW}: the proof alone is not relied on)"),
        true => ", and B recomputed by a full replay of the test (--replay)".to_string(),
        false => String::new(),
    };
    format!(
        "proof: ok, M{} power {}, {} squarings after the reduction (2^-{} of the test's {}){replayed}, {:.2} s on {}",
        r.p, r.power, r.squarings, r.power, r.p, c.seconds, c.arith
    )
}

/// How the proof covers the result, for the verdict line.
fn proof_coverage(c: &ProofCheck) -> String {
    format!(
        "proof power {0}: {2} with 2^-{0} of the test's squarings{1}",
        c.report.power,
        if c.replayed { ", and B by a full replay" } else { "" },
        if c.verifies() { "verified" } else { "checked" }
    )
}

/// Why a "composite" from a proof alone is not a verification (stderr).
const PROOF_ONLY_NOTE: &str = "NOT VERIFIED: a composite result (and its res64) taken from a proof alone is not a verification above p = 25,000: \
     a prover who ran the test can shift B by an element of large order with far fewer than 2^40 hash trials \
     (docs/certificate.md, Threat model)";

/// `verify --gimps-proof FILE` (`--replay`: B recomputed in full too).
fn verify_gimps_file(path: &Path, opts: &Options) -> Result<Ending> {
    let bytes = read_input(path, max_proof_bytes())?;
    let proof =
        Proof::from_gimps_bytes(&bytes).with_context(|| format!("{} is not a valid GIMPS proof", path.display()))?;
    let c = verify_proof(&proof, &opts.ask, opts.replay).context("proof")?;
    eprintln!("{}", proof_line(&c));
    let o = &c.report.outcome;
    let claim = format!(
        "M{} is {} (GIMPS PRP proof, power {}{}, type-1 res64 {}, type-3 res64 {:016X})",
        c.report.p,
        if o.probable_prime { "a probable prime" } else { "composite" },
        c.report.power,
        if c.replayed { ", B replayed in full" } else { "" },
        o.type1.res64_hex(),
        o.type3_res64
    );
    if !c.verifies() {
        eprintln!("{PROOF_ONLY_NOTE}; --replay recomputes B by the test's p squarings and verifies it");
        return Ok(Ending::ProofChecked(format!("proof-checked, not verified: {claim}")));
    }
    Ok(Ending::Verified(format!("verified: {claim}")))
}

/// The replay points for the certificate: from --points (an error when they do not fit it), or
/// from the sidecar beside it (ignored, with a note, when they do not fit), or none.
fn load_points(opts: &Options, file: &Path, cert_hash: &str, body: &cert::CertBody) -> Result<BTreeMap<u64, Residue>> {
    let (path, explicit) = match opts.points {
        Some(p) => (p.to_path_buf(), true),
        None => (cert::points::sidecar_path(file), false),
    };
    if !explicit && !path.exists() {
        return Ok(BTreeMap::new());
    }
    // A regular file of bounded size: /dev/zero or a FIFO is refused at once, never read or waited on.
    let read = fsutil::read_regular(&path, cert::points::max_points_bytes(body))
        .with_context(|| format!("cannot read the replay points {}", path.display()))
        .and_then(|b| Ok(cert::points::open_points(&b, cert_hash, body)?));
    match read {
        Ok(points) => {
            eprintln!("replay points: {} from {}", points.len(), path.display());
            Ok(points)
        }
        Err(e) if explicit => Err(e.context(format!("replay points {}", path.display()))),
        Err(e) => {
            eprintln!("note: ignoring {} ({e:#}); replaying from the certificate's own residues", path.display());
            Ok(BTreeMap::new())
        }
    }
}

fn replay_options(opts: &Options, jobs: usize, points: BTreeMap<u64, Residue>) -> ReplayOptions {
    ReplayOptions { ask: opts.ask.clone(), jobs, sample: opts.sample, points }
}

/// The prover's arithmetic as the certificate records it.
fn prover_arith(body: &cert::CertBody) -> Result<()> {
    let said = match (body.arithmetic().context("structure")?, body.fft_length) {
        (Some(a), _) => a.name().to_string(),
        (None, Some(_)) => "goldilocks (not recorded: a certificate from before the arith key)".into(),
        (None, None) => "none (GMP)".into(),
    };
    eprintln!("prover's arithmetic: {said}");
    Ok(())
}

/// A note when the transform engines that checked the certificate (`used`) square in the
/// prover's arithmetic: then only GMP or another arithmetic is an independent check.
fn same_arith_note(body: &cert::CertBody, used: Option<Arith>) {
    let recorded = body.arithmetic().ok().flatten().unwrap_or(Arith::Goldilocks);
    if let Some(replay) = used.filter(|&a| a == recorded && body.fft_length.is_some()) {
        let other = Arith::ALL.into_iter().find(|&a| a != replay).unwrap_or(replay);
        eprintln!(
            "note: the transform engines replay in the prover's arithmetic ({}); for an independent check replay in another (--arith {}) or with GMP (--engine cpu)",
            replay.name(),
            other.name()
        );
    }
}
