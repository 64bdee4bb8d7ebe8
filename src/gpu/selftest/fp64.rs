//! The FP64 arithmetic's device operations for `gpu-selftest field-rate`
//! (kernels/fp64/field_rate.cuh): first checked bit for bit against the CPU field
//! (src/transform/fp64/) on
//! inputs at the edges of every range and random ones, for both primes and the CRT, then timed
//! in registers like the other arithmetics' rates (rate.rs launches the rate kernels).

use crate::engine::EngineError;
use crate::gpu::launch::{launch, Shape};
use crate::gpu::module::{cuda_err, function, Device};
use crate::rng::SeededRng;
use crate::transform::fp64::crt::Crt;
use crate::transform::fp64::field::{Fp64, MUL_SPAN};
use crate::transform::fp64::primes::{PAIRS, PRIMES};
use cudarc::driver::CudaModule;
use std::sync::Arc;

/// The FP64 operations per second on this GPU (in registers).
#[derive(Clone, Copy, Debug)]
pub struct Fp64Rates {
    /// Products (fp_mul: 6 FP64 instructions).
    pub mul: f64,
    /// Radix-2 DIF butterflies with the sums reduced every second stage.
    pub bfly: f64,
    /// CRTs of a residue pair to a 128-bit integer.
    pub crt: f64,
}

/// The inputs of fp64_check for one prime: (a, b) for the product with |a|·|b| ≤ 2^50·p,
/// (x, y, w) for the butterflies with |x|, |y| ≤ 2^50 and |w| ≤ (p − 1)/2 (so |x − y|·|w| ≤
/// 2^50·p and every sum < 2^53); edges first, then random values of random sizes.
fn inputs(f: &Fp64, rng: &mut SeededRng, random: usize) -> [Vec<f64>; 5] {
    let p = f.modulus() as i64;
    let sq = (MUL_SPAN * f.p()).sqrt().floor() as i64;
    let (half, top) = (p / 2, 1i64 << 50);
    let mut v: [Vec<f64>; 5] = Default::default();
    let mut push = |a: i64, b: i64, x: i64, y: i64, w: i64| {
        for (col, val) in v.iter_mut().zip([a, b, x, y, w]) {
            col.push(val as f64);
        }
    };
    for (a, b) in [(sq, sq), (-sq, sq), (sq, -sq), (-sq, -sq), (0, sq), (1, 1), (p, p), (half, -half)] {
        for (x, y, w) in [(top, -top, half), (-top, top, -half), (top, top, half), (0, 0, 0), (half, -half, 1)] {
            push(a, b, x, y, w);
        }
    }
    let mut signed = |bits: u32| {
        let m = 1i64 << rng.below(u64::from(bits) + 1);
        rng.below(2 * m as u64 + 1) as i64 - m
    };
    for _ in 0..random {
        let a = signed(63).clamp(-sq, sq);
        let b = signed(63).clamp(-sq, sq);
        let (x, y) = (signed(50), signed(50));
        let w = signed(52).clamp(-half, half);
        push(a, b, x, y, w);
    }
    v
}

/// What the CPU field computes for fp64_check's element i (the kernel's six outputs).
fn expected(f: &Fp64, a: f64, b: f64, x: f64, y: f64, w: f64) -> [f64; 6] {
    let (s, d) = f.dif(x, y, w);
    let (u, v) = f.dit(x, y, w);
    [f.mul(a, b), f.center(4.0 * x), s, d, u, v]
}

/// fp64_check and fp64_crt_check against the CPU, bit for bit: the number of mismatching
/// elements per prime and for the CRT, and the first few described.
pub fn check(dev: &Device, module: &Arc<CudaModule>, seed: u64, random: usize) -> Result<(bool, String), EngineError> {
    let mut rng = SeededRng::new(seed);
    let f = |name: &str| function(module, name);
    let (op_check, crt_check) = (f("fp64_check")?, f("fp64_crt_check")?);
    let up = |v: &[f64]| dev.stream.clone_htod(v).map_err(cuda_err("fp64 upload"));
    let mut report = Vec::new();
    let mut ok = true;
    for prime in PRIMES {
        let field = Fp64::new(prime.p);
        let cols = inputs(&field, &mut rng, random);
        let n = cols[0].len() as u32;
        let bufs = cols.iter().map(|c| up(c)).collect::<Result<Vec<_>, _>>()?;
        let out = dev.stream.alloc_zeros::<f64>(6 * n as usize).map_err(cuda_err("fp64 buffer"))?;
        let (p, pinv) = (field.p(), field.pinv());
        let shape = Shape { blocks: n.div_ceil(256), threads: 256, shared_bytes: 0 };
        // SAFETY: fp64_check(const double* a, b, x, y, w, double* out, u32 n, double p, double pinv)
        // with five inputs of n doubles and out of 6n (kernels/fp64/field_rate.cuh).
        unsafe {
            launch(dev, &op_check, shape, &[&bufs[0], &bufs[1], &bufs[2], &bufs[3], &bufs[4], &out, &n, &p, &pinv])
        }?;
        let got = dev.stream.clone_dtoh(&out).map_err(cuda_err("fp64 download"))?;
        dev.stream.synchronize().map_err(cuda_err("fp64 run"))?;
        let bad: Vec<usize> = (0..n as usize)
            .filter(|&i| {
                let want = expected(&field, cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i]);
                want.iter().zip(&got[6 * i..6 * i + 6]).any(|(w, g)| w.to_bits() != g.to_bits())
            })
            .collect();
        ok &= bad.is_empty();
        report.push(format!("p={}: {} of {n} differ", prime.p, bad.len()));
        if let Some(&i) = bad.first() {
            report.push(format!(
                "  first: a={} b={} x={} y={} w={}: gpu {:?}",
                cols[0][i],
                cols[1][i],
                cols[2][i],
                cols[3][i],
                cols[4][i],
                &got[6 * i..6 * i + 6]
            ));
        }
    }
    // The CRT of each pair: integers at the ends of its range and random ones, each as lazy
    // representatives.
    for pair in PAIRS {
        let crt = Crt::new(&pair);
        let m = pair.max_abs() as i128;
        let [q1, q2] = pair.primes.map(|q| q.p as i128);
        let mut cs = vec![0i128, 1, -1, m, -m, m - 1, 1 - m, q1, q2];
        cs.extend((0..random).map(|_| ((rng.next_u64() as i64 as i128) << 36 | i128::from(rng.below(1 << 36))) % m));
        let (mut x1, mut x2) = (Vec::new(), Vec::new());
        for &c in &cs {
            let (r1, r2) = crt.split(c);
            let k = rng.below(5) as f64 - 2.0;
            x1.push(r1 + k * crt.f1.p());
            x2.push(r2 - k * crt.f2.p());
        }
        let n = cs.len() as u32;
        let (b1, b2) = (up(&x1)?, up(&x2)?);
        let out = dev.stream.alloc_zeros::<u64>(2 * n as usize).map_err(cuda_err("fp64 buffer"))?;
        let (p1, i1, p2, i2, inv) = (crt.f1.p(), crt.f1.pinv(), crt.f2.p(), crt.f2.pinv(), crt.inv);
        let shape = Shape { blocks: n.div_ceil(256), threads: 256, shared_bytes: 0 };
        // SAFETY: fp64_crt_check(const double* x1, x2, u64* out, u32 n, double p1, pinv1, p2,
        // pinv2, inv) with inputs of n doubles and out of 2n words.
        unsafe { launch(dev, &crt_check, shape, &[&b1, &b2, &out, &n, &p1, &i1, &p2, &i2, &inv]) }?;
        let got = dev.stream.clone_dtoh(&out).map_err(cuda_err("fp64 download"))?;
        dev.stream.synchronize().map_err(cuda_err("fp64 run"))?;
        let bad = (0..cs.len())
            .filter(|&i| {
                let c = crt.recombine(x1[i], x2[i]);
                c != cs[i] || got[2 * i] != c as u64 || got[2 * i + 1] != (c >> 64) as u64
            })
            .count();
        ok &= bad == 0;
        report.push(format!("crt {}: {bad} of {n} differ", pair.limit_name));
    }
    Ok((ok, report.join("\n")))
}
