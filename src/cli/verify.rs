//! `verify`'s command line: its arguments as clap parses them, the mode they ask for ([`Mode`]:
//! a certificate, its shards, a GIMPS proof file, or a new shard key) and the [`Options`] and
//! engine [`Ask`] it runs with ([`Mode::run`]).

use super::{ArithArg, EngineArg};
use crate::decide::{Ask, Devices};
use crate::verify::shard::ShardSpec;
use crate::verify::{Mode, Options};
use std::path::PathBuf;

#[derive(clap::Parser, Debug)]
#[command(
    name = "verify",
    version = crate::VERSION,
    about = "Verify a mersenne-cert certificate (signature, structure, proof or independent replay) or a GIMPS PRP proof file"
)]
pub struct Args {
    /// The certificate file.
    #[arg(required_unless_present_any = ["gimps_proof", "new_shard_key"], conflicts_with_all = ["gimps_proof", "new_shard_key"])]
    pub file: Option<PathBuf>,
    /// Verify a GIMPS "PRP PROOF" VERSION=2 file (e.g. from PRPLL, prime95 or prove --gimps-proof) instead of a certificate.
    #[arg(long, value_name = "FILE")]
    pub gimps_proof: Option<PathBuf>,
    /// With a proof in the certificate: also replay the checkpoint chain in full; with
    /// --gimps-proof: also recompute B by the test's p squarings. Either makes a "composite" from
    /// a proof a verification (without, p >= 25,000: "proof-checked, not verified", exit status 4).
    #[arg(long)]
    pub replay: bool,
    /// Replay threads on the CPU, those driving GPUs included (default: all cores; more are
    /// clamped to the cores).
    #[arg(long, value_name = "N", conflicts_with = "gimps_proof")]
    pub jobs: Option<usize>,
    /// Replay only K segments: the last (which ends at the final residue) and K-1 at random: a spot
    /// check, not a verification ("spot-checked, not verified", exit status 3); K at least the
    /// number of segments is a full replay.
    #[arg(long, value_name = "K", conflicts_with_all = ["gimps_proof", "shard", "merge"])]
    pub sample: Option<usize>,
    /// The GPUs that replay: CUDA numbers (e.g. 0,1) or all.
    #[arg(long, value_name = "LIST|all", default_value = "all")]
    pub devices: Devices,
    /// The replay-points sidecar (default: CERT.points beside the certificate, when present).
    #[arg(long, value_name = "FILE")]
    pub points: Option<PathBuf>,
    /// Replay only slice I of N (I from 0) of the segments and write a part report to --out.
    #[arg(long, value_name = "I/N", requires = "out", conflicts_with = "merge")]
    pub shard: Option<ShardSpec>,
    /// Where --shard writes its part report.
    #[arg(long, value_name = "PART", requires = "shard")]
    pub out: Option<PathBuf>,
    /// Accept the certificate's replay from the part reports of all its shards.
    #[arg(long, value_name = "PART", num_args = 1..)]
    pub merge: Vec<PathBuf>,
    /// The run's shard key (made by --new-shard-key): --shard authenticates its part with it,
    /// --merge accepts only parts made with it. Keep it where only the run's jobs can read it.
    #[arg(long, value_name = "KEY")]
    pub shard_key: Option<PathBuf>,
    /// Make a new random shard key in KEY (mode 0600; an existing file is refused) and exit.
    #[arg(long, value_name = "KEY", conflicts_with_all = ["gimps_proof", "shard", "merge", "shard_key"])]
    pub new_shard_key: Option<PathBuf>,
    /// Require the certificate to be signed by this Ed25519 public key (64 hex digits).
    #[arg(long, value_name = "PUBKEY_HEX", conflicts_with = "gimps_proof")]
    pub trust: Option<String>,
    /// Which engine replays and verifies proofs: the one that finishes first (auto: the GPUs when
    /// usable and worth their start-up, with CPU threads for what remains), GMP on the CPU, the GPUs
    /// only, or the GPU's transform on the CPU threads (twin: slow, for checks).
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,
    /// The arithmetic the transform engines (GPU, twin) replay in: per exponent the one expected
    /// fastest (auto), or this one. Another than the prover's (or --engine cpu) is the independent check.
    #[arg(long, value_enum, default_value_t = ArithArg::Auto)]
    pub arith: ArithArg,
}

impl Args {
    /// The mode the arguments ask for.
    pub fn mode(&self) -> Option<Mode<'_>> {
        if let Some(path) = &self.new_shard_key {
            return Some(Mode::NewShardKey(path));
        }
        if let Some(path) = &self.gimps_proof {
            return Some(Mode::GimpsProof(path));
        }
        let file = self.file.as_deref()?;
        Some(match (self.shard, &self.out) {
            _ if !self.merge.is_empty() => Mode::Merge(file, &self.merge),
            (Some(spec), Some(out)) => Mode::Shard(file, spec, out),
            _ => Mode::Certificate(file),
        })
    }

    /// How the mode's checks are made.
    pub fn options(&self) -> Options<'_> {
        Options {
            ask: self.ask(),
            trust: self.trust.as_deref(),
            replay: self.replay,
            sample: self.sample,
            jobs: self.jobs,
            points: self.points.as_deref(),
            shard_key: self.shard_key.as_deref(),
        }
    }

    /// `--engine`, `--arith` and `--devices`, for [`crate::decide`].
    pub fn ask(&self) -> Ask {
        Ask { engine: self.engine.into(), arith: self.arith.into(), devices: self.devices.clone() }
    }
}
