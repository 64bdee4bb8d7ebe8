//! The field operations' throughput with nothing else in the way (kernels/goldilocks/field_rate.cuh: values
//! in registers, no memory traffic, the GPU full of threads), and from it the floor under one
//! squaring's arithmetic on a plan: no kernel made of these operations does that squaring
//! faster. Likewise for the second arithmetic's operations (kernels/m61m31/field_rate.cuh), whose
//! floor model is floor_m61m31.rs, the FP64 arithmetic's (kernels/fp64/field_rate.cuh, checked
//! against the CPU first by fp64.rs; floor model floor_fp64.rs), and the memory bandwidth. For
//! `gpu-selftest field-rate`.

use super::floor_fp64::{self, Fp64Floor};
use super::floor_m61m31::{self, FqRates, MersenneFloor, MersenneRates};
use super::fp64::{self, Fp64Rates};
use crate::engine::EngineError;
use crate::gpu::goldilocks::{general_products_per_value, line_dfts};
use crate::gpu::launch::{launch, Shape};
use crate::gpu::module::{cuda_err, function, Device, Timer, RATE_UNIT};
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
    /// The second arithmetic's operations per second.
    pub mersenne: MersenneRates,
    /// The FP64 arithmetic's operations per second (kernels/fp64/field_rate.cuh).
    pub fp64: Fp64Rates,
    /// Whether those operations matched the CPU field bit for bit, and the counts.
    pub fp64_check: (bool, String),
    /// Bytes per second of a large copy (read and write).
    pub bandwidth: f64,
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
    /// Every pass reading and writing every word (8 B) once at the measured bandwidth
    /// (floor_m61m31::memory_bytes), tables left out.
    pub memory_us: f64,
}

/// Threads per block and blocks per SM of the rate kernels (16 blocks per SM was the fastest of
/// 4, 8 and 16 on an H200: bench/RESULTS.md, 2026-11-26).
const THREADS: u32 = 128;
const BLOCKS_PER_SM: u32 = 16;
/// Rounds per thread: ~0.1 s per kernel on an H200.
const ROUNDS: u32 = 2000;
/// The bandwidth copy: 2^26 words (512 MiB) each way, COPIES times.
const COPY_WORDS: usize = 1 << 26;
const COPIES: u32 = 10;

/// Time the rate kernels (each once to warm up, then once with CUDA events).
pub fn field_rate() -> Result<FieldRate, EngineError> {
    // Operations per round and thread (kernels/goldilocks/field_rate.cuh): q butterflies per value for
    // rate_lines<q> (32 values, 64 for q = MAX_POW2_LOG2), one product per value for rate_mul (32).
    let per_round = |q: u32| if q == MAX_POW2_LOG2 { 64 * q } else { 32 * q };
    let dev = Device::open()?;
    let sms =
        dev.ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map_err(cuda_err("SM count"))?
            as u32;
    let blocks = sms * BLOCKS_PER_SM;
    // SAFETY: each kernel writes one word per thread, all of which the buffer holds.
    let out = unsafe { dev.stream.alloc::<u64>((blocks * THREADS) as usize) }.map_err(cuda_err("rate buffer"))?;
    // Operations per second of one kernel doing `per_round` per round and thread.
    let rate = |f: &CudaFunction, per_round: u32, seed: u64| -> Result<f64, EngineError> {
        let shape = || Shape { blocks, threads: THREADS, shared_bytes: 0 };
        // SAFETY: rate_*(u64* out, u32 rounds, u64 seed) with out of one word per thread
        // (kernels/goldilocks/field_rate.cuh).
        unsafe { launch(&dev, f, shape(), &[&out, &ROUNDS, &seed]) }?;
        let timer = Timer::start(&dev)?;
        // SAFETY: rate_*(u64* out, u32 rounds, u64 seed) with out of one word per thread
        // (kernels/goldilocks/field_rate.cuh).
        unsafe { launch(&dev, f, shape(), &[&out, &ROUNDS, &seed]) }?;
        let seconds = timer.ms()? * 1e-3;
        Ok(f64::from(blocks * THREADS) * f64::from(ROUNDS) * f64::from(per_round) / seconds)
    };
    let seed = 0x9E37_79B9_7F4A_7C15u64;
    let module = dev.module(RATE_UNIT)?;
    let f = |name: &str| function(&module, name);
    let lines = (1..=MAX_POW2_LOG2)
        .map(|q| rate(&f(&format!("rate_lines{q}"))?, per_round(q), seed ^ u64::from(q)))
        .collect::<Result<_, _>>()?;
    let products = rate(&f("rate_mul")?, 32, seed)?;
    // Operations per round and thread of each kernel (kernels/m61m31/field_rate.cuh).
    let fq = |field: &str| -> Result<FqRates, EngineError> {
        let r = |kernel: &str, per_round: u32| rate(&f(&format!("rate_{field}{kernel}"))?, per_round, seed);
        Ok(FqRates {
            addsub: r("_addsub", 32)?,
            mul: r("_mul", 32)?,
            shl: r("_shl", 32)?,
            cx_bfly: r("c_bfly", 16)?,
            cx_mul3: r("c_mul3", 16)?,
            cx_mul4: r("c_mul4", 16)?,
            cx_radix4: r("c_radix4", 32)?,
            cx_w8: r("c_w8", 16)?,
        })
    };
    let mersenne = MersenneRates {
        m61: fq("m61")?,
        m31: fq("m31")?,
        pair_bfly: rate(&f("rate_pair_bfly")?, 8, seed)?,
        crt: rate(&f("rate_crt")?, 16, seed)?,
    };
    // FP64: checked against the CPU first (fp64.rs), then timed (per round and thread: 32
    // products, 64 butterflies, 16 CRTs).
    let fp64_check = fp64::check(&dev, &module, seed, 1 << 16)?;
    let fp64 = Fp64Rates {
        mul: rate(&f("rate_fp64_mul")?, 32, seed)?,
        bfly: rate(&f("rate_fp64_bfly")?, 64, seed)?,
        crt: rate(&f("rate_fp64_crt")?, 16, seed)?,
    };
    let bandwidth = copy_bandwidth(&dev, &f("rate_copy")?, sms)?;
    Ok(FieldRate { device: dev.description(), lines, products, mersenne, fp64, fp64_check, bandwidth })
}

/// Bytes per second of rate_copy over COPY_WORDS words, read and written, COPIES times (after one
/// to warm up).
fn copy_bandwidth(dev: &Device, copy: &CudaFunction, sms: u32) -> Result<f64, EngineError> {
    let input = dev.stream.alloc_zeros::<u64>(COPY_WORDS).map_err(cuda_err("copy buffer"))?;
    let output = dev.stream.alloc_zeros::<u64>(COPY_WORDS).map_err(cuda_err("copy buffer"))?;
    let words = COPY_WORDS as u64;
    let shape = || Shape { blocks: sms * 8, threads: 256, shared_bytes: 0 };
    // SAFETY: rate_copy(const u64* in, u64* out, u64 n) with both buffers of n words.
    unsafe { launch(dev, copy, shape(), &[&input, &output, &words]) }?;
    let timer = Timer::start(dev)?;
    for _ in 0..COPIES {
        // SAFETY: as above.
        unsafe { launch(dev, copy, shape(), &[&input, &output, &words]) }?;
    }
    let seconds = timer.ms()? * 1e-3;
    Ok(f64::from(COPIES) * 2.0 * 8.0 * words as f64 / seconds)
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
        let passes = plan.global_passes().len() + 1;
        Floor {
            butterflies_us: n * butterflies * 1e6,
            products_us: n * general_products_per_value(plan) / self.products * 1e6,
            memory_us: floor_m61m31::memory_bytes(n, passes, 8.0) / self.bandwidth * 1e6,
        }
    }

    /// The FP64 arithmetic's floor at 2^k words (floor_fp64.rs).
    pub fn fp64_floor(&self, log2: u32) -> Fp64Floor {
        floor_fp64::floor(&self.fp64, self.bandwidth, log2)
    }

    /// The second arithmetic's floor at p: its length (floor_m61m31::length_for) in as many passes
    /// as today's Goldilocks plan of as many complex values (floor_m61m31::radix8_passes); None
    /// beyond its longest length.
    pub fn mersenne_floor(&self, p: u32) -> Result<Option<MersenneFloor>, EngineError> {
        let Some(len) = floor_m61m31::length_for(p) else { return Ok(None) };
        let passes = floor_m61m31::radix8_passes(&floor_m61m31::goldilocks_passes(len.log2 - 1)?);
        Ok(Some(floor_m61m31::floor(&self.mersenne, self.bandwidth, len, &passes)))
    }
}
