//! The field operations' throughput with nothing else in the way (kernels/field_rate.cu: values
//! in registers, no memory traffic, the GPU full of threads), and from it the floor under one
//! squaring's arithmetic on a plan: no kernel made of these operations does that squaring
//! faster. For `gpu-selftest field-rate`.

use crate::engine::EngineError;
use crate::gpu::module::{cuda_err, Device, Timer};
use crate::gpu::pipeline::{general_products_per_value, line_dfts, Pipeline, Shape};
use crate::transform::line::MAX_POW2_LOG2;
use crate::transform::plan::Plan;
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::CudaFunction;

/// Operations per second of the field arithmetic on this GPU.
pub struct FieldRate {
    pub device: String,
    /// lines[q − 1]: radix-2 butterflies per second in DFTs of 2^q values with power-of-2
    /// twiddles, as the passes' lines compute them (q = 1: twiddle 1, an add and a subtract).
    pub lines: Vec<f64>,
    /// General products (gl_mul) per second.
    pub products: f64,
}

/// The floor of one squaring on a plan in µs, at the measured rates: no kernel made of these
/// operations computes the plan's transforms faster. The column twiddles that POW2 passes take
/// by shifts are left out, so it is a lower bound.
pub struct Floor {
    /// The butterflies of the plan's line DFTs (both directions), each at its line length's rate.
    pub butterflies_us: f64,
    /// Every general product its kernels make: twiddles, the pointwise square, the weights and
    /// the unweights.
    pub products_us: f64,
}

/// Threads per block and blocks per SM of the rate kernels (16 blocks per SM was the fastest of
/// 4, 8 and 16 on an H200: bench/RESULTS.md, 2026-11-26).
const THREADS: u32 = 128;
const BLOCKS_PER_SM: u32 = 16;
/// Rounds per thread: ~0.1 s per kernel on an H200.
const ROUNDS: u32 = 2000;

/// Time the rate kernels (each once to warm up, then once with CUDA events).
pub fn field_rate() -> Result<FieldRate, EngineError> {
    // Operations per round and thread (kernels/field_rate.cu): q butterflies per value for
    // rate_lines<q> (32 values, 64 for q = MAX_POW2_LOG2), one product per value for rate_mul (32).
    let per_round = |q: u32| if q == MAX_POW2_LOG2 { 64 * q } else { 32 * q };
    let dev = Device::open()?;
    let sms =
        dev.ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map_err(cuda_err("SM count"))?
            as u32;
    let blocks = sms * BLOCKS_PER_SM;
    // SAFETY: each kernel writes one word per thread, all of which the buffer holds.
    let out = unsafe { dev.stream.alloc::<u64>((blocks * THREADS) as usize) }.map_err(cuda_err("rate buffer"))?;
    let out_addr = crate::gpu::pipeline::addr(&dev, &out);
    // Operations per second of one kernel doing `per_round` per round and thread.
    let rate = |f: &CudaFunction, per_round: u32, seed: u64| -> Result<f64, EngineError> {
        let shape = || Shape { blocks, threads: THREADS, shared_bytes: 0 };
        // SAFETY: rate_*(u64* out, u32 rounds, u64 seed) with out of one word per thread
        // (kernels/field_rate.cu).
        unsafe { Pipeline::launch(&dev, f, shape(), &[&out_addr, &ROUNDS, &seed]) }?;
        let timer = Timer::start(&dev)?;
        // SAFETY: rate_*(u64* out, u32 rounds, u64 seed) with out of one word per thread
        // (kernels/field_rate.cu).
        unsafe { Pipeline::launch(&dev, f, shape(), &[&out_addr, &ROUNDS, &seed]) }?;
        let seconds = timer.ms()? * 1e-3;
        Ok(f64::from(blocks * THREADS) * f64::from(ROUNDS) * f64::from(per_round) / seconds)
    };
    let seed = 0x9E37_79B9_7F4A_7C15u64;
    let (line_kernels, mul) = dev.rate_kernels()?;
    let lines = (1..=MAX_POW2_LOG2)
        .zip(&line_kernels)
        .map(|(q, f)| rate(f, per_round(q), seed ^ u64::from(q)))
        .collect::<Result<_, _>>()?;
    let products = rate(&mul, 32, seed)?;
    Ok(FieldRate { device: dev.description.clone(), lines, products })
}

impl FieldRate {
    /// Seconds per value of a DFT of 2^q values over all n values (q butterflies per value in both
    /// directions together: n/2 per stage and direction).
    fn line_s(&self, q: u32) -> f64 {
        f64::from(q) / self.lines[q as usize - 1]
    }

    /// The floor of one squaring on `plan` (a multi-pass plan: above the small lengths).
    pub fn floor(&self, plan: &Plan) -> Floor {
        let n = plan.n() as f64;
        let butterflies: f64 = line_dfts(plan).into_iter().map(|q| self.line_s(q)).sum();
        Floor {
            butterflies_us: n * butterflies * 1e6,
            products_us: n * general_products_per_value(plan) / self.products * 1e6,
        }
    }
}
