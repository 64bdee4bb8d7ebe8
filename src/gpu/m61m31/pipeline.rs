//! The M61·M31 arithmetic's launches ([`MmPipeline`]): its work vectors and the launch sequence
//! of one squaring or multiplication with kernels/m61m31/pipeline.cuh, on the plan set up by
//! setup.rs; the second arithmetic of the same engine as [`crate::gpu::goldilocks::Passes`]
//! (same device, launches, graphs and residue buffers; a residue is its digits plus one pending
//! carry per segment, here an i128 of two words).
//!
//! A squaring: weigh (fix-up, weights, pack) → radix-3 step (3·2^k) → global passes of up to
//! MM_PASS_MAX_STAGES radix-2 stages → the last BLOCK_LOG2 stages in shared memory → pair step →
//! the same backwards → unweight, CRT and the carry walk. At 2^k lengths the shared-memory stages,
//! the pair step and the inverse shared-memory stages are one launch (mm_core: a block holds two
//! mirrored chunks, whose values pair with each other). Both fields run in the same launches.
//! Nothing is copied to the host.

use super::kernels::MmKernels;
use super::setup::{carry_shared_bytes, MmPass, Setup, THREADS};
use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::launch::{launch_grid, time_steps, Arg, Res, Shape, Step, ADVANCE, LL};
use crate::gpu::module::{cuda_err, Device};
use crate::transform::plan::Plan;
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice};
use std::sync::Arc;

/// Both fields' complex vectors of N values: GF(M61²) as (u64, u64) pairs, GF(M31²) as
/// (u32, u32).
#[derive(Clone, Copy)]
pub(crate) struct Zs<'a> {
    pub z61: &'a CudaSlice<u64>,
    pub z31: &'a CudaSlice<u32>,
}

/// The M61·M31 plan on the device and the launches of its squarings and products.
pub(crate) struct MmPipeline {
    pub plan: Plan,
    k: MmKernels,
    s: Setup,
    /// Work vectors: the value being squared (or multiplied), and a product's other factor.
    work: [(CudaSlice<u64>, CudaSlice<u32>); 2],
}

/// A grid of `items` threads in blocks of up to THREADS.
fn elementwise(items: u64) -> Shape {
    Shape { blocks: items.div_ceil(THREADS) as u32, threads: THREADS.min(items).max(1) as u32, shared_bytes: 0 }
}

impl MmPipeline {
    pub fn new(dev: &Device, plan: Plan) -> Result<MmPipeline, EngineError> {
        let k = MmKernels::load(dev)?;
        let s = Setup::new(dev, &plan)?;
        let big_n = plan.n() / 2;
        let work = || -> Result<(CudaSlice<u64>, CudaSlice<u32>), EngineError> {
            let z61 = dev.stream.alloc_zeros::<u64>(2 * big_n).map_err(cuda_err("alloc"))?;
            Ok((z61, dev.stream.alloc_zeros::<u32>(2 * big_n).map_err(cuda_err("alloc"))?))
        };
        Ok(MmPipeline { k, s, work: [work()?, work()?], plan })
    }

    /// Pending carries per residue.
    pub fn segments(&self) -> usize {
        self.plan.n() / self.plan.seg_len()
    }

    /// log2 of the chunk the shared-memory kernel transforms.
    pub fn log_c(&self) -> u32 {
        self.s.log_c
    }

    /// Whether the shared-memory stages and the pair step run as one launch ([`MmPipeline::core`]).
    pub fn fused(&self) -> bool {
        self.s.fused
    }

    /// Complex values per field.
    fn big_n(&self) -> u64 {
        self.plan.n() as u64 / 2
    }

    /// Work vector k (0: the value transformed, 1: a product's other factor).
    fn zs(&self, k: usize) -> Zs<'_> {
        let (z61, z31) = &self.work[k];
        Zs { z61, z31 }
    }

    /// # Safety
    /// `args` must match the kernel's parameters (kernels/m61m31/pipeline.cuh), every address among them a
    /// live buffer of this device sized for this plan.
    unsafe fn go(dev: &Device, f: &CudaFunction, shape: Shape, both: bool, args: &[&dyn Arg]) -> Launched {
        // SAFETY: the caller's, under this function's contract.
        unsafe { launch_grid(dev, f, shape, if both { 2 } else { 1 }, args) }
    }

    /// Digits x (with their pending carries) weighted and packed into z; ADVANCE in `flags`
    /// doubles the shift count.
    ///
    /// # Safety
    /// Every buffer passed (in a [`Res`], [`Zs`] or alone) must be a buffer of `dev` sized for
    /// this plan: a residue of n words, its carries, the shift word, complex vectors of N values.
    pub unsafe fn weigh(&self, dev: &Device, x: Res, z: Zs, shift: &CudaSlice<u32>, flags: u32) -> Launched {
        let args: [&dyn Arg; 7] = [x.x, x.carries, z.z61, z.z31, shift, &self.s.layout, &flags];
        // SAFETY: mm_weigh's parameters in order; the buffers are the caller's.
        unsafe { Self::go(dev, &self.k.weigh, elementwise(self.big_n()), false, &args) }
    }

    /// The radix-3 step (forward or inverse) of a 3·2^k plan; nothing at 2^k.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn radix3(&self, dev: &Device, z: Zs, inverse: bool) -> Launched {
        if self.s.layout.odd == 1 {
            return Ok(());
        }
        let inv = u32::from(inverse);
        let args: [&dyn Arg; 4] = [z.z61, z.z31, &self.s.layout, &inv];
        // SAFETY: mm_radix3's parameters in order; the buffers are the caller's.
        unsafe { Self::go(dev, &self.k.radix3, elementwise(u64::from(self.s.layout.m)), true, &args) }
    }

    /// The global passes: forward from the top, or inverse from the bottom.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn global(&self, dev: &Device, z: Zs, inverse: bool) -> Launched {
        let order: Vec<&MmPass> =
            if inverse { self.s.passes.iter().rev().collect() } else { self.s.passes.iter().collect() };
        for pass in order {
            // SAFETY: the buffers are the caller's, under this function's contract.
            unsafe { self.pass(dev, z, pass, inverse) }?;
        }
        Ok(())
    }

    /// One global pass.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    unsafe fn pass(&self, dev: &Device, z: Zs, pass: &MmPass, inverse: bool) -> Launched {
        let inv = u32::from(inverse);
        let args: [&dyn Arg; 5] = [z.z61, z.z31, &self.s.layout, &pass.s_lo, &inv];
        let f = &self.k.passes[pass.stages as usize - 1];
        // SAFETY: mm_pass_r<R>'s parameters in order; the addresses are the caller's.
        unsafe { Self::go(dev, f, elementwise(self.big_n() >> pass.stages), true, &args) }
    }

    /// The stages of half-size below 2^log_c, on chunks in shared memory.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn block(&self, dev: &Device, z: Zs, inverse: bool) -> Launched {
        if self.s.log_c == 0 {
            return Ok(());
        }
        let (inv, log_c) = (u32::from(inverse), self.s.log_c);
        let shape = Shape {
            blocks: (self.big_n() >> log_c) as u32,
            threads: 1 << log_c.saturating_sub(2),
            shared_bytes: 16 << log_c,
        };
        let args: [&dyn Arg; 5] = [z.z61, z.z31, &self.s.layout, &log_c, &inv];
        // SAFETY: mm_block's parameters in order; the buffers are the caller's.
        unsafe { Self::go(dev, &self.k.block, shape, true, &args) }
    }

    /// z := the pair step of z and y (y = z: a squaring).
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn pair(&self, dev: &Device, z: Zs, y: Zs) -> Launched {
        let args: [&dyn Arg; 5] = [z.z61, z.z31, y.z61, y.z31, &self.s.layout];
        // Threads: half of N at 2^k (every thread a pair), N at 3·2^k (kernels/m61m31/pipeline.cuh).
        let threads = if self.s.layout.odd == 1 { self.big_n().div_ceil(2) } else { self.big_n() };
        // SAFETY: mm_pair's parameters in order; the buffers are the caller's.
        unsafe { Self::go(dev, &self.k.pair, elementwise(threads), true, &args) }
    }

    /// z := forward shared-memory stages, pair step with y (y = z: a squaring; else y fully
    /// transformed) and inverse shared-memory stages, in one launch (fused plans only).
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn core(&self, dev: &Device, z: Zs, y: Zs) -> Launched {
        let log_c = self.s.log_c;
        let shape = Shape {
            blocks: (self.big_n() >> (log_c + 1)) as u32,
            threads: 2 << log_c.saturating_sub(2),
            shared_bytes: 32 << log_c,
        };
        let args: [&dyn Arg; 6] = [z.z61, z.z31, y.z61, y.z31, &self.s.layout, &log_c];
        // SAFETY: mm_core's parameters in order; the buffers are the caller's.
        unsafe { Self::go(dev, &self.k.core, shape, true, &args) }
    }

    /// z unweighted, recombined and carried into the digits and pending carries of x; LL in
    /// `flags` subtracts 2·2^s.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn carry(&self, dev: &Device, z: Zs, x: Res, shift: &CudaSlice<u32>, flags: u32) -> Launched {
        let digits = self.s.carry_digits;
        let args: [&dyn Arg; 8] = [z.z61, z.z31, x.x, x.carries, shift, &self.s.layout, &flags, &digits];
        let shape = Shape {
            blocks: (self.plan.n() as u32) / digits,
            threads: digits.min(THREADS as u32),
            shared_bytes: carry_shared_bytes(digits as usize, self.plan.seg_len()),
        };
        // SAFETY: mm_carry's parameters in order; the buffers are the caller's.
        unsafe { Self::go(dev, &self.k.carry, shape, false, &args) }
    }

    /// Step 1 and the global forward passes: x weighed into z and transformed down to the chunks.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn head(&self, dev: &Device, x: Res, z: Zs, shift: &CudaSlice<u32>, flags: u32) -> Launched {
        // SAFETY: the buffers are the caller's, under this function's contract.
        unsafe {
            self.weigh(dev, x, z, shift, flags)?;
            self.radix3(dev, z, false)?;
            self.global(dev, z, false)
        }
    }

    /// Steps 1–2: x weighed into z and transformed.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    unsafe fn forward(&self, dev: &Device, x: Res, z: Zs, shift: &CudaSlice<u32>, flags: u32) -> Launched {
        // SAFETY: the buffers are the caller's, under this function's contract.
        unsafe {
            self.head(dev, x, z, shift, flags)?;
            self.block(dev, z, false)
        }
    }

    /// From the chunks back: the shared-memory stages, the pair step with y (y = z: a squaring;
    /// else y fully transformed) and the inverse shared-memory stages, fused or in three launches.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    unsafe fn middle(&self, dev: &Device, z: Zs, y: Zs) -> Launched {
        // SAFETY: the buffers are the caller's, under this function's contract.
        unsafe {
            if self.s.fused {
                return self.core(dev, z, y);
            }
            self.block(dev, z, false)?;
            self.pair(dev, z, y)?;
            self.block(dev, z, true)
        }
    }

    /// The global inverse passes and steps 5–6: z transformed back and carried into x.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    unsafe fn tail(&self, dev: &Device, z: Zs, x: Res, shift: &CudaSlice<u32>, flags: u32) -> Launched {
        // SAFETY: the buffers are the caller's, under this function's contract.
        unsafe {
            self.global(dev, z, true)?;
            self.radix3(dev, z, true)?;
            self.carry(dev, z, x, shift, flags)
        }
    }
}

impl Pipeline for MmPipeline {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn module(&self) -> &Arc<CudaModule> {
        &self.k.module
    }
    fn carry_width(&self) -> usize {
        2
    }
    fn transform_name(&self) -> String {
        format!("m61m31 n={}", self.plan.length())
    }

    /// One squaring of x, all on the device, in the work vector 0.
    unsafe fn square(&self, dev: &Device, x: Res, shift: &CudaSlice<u32>, ll: bool) -> Launched {
        let z = self.zs(0);
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe {
            self.head(dev, x, z, shift, ADVANCE)?;
            self.middle(dev, z, z)?;
            self.tail(dev, z, x, shift, if ll { LL } else { 0 })
        }
    }

    /// acc := acc·x (x is left as it was); `tmp` is not used: the product's transforms stay in
    /// the work vectors.
    unsafe fn multiply(
        &self,
        dev: &Device,
        acc: Res,
        x: Res,
        _tmp: &CudaSlice<u64>,
        shift: &CudaSlice<u32>,
    ) -> Launched {
        let (z, y) = (self.zs(0), self.zs(1));
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe {
            self.forward(dev, x, y, shift, 0)?;
            self.head(dev, acc, z, shift, 0)?;
            self.middle(dev, z, y)?;
            self.tail(dev, z, acc, shift, 0)
        }
    }

    /// Microseconds per launch of each kernel of a squaring, each timed alone over `reps`
    /// launches replayed from a CUDA graph (the data is whatever x holds).
    unsafe fn profile(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        reps: usize,
    ) -> Result<Vec<(String, f64)>, EngineError> {
        let z = self.zs(0);
        // SAFETY (every step): the addresses are the caller's, under this function's contract.
        let mut steps: Vec<Step> = vec![(
            "weigh (fix-up, weights, pack)".into(),
            Box::new(move || unsafe { self.weigh(dev, x, z, shift, 0) }),
        )];
        if self.s.layout.odd == 3 {
            steps.push(("radix-3 forward".into(), Box::new(move || unsafe { self.radix3(dev, z, false) })));
        }
        for (k, pass) in self.s.passes.iter().enumerate() {
            let name = format!("fwd global pass {k} ({} stages, s_lo {})", pass.stages, pass.s_lo);
            steps.push((name, Box::new(move || unsafe { self.pass(dev, z, pass, false) })));
        }
        if self.s.fused {
            steps.push((
                format!("core: fwd block, pair (square), inv block (2 x 2^{} values)", self.s.log_c),
                Box::new(move || unsafe { self.core(dev, z, z) }),
            ));
        } else {
            steps.push((
                format!("fwd shared block (2^{} values)", self.s.log_c),
                Box::new(move || unsafe { self.block(dev, z, false) }),
            ));
            steps.push(("pair step (square)".into(), Box::new(move || unsafe { self.pair(dev, z, z) })));
            steps.push((
                format!("inv shared block (2^{} values)", self.s.log_c),
                Box::new(move || unsafe { self.block(dev, z, true) }),
            ));
        }
        for (k, pass) in self.s.passes.iter().enumerate().rev() {
            let name = format!("inv global pass {k} ({} stages, s_lo {})", pass.stages, pass.s_lo);
            steps.push((name, Box::new(move || unsafe { self.pass(dev, z, pass, true) })));
        }
        if self.s.layout.odd == 3 {
            steps.push(("radix-3 inverse".into(), Box::new(move || unsafe { self.radix3(dev, z, true) })));
        }
        steps.push(("unweight, CRT, carry walk".into(), Box::new(move || unsafe { self.carry(dev, z, x, shift, 0) })));
        time_steps(dev, reps, &steps)
    }
}

/// What a launch sequence returns.
type Launched = Result<(), EngineError>;
