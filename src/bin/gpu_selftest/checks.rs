//! gpu-selftest's correctness checks: the kernels against the CPU twin (`kernels`, `m61m31`
//! and `fp64` stage by stage), squarings and products against rug (`squaring`), LL residues against the
//! external tables (`residues`), LL runs against the twin and full tests of the known primes.

use crate::{check_fields, engine_of, random_prime};
use mersenne_cert::engine::{Engine, EngineError};
use mersenne_cert::exponent::{is_prime, TestKind};
use mersenne_cert::gpu::{GpuEngine, KernelChecker};
use mersenne_cert::residue::Residue;
use mersenne_cert::rng::SeededRng;
use mersenne_cert::transform::fp64;
use mersenne_cert::transform::length::largest_exponent;
use mersenne_cert::transform::plan::{Arith, Plan};
use mersenne_cert::transform::registry;
use rug::Integer;
use std::time::Instant;

pub(crate) fn kernels(rng: &mut SeededRng, from: u32, to: u32) -> Result<bool, EngineError> {
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

pub(crate) fn squaring(
    rng: &mut SeededRng,
    count: usize,
    min: u32,
    max: u32,
    arith: Arith,
) -> Result<bool, EngineError> {
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
        // Every 20th as it goes, numbered, so that a run cut short says how far it got.
        if !ok {
            bad += 1;
            println!("MISMATCH {}/{count} p={p} shift={s} {what} ({})", k + 1, e.describe());
        } else if k % 20 == 0 {
            println!("ok {}/{count} p={p} shift={s} {what} ({})", k + 1, e.describe());
        }
    }
    println!("squaring: {} of {count} exponents agree with GMP", count - bad);
    Ok(bad == 0)
}

pub(crate) fn residues(
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

/// The M61·M31 or FP64 arithmetic on the GPU (the `m61m31` and `fp64` subcommands): its kernels
/// against the twin at every length of 2^from … 3·2^(to−1) (random digits and digits at the
/// bound), squarings against rug, LL iterations against the twin, the known primes.
pub(crate) fn arith_checks(
    arith: Arith,
    rng: &mut SeededRng,
    (from, to): (u32, u32),
    (count, max): (usize, u32),
    ll_iters: u64,
    known: (u32, &std::path::Path),
) -> Result<bool, EngineError> {
    let checker = KernelChecker::new()?;
    println!("device: {}", checker.device());
    let mut all = true;
    if arith == Arith::M61M31 {
        let v = checker.check_m61m31(rng.next_u64(), 1 << 16)?;
        println!("{}: {}", v.kernel, if v.ok { "OK" } else { "MISMATCH" });
        all &= v.ok;
    }
    // 2^from ≤ n ≤ 3·2^(to−1): 2^from … 2^to and 3·2^(from−1) … 3·2^(to−1).
    let (bottom, top) = (1usize << from, 3usize << to.saturating_sub(1));
    let lengths = arith.lengths().into_iter().filter(|l| (bottom..=top).contains(&l.n()));
    // Each length at its largest exponent; FP64 at the largest of each pair of primes.
    let exponents = |len| match arith {
        Arith::Fp64 => fp64::bound::largest_exponent_per_pair(len),
        _ => largest_exponent(arith, len).into_iter().collect(),
    };
    for (len, p) in lengths.flat_map(|len| exponents(len).into_iter().map(move |p| (len, p))) {
        let plan = Plan::with_length(p, arith, len)?;
        for extreme in [false, true] {
            let t = Instant::now();
            let seed = rng.next_u64();
            let verdicts = match arith {
                Arith::Fp64 => checker.check_fp64_plan(&plan, seed, extreme)?,
                _ => checker.check_m61m31_plan(&plan, seed, extreme)?,
            };
            let bad: Vec<&str> = verdicts.iter().filter(|v| !v.ok).map(|v| v.kernel.as_str()).collect();
            all &= bad.is_empty();
            println!(
                "{} n={len:<7} p={p:<11} {} digits: {} kernels {} ({:.1} s){}",
                arith.name(),
                if extreme { "bound " } else { "random" },
                verdicts.len(),
                if bad.is_empty() { "OK" } else { "MISMATCH" },
                t.elapsed().as_secs_f64(),
                if bad.is_empty() { String::new() } else { format!(": {}", bad.join(", ")) }
            );
        }
    }
    drop(checker);
    all &= squaring(rng, count, 1_000, max.min(arith.largest_exponent()), arith)?;
    all &= squaring(rng, count / 2, 13, 200_000, arith)?;
    all &= ll_vs_twin(arith, rng, 86_243, ll_iters)?;
    all &= known_primes(arith, known.0, known.1)?;
    Ok(all)
}

/// `iters` LL iterations of M_p from 4 at a random shift on the GPU and on the CPU twin.
fn ll_vs_twin(arith: Arith, rng: &mut SeededRng, p: u32, iters: u64) -> Result<bool, EngineError> {
    use mersenne_cert::residue::Shift;
    let plan = Plan::for_arith(p, arith)?;
    let s = rng.below(u64::from(p)) as u32;
    let mut e = GpuEngine::with_plan(plan.clone(), TestKind::Ll, s)?;
    let t = Instant::now();
    e.iterate(iters)?;
    let got = e.read()?;
    let gpu_s = t.elapsed().as_secs_f64();
    let twin = registry::get(arith).twin(&plan)?;
    let start = plan.residue_to_digits(&Residue::from_u64(p, 4), s);
    let (d, shift) = twin.iterate(&plan, TestKind::Ll, start, Shift::new(p, s), iters);
    let want = plan.digits_to_residue(&d, shift.get())?;
    let ok = got == want;
    println!(
        "{} LL M{p} shift {s}: {iters} iterations GPU {} twin {} {} (GPU {:.1} us/iter)",
        arith.name(),
        got.res64_hex(),
        want.res64_hex(),
        if ok { "ok" } else { "MISMATCH" },
        gpu_s * 1e6 / iters as f64
    );
    Ok(ok)
}

/// Full LL tests on the GPU of every known Mersenne prime exponent of `file` from 13 to `max`
/// (residue 0) and of the next prime after each that is not one (residue not 0).
fn known_primes(arith: Arith, max: u32, file: &std::path::Path) -> Result<bool, EngineError> {
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
            let mut e = GpuEngine::with_plan(Plan::for_arith(q, arith)?, TestKind::Ll, q / 3)?;
            e.iterate(u64::from(q) - 2)?;
            let zero = e.read()?.is_zero();
            tested += 1;
            if zero != prime {
                all = false;
                println!(
                    "{} known: M{q} {} but LL says {zero}",
                    arith.name(),
                    if prime { "prime" } else { "composite" }
                );
            }
        }
    }
    println!(
        "{} known: {tested} full LL tests (primes up to {max} and the next prime after each) {} ({:.1} s)",
        arith.name(),
        if all { "right" } else { "WRONG" },
        t.elapsed().as_secs_f64()
    );
    Ok(all)
}
