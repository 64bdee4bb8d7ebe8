//! `verify FILE`: check a certificate's signature and structure, then its arithmetic: a PRP
//! certificate with a proof by verifying the proof (about p/2^power squarings; `--replay` also
//! replays the checkpoints), any other by replaying its checkpoint chain independently (all of
//! it, or `--sample K` segments: the last and K − 1 at random), on every GPU and core of the
//! host. Below `FULL_REPLAY_BELOW` a proof is not relied on and B is recomputed in full; above
//! it a "composite" from a proof alone is not a verification.
//! `--shard I/N --out PART --shard-key KEY` replays one slice of the segments for a job array,
//! `--merge PART... --shard-key KEY` joins the slices (`--new-shard-key KEY` makes the run's key
//! first). `verify --gimps-proof FILE` checks a GIMPS proof file. Inputs must be regular files no
//! larger than the largest valid file. `--arith` picks the arithmetic of the transform engines
//! that replay (any arithmetic replays any certificate; the prover's is printed).
//!
//! Exit status: 0 "verified" (a full replay, a proof check that verifies, or a merge of every
//! shard), 1 an error or a failed check, 3 ([`mersenne_cert::verify::SPOT_CHECKED`]) a `--sample`
//! that replayed only part of the chain ("spot-checked, not verified"), 4
//! ([`mersenne_cert::verify::PROOF_CHECKED`]) a "composite" from a proof alone at p ≥ 25,000
//! ("proof-checked, not verified"; `--replay` verifies it). The arguments are parsed here and run
//! by [`mersenne_cert::verify::Mode::run`].

use anyhow::{Context, Result};
use mersenne_cert::cli::{self, verify::Args};
use mersenne_cert::trace;

fn main() {
    trace::init();
    match real_main() {
        Ok(0) => {}
        Ok(status) => std::process::exit(status),
        Err(e) => {
            eprintln!("verify: FAILED: {}", cli::error_line(&e));
            std::process::exit(1);
        }
    }
}

/// The mode run, its verdict printed; the exit status.
fn real_main() -> Result<i32> {
    let args: Args = cli::parse_args("verify");
    let ending = args.mode().context("no certificate given")?.run(&args.options())?;
    if let Some(line) = ending.line() {
        cli::print_line(line).context("cannot write the result to standard output")?;
    }
    Ok(ending.status())
}
