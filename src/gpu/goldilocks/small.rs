//! The one-block kernel for small lengths (n ≤ 2^SMALL_MAX_LOG2, kernels/goldilocks/small.cuh): the plan on
//! the device, the launch shape (rounds of at most V radix-2 stages, threads, shared memory with
//! the opt-in above 48 KiB), the launches (`count` squarings in one launch; the product acc·x),
//! and its check against the CPU twin for `gpu-selftest kernels`.

use super::kernels::{GlKernels, SMALL_MAX_STAGES};
use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::goldilocks::{upload_plan, Layout, Op};
use crate::gpu::graphs::Graphs;
use crate::gpu::launch::{launch, Arg, Res, Shape, ADVANCE, LL};
use crate::gpu::module::{cuda_err, Device, Timer};
use crate::transform::plan::Plan;
use cudarc::driver::{sys, CudaModule, CudaSlice};
use std::sync::Arc;

/// Most stages per round (the small_r1 .. small_r4 kernels).
pub(crate) const MAX_STAGES: u32 = SMALL_MAX_STAGES;
/// The default shared memory of a block; more needs the opt-in attribute.
const DEFAULT_SHARED_BYTES: u32 = 48 << 10;
/// Iterations per launch at most (a launch of more would hold the GPU for seconds).
const MAX_LAUNCH_ITERS: u64 = 1 << 14;

/// Stages per round by default: 2 (4 values per thread, more threads: up to 2^SMALL_MAX_LOG2 a
/// round is latency-bound; 3 won only at 2^11, which now runs on the multi-pass path).
/// MERSENNE_CERT_SMALL_STAGES=1..4 overrides it (for tuning).
fn default_stages() -> u32 {
    let tuned = std::env::var("MERSENNE_CERT_SMALL_STAGES").ok().and_then(|v| v.parse().ok());
    tuned.filter(|k| (1..=MAX_STAGES).contains(k)).unwrap_or(2)
}

/// A small plan on the device and its launch shape.
pub(crate) struct SmallPipeline {
    pub plan: Plan,
    k: GlKernels,
    layout: Layout,
    _tables: Vec<CudaSlice<u64>>,
    stages: u32,
    threads: u32,
    shared_bytes: u32,
}

impl SmallPipeline {
    pub fn new(dev: &Device, plan: Plan) -> Result<SmallPipeline, EngineError> {
        let stages = default_stages();
        SmallPipeline::with_stages(dev, plan, stages)
    }

    /// The pipeline with rounds of at most `stages` stages (1 ≤ stages ≤ MAX_STAGES).
    pub fn with_stages(dev: &Device, plan: Plan, stages: u32) -> Result<SmallPipeline, EngineError> {
        if !plan.is_small() || !(1..=MAX_STAGES).contains(&stages) {
            return Err(EngineError::Other(format!("no one-block kernel for n=2^{}, {stages} stages", plan.log2())));
        }
        let k = GlKernels::load(dev)?;
        let (layout, tables) = upload_plan(dev, &k, &plan)?;
        // Values (one pad word per 2^pad_log, pad_log as in kernels/goldilocks/small.cuh) and the carries.
        let (n, seg_log) = (plan.n(), plan.seg_len().trailing_zeros() as usize);
        let words = n + (n >> seg_log.max(4)) + (n >> seg_log);
        let shared_bytes = (words * 8) as u32;
        let max_threads = if stages >= 4 { 512 } else { 1024 };
        let threads = (n >> stages).clamp(32, max_threads) as u32;
        if shared_bytes > DEFAULT_SHARED_BYTES {
            let most = dev
                .ctx
                .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
                .map_err(cuda_err("shared memory limit"))?;
            if shared_bytes as i64 > most as i64 {
                let why =
                    format!("n=2^{} needs {shared_bytes} bytes of shared memory, the GPU has {most}", plan.log2());
                return Err(EngineError::NoPlan { p: plan.exponent(), why });
            }
            let f = &k.small[stages as usize - 1];
            let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            f.set_attribute(attr, shared_bytes as i32).map_err(cuda_err("shared memory opt-in"))?;
        }
        Ok(SmallPipeline { plan, k, layout, _tables: tables, stages, threads, shared_bytes })
    }

    /// What runs, for descriptions and profiles.
    pub fn describe(&self) -> String {
        format!(
            "one block: {} threads, rounds of {} stages, {} KiB shared",
            self.threads,
            self.stages,
            self.shared_bytes.div_ceil(1024)
        )
    }

    /// One launch of the one-block kernel (`tmp`: none for a squaring, which reads no other
    /// operand; the kernel takes a null pointer then).
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan: a residue of n words,
    /// its segments' carries, the shift word.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch(
        &self,
        dev: &Device,
        x: Res,
        other: Res,
        tmp: Option<&CudaSlice<u64>>,
        shift: &CudaSlice<u32>,
        count: u32,
        op: Op,
        flags: u32,
    ) -> Result<(), EngineError> {
        let f = &self.k.small[self.stages as usize - 1];
        let shape = Shape { blocks: 1, threads: self.threads, shared_bytes: self.shared_bytes };
        let null = 0u64;
        let tmp: &dyn Arg = match tmp {
            Some(t) => t,
            None => &null,
        };
        let args: [&dyn Arg; 10] =
            [x.x, x.carries, other.x, other.carries, tmp, shift, &self.layout, &count, &(op as u32), &flags];
        // SAFETY: small_r<R>'s parameters (kernels/goldilocks/small.cuh) in this order; the residues, carries
        // and tmp are sized for this plan.
        unsafe { launch(dev, f, shape, &args) }
    }

    /// `count` squarings of x (one launch per MAX_LAUNCH_ITERS); each doubles the shift count
    /// at `shift` first, and with `ll` subtracts 2·2^s.
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan: a residue of n words,
    /// its segments' carries, the shift word.
    pub unsafe fn squarings(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        ll: bool,
        count: u64,
    ) -> Result<(), EngineError> {
        let flags = ADVANCE | if ll { LL } else { 0 };
        let mut left = count;
        while left > 0 {
            let k = left.min(MAX_LAUNCH_ITERS);
            // SAFETY: the buffers are the caller's, under this function's contract.
            unsafe { self.launch(dev, x, x, None, shift, k as u32, Op::Square, flags) }?;
            left -= k;
        }
        Ok(())
    }
}

impl Pipeline for SmallPipeline {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn module(&self) -> &Arc<CudaModule> {
        &self.k.module
    }
    unsafe fn square(&self, dev: &Device, x: Res, shift: &CudaSlice<u32>, ll: bool) -> Result<(), EngineError> {
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe { self.squarings(dev, x, shift, ll, 1) }
    }
    /// acc := acc·x in one launch; `tmp` (n words) receives the transform of x (x itself is left
    /// as it was).
    unsafe fn multiply(
        &self,
        dev: &Device,
        acc: Res,
        x: Res,
        tmp: &CudaSlice<u64>,
        shift: &CudaSlice<u32>,
    ) -> Result<(), EngineError> {
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe { self.launch(dev, acc, x, Some(tmp), shift, 1, Op::Multiply, 0) }
    }

    /// Microseconds per squaring, `reps` of them in one launch (for tuning; the data is whatever
    /// x holds, the shift count advances).
    unsafe fn profile(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        reps: usize,
    ) -> Result<Vec<(String, f64)>, EngineError> {
        let timer = Timer::start(dev)?;
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe { self.squarings(dev, x, shift, true, reps as u64) }?;
        let us = timer.ms()? * 1000.0 / reps as f64;
        Ok(vec![(format!("{} (per squaring, {reps} in one launch)", self.describe()), us)])
    }

    /// One launch for the whole batch (no graph): the kernel runs the `count` squarings itself.
    unsafe fn queue_squarings(
        &self,
        dev: &Device,
        _graphs: &mut Graphs,
        x: Res,
        shift: &CudaSlice<u32>,
        ll: bool,
        count: u64,
    ) -> Result<(), EngineError> {
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe { self.squarings(dev, x, shift, ll, count) }
    }
}
