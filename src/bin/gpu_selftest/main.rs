//! gpu-selftest: checks the GPU engine against the CPU twin and GMP, and times it.
//!
//! - `kernels`: every kernel's output equals the CPU twin's on random input, n = 2^2 … 2^24 (up
//!   to 2^SMALL_MAX_LOG2 the one-block kernel in each of its variants: 1 and 7 LL squarings at a
//!   random shift, PRP squarings, a product);
//! - `squaring`: one squaring (LL and PRP) and acc_mul mod M_p equal rug's for random prime
//!   exponents from 1,000 to 140,000,000 (`--small`: from 13 to the largest with a small length);
//! - `m61m31`: the second arithmetic's kernels stage by stage against the CPU twin at every length
//!   2^k and 3·2^k up to 3·2^(to−1), each at its largest exponent with random digits and digits at
//!   the bound; squarings and products against rug; LL iterations against the twin; full LL tests
//!   of the known Mersenne primes up to --known-max;
//! - `fp64`: the same for the FP64 arithmetic (issue 37), its kernels bit for bit against the twin;
//! - `--arith goldilocks|m61m31|fp64` picks the arithmetic of `squaring`, `residues`, `bench`,
//!   `profile` and `start` (default goldilocks);
//! - `residues FILE`: LL res64 after the file's iteration counts (shift 0 and random shifts);
//! - `bench`: µs/iteration next to the ANCHORS.md figures of LucasNTT, CUDALucas and PRPLL;
//! - `start`: open the GPU and an engine of `--arith` at M86243 (context, that arithmetic's
//!   kernels from the disk cache, tables, start value) and exit: its wall time is the floor under
//!   any `prove --engine gpu`;
//! - `field-rate`: the field operations' throughput with nothing else in the way (registers
//!   only: butterflies in lines of 2^1 … 2^6 values, products) and the floor it sets under a
//!   squaring on each exponent's plan, next to the measured µs/iteration: how much of an
//!   iteration is arithmetic that no schedule of that plan can avoid; then the same for the
//!   second arithmetic, GF(M61²) × GF(M31²) (issue 24): its operations' rates, checked first
//!   against their definitions, and the floor and predicted µs/iteration of each exponent's
//!   length of it (gpu::floor_m61m31's model) next to the Goldilocks plan's and PRPLL's; then the
//!   FP64 arithmetic (issue 37): its operations checked bit for bit against the CPU field, their
//!   rates, and the floor of a squaring at 2^15 … 2^22 and at each exponent's length;
//! - `proof-build P --power K`: the time to build a power-K proof's middles on the GPU from 2^K
//!   stored points (random residues, so the proof itself is meaningless and is not verified),
//!   as a share of a full test at the measured rate: issue 6's cost at exponents whose test
//!   would not fit a GPU session.
//!
//! (`proof-from-points` moved to `prove`: `prove P --proof-from-points DIR --proof-power K
//! --gimps-proof FILE`, on the GPU or with `--engine cpu`.)
//!
//! Exits 1 on any mismatch, 2 when no GPU is usable or a run fails.

mod checks;
mod timing;

use checks::{arith_checks, kernels, residues, squaring};
use clap::{Parser, Subcommand};
use mersenne_cert::engine::EngineError;
use mersenne_cert::exponent::{is_prime, TestKind};
use mersenne_cert::gpu::{self, GpuEngine, KernelChecker};
use mersenne_cert::rng::SeededRng;
use mersenne_cert::transform::plan::{Arith, Plan};
use std::process::ExitCode;
use timing::{bench, field_rate, profile, proof_build};

#[derive(Parser)]
#[command(
    name = "gpu-selftest",
    about = "Check and time the GPU engine",
    after_help = "proof-from-points moved to prove: prove P --proof-from-points DIR --proof-power K --gimps-proof FILE"
)]
struct Cli {
    /// Seed for the random inputs (default: from the clock; printed so a failure can be replayed).
    #[arg(long, global = true)]
    seed: Option<u64>,
    /// The arithmetic of squaring, residues, bench, profile and start: goldilocks, m61m31 or fp64.
    #[arg(long, global = true, default_value = "goldilocks", value_parser = parse_arith)]
    arith: Arith,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Each kernel against the CPU twin for n = 2^from … 2^to.
    Kernels {
        #[arg(long, default_value_t = 2)]
        from: u32,
        #[arg(long, default_value_t = 24)]
        to: u32,
    },
    /// One squaring / multiplication mod M_p against rug for random prime exponents.
    Squaring {
        #[arg(long, default_value_t = 200)]
        count: usize,
        #[arg(long, default_value_t = 1_000)]
        min: u32,
        #[arg(long, default_value_t = 140_000_000)]
        max: u32,
        /// Only exponents of the small lengths (one-block kernel): 13 up to the largest.
        #[arg(long)]
        small: bool,
    },
    /// LL res64 after N iterations for each row "exponent iterations res64 …" of FILE.
    Residues {
        file: std::path::PathBuf,
        /// Only rows with an exponent up to this.
        #[arg(long)]
        max_exponent: Option<u32>,
    },
    /// µs/iteration at the ANCHORS.md exponents.
    Bench {
        #[arg(long, default_value_t = 10_000)]
        iters: u64,
        /// Most stages per line of a GPU pass (tuning; default: the plan's).
        #[arg(long)]
        line_stages: Option<u32>,
        /// Exponents to time (default: the five of ANCHORS.md; small ones such as 9689 and 44497
        /// time the one-block kernel).
        exponents: Vec<u32>,
    },
    /// Time the proof build (middles from 2^K stored random points), the prover's self-check and a
    /// verifier's check of the result (both must reject random points) at exponent p.
    ProofBuild {
        p: u32,
        #[arg(long, default_value_t = 10)]
        power: u32,
    },
    /// Open the GPU and an engine of --arith at M86243, and exit (the start-up and exit that
    /// every GPU run pays).
    Start,
    /// The field operations' throughput and the floor it sets under a squaring on the plan, next to the
    /// measured µs/iteration.
    FieldRate {
        #[arg(long, default_value_t = 3000)]
        iters: u64,
        /// Exponents (default: the five of ANCHORS.md; small lengths have no floor here).
        exponents: Vec<u32>,
    },
    /// The M61·M31 arithmetic: kernels against the CPU twin stage by stage, squarings against rug,
    /// LL iterations against the twin, full LL tests of the known primes.
    M61m31(ArithChecks),
    /// The FP64 arithmetic: the same checks as `m61m31` (its lengths are 2^k).
    Fp64(ArithChecks),
    /// µs per launch of each kernel of a squaring at exponent p (tuning); FP64 launches beside
    /// their floors (their FP64 instructions at the measured product rate, their bytes at the
    /// copy bandwidth: src/gpu/selftest/floor_fp64.rs).
    Profile {
        p: u32,
        #[arg(long)]
        line_stages: Option<u32>,
    },
}

/// The arguments of `m61m31` and `fp64`.
#[derive(clap::Args)]
struct ArithChecks {
    /// Lengths 2^from … 2^to and 3·2^(from−1) … 3·2^(to−1) (those the arithmetic has).
    #[arg(long, default_value_t = 1)]
    from: u32,
    #[arg(long, default_value_t = 22)]
    to: u32,
    /// Squarings against rug (random prime exponents from 1,000 to --max, and half as many
    /// from 13 to 200,000).
    #[arg(long, default_value_t = 60)]
    count: usize,
    #[arg(long, default_value_t = 140_000_000)]
    max: u32,
    /// LL iterations of M86243 against the twin.
    #[arg(long, default_value_t = 3000)]
    ll_iters: u64,
    /// Full LL tests of the known Mersenne prime exponents (of --known-file) from 13 up to this.
    #[arg(long, default_value_t = 110_503)]
    known_max: u32,
    #[arg(long, default_value = "fixtures/known_mersenne_exponents.txt")]
    known_file: std::path::PathBuf,
}

/// Both arithmetics' field operations against the CPU's (edge inputs and 2^16 random ones).
pub(crate) fn check_fields(checker: &KernelChecker, rng: &mut SeededRng) -> Result<bool, EngineError> {
    let verdicts = [checker.check_field(rng.next_u64(), 1 << 16)?, checker.check_m61m31(rng.next_u64(), 1 << 16)?];
    for v in &verdicts {
        println!("{}: {}", v.kernel, if v.ok { "OK" } else { "MISMATCH" });
    }
    Ok(verdicts.iter().all(|v| v.ok))
}

pub(crate) fn parse_arith(s: &str) -> Result<Arith, String> {
    Arith::from_name(s).ok_or_else(|| format!("unknown arithmetic {s} ({})", Arith::ALL.map(Arith::name).join(", ")))
}

fn checks_of(arith: Arith, rng: &mut SeededRng, a: ArithChecks) -> Result<bool, EngineError> {
    arith_checks(arith, rng, (a.from, a.to), (a.count, a.max), a.ll_iters, (a.known_max, &a.known_file))
}

/// The plan of `arith` for p as the engine takes it: its smallest length, tuned where
/// `prove --tune` stored a shape for it.
pub(crate) fn plan_of(p: u32, arith: Arith) -> Result<Plan, EngineError> {
    gpu::engine_plan(Plan::for_arith(p, arith)?)
}

/// A GPU engine of `arith` for p, on that plan.
pub(crate) fn engine_of(p: u32, arith: Arith, kind: TestKind, shift: u32) -> Result<GpuEngine, EngineError> {
    GpuEngine::on_gpu_tuned(0, Plan::for_arith(p, arith)?, kind, shift)
}

pub(crate) fn random_prime(rng: &mut SeededRng, min: u32, max: u32) -> u32 {
    let (lo, hi) = ((min as f64).ln(), (max as f64).ln());
    let x = (lo + (hi - lo) * (rng.below(1 << 53) as f64 / (1u64 << 53) as f64)).exp() as u64;
    (x..).find(|&q| is_prime(q)).map(|q| q.min(u32::MAX as u64) as u32).unwrap_or(min)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let seed = cli.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    println!("seed {seed}");
    let mut rng = SeededRng::new(seed);
    let outcome = match cli.cmd {
        Cmd::Kernels { from, to } => kernels(&mut rng, from, to),
        Cmd::Squaring { count, min, max, small } => {
            let (min, max) =
                if small { (13, mersenne_cert::transform::plan::Plan::largest_small_exponent()) } else { (min, max) };
            squaring(&mut rng, count, min, max, cli.arith)
        }
        Cmd::Residues { file, max_exponent } => residues(&mut rng, &file, max_exponent, cli.arith),
        Cmd::Bench { iters, line_stages, exponents } => bench(iters, line_stages, exponents, cli.arith),
        Cmd::M61m31(a) => checks_of(Arith::M61M31, &mut rng, a),
        Cmd::Fp64(a) => checks_of(Arith::Fp64, &mut rng, a),
        Cmd::ProofBuild { p, power } => proof_build(&mut rng, p, power),
        Cmd::Start => engine_of(86_243, cli.arith, TestKind::Ll, 0).map(|e| {
            println!("device: {}", e.device());
            true
        }),
        Cmd::FieldRate { iters, exponents } => field_rate(&mut rng, iters, exponents),
        Cmd::Profile { p, line_stages } => profile(p, line_stages, cli.arith),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            println!("FAILED");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("gpu-selftest: {e}");
            ExitCode::from(2)
        }
    }
}
