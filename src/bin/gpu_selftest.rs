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
//! - `--arith goldilocks|m61m31` picks the arithmetic of `squaring`, `residues`, `bench` and
//!   `profile` (default goldilocks);
//! - `residues FILE`: LL res64 after the file's iteration counts (shift 0 and random shifts);
//! - `bench`: µs/iteration next to the ANCHORS.md figures of LucasNTT, CUDALucas and PRPLL;
//! - `start`: open the GPU (context, kernels from the disk cache) and exit: its wall time is the
//!   floor under any `prove --engine gpu`;
//! - `field-rate`: the field operations' throughput with nothing else in the way (registers
//!   only: butterflies in lines of 2^1 … 2^6 values, products) and the floor it sets under a
//!   squaring on each exponent's plan, next to the measured µs/iteration: how much of an
//!   iteration is arithmetic that no schedule of that plan can avoid; then the same for the
//!   second arithmetic, GF(M61²) × GF(M31²) (issue 24): its operations' rates, checked first
//!   against their definitions, and the floor and predicted µs/iteration of each exponent's
//!   length of it (gpu::floor_m61m31's model) next to the Goldilocks plan's and PRPLL's;
//! - `proof-build P --power K`: the time to build a power-K proof's middles on the GPU from 2^K
//!   stored points (random residues, so the proof itself is meaningless and is not verified),
//!   as a share of a full test at the measured rate: issue 6's cost at exponents whose test
//!   would not fit a GPU session.
//!
//! (`proof-from-points` moved to `prove`: `prove P --proof-from-points DIR --proof-power K
//! --gimps-proof FILE`, on the GPU or with `--engine cpu`.)
//!
//! Exits 1 on any mismatch, 2 when no GPU is usable or a run fails.

use clap::{Parser, Subcommand};
use mersenne_cert::engine::{Engine, EngineError};
use mersenne_cert::exponent::{is_prime, TestKind};
use mersenne_cert::gpu::{self, GpuEngine, KernelChecker};
use mersenne_cert::residue::Residue;
use mersenne_cert::rng::SeededRng;
use mersenne_cert::transform::bound::largest_exponent;
use mersenne_cert::transform::plan::{Arith, Length, Plan};
use rug::Integer;
use std::process::ExitCode;
use std::time::Instant;

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
    /// The arithmetic of squaring, residues, bench and profile: goldilocks or m61m31.
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
    /// Open the GPU and exit (the start-up and exit that every GPU run pays).
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
    M61m31 {
        /// Lengths 2^from … 2^to and 3·2^(from−1) … 3·2^(to−1).
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
    },
    /// µs per launch of each kernel of a squaring at exponent p (tuning).
    Profile {
        p: u32,
        #[arg(long)]
        line_stages: Option<u32>,
    },
}

fn kernels(rng: &mut SeededRng, from: u32, to: u32) -> Result<bool, EngineError> {
    let checker = KernelChecker::new()?;
    println!("device: {}", checker.device());
    let mut all = check_fields(&checker, rng)?;
    for log2 in from..=to {
        let t = Instant::now();
        let verdicts = checker.check_length(log2, rng.next_u64())?;
        let bad: Vec<&str> = verdicts.iter().filter(|v| !v.ok).map(|v| v.kernel.as_str()).collect();
        all &= bad.is_empty();
        println!(
            "n=2^{log2:<2} {} kernels {} ({:.1} s){}",
            verdicts.len(),
            if bad.is_empty() { "OK" } else { "MISMATCH" },
            t.elapsed().as_secs_f64(),
            if bad.is_empty() { String::new() } else { format!(": {}", bad.join(", ")) }
        );
    }
    Ok(all)
}

/// Both arithmetics' field operations against the CPU's (edge inputs and 2^16 random ones).
fn check_fields(checker: &KernelChecker, rng: &mut SeededRng) -> Result<bool, EngineError> {
    let verdicts = [checker.check_field(rng.next_u64(), 1 << 16)?, checker.check_m61m31(rng.next_u64(), 1 << 16)?];
    for v in &verdicts {
        println!("{}: {}", v.kernel, if v.ok { "OK" } else { "MISMATCH" });
    }
    Ok(verdicts.iter().all(|v| v.ok))
}

fn parse_arith(s: &str) -> Result<Arith, String> {
    [Arith::Goldilocks, Arith::M61M31]
        .into_iter()
        .find(|a| a.name() == s)
        .ok_or_else(|| format!("unknown arithmetic {s} (goldilocks or m61m31)"))
}

/// The plan of `arith` for p: Goldilocks as the engine takes it (tuned), M61·M31 its smallest.
fn plan_of(p: u32, arith: Arith) -> Result<Plan, EngineError> {
    match arith {
        Arith::Goldilocks => gpu::engine_plan(p),
        Arith::M61M31 => Ok(Plan::for_arith(p, arith)?),
    }
}

/// A GPU engine of `arith` for p.
fn engine_of(p: u32, arith: Arith, kind: TestKind, shift: u32) -> Result<GpuEngine, EngineError> {
    match arith {
        Arith::Goldilocks => GpuEngine::new(p, kind, shift),
        Arith::M61M31 => GpuEngine::with_plan(Plan::for_arith(p, arith)?, kind, shift),
    }
}

fn random_prime(rng: &mut SeededRng, min: u32, max: u32) -> u32 {
    let (lo, hi) = ((min as f64).ln(), (max as f64).ln());
    let x = (lo + (hi - lo) * (rng.below(1 << 53) as f64 / (1u64 << 53) as f64)).exp() as u64;
    (x..).find(|&q| is_prime(q)).map(|q| q.min(u32::MAX as u64) as u32).unwrap_or(min)
}

fn squaring(rng: &mut SeededRng, count: usize, min: u32, max: u32, arith: Arith) -> Result<bool, EngineError> {
    let mut bad = 0;
    for k in 0..count {
        let p = random_prime(rng, min, max);
        let kind = if k % 4 == 3 { TestKind::Prp } else { TestKind::Ll };
        let s = rng.below(p as u64) as u32;
        let mut e = engine_of(p, arith, kind, s)?;
        let r = rng.residue(p);
        e.load(&r)?;
        e.iterate(1)?;
        let x = r.to_integer();
        let mut want = Integer::from(&x * &x);
        if kind == TestKind::Ll {
            want -= 2;
        }
        let mut ok = e.read()? == Residue::from_integer(p, &want);
        let mut what = format!("{} squaring", kind.worktype());
        if k % 5 == 0 {
            let (a, b) = (rng.residue(p), rng.residue(p));
            e.load(&a)?;
            e.acc_reset()?;
            e.load(&b)?;
            e.acc_mul()?;
            ok &= e.acc_read()? == Residue::from_integer(p, &(a.to_integer() * b.to_integer()));
            what.push_str(" + acc_mul");
        }
        if !ok {
            bad += 1;
            println!("MISMATCH p={p} shift={s} {what} ({})", e.describe());
        } else if k % 20 == 0 {
            println!("ok p={p} shift={s} {what} ({})", e.describe());
        }
    }
    println!("squaring: {} of {count} exponents agree with GMP", count - bad);
    Ok(bad == 0)
}

fn residues(
    rng: &mut SeededRng,
    file: &std::path::Path,
    max_exponent: Option<u32>,
    arith: Arith,
) -> Result<bool, EngineError> {
    let text = std::fs::read_to_string(file).map_err(|e| EngineError::Other(format!("{}: {e}", file.display())))?;
    println!(
        "{:>10} {:>6} {:>10} {:>16} {:>16} {:>9}  verdict",
        "exponent", "iters", "shift", "expected", "got", "us/iter"
    );
    let mut all = true;
    let rows = text.lines().filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty());
    for (row, line) in rows.enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let parsed =
            (f.first().and_then(|v| v.parse::<u32>().ok()), f.get(1).and_then(|v| v.parse::<u64>().ok()), f.get(2));
        let (Some(p), Some(iters), Some(res)) = parsed else {
            return Err(EngineError::Other(format!("bad row: {line}")));
        };
        if max_exponent.is_some_and(|m| p > m) {
            continue;
        }
        let shifts = if row % 3 == 0 { vec![0, 1 + rng.below(p as u64 - 1) as u32] } else { vec![0] };
        for s in shifts {
            let mut e = engine_of(p, arith, TestKind::Ll, s)?;
            let t = Instant::now();
            e.iterate(iters)?;
            let us = t.elapsed().as_secs_f64() * 1e6 / iters as f64;
            let got = e.read()?.res64_hex();
            let ok = got.eq_ignore_ascii_case(res);
            all &= ok;
            println!(
                "{p:>10} {iters:>6} {s:>10} {:>16} {got:>16} {us:>9.1}  {}",
                res.to_uppercase(),
                if ok { "ok" } else { "MISMATCH" }
            );
        }
    }
    Ok(all)
}

/// ANCHORS.md, H200: (p, LucasNTT, CUDALucas, PRPLL LL best) µs/iteration.
const ANCHORS: [(u32, f64, f64, f64); 5] = [
    (1_257_787, 22.6, 29.9, 24.5),
    (3_021_377, 43.5, 40.1, f64::NAN),
    (20_996_011, 129.6, 58.8, 39.2),
    (82_589_933, 510.0, 197.0, 144.9),
    (136_279_841, 1014.0, 323.0, 263.0),
];

/// The exponents asked for, or else the five of ANCHORS.md.
fn anchors_unless(exponents: Vec<u32>) -> Vec<u32> {
    if exponents.is_empty() {
        ANCHORS.iter().map(|a| a.0).collect()
    } else {
        exponents
    }
}

fn bench(iters: u64, line_stages: Option<u32>, exponents: Vec<u32>, arith: Arith) -> Result<bool, EngineError> {
    println!("device: {}", gpu::probe()?);
    println!(
        "{:>11} {:>6} {:>9} | {:>8} {:>6} | {:>9} {:>7}",
        "exponent", "n", "us/iter", "LucasNTT", "ratio", "CUDALucas", "PRPLL"
    );
    for p in anchors_unless(exponents) {
        let plan = match line_stages {
            Some(k) => Plan::new(p)?.with_line_stages(k)?,
            None => plan_of(p, arith)?,
        };
        let n = plan.length();
        let us = gpu::bench_plan(plan, iters)?;
        let a = ANCHORS.iter().find(|a| a.0 == p);
        let f = |v: Option<f64>| v.filter(|x| x.is_finite()).map_or("-".to_string(), |x| format!("{x:.1}"));
        println!(
            "{p:>11} {:>6} {us:>9.1} | {:>8} {:>6} | {:>9} {:>7}",
            n.to_string(),
            f(a.map(|a| a.1)),
            a.map_or("-".to_string(), |a| format!("{:.2}", us / a.1)),
            f(a.map(|a| a.2)),
            f(a.map(|a| a.3))
        );
    }
    Ok(true)
}

fn field_rate(rng: &mut SeededRng, iters: u64, exponents: Vec<u32>) -> Result<bool, EngineError> {
    // The operations are timed only once they are known to compute the right values.
    if !check_fields(&KernelChecker::new()?, rng)? {
        return Ok(false);
    }
    let rate = gpu::field_rate()?;
    println!("device: {}", rate.device);
    println!("in registers alone, G/s: butterflies in lines of 2^q values (power-of-2 twiddles; q = 1: an add and a subtract)");
    for (q, r) in rate.lines.iter().enumerate() {
        println!("  q = {}: {:>8.1}", q + 1, r * 1e-9);
    }
    println!("  products (gl_mul): {:.1}", rate.products * 1e-9);
    print_mersenne_rates(&rate);
    println!("floor of a squaring in us at these rates: its line DFTs' butterflies and its products");
    println!(
        "{:>11} {:>6} {:>11} {:>9} {:>9} {:>9} {:>6} {:>7}",
        "exponent", "n", "butterflies", "products", "floor", "us/iter", "floor%", "memory"
    );
    let mut second = Vec::new();
    for p in anchors_unless(exponents) {
        let plan = gpu::engine_plan(p)?;
        if plan.is_small() {
            println!("{p:>11} {:>6} (one-block kernel: no floor)", format!("2^{}", plan.log2()));
            continue;
        }
        let (n, f) = (plan.log2(), rate.floor(&plan));
        let floor = f.butterflies_us + f.products_us;
        let us = gpu::bench_plan(plan, iters)?;
        let (b, m) = (f.butterflies_us, f.products_us);
        println!(
            "{p:>11} {:>6} {b:>11.1} {m:>9.1} {floor:>9.1} {us:>9.1} {:>5.0}% {:>7.1}",
            format!("2^{n}"),
            100.0 * floor / us,
            f.memory_us
        );
        second.push((p, n, floor, f.memory_us, us));
    }
    println!("memory: every pass reads and writes every word once (8 B) at the copy bandwidth, tables left out");
    println!();
    println!("GF(M61^2) x GF(M31^2): n real words as n/2 complex values per field, as many passes as the Goldilocks");
    println!(
        "plan of n/2 values; floors in us (src/gpu/selftest/floor_m61m31.rs), the Goldilocks plan's at its own length,"
    );
    println!("predicted = max(arith, memory) x (Goldilocks us/iter / its max(floor, memory))");
    println!(
        "{:>11} {:>7} {:>6} {:>7} {:>7} {:>5} {:>7} {:>7} | {:>6} {:>7} {:>7} {:>7} | {:>9} {:>6}  verdict",
        "exponent",
        "n",
        "passes",
        "M61",
        "M31",
        "CRT",
        "arith",
        "memory",
        "GL n",
        "floor",
        "memory",
        "us/iter",
        "predicted",
        "PRPLL"
    );
    for (p, gl_log2, gl_floor, gl_memory, gl_us) in second {
        let Some(m) = rate.mersenne_floor(p)? else {
            println!("{p:>11} (beyond the longest length of the model)");
            continue;
        };
        let predicted = gpu::predicted(&m, gl_floor.max(gl_memory), gl_us);
        let peer = ANCHORS.iter().find(|a| a.0 == p).map(|a| a.3).filter(|x| x.is_finite());
        let verdict = match peer {
            Some(x) if predicted < x => "ahead of PRPLL fp64",
            Some(_) => "NOT ahead of PRPLL fp64",
            None => "-",
        };
        println!(
            "{p:>11} {:>7} {:>6} {:>7.1} {:>7.1} {:>5.1} {:>7.1} {:>7.1} | {:>6} {gl_floor:>7.1} {gl_memory:>7.1} {gl_us:>7.1} | {predicted:>9.1} {:>6}  {verdict}",
            m.len.to_string(),
            m.passes,
            m.m61_us,
            m.m31_us,
            m.crt_us,
            m.arith_us,
            m.memory_us,
            format!("2^{gl_log2}"),
            peer.map_or("-".to_string(), |x| format!("{x:.1}"))
        );
    }
    Ok(true)
}

/// The second arithmetic's rates, in G/s (kernels/field_rate_m61m31.cu), and the bandwidth.
fn print_mersenne_rates(rate: &gpu::FieldRate) {
    let r = &rate.mersenne;
    println!("{:<54} {:>8} {:>8}", "GF(M61), GF(M31) and GF(p^2) in registers alone, G/s:", "M61", "M31");
    for ((name, m61), (_, m31)) in r.m61.named().into_iter().zip(r.m31.named()) {
        println!("  {name:<52} {:>8.1} {:>8.1}", m61 * 1e-9, m31 * 1e-9);
    }
    println!(
        "  paired butterflies (one in each field, interleaved): {:.1} G/s, {:.2}x the two apart",
        r.pair_bfly * 1e-9,
        r.pairing()
    );
    println!("  CRT to a centered 92-bit integer: {:.1} G/s", r.crt * 1e-9);
    println!("memory: copy {:.0} GB/s (read + write)", rate.bandwidth * 1e-9);
}

fn profile(p: u32, line_stages: Option<u32>, arith: Arith) -> Result<bool, EngineError> {
    let plan = match line_stages {
        Some(k) => Plan::new(p)?.with_line_stages(k)?,
        None => plan_of(p, arith)?,
    };
    let mut e = GpuEngine::with_plan(plan, TestKind::Ll, 0)?;
    e.iterate(10)?;
    for (name, us) in e.profile(1000)? {
        println!("{us:>9.2} us  {name}");
    }
    Ok(true)
}

/// The M61·M31 arithmetic on the GPU (the `m61m31` subcommand).
fn m61m31(
    rng: &mut SeededRng,
    (from, to): (u32, u32),
    (count, max): (usize, u32),
    ll_iters: u64,
    known: (u32, &std::path::Path),
) -> Result<bool, EngineError> {
    let checker = KernelChecker::new()?;
    println!("device: {}", checker.device());
    let v = checker.check_m61m31(rng.next_u64(), 1 << 16)?;
    println!("{}: {}", v.kernel, if v.ok { "OK" } else { "MISMATCH" });
    let mut all = v.ok;
    // 2^from ≤ n ≤ 3·2^(to−1): 2^from … 2^to and 3·2^(from−1) … 3·2^(to−1).
    let (bottom, top) = (1usize << from, 3usize << to.saturating_sub(1));
    let mut lens: Vec<Length> = (from.saturating_sub(1).max(1)..=to)
        .flat_map(|log2| [1, 3].map(|odd| Length { odd, log2 }))
        .filter(|l| (bottom..=top).contains(&l.n()))
        .collect();
    lens.sort_by_key(|l| l.n());
    for len in lens {
        let Some(p) = largest_exponent(Arith::M61M31, len) else { continue };
        let plan = Plan::with_length(p, Arith::M61M31, len)?;
        for extreme in [false, true] {
            let t = Instant::now();
            let verdicts = checker.check_m61m31_plan(&plan, rng.next_u64(), extreme)?;
            let bad: Vec<&str> = verdicts.iter().filter(|v| !v.ok).map(|v| v.kernel.as_str()).collect();
            all &= bad.is_empty();
            println!(
                "m61m31 n={len:<7} p={p:<11} {} digits: {} kernels {} ({:.1} s){}",
                if extreme { "bound " } else { "random" },
                verdicts.len(),
                if bad.is_empty() { "OK" } else { "MISMATCH" },
                t.elapsed().as_secs_f64(),
                if bad.is_empty() { String::new() } else { format!(": {}", bad.join(", ")) }
            );
        }
    }
    drop(checker);
    all &= squaring(rng, count, 1_000, max, Arith::M61M31)?;
    all &= squaring(rng, count / 2, 13, 200_000, Arith::M61M31)?;
    all &= m61m31_ll_vs_twin(rng, 86_243, ll_iters)?;
    all &= m61m31_known(known.0, known.1)?;
    Ok(all)
}

/// `iters` LL iterations of M_p from 4 at a random shift on the GPU and on the CPU twin.
fn m61m31_ll_vs_twin(rng: &mut SeededRng, p: u32, iters: u64) -> Result<bool, EngineError> {
    use mersenne_cert::residue::Shift;
    use mersenne_cert::transform::m61m31::{iterate_digits, M61M31Tables};
    let plan = Plan::for_arith(p, Arith::M61M31)?;
    let s = rng.below(u64::from(p)) as u32;
    let mut e = GpuEngine::with_plan(plan.clone(), TestKind::Ll, s)?;
    let t = Instant::now();
    e.iterate(iters)?;
    let got = e.read()?;
    let gpu_s = t.elapsed().as_secs_f64();
    let tables = M61M31Tables::new(&plan)?;
    let start = plan.residue_to_digits(&Residue::from_u64(p, 4), s);
    let (d, shift) = iterate_digits(&plan, &tables, TestKind::Ll, start, Shift::new(p, s), iters);
    let want = plan.digits_to_residue(&d, shift.get())?;
    let ok = got == want;
    println!(
        "m61m31 LL M{p} shift {s}: {iters} iterations GPU {} twin {} {} (GPU {:.1} us/iter)",
        got.res64_hex(),
        want.res64_hex(),
        if ok { "ok" } else { "MISMATCH" },
        gpu_s * 1e6 / iters as f64
    );
    Ok(ok)
}

/// Full LL tests on the GPU of every known Mersenne prime exponent of `file` from 13 to `max`
/// (residue 0) and of the next prime after each that is not one (residue not 0).
fn m61m31_known(max: u32, file: &std::path::Path) -> Result<bool, EngineError> {
    let text = std::fs::read_to_string(file).map_err(|e| EngineError::Other(format!("{}: {e}", file.display())))?;
    let known: Vec<u32> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(|l| l.split_whitespace().filter_map(|w| w.parse().ok()))
        .filter(|&p| p >= 13)
        .collect();
    let mut all = true;
    let t = Instant::now();
    let mut tested = 0;
    for &p in known.iter().filter(|&&p| p <= max) {
        let next = (p + 1..).find(|&q| is_prime(u64::from(q)) && !known.contains(&q)).unwrap_or(p);
        for (q, prime) in [(p, true), (next, false)] {
            let mut e = GpuEngine::with_plan(Plan::for_arith(q, Arith::M61M31)?, TestKind::Ll, q / 3)?;
            e.iterate(u64::from(q) - 2)?;
            let zero = e.read()?.is_zero();
            tested += 1;
            if zero != prime {
                all = false;
                println!("m61m31 known: M{q} {} but LL says {}", if prime { "prime" } else { "composite" }, zero);
            }
        }
    }
    println!(
        "m61m31 known: {tested} full LL tests (primes up to {max} and the next prime after each) {} ({:.1} s)",
        if all { "right" } else { "WRONG" },
        t.elapsed().as_secs_f64()
    );
    Ok(all)
}

fn proof_build(rng: &mut SeededRng, p: u32, power: u32) -> Result<bool, EngineError> {
    use mersenne_cert::proof::{build_from_store, engine_arith::with_arith, pietrzak, points::ProofStore, ProofError};
    let err = |e: &dyn std::fmt::Display| EngineError::Other(e.to_string());
    let us = gpu::bench_plan(gpu::engine_plan(p)?, 2000)?;
    let dir = std::env::temp_dir().join(format!("mersenne-cert-proof-build-{}", std::process::id()));
    let store = ProofStore::new(&dir, p, power).map_err(|e| err(&e))?;
    let t = Instant::now();
    for &k in store.points() {
        store.save(k, &rng.residue(p)).map_err(|e| err(&e))?;
    }
    let write_s = t.elapsed().as_secs_f64();
    let mut engine = GpuEngine::new(p, TestKind::Prp, 0)?;
    let t = Instant::now();
    let built = with_arith(&mut engine, |a| build_from_store(&store, a));
    let build_s = t.elapsed().as_secs_f64();
    let _ = store.remove_all();
    let proof = built.map_err(|e| err(&e))?;
    // The prover's self-check and a verifier's check do the same work whether the points are a
    // real test's or random: on random points both must reject, at the final comparison.
    let timed_check = |engine: &mut GpuEngine, full: bool| -> Result<f64, EngineError> {
        let t = Instant::now();
        let checked =
            with_arith(engine, |a| if full { pietrzak::verify(&proof, a, 3) } else { pietrzak::self_check(&proof, a) });
        match checked {
            Err(ProofError::Rejected { .. }) => Ok(t.elapsed().as_secs_f64()),
            other => Err(EngineError::Other(format!(
                "a proof of random points was not rejected at the final comparison: {other:?}"
            ))),
        }
    };
    let self_check_s = timed_check(&mut engine, false)?;
    let verify_s = timed_check(&mut engine, true)?;
    let test_s = p as f64 * us * 1e-6;
    println!(
        "M{p} power {power}: {} points written in {write_s:.1} s; build {build_s:.2} s + self-check {self_check_s:.2} s = {:.3}% of a {test_s:.0} s test at {us:.1} us/iter; verify {verify_s:.2} s = 1/{:.0} of the test (both rejected the random points, as they must)",
        1u32 << power,
        100.0 * (build_s + self_check_s) / test_s,
        test_s / verify_s
    );
    Ok(true)
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
                if small { (13, mersenne_cert::transform::plan::largest_small_exponent()) } else { (min, max) };
            squaring(&mut rng, count, min, max, cli.arith)
        }
        Cmd::Residues { file, max_exponent } => residues(&mut rng, &file, max_exponent, cli.arith),
        Cmd::Bench { iters, line_stages, exponents } => bench(iters, line_stages, exponents, cli.arith),
        Cmd::M61m31 { from, to, count, max, ll_iters, known_max, known_file } => {
            m61m31(&mut rng, (from, to), (count, max), ll_iters, (known_max, &known_file))
        }
        Cmd::ProofBuild { p, power } => proof_build(&mut rng, p, power),
        Cmd::Start => gpu::probe().map(|d| {
            println!("device: {d}");
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
