//! The four-step pipeline's launches ([`FsPipeline`], over an arithmetic [`FourStep`]: FP64's,
//! Goldilocks'): its work vectors and the kernels of a squaring or product
//! (kernels/common/pipeline.cuh over the arithmetic's header), on the plan set up by setup.rs;
//! on the same engine as the other pipelines (same device, launches, graphs and residue buffers;
//! a residue is its digits plus one pending carry per segment, an i128 of two words as
//! M61·M31's).
//!
//! A squaring (kernel names FP64's): fp_fwd (fix-up, weights, column DIF stages, twiddles; a
//! tile of SEG columns a block, one prime a block) → fp_rows (row DIF stages, pointwise square,
//! row DIT stages; a row a block; the shift count doubled) → fp_inv (inverse twiddles, column DIT
//! stages, unweight, CRT, carry walk; every prime a block). At the lengths where it is faster
//! ([`FUSED_LOG2`]), a batch of squarings takes two launches and two global round trips of the
//! residue a squaring between its first fp_fwd and its last fp_inv: fp_rows and fp_carry
//! (fp_inv's steps and the next fp_fwd's in one kernel, carries passed between its blocks).
//! Nothing is copied to the host.

use super::setup::{FourStep, LayoutOf, Setup};
use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::graphs::Graphs;
use crate::gpu::launch::{launch_grid, time_steps, Arg, Res, Shape, Step, ADVANCE, LL};
use crate::gpu::module::{cuda_err, function, Device};
use crate::transform::fp64::shape;
use crate::transform::plan::Plan;
use cudarc::driver::{sys, CudaFunction, CudaModule, CudaSlice};
use std::sync::Arc;

/// fp_rows's pointwise step multiplies by y's row (kernels/common/pipeline.cuh FS_PRODUCT).
const PRODUCT: u32 = 1;

/// Lengths (log2) whose batches of squarings pass through fp_carry, measured on an H100
/// (bench/RESULTS.md, 2026-11-28): 2^20 96.1 µs an iteration against 100.1 for fp_inv and
/// fp_fwd apart, 2^22 350.7 against 364.5; at 2^15 … 2^19 fp_carry was 2–9% slower (its grid
/// of C/SEG + 1 blocks, both primes each, fills the GPU in fuller waves only here). 2^21 with
/// its blocks of 512 threads ([`shape::WIDE_TILE_LOG2`]): on an H200 148.4 µs against 152.9
/// apart (2026-11-29). Goldilocks takes the same until it is measured.
/// MERSENNE_CERT_FP64_FUSED (0 or 1) overrides it for either arithmetic, for measuring.
const FUSED_LOG2: [u32; 3] = [20, 21, 22];

/// Whether `plan`'s batches of squarings take fp_carry (FUSED_LOG2 or its override).
fn fused(plan: &Plan) -> bool {
    match std::env::var("MERSENNE_CERT_FP64_FUSED").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => FUSED_LOG2.contains(&plan.log2()),
    }
}

/// The `#define` lines the unit is compiled with for `plan`: its shape
/// ([`shape::shape_defines`]), the threads its blocks are launched with (`threads`) and
/// fp_rows's launch bounds: where a row of C values leaves shared memory for four blocks an SM
/// (C ≤ 2^12), four blocks of 256 threads (64 registers, no spill): on an H100 at 2^21 fp_rows
/// ran 58.5 µs against 59.5 at 80 registers (three blocks), the loop 188.1 against 192.7 µs; at
/// 2^19 no change (bench/RESULTS.md, 2026-11-28). The column kernels'
/// bounds 512, 2 where they take more than [`shape::MOST_THREADS`] ([`shape::WIDE_TILE_LOG2`]).
fn preamble(plan: &Plan, threads: BlockThreads) -> String {
    let shape = shape::shape_defines(plan);
    let mut lines: String =
        shape.iter().chain(&threads.defines).map(|(name, v)| format!("#define {name} {v}\n")).collect();
    let [_, (_, log_c), _, _] = shape;
    if log_c <= 12 {
        lines.push_str("#define FP_ROW_BOUNDS 256, 4\n");
    }
    if threads.tile() > shape::MOST_THREADS {
        lines.push_str("#define FP_FWD_BOUNDS 512, 2\n#define FP_INV_BOUNDS 512, 2\n");
    }
    lines
}

/// The most threads a block takes: [`shape::MOST_THREADS`], or MERSENNE_CERT_FP64_THREADS
/// (32 ..= that), for measuring.
fn most_threads() -> u32 {
    std::env::var("MERSENNE_CERT_FP64_THREADS")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(shape::MOST_THREADS, |t| t.clamp(32, shape::MOST_THREADS))
}

/// The threads of a plan's blocks ([`shape::block_threads`]), fixed once: the unit is compiled
/// with them as constants ([`preamble`]) and every launch takes them.
#[derive(Clone, Copy)]
struct BlockThreads {
    /// FP_TILE_THREADS (a column kernel's block) and FP_ROW_THREADS (an fp_rows block).
    defines: [(&'static str, u32); 2],
}

impl BlockThreads {
    fn of(plan: &Plan) -> BlockThreads {
        BlockThreads { defines: shape::block_threads(plan, most_threads()) }
    }
    fn tile(self) -> u32 {
        self.defines[0].1
    }
    fn row(self) -> u32 {
        self.defines[1].1
    }
}

/// A four-step plan on the device and the launches of its squarings and products.
pub(crate) struct FsPipeline<A: FourStep> {
    plan: Plan,
    module: Arc<CudaModule>,
    fwd: CudaFunction,
    rows: CudaFunction,
    inv: CudaFunction,
    carry: CudaFunction,
    /// Whether batches of squarings take fp_carry ([`fused`]).
    fused: bool,
    /// The threads the unit was compiled for and its blocks are launched with.
    threads: BlockThreads,
    s: Setup<LayoutOf<A>>,
    /// fp_carry's ticket counter and the tiles' ready flags (kernels/common/pipeline.cuh), zero
    /// between launches.
    sync: CudaSlice<u32>,
    /// Work vectors of every prime (NP·n values each): the value transformed, and a product's
    /// other factor.
    work: [CudaSlice<A::Value>; 2],
}

/// The FP64 arithmetic's pipeline.
pub(crate) type FpPipeline = FsPipeline<super::fp64::Fp64>;

/// What a launch sequence returns.
type Launched = Result<(), EngineError>;

/// Shared memory of `lines` lines of `words` values each: two pad words after every 16 values and
/// one more after every 128, and lines 2 mod 8 values apart (FS_PAD and fs_stride in
/// kernels/common/four_step.cuh).
fn lines_bytes(lines: u32, words: u32) -> u32 {
    let padded = words + 2 * (words >> 4) + (words >> 7);
    lines * (padded + (2u32.wrapping_sub(padded) & 7)) * 8
}

impl<A: FourStep> FsPipeline<A> {
    pub fn new(dev: &Device, plan: Plan) -> Result<FsPipeline<A>, EngineError> {
        let threads = BlockThreads::of(&plan);
        let module = dev.module_with(A::UNIT, &preamble(&plan, threads))?;
        let s = A::setup(dev, &plan)?;
        let f = |name| function(&module, name);
        let [fwd, rows, inv, carry] = A::KERNELS;
        let (fwd, rows, inv, carry) = (f(fwd)?, f(rows)?, f(inv)?, f(carry)?);
        let np = A::PRIMES as usize;
        let pipe = |_: ()| dev.stream.alloc_zeros::<A::Value>(np * plan.n()).map_err(cuda_err("alloc"));
        let work = [pipe(())?, pipe(())?];
        let tiles = (1usize << s.layout.log_c) / s.layout.seg_len as usize;
        let sync = dev.stream.alloc_zeros::<u32>(1 + tiles).map_err(cuda_err("alloc"))?;
        let fused = fused(&plan);
        let me = FsPipeline { plan, module, fwd, rows, inv, carry, fused, threads, s, sync, work };
        // Opt in to the shared memory each kernel takes beyond the default 48 KiB.
        let most = dev
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(cuda_err("shared memory limit"))?;
        let kernels = [
            (&me.fwd, me.tile_bytes(1)),
            (&me.rows, me.row_bytes(2)),
            (&me.inv, me.tile_bytes(A::PRIMES)),
            (&me.carry, me.tile_bytes(A::PRIMES)),
        ];
        for (f, bytes) in kernels {
            if bytes as i64 > most as i64 {
                let why =
                    format!("{} n={} needs {bytes} bytes of shared memory, the GPU has {most}", A::NAME, me.plan.n());
                return Err(EngineError::NoPlan { p: me.plan.exponent(), why });
            }
            let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            f.set_attribute(attr, bytes as i32).map_err(cuda_err("shared memory opt-in"))?;
        }
        Ok(me)
    }

    /// Work vector k (0: the value transformed, 1: a product's other factor), every prime's
    /// n values one after the other.
    pub(crate) fn work(&self, k: usize) -> &CudaSlice<A::Value> {
        &self.work[k]
    }

    fn rows_count(&self) -> u32 {
        1 << self.s.layout.log_r
    }

    fn cols(&self) -> usize {
        1 << self.s.layout.log_c
    }

    /// Shared memory of `tiles` tiles of the column kernels: SEG columns of R values each.
    fn tile_bytes(&self, tiles: u32) -> u32 {
        lines_bytes(tiles * self.s.layout.seg_len, self.rows_count())
    }

    /// Shared memory of `rows` rows.
    fn row_bytes(&self, rows: u32) -> u32 {
        lines_bytes(rows, self.cols() as u32)
    }

    /// The column kernels' grid: a block per tile, [`BlockThreads::tile`] threads (each a row
    /// at a time).
    fn tiles(&self, shared_bytes: u32) -> Shape {
        let threads = self.threads.tile();
        Shape { blocks: (self.cols() as u32) / self.s.layout.seg_len, threads, shared_bytes }
    }

    /// x (digits and pending carries) fixed up, weighted, its columns transformed and twiddled
    /// into work vector `z`.
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan (see [`Pipeline`]).
    pub(crate) unsafe fn fwd(&self, dev: &Device, x: Res, z: &CudaSlice<A::Value>) -> Launched {
        let args: [&dyn Arg; 4] = [x.x, x.carries, z, &self.s.layout];
        // SAFETY: fp_fwd's parameters in order; the buffers are the caller's.
        unsafe { launch_grid(dev, &self.fwd, self.tiles(self.tile_bytes(1)), A::PRIMES, &args) }
    }

    /// Work vector z's rows: forward, squared (y = None) or times y's rows (y's columns
    /// transformed), inverse; ADVANCE in `flags` doubles the shift count.
    ///
    /// # Safety
    /// As [`FsPipeline::fwd`].
    pub(crate) unsafe fn rows(
        &self,
        dev: &Device,
        z: &CudaSlice<A::Value>,
        y: Option<&CudaSlice<A::Value>>,
        shift: &CudaSlice<u32>,
        flags: u32,
    ) -> Launched {
        let (flags, bytes) =
            if y.is_some() { (flags | PRODUCT, self.row_bytes(2)) } else { (flags, self.row_bytes(1)) };
        let args: [&dyn Arg; 5] = [z, y.unwrap_or(z), shift, &self.s.layout, &flags];
        let shape = Shape { blocks: self.rows_count(), threads: self.threads.row(), shared_bytes: bytes };
        // SAFETY: fp_rows's parameters in order; the buffers are the caller's.
        unsafe { launch_grid(dev, &self.rows, shape, A::PRIMES, &args) }
    }

    /// Work vector z transformed back, unweighted, recombined and carried into the digits and
    /// pending carries of x; LL in `flags` subtracts 2·2^s.
    ///
    /// # Safety
    /// As [`FsPipeline::fwd`].
    pub(crate) unsafe fn inv(
        &self,
        dev: &Device,
        z: &CudaSlice<A::Value>,
        x: Res,
        shift: &CudaSlice<u32>,
        flags: u32,
    ) -> Launched {
        let args: [&dyn Arg; 6] = [z, x.x, x.carries, shift, &self.s.layout, &flags];
        // SAFETY: fp_inv's parameters in order; the buffers are the caller's.
        unsafe { launch_grid(dev, &self.inv, self.tiles(self.tile_bytes(A::PRIMES)), 1, &args) }
    }

    /// fp_inv's steps on work vector z (digits kept on chip, x's pending carries written) and
    /// the next squaring's fp_fwd steps back into z; LL in `flags` subtracts 2·2^s.
    ///
    /// # Safety
    /// As [`FsPipeline::fwd`].
    unsafe fn carry(
        &self,
        dev: &Device,
        z: &CudaSlice<A::Value>,
        x: Res,
        shift: &CudaSlice<u32>,
        flags: u32,
    ) -> Launched {
        let args: [&dyn Arg; 6] = [z, x.carries, shift, &self.sync, &self.s.layout, &flags];
        let mut shape = self.tiles(self.tile_bytes(A::PRIMES));
        // Tile 0 twice: its first block publishes its carries, the last writes it.
        shape.blocks += 1;
        // SAFETY: fp_carry's parameters in order; the buffers are the caller's.
        unsafe { launch_grid(dev, &self.carry, shape, 1, &args) }
    }

    /// Queue `count` squarings of x, in batches of up to `batch`: fp_fwd, then fp_rows and
    /// fp_carry for all but the last of the batch, then fp_rows and fp_inv.
    ///
    /// # Safety
    /// As [`FsPipeline::fwd`].
    pub(crate) unsafe fn squarings(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        ll: bool,
        count: u64,
        batch: u64,
    ) -> Launched {
        let z = &self.work[0];
        let ll = if ll { LL } else { 0 };
        let batch = batch.max(1);
        let mut left = count;
        while left > 0 {
            let m = batch.min(left);
            // SAFETY: the buffers are the caller's, under this function's contract.
            unsafe {
                self.fwd(dev, x, z)?;
                for _ in 1..m {
                    self.rows(dev, z, None, shift, ADVANCE)?;
                    self.carry(dev, z, x, shift, ll)?;
                }
                self.rows(dev, z, None, shift, ADVANCE)?;
                self.inv(dev, z, x, shift, ll)?;
            }
            left -= m;
        }
        Ok(())
    }
}

impl<A: FourStep> Pipeline for FsPipeline<A> {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }
    fn carry_width(&self) -> usize {
        2
    }
    fn carry_slot(&self, seg: usize) -> usize {
        shape::carry_slot(&self.plan, seg)
    }
    fn transform_name(&self) -> String {
        format!("{} n={}", A::NAME, self.plan.length())
    }

    /// One squaring of x, all on the device, in work vector 0.
    unsafe fn square(&self, dev: &Device, x: Res, shift: &CudaSlice<u32>, ll: bool) -> Launched {
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe { self.squarings(dev, x, shift, ll, 1, 1) }
    }

    /// `count` squarings as replays of `graphs`' batches: [`FsPipeline::squarings`] in one batch
    /// (fp_carry between its squarings) where fp_carry is faster ([`fused`]), else each whole.
    unsafe fn queue_squarings(
        &self,
        dev: &Device,
        graphs: &mut Graphs,
        x: Res,
        shift: &CudaSlice<u32>,
        ll: bool,
        count: u64,
    ) -> Launched {
        // SAFETY: the buffers are the caller's, under the trait's contract.
        let batch = |m| if self.fused { m } else { 1 };
        graphs.squarings(dev, count, |m| unsafe { self.squarings(dev, x, shift, ll, m, batch(m)) })
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
            self.fwd(dev, x, y)?;
            self.fwd(dev, acc, z)?;
            self.rows(dev, z, Some(y), shift, 0)?;
            self.inv(dev, z, acc, shift, 0)
        }
    }

    /// Microseconds per launch of each kernel, each timed alone over `reps` launches replayed
    /// from a CUDA graph (the data is whatever x holds): fp_rows and fp_carry are a squaring
    /// in a batch, fp_fwd and fp_inv its ends.
    unsafe fn profile(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        reps: usize,
    ) -> Result<Vec<(String, f64)>, EngineError> {
        let z = &self.work[0];
        let (r, c, t) = (self.s.layout.log_r, self.s.layout.log_c, self.s.layout.seg_len);
        let [fwd, rows, inv, carry] = A::KERNELS;
        // SAFETY (every step): the buffers are the caller's, under this function's contract.
        let steps: Vec<Step> = vec![
            (
                format!("{rows}: 2^{c}-point DIF, square, DIT (a row a block)"),
                Box::new(move || unsafe { self.rows(dev, z, None, shift, 0) }),
            ),
            (
                format!("{carry}: {inv} and {fwd} ({t} columns a block)"),
                Box::new(move || unsafe { self.carry(dev, z, x, shift, 0) }),
            ),
            (
                format!("{fwd} (a batch's first): fix-up, weights, 2^{r}-point DIF, twiddles"),
                Box::new(move || unsafe { self.fwd(dev, x, z) }),
            ),
            (
                format!("{inv} (a batch's last): twiddles, 2^{r}-point DIT, unweight, CRT, carry"),
                Box::new(move || unsafe { self.inv(dev, z, x, shift, 0) }),
            ),
        ];
        time_steps(dev, reps, &steps)
    }
}

#[cfg(test)]
mod tests {
    use super::lines_bytes;

    /// The layout's sizes: a line of 512 values takes 512 + 64 + 4 pad words and 6 to the next
    /// line (2 mod 8), and the largest blocks at 2^22 (both FP64 primes' tiles of 2^9 rows × 8
    /// columns; a row of 2^13 values) leave room for three an SM (228 KiB on Hopper, 1 KiB of
    /// it reserved a block), the occupancy the kernels' launch bounds assume.
    #[test]
    fn lines_are_padded_and_three_blocks_fit_an_sm() {
        assert_eq!(lines_bytes(1, 512), 586 * 8);
        assert_eq!(lines_bytes(1, 16), 18 * 8);
        assert_eq!(lines_bytes(2, 8), 2 * 10 * 8);
        for block in [lines_bytes(2 * 8, 1 << 9), lines_bytes(1, 1 << 13)] {
            assert!(3 * (block + 1024) <= 228 * 1024, "{block} bytes");
        }
    }
}
