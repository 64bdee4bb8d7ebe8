//! The plan on the device and the launch sequence of one squaring or multiplication at lengths
//! above 2^SMALL_MAX_LOG2 (smaller ones run on one block, see small.rs; both implement
//! [`crate::gpu::arith::Pipeline`]): forward
//! column passes over the outer stages (pending carries and weights fused into the first), the
//! row pass over contiguous chunks (inner forward stages, pointwise square or multiply, inner
//! inverse stages), inverse column passes (unweighting and the carry walk fused into the last).
//! The kernels are kernels/goldilocks/ntt_block.cuh's: `ntt_col_r<R>` for the column passes, `ntt_sq_r<R>` for
//! a squaring's row pass, `ntt_r<R>` for the row pass of other ops; each reads its pass's twiddle
//! table (src/transform/line.rs). A residue on the device is its
//! digits plus one pending carry per segment (kernels/goldilocks/carry.cuh). Kernels go out with
//! programmatic dependent launch where the GPU has it (sm_90), so each starts while the previous
//! one drains. Nothing is copied to the host.

use super::kernels::{GlKernels, LATE_MAX_STAGES};
use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::goldilocks::schedule::{ColumnPass, PassSchedule};
use crate::gpu::launch::{addr, by_value, copy, launch, time_steps, Arg, Res, Shape, Step, ADVANCE, LL};
use crate::gpu::module::{cuda_err, Device};
use crate::transform::goldilocks::segments::{BLOCK_WORDS_LOG2, SHARED_BLOCKS_LOG2};
use crate::transform::line::{twiddle_table, MAX_POW2_LOG2};
use crate::transform::plan::Plan;
use cudarc::driver::{CudaModule, CudaSlice};
use std::sync::Arc;

/// The plan as the kernels see it; field for field the `Layout` of kernels/goldilocks/field.cuh
/// (its tables' raw addresses, as the kernels' struct holds them: see [`crate::gpu::launch`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    tw: u64,
    itw: u64,
    w: u64,
    iw: u64,
    p: u32,
    log_n: u32,
    seg_log: u32,
    fixup_depth: u32,
}

// Plain-old-data with the C layout the kernels declare, passed by value.
by_value!(Layout);

/// What an ntt_r<R> launch does (the OP_* of kernels/goldilocks/ops.cuh).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Op {
    Forward = 0,
    Inverse = 1,
    Square = 2,
    Multiply = 3,
}

/// Flags of an ntt_r<R> launch (the FLAG_* of kernels/goldilocks/ops.cuh).
pub(crate) const WEIGH: u32 = 1;
pub(crate) const UNWEIGH: u32 = 2;
const POW2: u32 = 16;
/// Column passes take their lines' column twiddles by gl_shl (POW2) from this length on: on an
/// H200 that gained 1-4% at 2^20-2^23 and lost 14% at 2^18 (bench/RESULTS.md, 2026-11-25).
const POW2_MIN_LOG2: u32 = 20;

/// Whether a squaring's passes at length 2^log2 let the next kernel launch only as their blocks
/// exit (the _late kernels) rather than half way through them: on an H200, with dependent launch
/// at every length, that gained at 2^17 (17.7 against 19.4 µs/iter), 2^18 (20.9 against 25.8) and
/// 2^19 (36.1 against 40.0), and lost a little at 2^16 (14.8 against 14.7) and 2^20 (59.9 against
/// 58.3) (bench/RESULTS.md, 2026-11-25 13:33).
fn late_trigger(log2: u32) -> bool {
    matches!(log2, 17..=19)
}

/// Whether a pass at length 2^log2 takes its lines' column twiddles by gl_shl (POW2): column
/// passes of up to MAX_POW2_LOG2 stages whose warps lie in one column of their lines (c_log >= 5,
/// kernels/goldilocks/ntt_block.cuh), from POW2_MIN_LOG2 on.
fn pow2_columns(log2: u32, stages: u32, s_log: u32, c_log: u32) -> bool {
    s_log > 0 && stages <= MAX_POW2_LOG2 && c_log >= 5 && log2 >= POW2_MIN_LOG2
}

/// log2 of the power-of-2 DFTs on a squaring's lines in one direction, each over all n values: a
/// pass of R stages runs one of 2^R1 and one of 2^R2 values per line (R1 = ⌈R/2⌉, R2 = ⌊R/2⌋;
/// kernels/goldilocks/ntt_block.cuh).
pub(crate) fn line_dfts(plan: &Plan) -> Vec<u32> {
    let passes = plan.column_passes().into_iter().map(|c| c.stages).chain([plan.shared_log2()]);
    passes.flat_map(|r| [r.div_ceil(2), r / 2]).filter(|&q| q > 0).collect()
}

/// General products (gl_mul) per value of one squaring on the multi-pass path, as the kernels
/// compute them: in each direction a column pass multiplies every value by its pass twiddle and,
/// unless POW2, all but one of the 2^R1 values of each line by a column twiddle; the row pass
/// multiplies by column twiddles likewise; and the pointwise square, the weights and the
/// unweights take one each.
pub(crate) fn general_products_per_value(plan: &Plan) -> f64 {
    let mid = |stages: u32| 1.0 - 1.0 / f64::from(1u32 << stages.div_ceil(2));
    let columns: f64 = plan
        .column_passes()
        .iter()
        .map(|c| 1.0 + if pow2_columns(plan.log2(), c.stages, c.s_log, c.c_log) { 0.0 } else { mid(c.stages) })
        .sum();
    3.0 + 2.0 * (columns + mid(plan.shared_log2()))
}

/// What one launch works on: a residue, the transformed operand of a multiplication's row pass
/// (the kernels read it for Op::Multiply only) and the device word holding the shift count.
#[derive(Clone, Copy)]
struct Operands<'a> {
    x: Res<'a>,
    other: &'a CudaSlice<u64>,
    shift: &'a CudaSlice<u32>,
}

impl<'a> Operands<'a> {
    /// x alone (no second operand).
    fn of(x: Res<'a>, shift: &'a CudaSlice<u32>) -> Operands<'a> {
        Operands { x, other: x.x, shift }
    }
}

/// One pass: `stages` (R) radix-2 stages down to half-size 2^s_log (0: the row pass), 2^c_log
/// lines a block, and its twiddle table on the device (src/transform/line.rs).
struct Pass {
    stages: u32,
    s_log: u32,
    c_log: u32,
    table: CudaSlice<u64>,
}

impl Pass {
    fn shape(&self, n: u64) -> Shape {
        let (r1, r2) = (self.stages.div_ceil(2), self.stages / 2);
        let (len, lines) = (1u64 << self.stages, 1u64 << self.c_log);
        // The exchange (padded per group of 2^R2) or the carry walk (rows padded by one word).
        let words = ((len + (1 << r1)) * lines).max(len * (lines + 1));
        Shape {
            blocks: (n >> (self.stages + self.c_log)) as u32,
            threads: 1 << (self.c_log + r2),
            shared_bytes: (words * 8) as u32,
        }
    }
}

/// At most 2^8 threads per block of the row pass.
const THREADS_LOG2: u32 = 8;

/// Plan tables on the device and the launches that use them.
pub(crate) struct Passes {
    pub plan: Plan,
    k: GlKernels,
    layout: Layout,
    /// The tables whose addresses the layout holds.
    _tables: Vec<CudaSlice<u64>>,
    passes: Vec<Pass>,
    row: Pass,
}

/// The plan's tables on the device and the Layout that points at them (the tables must live as
/// long as the Layout is used), the weights expanded by `k`'s kernel.
pub(crate) fn upload_plan(
    dev: &Device,
    k: &GlKernels,
    plan: &Plan,
) -> Result<(Layout, Vec<CudaSlice<u64>>), EngineError> {
    if plan.length().odd != 1 {
        return Err(EngineError::NoPlan { p: plan.exponent(), why: "GPU kernels take power-of-two lengths".into() });
    }
    let upload = |v: &[crate::transform::goldilocks::Gl]| {
        let words: Vec<u64> = v.iter().map(|g| g.value()).collect();
        dev.stream.clone_htod(&words).map_err(cuda_err("upload plan"))
    };
    let (tw, itw) = plan.twiddles();
    let [w_hi, w_lo, iw_hi, iw_lo] = plan.weight_tables();
    let two_level = [upload(w_hi)?, upload(w_lo)?, upload(iw_hi)?, upload(iw_lo)?];
    let n = plan.n();
    // SAFETY: expand_weights writes all n words of both before anything reads them.
    let full = || unsafe { dev.stream.alloc::<u64>(n) }.map_err(cuda_err("weight tables"));
    let tables = vec![upload(tw)?, upload(itw)?, full()?, full()?];
    let (p, log_n, lo_bits) = (plan.exponent(), plan.log2(), plan.lo_bits());
    let shape = Shape { blocks: n.div_ceil(256) as u32, threads: 256.min(n as u32), shared_bytes: 0 };
    let [h, l, ih, il] = &two_level;
    // SAFETY: expand_weights(u64* w, u64* iw, const u64* hi, const u64* lo, const u64* ihi,
    // const u64* ilo, u32 p, u32 log_n, u32 lo_bits); the tables and outputs are the plan's.
    unsafe { launch(dev, &k.expand_weights, shape, &[&tables[2], &tables[3], h, l, ih, il, &p, &log_n, &lo_bits]) }?;
    let a: Vec<u64> = tables.iter().map(|t| addr(dev, t)).collect();
    // The two-level tables are freed in stream order, after the expansion has read them.
    drop(two_level);
    let layout = Layout {
        tw: a[0],
        itw: a[1],
        w: a[2],
        iw: a[3],
        p,
        log_n,
        seg_log: plan.seg_len().trailing_zeros(),
        fixup_depth: plan.fixup_depth() as u32,
    };
    Ok((layout, tables))
}

impl Passes {
    pub fn new(dev: &Device, plan: Plan) -> Result<Passes, EngineError> {
        if plan.is_small() {
            return Err(EngineError::Other(format!(
                "n=2^{} is a small length: it runs on the one-block kernel",
                plan.log2()
            )));
        }
        let k = GlKernels::load(dev)?;
        let (layout, tables) = upload_plan(dev, &k, &plan)?;
        // A pass's table: its lines' twiddles (a line of 2^r values as 2^(r/2) columns of
        // 2^⌈r/2⌉), then, for a column pass (s_log > 0), the pass's own (kernels/goldilocks/ntt_block.cuh).
        let table = |s_log: u32, r: u32| -> Result<CudaSlice<u64>, EngineError> {
            let mut t = twiddle_table(&plan, r / 2, r.div_ceil(2));
            if s_log > 0 {
                t.extend(twiddle_table(&plan, s_log, r));
            }
            let words: Vec<u64> = t.iter().map(|g| g.value()).collect();
            dev.stream.clone_htod(&words).map_err(cuda_err("upload twiddles"))
        };
        let passes = plan
            .column_passes()
            .into_iter()
            .map(|ColumnPass { stages, s_log, c_log }| Ok(Pass { stages, s_log, c_log, table: table(s_log, stages)? }))
            .collect::<Result<Vec<Pass>, EngineError>>()?;
        let r = plan.shared_log2();
        let row_c_log =
            (plan.log2() - r).saturating_sub(SHARED_BLOCKS_LOG2).min(BLOCK_WORDS_LOG2 - r).min(THREADS_LOG2 - r / 2);
        let row = Pass { stages: r, s_log: 0, c_log: row_c_log, table: table(0, r)? };
        // The kernels walk runs of the outermost pass as carry segments.
        if passes.first().map(|c| c.c_log) != Some(layout.seg_log) {
            return Err(EngineError::Other(format!(
                "carry segments of 2^{} digits do not match the passes",
                layout.seg_log
            )));
        }
        Ok(Passes { plan, k, layout, _tables: tables, passes, row })
    }

    fn n(&self) -> u64 {
        self.plan.n() as u64
    }

    /// Pending carries per residue.
    pub fn segments(&self) -> usize {
        self.plan.n() / self.plan.seg_len()
    }

    /// One pass of `op` over io.
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan: a residue of n words,
    /// its segments' carries, the shift word.
    unsafe fn ntt(&self, dev: &Device, pass: &Pass, io: Operands, op: Op, flags: u32) -> Result<(), EngineError> {
        // Column passes run forward or inverse stages only (transform() below).
        debug_assert!(pass.s_log == 0 || matches!(op, Op::Forward | Op::Inverse));
        let late = late_trigger(self.plan.log2()) && pass.stages <= LATE_MAX_STAGES;
        let trigger = if late { &self.k.late } else { &self.k.early };
        let kernels = match (pass.s_log, op, flags) {
            (1.., _, _) => &trigger.columns,
            (0, Op::Square, 0) => &trigger.square_rows,
            _ => &self.k.ntt,
        };
        let f = &kernels[pass.stages as usize - 1];
        let pow2 = pow2_columns(self.plan.log2(), pass.stages, pass.s_log, pass.c_log);
        let flags = if pow2 { flags | POW2 } else { flags };
        let Operands { x, other, shift } = io;
        let args: [&dyn Arg; 10] =
            [x.x, other, &pass.table, x.carries, shift, &self.layout, &pass.s_log, &pass.c_log, &(op as u32), &flags];
        // SAFETY: the pass kernels' parameters (kernels/goldilocks/ntt_block.cuh) in this order; x, other and
        // the carries are residues of this plan, the table is the pass's own.
        unsafe { launch(dev, f, pass.shape(self.n()), &args) }
    }

    /// Forward column passes over x; the first applies the pending carries and weighs the digits
    /// (and doubles the shift count at `shift` with ADVANCE in `first`).
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan: a residue of n words,
    /// its segments' carries, the shift word.
    pub unsafe fn forward_global(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        first: u32,
    ) -> Result<(), EngineError> {
        for (k, pass) in self.passes.iter().enumerate() {
            // SAFETY: the buffers are the caller's, under this function's contract.
            unsafe {
                self.ntt(dev, pass, Operands::of(x, shift), Op::Forward, if k == 0 { WEIGH | first } else { 0 })
            }?;
        }
        Ok(())
    }

    /// Inverse column passes over x; the last unweighs and walks the carries (subtracting the LL
    /// term with LL in `last`).
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan: a residue of n words,
    /// its segments' carries, the shift word.
    pub unsafe fn inverse_global(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        last: u32,
    ) -> Result<(), EngineError> {
        for (k, pass) in self.passes.iter().enumerate().rev() {
            // SAFETY: the buffers are the caller's, under this function's contract.
            unsafe {
                self.ntt(dev, pass, Operands::of(x, shift), Op::Inverse, if k == 0 { UNWEIGH | last } else { 0 })
            }?;
        }
        Ok(())
    }

    /// The row pass on every chunk of x (`other` is read by Multiply only) with `flags`.
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan: a residue of n words,
    /// its segments' carries, the shift word.
    pub unsafe fn rows(
        &self,
        dev: &Device,
        x: Res,
        other: &CudaSlice<u64>,
        shift: &CudaSlice<u32>,
        op: Op,
        flags: u32,
    ) -> Result<(), EngineError> {
        // SAFETY: the buffers are the caller's, under this function's contract.
        unsafe { self.ntt(dev, &self.row, Operands { x, other, shift }, op, flags) }
    }

    /// The whole transform of io.x: forward (Op::Forward), or forward, pointwise op and inverse
    /// back to digits and pending carries. `first` and `last` go to the first and last pass.
    ///
    /// # Safety
    /// Every buffer passed must be a buffer of `dev` sized for this plan: a residue of n words,
    /// its segments' carries, the shift word.
    unsafe fn transform(&self, dev: &Device, io: Operands, op: Op, first: u32, last: u32) -> Result<(), EngineError> {
        // SAFETY: the buffers are the caller's, under this function's contract.
        unsafe { self.forward_global(dev, io.x, io.shift, first) }?;
        // SAFETY: the buffers are the caller's, under this function's contract.
        unsafe { self.ntt(dev, &self.row, io, op, 0) }?;
        if op == Op::Forward {
            return Ok(());
        }
        // SAFETY: the buffers are the caller's, under this function's contract.
        unsafe { self.inverse_global(dev, io.x, io.shift, last) }
    }
}

impl Pipeline for Passes {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn module(&self) -> &Arc<CudaModule> {
        &self.k.module
    }

    /// One squaring of x, all on the device: the whole transform with the pointwise square.
    unsafe fn square(&self, dev: &Device, x: Res, shift: &CudaSlice<u32>, ll: bool) -> Result<(), EngineError> {
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe { self.transform(dev, Operands::of(x, shift), Op::Square, ADVANCE, if ll { LL } else { 0 }) }
    }

    /// acc := acc·x; `tmp` (n words) receives the transform of x (x itself is left as it was).
    unsafe fn multiply(
        &self,
        dev: &Device,
        acc: Res,
        x: Res,
        tmp: &CudaSlice<u64>,
        shift: &CudaSlice<u32>,
    ) -> Result<(), EngineError> {
        copy(dev, tmp, x.x)?;
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe { self.transform(dev, Operands::of(Res { x: tmp, carries: x.carries }, shift), Op::Forward, 0, 0) }?;
        // SAFETY: the buffers are the caller's, under the trait's contract.
        unsafe { self.transform(dev, Operands { x: acc, other: tmp, shift }, Op::Multiply, 0, 0) }
    }

    /// Microseconds per launch of each kernel of a squaring, each timed alone over `reps`
    /// launches replayed from a CUDA graph (for tuning; the data is whatever x holds).
    unsafe fn profile(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        reps: usize,
    ) -> Result<Vec<(String, f64)>, EngineError> {
        let mut steps: Vec<Step> = Vec::new();
        let edge = |k: usize, flag: u32| if k == 0 { flag } else { 0 };
        let io = Operands::of(x, shift);
        for (k, pass) in self.passes.iter().enumerate() {
            let name = format!("fwd column pass {} ({} stages, 2^{} lines/block)", k, pass.stages, pass.c_log);
            // SAFETY: the buffers are the caller's, under this function's contract.
            steps.push((name, Box::new(move || unsafe { self.ntt(dev, pass, io, Op::Forward, edge(k, WEIGH)) })));
        }
        let row = &self.row;
        let name = format!("row pass square ({} stages, 2^{} lines/block)", row.stages, row.c_log);
        // SAFETY: the buffers are the caller's, under this function's contract.
        steps.push((name, Box::new(move || unsafe { self.ntt(dev, row, io, Op::Square, 0) })));
        for (k, pass) in self.passes.iter().enumerate() {
            let name = format!("inv column pass {} ({} stages)", k, pass.stages);
            // SAFETY: the buffers are the caller's, under this function's contract.
            steps.push((name, Box::new(move || unsafe { self.ntt(dev, pass, io, Op::Inverse, edge(k, UNWEIGH)) })));
        }
        time_steps(dev, reps, &steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The products per value and the line DFTs of two plans, counted by hand from
    /// kernels/goldilocks/ntt_block.cuh: at 2^20 with 8 stages per line, column passes of 6 and 6 stages
    /// (both POW2: only their pass twiddles) and a row pass of 8 (R1 = 4: 15 of 16 values take a
    /// column twiddle); at 2^18 (below POW2_MIN_LOG2) column passes of 6 and 6 that multiply
    /// their column twiddles too (7 of 8) and a row pass of 6.
    #[test]
    fn general_products_follow_the_kernels() {
        let plan = Plan::with_log2(20_996_011, 20).unwrap().with_line_stages(8).unwrap();
        let shape: Vec<(u32, u32)> = plan.column_passes().iter().map(|c| (c.stages, c.c_log)).collect();
        assert_eq!((shape, plan.shared_log2()), (vec![(6, 5), (6, 5)], 8));
        assert_eq!(general_products_per_value(&plan), 3.0 + 2.0 * (1.0 + 1.0 + 15.0 / 16.0));
        assert_eq!(line_dfts(&plan), [3, 3, 3, 3, 4, 4]);
        let plan = Plan::with_log2(3_021_377, 18).unwrap().with_line_stages(6).unwrap();
        let stages: Vec<u32> = plan.column_passes().iter().map(|c| c.stages).collect();
        assert_eq!((stages, plan.shared_log2()), (vec![6, 6], 6));
        assert_eq!(general_products_per_value(&plan), 3.0 + 2.0 * (2.0 * (1.0 + 7.0 / 8.0) + 7.0 / 8.0));
        assert_eq!(line_dfts(&plan), [3, 3, 3, 3, 3, 3]);
    }

    /// Every multi-pass plan's line DFTs cover its stages, each once.
    #[test]
    fn line_dfts_cover_every_stage() {
        for log2 in 11..=22 {
            for k in 5..=crate::transform::plan::MAX_SHARED_LOG2 {
                let plan = Plan::with_log2(15 << log2, log2).unwrap().with_line_stages(k).unwrap();
                assert_eq!(line_dfts(&plan).iter().sum::<u32>(), log2, "2^{log2}, {k} stages per line");
            }
        }
    }
}
