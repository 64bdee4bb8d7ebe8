//! The FP64 arithmetic's launches ([`FpPipeline`]): its work vectors and the three kernels of a
//! squaring or product (kernels/fp64/pipeline.cuh), on the plan set up by setup.rs; the third
//! arithmetic of the same engine (same device, launches, graphs and residue buffers; a residue
//! is its digits plus one pending carry per segment, an i128 of two words as M61·M31's).
//!
//! A squaring: fp_fwd (fix-up, weights, column DIF stages, twiddles; a tile of SEG columns a
//! block, one prime a block) → fp_rows (row DIF stages, pointwise square, row DIT stages; a row a
//! block) → fp_inv (inverse twiddles, column DIT stages, unweight, CRT, carry walk; both primes a
//! block). Three global round trips of the residue; nothing is copied to the host.

use super::setup::Setup;
use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::launch::{launch_grid, time_steps, Arg, Res, Shape, Step, ADVANCE, LL};
use crate::gpu::module::{cuda_err, function, Device};
use crate::transform::plan::Plan;
use cudarc::driver::{sys, CudaFunction, CudaModule, CudaSlice};
use std::sync::Arc;

/// The unit's name in kernels/manifest.txt.
pub(crate) const UNIT: &str = "fp64";
/// fp_rows's pointwise step multiplies by y's row (kernels/fp64/pipeline.cuh FP_PRODUCT).
const PRODUCT: u32 = 1;
/// Most threads of an fp_rows block (each loops over its share of a row's butterflies), and
/// of fp_fwd and fp_inv blocks (each loops over rows); MERSENNE_CERT_FP64_THREADS (32 ..= 256,
/// the kernels' __launch_bounds__) overrides it, for measuring.
const THREADS: u32 = 256;

/// THREADS, or its override.
fn threads() -> u32 {
    std::env::var("MERSENNE_CERT_FP64_THREADS")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(THREADS, |t| t.clamp(32, THREADS))
}

/// The FP64 plan on the device and the launches of its squarings and products.
pub(crate) struct FpPipeline {
    plan: Plan,
    module: Arc<CudaModule>,
    fwd: CudaFunction,
    rows: CudaFunction,
    inv: CudaFunction,
    s: Setup,
    /// Work vectors of both primes (2n values each): the value transformed, and a product's
    /// other factor.
    work: [CudaSlice<f64>; 2],
}

/// What a launch sequence returns.
type Launched = Result<(), EngineError>;

impl FpPipeline {
    pub fn new(dev: &Device, plan: Plan) -> Result<FpPipeline, EngineError> {
        let module = dev.module(UNIT)?;
        let s = Setup::new(dev, &plan)?;
        let (fwd, rows, inv) =
            (function(&module, "fp_fwd")?, function(&module, "fp_rows")?, function(&module, "fp_inv")?);
        let pipe = |_: ()| dev.stream.alloc_zeros::<f64>(2 * plan.n()).map_err(cuda_err("alloc"));
        let work = [pipe(())?, pipe(())?];
        let me = FpPipeline { plan, module, fwd, rows, inv, s, work };
        // Opt in to the shared memory each kernel takes beyond the default 48 KiB.
        let most = dev
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(cuda_err("shared memory limit"))?;
        for (f, bytes) in [(&me.fwd, me.tile_bytes(1)), (&me.rows, me.row_bytes(2)), (&me.inv, me.tile_bytes(2))] {
            if bytes as i64 > most as i64 {
                let why = format!("fp64 n={} needs {bytes} bytes of shared memory, the GPU has {most}", me.plan.n());
                return Err(EngineError::NoPlan { p: me.plan.exponent(), why });
            }
            let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            f.set_attribute(attr, bytes as i32).map_err(cuda_err("shared memory opt-in"))?;
        }
        Ok(me)
    }

    /// Work vector k (0: the value transformed, 1: a product's other factor), both primes'
    /// n values one after the other.
    pub(crate) fn work(&self, k: usize) -> &CudaSlice<f64> {
        &self.work[k]
    }

    fn rows_count(&self) -> u32 {
        1 << self.s.layout.log_r
    }

    fn cols(&self) -> usize {
        1 << self.s.layout.log_c
    }

    /// Shared memory of `lines` lines of `words` values each: a pad word after every 8 values and
    /// two after each line (fp_stride in kernels/fp64/pipeline.cuh).
    fn lines_bytes(lines: u32, words: u32) -> u32 {
        lines * (words + words / 8 + 2) * 8
    }

    /// Shared memory of `tiles` tiles of the column kernels: SEG columns of R values each.
    fn tile_bytes(&self, tiles: u32) -> u32 {
        Self::lines_bytes(tiles * self.s.layout.seg_len, self.rows_count())
    }

    /// Shared memory of `rows` rows.
    fn row_bytes(&self, rows: u32) -> u32 {
        Self::lines_bytes(rows, self.cols() as u32)
    }

    /// The column kernels' grid: a block per tile, up to THREADS threads (each a row at a time).
    fn tiles(&self, shared_bytes: u32) -> Shape {
        let threads = self.rows_count().min(threads());
        Shape { blocks: (self.cols() as u32) / self.s.layout.seg_len, threads, shared_bytes }
    }

    /// x (digits and pending carries) fixed up, weighted, its columns transformed and twiddled
    /// into work vector `z`; ADVANCE in `flags` doubles the shift count.
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan (see [`Pipeline`]).
    pub(crate) unsafe fn fwd(
        &self,
        dev: &Device,
        x: Res,
        z: &CudaSlice<f64>,
        shift: &CudaSlice<u32>,
        flags: u32,
    ) -> Launched {
        let args: [&dyn Arg; 6] = [x.x, x.carries, z, shift, &self.s.layout, &flags];
        // SAFETY: fp_fwd's parameters in order; the buffers are the caller's.
        unsafe { launch_grid(dev, &self.fwd, self.tiles(self.tile_bytes(1)), 2, &args) }
    }

    /// Work vector z's rows: forward, squared (y = None) or times y's rows (y's columns
    /// transformed), inverse.
    ///
    /// # Safety
    /// As [`FpPipeline::fwd`].
    pub(crate) unsafe fn rows(&self, dev: &Device, z: &CudaSlice<f64>, y: Option<&CudaSlice<f64>>) -> Launched {
        let (flags, bytes) = if y.is_some() { (PRODUCT, self.row_bytes(2)) } else { (0, self.row_bytes(1)) };
        let args: [&dyn Arg; 4] = [z, y.unwrap_or(z), &self.s.layout, &flags];
        let threads = (self.cols() as u32 / 8).clamp(1, threads());
        let shape = Shape { blocks: self.rows_count(), threads, shared_bytes: bytes };
        // SAFETY: fp_rows's parameters in order; the buffers are the caller's.
        unsafe { launch_grid(dev, &self.rows, shape, 2, &args) }
    }

    /// Work vector z transformed back, unweighted, recombined and carried into the digits and
    /// pending carries of x; LL in `flags` subtracts 2·2^s.
    ///
    /// # Safety
    /// As [`FpPipeline::fwd`].
    pub(crate) unsafe fn inv(
        &self,
        dev: &Device,
        z: &CudaSlice<f64>,
        x: Res,
        shift: &CudaSlice<u32>,
        flags: u32,
    ) -> Launched {
        let args: [&dyn Arg; 6] = [z, x.x, x.carries, shift, &self.s.layout, &flags];
        // SAFETY: fp_inv's parameters in order; the buffers are the caller's.
        unsafe { launch_grid(dev, &self.inv, self.tiles(self.tile_bytes(2)), 1, &args) }
    }
}

impl Pipeline for FpPipeline {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }
    fn carry_width(&self) -> usize {
        2
    }
    fn transform_name(&self) -> String {
        format!("fp64 n={}", self.plan.length())
    }

    /// One squaring of x, all on the device, in work vector 0.
    unsafe fn square(&self, dev: &Device, x: Res, shift: &CudaSlice<u32>, ll: bool) -> Launched {
        let z = &self.work[0];
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe {
            self.fwd(dev, x, z, shift, ADVANCE)?;
            self.rows(dev, z, None)?;
            self.inv(dev, z, x, shift, if ll { LL } else { 0 })
        }
    }

    /// acc := acc·x (x is left as it was); `tmp` is not used: the transforms stay in the work
    /// vectors.
    unsafe fn multiply(
        &self,
        dev: &Device,
        acc: Res,
        x: Res,
        _tmp: &CudaSlice<u64>,
        shift: &CudaSlice<u32>,
    ) -> Launched {
        let (z, y) = (&self.work[0], &self.work[1]);
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe {
            self.fwd(dev, x, y, shift, 0)?;
            self.fwd(dev, acc, z, shift, 0)?;
            self.rows(dev, z, Some(y))?;
            self.inv(dev, z, acc, shift, 0)
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
        let z = &self.work[0];
        let (r, c, t) = (self.s.layout.log_r, self.s.layout.log_c, self.s.layout.seg_len);
        // SAFETY (every step): the buffers are the caller's, under this function's contract.
        let steps: Vec<Step> = vec![
            (
                format!("fp_fwd: fix-up, weights, 2^{r}-point DIF, twiddles ({t} columns a block)"),
                Box::new(move || unsafe { self.fwd(dev, x, z, shift, 0) }),
            ),
            (
                format!("fp_rows: 2^{c}-point DIF, square, DIT (a row a block)"),
                Box::new(move || unsafe { self.rows(dev, z, None) }),
            ),
            (
                format!("fp_inv: twiddles, 2^{r}-point DIT, unweight, CRT, carry"),
                Box::new(move || unsafe { self.inv(dev, z, x, shift, 0) }),
            ),
        ];
        time_steps(dev, reps, &steps)
    }
}
