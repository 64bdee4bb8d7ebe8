//! gpu-selftest's timings: the bare squaring loop beside the peers (`bench`), the field
//! arithmetic's floor (`field-rate`), each kernel of a squaring alone (`profile`), and the cost
//! of building a proof on the GPU (`proof-build`).

use crate::{check_fields, plan_of};
use mersenne_cert::engine::{Engine, EngineError};
use mersenne_cert::exponent::TestKind;
use mersenne_cert::gpu::{self, GpuEngine, KernelChecker, PassSchedule};
use mersenne_cert::rng::SeededRng;
use mersenne_cert::transform::plan::{Arith, Plan};
use std::time::Instant;

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

pub(crate) fn bench(
    iters: u64,
    line_stages: Option<u32>,
    exponents: Vec<u32>,
    arith: Arith,
) -> Result<bool, EngineError> {
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

pub(crate) fn field_rate(rng: &mut SeededRng, iters: u64, exponents: Vec<u32>) -> Result<bool, EngineError> {
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
        let plan = gpu::engine_plan(Plan::new(p)?)?;
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
    let goldilocks: Vec<(u32, f64)> = second.iter().map(|r| (r.0, r.4)).collect();
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
    Ok(print_fp64(&rate, &goldilocks))
}

/// PRPLL's best µs/iteration per exponent on an H100 (shared/ANCHORS.md, 2026-11-27: the faster
/// of its FP64 FFT and its M31·M61 NTT) and issue 37's targets.
const PRPLL_H100: [(u32, f64, f64); 5] = [
    (1_257_787, 25.9, f64::NAN),
    (3_021_377, 16.6, f64::NAN),
    (20_996_011, 37.3, 25.0),
    (82_589_933, 148.6, 99.0),
    (136_279_841, 229.1, 153.0),
];

/// The FP64 arithmetic (issue 37): its operations against the CPU, their rates, the floor of a
/// squaring at each planned length and at the exponents' lengths; false if the check failed.
fn print_fp64(rate: &gpu::FieldRate, goldilocks: &[(u32, f64)]) -> bool {
    use mersenne_cert::transform::fp64::primes;
    use mersenne_cert::transform::length::{largest_exponent, smallest_length};
    use mersenne_cert::transform::plan::{Arith, Length};
    println!();
    let pairs: Vec<String> =
        primes::PAIRS.iter().map(|pr| format!("GF({}) x GF({})", pr.primes[0].p, pr.primes[1].p)).collect();
    println!("FP64: {}, residues as doubles (issue 37)", pairs.join(" or "));
    let (ok, report) = &rate.fp64_check;
    println!("against the CPU field, bit for bit: {}", if *ok { "OK" } else { "MISMATCH" });
    for line in report.lines() {
        println!("  {line}");
    }
    let r = &rate.fp64;
    println!(
        "in registers alone, G/s: products {:.1}, butterflies (sums reduced every 2nd stage) {:.1}, CRT {:.1}",
        r.mul * 1e-9,
        r.bfly * 1e-9,
        r.crt * 1e-9
    );
    println!("floor of a squaring of n words, both primes, us (src/gpu/selftest/floor_fp64.rs):");
    println!(
        "{:>6} {:>5} {:>11} {:>9} {:>6} {:>7} {:>7} {:>7} {:>12}",
        "n", "trips", "butterflies", "products", "CRT", "arith", "memory", "floor", "largest p"
    );
    for log2 in 15..=22 {
        let f = rate.fp64_floor(log2);
        let top = largest_exponent(Arith::Fp64, Length { odd: 1, log2 }).unwrap_or(0);
        println!(
            "{:>6} {:>5} {:>11.1} {:>9.1} {:>6.1} {:>7.1} {:>7.1} {:>7.1} {top:>12}",
            format!("2^{log2}"),
            f.round_trips,
            f.butterflies_us,
            f.products_us,
            f.crt_us,
            f.arith_us(),
            f.memory_us,
            f.floor_us()
        );
    }
    println!("at the exponents: the shortest length whose bound holds p; 'at 80%' = floor / 0.8");
    println!(
        "{:>11} {:>6} {:>7} {:>7} {:>10} {:>11} {:>7}",
        "exponent", "n", "floor", "at 80%", "goldilocks", "PRPLL H100", "target"
    );
    for (p, gl_us) in goldilocks {
        let Ok(len) = smallest_length(*p, Arith::Fp64) else {
            println!("{p:>11} (beyond the pairs' bounds)");
            continue;
        };
        let f = rate.fp64_floor(len.log2);
        let (peer, target) = PRPLL_H100.iter().find(|a| a.0 == *p).map_or((f64::NAN, f64::NAN), |a| (a.1, a.2));
        let show = |x: f64| if x.is_finite() { format!("{x:.1}") } else { "-".into() };
        println!(
            "{p:>11} {:>6} {:>7.1} {:>7.1} {gl_us:>10.1} {:>11} {:>7}",
            len.to_string(),
            f.floor_us(),
            f.floor_us() / 0.8,
            show(peer),
            show(target)
        );
    }
    *ok
}

/// The second arithmetic's rates, in G/s (kernels/m61m31/field_rate.cuh), and the bandwidth.
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

pub(crate) fn profile(p: u32, line_stages: Option<u32>, arith: Arith) -> Result<bool, EngineError> {
    let plan = match line_stages {
        Some(k) => Plan::new(p)?.with_line_stages(k)?,
        None => plan_of(p, arith)?,
    };
    // FP64: each launch beside its floor, its work (gpu::fp64_launches) at this GPU's measured
    // register-only product rate and copy bandwidth.
    let floors = match plan.arith() {
        Arith::Fp64 => Some((gpu::field_rate()?, gpu::fp64_launches(&plan)?)),
        _ => None,
    };
    let mut e = GpuEngine::with_plan(plan, TestKind::Ll, 0)?;
    e.iterate(10)?;
    for (name, us) in e.profile(1000)? {
        let launch = floors.as_ref().and_then(|(r, w)| Some((r, w.iter().find(|l| name.starts_with(l.kernel))?)));
        match launch {
            Some((r, l)) => {
                let floor = l.floor_us(&r.fp64, r.bandwidth);
                println!(
                    "{us:>9.2} us  {name}; floor {floor:.1} us ({:.0}M FP64 instructions, {:.0} MB): {:.0}%",
                    l.fp64 * 1e-6,
                    l.bytes * 1e-6,
                    100.0 * floor / us
                );
            }
            None => println!("{us:>9.2} us  {name}"),
        }
    }
    Ok(true)
}

pub(crate) fn proof_build(rng: &mut SeededRng, p: u32, power: u32) -> Result<bool, EngineError> {
    use mersenne_cert::proof::{build_from_store, engine_arith::with_arith, pietrzak, points::ProofStore, ProofError};
    let err = |e: &dyn std::fmt::Display| EngineError::Other(e.to_string());
    let us = gpu::bench_plan(gpu::engine_plan(Plan::new(p)?)?, 2000)?;
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
    // real test's or random: on random points both must reject, at the final comparison (or, for
    // the verifier, at its screen of non-squares, which runs beside the squarings to their end).
    let timed_check = |engine: &mut GpuEngine, full: bool| -> Result<f64, EngineError> {
        let t = Instant::now();
        let checked =
            with_arith(engine, |a| if full { pietrzak::verify(&proof, a, 3) } else { pietrzak::self_check(&proof, a) });
        match checked {
            Err(ProofError::Rejected { .. } | ProofError::NotASquare { .. }) => Ok(t.elapsed().as_secs_f64()),
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
