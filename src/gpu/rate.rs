//! The field operations' throughput with nothing else in the way (kernels/field_rate.cu: values
//! in registers, no memory traffic, the GPU full of threads), and from it the floor under one
//! squaring's arithmetic at a plan: no kernel made of these operations does a squaring faster.
//! For `gpu-selftest field-rate`.

use super::module::{cuda_err, Device};
use super::pipeline::{general_products_per_value, Pipeline, Shape};
use crate::engine::EngineError;
use crate::plan::Plan;
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags};

/// Operations per second of the field arithmetic on this GPU.
pub struct FieldRate {
    pub device: String,
    /// Radix-2 butterflies with power-of-2 twiddles, in lines of 32 values as the passes' lines.
    pub butterflies: f64,
    /// Butterflies with twiddle 1 (one gl_add and one gl_sub).
    pub add_sub: f64,
    /// General products (gl_mul).
    pub products: f64,
}

/// The floor of one squaring at a plan, in µs, at the measured rates: the butterflies of the two
/// transforms (n/2 · log2 n each), the pointwise square with the weights and unweights (3 products
/// per value, in any IBDWT squaring), and the plan's twiddle products (its passes' and lines').
pub struct Floor {
    pub butterflies_us: f64,
    pub pointwise_us: f64,
    pub twiddles_us: f64,
}

/// Threads per block and blocks per SM of the rate kernels (the most blocks per SM tried, 16,
/// was the fastest of 4, 8 and 16 on an H200: bench/RESULTS.md, 2026-11-26).
const THREADS: u32 = 128;
const BLOCKS_PER_SM: u32 = 16;
/// Rounds per thread: ~0.1 s per kernel on an H200.
const ROUNDS: u32 = 2000;
/// Operations per round and thread of each kernel (kernels/field_rate.cu).
const PER_ROUND: [f64; 3] = [160.0, 80.0, 32.0];

/// Time the three rate kernels (each once to warm up, then once timed with CUDA events).
pub fn field_rate() -> Result<FieldRate, EngineError> {
    let dev = Device::open()?;
    let sms = dev
        .ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(cuda_err("SM count"))? as u32;
    let blocks = sms * BLOCKS_PER_SM;
    // SAFETY: each kernel writes one word per thread, all of which the buffer holds.
    let out = unsafe { dev.stream.alloc::<u64>((blocks * THREADS) as usize) }.map_err(cuda_err("rate buffer"))?;
    let out_addr = super::pipeline::addr(&dev, &out);
    let shape = || Shape { blocks, threads: THREADS, shared_bytes: 0 };
    let ev = || dev.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(cuda_err("event"));
    let mut rates = [0.0; 3];
    for (k, f) in dev.kernels.rate.iter().enumerate() {
        let seed = 0x9E37_79B9_7F4A_7C15u64 ^ k as u64;
        Pipeline::launch(&dev, f, shape(), &[&out_addr, &ROUNDS, &seed])?;
        let (a, b) = (ev()?, ev()?);
        a.record(&dev.stream).map_err(cuda_err("event"))?;
        Pipeline::launch(&dev, f, shape(), &[&out_addr, &ROUNDS, &seed])?;
        b.record(&dev.stream).map_err(cuda_err("event"))?;
        let seconds = f64::from(a.elapsed_ms(&b).map_err(cuda_err("event"))?) * 1e-3;
        rates[k] = f64::from(blocks * THREADS) * f64::from(ROUNDS) * PER_ROUND[k] / seconds;
    }
    let [butterflies, add_sub, products] = rates;
    Ok(FieldRate { device: dev.description.clone(), butterflies, add_sub, products })
}

impl FieldRate {
    /// The floor of one squaring on `plan` (a multi-pass plan: above the small lengths).
    pub fn floor(&self, plan: &Plan) -> Floor {
        let n = plan.n() as f64;
        let us = |ops: f64, rate: f64| ops / rate * 1e6;
        Floor {
            butterflies_us: us(n * f64::from(plan.log2()), self.butterflies),
            pointwise_us: us(3.0 * n, self.products),
            twiddles_us: us((general_products_per_value(plan) - 3.0) * n, self.products),
        }
    }
}
