//! What `--engine auto` weighs: how long a piece of work would take on the CPU (GMP, µs/iter
//! measured here and now) and on a GPU (start-up cost plus a µs/iter model from the bench
//! numbers), so that the engine that finishes first is chosen, and CUDA is never opened for work
//! the CPU finishes before a GPU could even start. [`super::decide`] times GMP once per decision
//! and keeps the rates in it.

use crate::cpu_ref::GmpEngine;
use crate::engine::Engine;
use crate::exponent::TestKind;
use crate::residue::Residue;
use std::time::{Duration, Instant};

/// Opening CUDA, building or loading the kernels and uploading a plan: 0.27–0.29 s on an H200
/// for `prove 9689` (bench/RESULTS.md); the lower end, so that a GPU is never passed over for
/// work it would finish first.
pub const GPU_STARTUP_S: f64 = 0.27;

/// GMP's µs/iter is measured at exponents up to this one (the prime 2^20 - 3) and scaled from
/// it above: a GMP squaring there costs well under 1 ms, so the measurement stays short.
const MEASURE_LIMIT: u32 = 1_048_573;
/// Measure for at least this long in all, in this many rounds (at p = 9689 ~60 squarings a
/// round; the measurement is part of every small test's wall time).
const MEASURE_FOR: Duration = Duration::from_micros(1500);
const ROUNDS: u32 = 6;
/// GMP's squaring time grows at least this fast with p (FFT multiplication, p·log p ≈ p^1.1 at
/// these sizes; Toom below): scaling by it errs towards the CPU only where the GPU wins by
/// orders of magnitude.
const CPU_GROWTH: f64 = 1.1;

/// The GPU engine's µs per LL iteration, measured on an H200 (the tuned rate at 9689 from
/// bench/RESULTS.md, the others `gpu-selftest bench` of bench/gpu-bench.csv, 685689d, 2026-11-26).
const GPU_MEASURED: [(u32, f64); 6] =
    [(9689, 6.9), (1_257_787, 14.6), (3_021_377, 20.1), (20_996_011, 58.5), (82_589_933, 212.3), (136_279_841, 447.3)];

/// µs/iter at p from a table of measurements, interpolated log-log between them and extrapolated
/// with the slope of the nearest two.
fn interpolate(table: &[(u32, f64)], p: u32) -> f64 {
    let p = f64::from(p);
    let i = table.windows(2).position(|w| p <= f64::from(w[1].0)).unwrap_or(table.len() - 2);
    let ((a, x), (b, y)) = ((f64::from(table[i].0), table[i].1), (f64::from(table[i + 1].0), table[i + 1].1));
    x * (p / a).powf((y / x).ln() / (b / a).ln())
}

/// The GPU engine's µs per iteration at exponent p: the measured rates (`GPU_MEASURED`)
/// interpolated, never below the smallest (launch latency and one-block transforms are a floor).
/// An H100 is 1–10% slower (bench/gpu-bench.csv).
pub fn gpu_us_per_iter(p: u32) -> f64 {
    interpolate(&GPU_MEASURED, p).max(GPU_MEASURED[0].1)
}

/// GMP's µs per iteration at exponent p on one core of this machine: timed here (a few ms) for
/// p up to about 2^20, scaled from the time there above.
pub fn cpu_us_per_iter(p: u32, kind: TestKind) -> f64 {
    let at = p.min(MEASURE_LIMIT);
    let us = time_gmp(at, kind);
    us * (f64::from(p) / f64::from(at)).powf(CPU_GROWTH)
}

fn time_gmp(p: u32, kind: TestKind) -> f64 {
    let mut e = GmpEngine::new(p, kind, 0);
    // A pseudo-random full-size value (xorshift), so the timing is that of full-size squarings
    // (a patterned value can divide M_p and collapse to small numbers).
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut words: Vec<u64> = (0..p.div_ceil(64))
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    if !p.is_multiple_of(64) {
        *words.last_mut().expect("p >= 1") &= (1u64 << (p % 64)) - 1;
    }
    let start_value = Residue::from_words(p, words).unwrap_or_else(|_| Residue::start(p, kind));
    if e.load(&start_value).is_err() {
        return f64::INFINITY;
    }
    // The best of a few short rounds: a busy machine preempts some of them, never speeds one up.
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut done = 0u64;
        let mut batch = 1u64;
        while start.elapsed() < MEASURE_FOR / ROUNDS {
            if e.iterate(batch).is_err() {
                return f64::INFINITY;
            }
            done += batch;
            batch *= 2;
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / done as f64);
    }
    best
}

/// The engine `auto` takes for a piece of work, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Seconds on the CPU engine(s).
    pub cpu_s: f64,
    /// Seconds on the GPU(s), start-up included.
    pub gpu_s: f64,
}

impl Estimate {
    /// `iterations` at exponent p at (CPU, GPU) µs per iteration `rates`, split over
    /// `cpu_workers` CPU threads or `gpus` GPUs (each part at least `longest` iterations: a
    /// segment is not split further).
    pub fn at_rates(rates: (f64, f64), iterations: u64, longest: u64, cpu_workers: usize, gpus: usize) -> Estimate {
        let per = |workers: usize| (iterations as f64 / workers.max(1) as f64).max(longest as f64);
        Estimate { cpu_s: per(cpu_workers) * rates.0 * 1e-6, gpu_s: GPU_STARTUP_S + per(gpus) * rates.1 * 1e-6 }
    }

    /// Does the CPU finish first?
    pub fn cpu_wins(&self) -> bool {
        self.cpu_s <= self.gpu_s
    }

    /// Does the CPU finish before a GPU could even start (no need to look for one)?
    pub fn cpu_before_gpu_starts(&self) -> bool {
        self.cpu_s <= GPU_STARTUP_S
    }

    /// "CPU ~0.04 s against GPU ~0.32 s (0.25 s start-up)".
    pub fn describe(&self) -> String {
        format!("CPU ~{:.3} s against GPU ~{:.3} s ({GPU_STARTUP_S} s start-up)", self.cpu_s, self.gpu_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::Work;

    /// `iterations` of p (pieces of at most `longest`) on `workers` CPU threads or `gpus` GPUs,
    /// GMP timed here.
    fn of(p: u32, kind: TestKind, iterations: u64, longest: u64, workers: usize, gpus: usize) -> Estimate {
        Estimate::at_rates((cpu_us_per_iter(p, kind), gpu_us_per_iter(p)), iterations, longest, workers, gpus)
    }

    /// A test as [`Work::test`] shapes it, on `cores` cores and one GPU.
    fn test_at_rates(rates: (f64, f64), iterations: u64, doubled: bool, cores: usize) -> Estimate {
        Work { threads: cores, ..Work::test(127, TestKind::Ll, iterations, doubled) }.estimate(rates, 1)
    }

    #[test]
    fn gmp_timing_grows_with_p() {
        let small = cpu_us_per_iter(521, TestKind::Ll);
        let large = cpu_us_per_iter(86243, TestKind::Ll);
        assert!(small.is_finite() && small > 0.0, "{small}");
        assert!(large > small, "{large} <= {small}");
        // A full-size squaring at the limit, 12 times the size: at least 4 times the time.
        assert!(cpu_us_per_iter(MEASURE_LIMIT, TestKind::Ll) > 4.0 * large, "{large}");
        // Above the measuring limit the scaling is at least linear.
        let beyond = cpu_us_per_iter(4 * MEASURE_LIMIT + 1, TestKind::Ll);
        assert!(beyond > 4.0 * cpu_us_per_iter(MEASURE_LIMIT, TestKind::Ll) * 0.5, "{beyond}");
    }

    #[test]
    fn choices_at_both_ends() {
        // A small test: done on one core before CUDA could open.
        let e = of(4423, TestKind::Ll, 4421, 4421, 1, 1);
        assert!(e.cpu_before_gpu_starts() && e.cpu_wins(), "{}", e.describe());
        // A large one: the GPU, by far (GMP at 2^22 bits takes milliseconds per squaring).
        let e = of(4_194_301, TestKind::Ll, 4_194_299, 4_194_299, 1, 1);
        assert!(!e.cpu_wins(), "{}", e.describe());
        assert!(e.gpu_s < e.cpu_s / 10.0, "{}", e.describe());
        // More CPU workers shorten the CPU's time, down to the longest segment.
        let one = of(86243, TestKind::Ll, 86241, 1000, 1, 1);
        let many = of(86243, TestKind::Ll, 86241, 1000, 8, 1);
        assert!(many.cpu_s < one.cpu_s / 4.0, "{} vs {}", many.describe(), one.describe());
    }

    #[test]
    fn the_double_check_counts_twice_on_the_gpu_and_once_on_two_cores() {
        let rates = (7.0, 9.0); // µs/iter on the CPU and the GPU
        let one = test_at_rates(rates, 10_000, false, 16);
        assert!((one.cpu_s - 0.07).abs() < 1e-9 && (one.gpu_s - GPU_STARTUP_S - 0.09).abs() < 1e-9, "{one:?}");
        // Twice the GPU work; on two or more cores the two GMP runs take the time of one.
        let two = test_at_rates(rates, 10_000, true, 16);
        assert!((two.gpu_s - GPU_STARTUP_S - 0.18).abs() < 1e-9, "{two:?}");
        assert!((two.cpu_s - 0.07).abs() < 1e-9, "{two:?}");
        // On one core, one after the other.
        let single_core = test_at_rates(rates, 10_000, true, 1);
        assert!((single_core.cpu_s - 0.14).abs() < 1e-9, "{single_core:?}");
        // So a doubled test near the crossover can move to the CPU: here the GPU would win a
        // single run (0.25 + 0.9 s against 1.4 s) but not a doubled one (0.25 + 1.8 s against 1.4 s).
        let rates = (14.0, 9.0);
        assert!(!test_at_rates(rates, 100_000, false, 2).cpu_wins());
        assert!(test_at_rates(rates, 100_000, true, 2).cpu_wins());
    }

    /// What the engines really take, against which the model's choice is judged: GMP as measured
    /// on one core (bench/notes/cpu.md 2026-11-23, quiet), the GPU an H100 (bench/gpu-bench.csv,
    /// dd4913a; the model's table is an H200's; at 9689 the H200's rate plus 5%) with the worst
    /// start-up measured.
    const GMP_REAL: [(u32, f64); 3] = [(9689, 4.13), (86243, 96.13), (1_257_787, 2464.5)];
    const GPU_REAL: [(u32, f64); 6] = [
        (9689, 7.25),
        (1_257_787, 14.7),
        (3_021_377, 21.4),
        (20_996_011, 59.9),
        (82_589_933, 236.2),
        (136_279_841, 492.5),
    ];
    const GPU_STARTUP_REAL: f64 = 0.29;

    #[test]
    fn auto_is_never_slower_than_the_slower_engine_from_127_to_200m() {
        let gpu_real = |p: f64| interpolate(&GPU_REAL, p as u32).max(GPU_REAL[0].1);
        let gmp_real = |p: f64| interpolate(&GMP_REAL, p as u32);
        // What cpu_us_per_iter reports when its measurement gives the real rate.
        let gmp_model = |p: f64| {
            let at = p.min(f64::from(MEASURE_LIMIT));
            gmp_real(at) * (p / at).powf(CPU_GROWTH)
        };
        // Where the two engines take the same time (p ≈ 23,000 on one core), auto takes that plus
        // its GMP timing (~1.6 ms of 0.65 s): the only excess over the slower engine it may have.
        const SLACK: f64 = 1.005;
        let (mut p, mut worst) = (127.0f64, (1.0f64, 0.0f64));
        while p <= 200e6 {
            let q = p as u32;
            // The decision's own cost: the GMP timing (its rounds take at least one squaring each).
            let deciding = MEASURE_FOR.as_secs_f64() + f64::from(ROUNDS) * gmp_real(p.min(1_048_573.0)) * 1e-6;
            // The time the model's choice really takes, judged against both engines' real times;
            // its ratio to the faster and the faster's time.
            let judge = |model: Estimate, real: Estimate, what: String| {
                let real_gpu = real.gpu_s - GPU_STARTUP_S + GPU_STARTUP_REAL;
                let chosen = deciding + if model.cpu_wins() { real.cpu_s } else { real_gpu };
                let (fast, slow) = (real.cpu_s.min(real_gpu), real.cpu_s.max(real_gpu));
                assert!(chosen <= slow * SLACK, "{what}: {chosen} s chosen, the slower takes {slow} s");
                // And close to the faster: the model only errs where the two are close.
                assert!(chosen / fast <= 1.1 || chosen - fast <= 0.01, "{what}: {chosen} s against {fast} s");
                (chosen / fast, fast)
            };
            for cores in [1, 2, 16] {
                // prove: an LL test (doubled below 1M as `--ll-check auto` does) and a PRP test.
                for (iterations, doubled) in [(q as u64 - 2, q < 1_000_000), (q as u64, false)] {
                    let model = test_at_rates((gmp_model(p), gpu_us_per_iter(q)), iterations, doubled, cores);
                    let real = test_at_rates((gmp_real(p), gpu_real(p)), iterations, doubled, cores);
                    let (ratio, fast) = judge(model, real, format!("p {q}, {cores} cores"));
                    if ratio > worst.0 && fast >= 0.1 {
                        worst = (ratio, p);
                    }
                }
                // verify --replay: 64 segments over the cores or one GPU.
                let iterations = q as u64;
                let longest = iterations.div_ceil(64);
                let model = Estimate::at_rates((gmp_model(p), gpu_us_per_iter(q)), iterations, longest, cores, 1);
                let real = Estimate::at_rates((gmp_real(p), gpu_real(p)), iterations, longest, cores, 1);
                judge(model, real, format!("verify p {q}, {cores} cores"));
            }
            p *= 1.01;
        }
        eprintln!("prove: worst ratio to the faster engine (of work >= 0.1 s): {:.3} at p = {:.0}", worst.0, worst.1);
    }

    #[test]
    fn gpu_model_is_the_measurements_interpolated() {
        for (p, us) in GPU_MEASURED {
            assert!((gpu_us_per_iter(p) - us).abs() < 1e-9 * us, "p {p}");
        }
        assert_eq!(gpu_us_per_iter(127), GPU_MEASURED[0].1, "the floor");
        let mut last = 0.0;
        for p in (10_000..200_000_000).step_by(999_983) {
            let us = gpu_us_per_iter(p);
            assert!(us >= last, "grows with p: {p}");
            last = us;
        }
        // Between two measurements, between their rates.
        let mid = gpu_us_per_iter(50_000_000);
        assert!(mid > GPU_MEASURED[3].1 && mid < GPU_MEASURED[4].1, "{mid}");
    }
}
