//! The device side of an arithmetic: [`Pipeline`] is what the engine asks of one (the shape of
//! its residues, one squaring, one product, its profile; batches of them are queued by the
//! provided methods, as CUDA graphs), and [`pipeline`] the one place that picks the
//! implementation for a plan's arithmetic: Goldilocks' multi-pass [`Passes`] (or, at small
//! lengths, the one-block [`SmallPipeline`]; or, to measure it, the four-step [`FsPipeline`]),
//! M61·M31's [`MmPipeline`] and FP64's [`FpPipeline`]. Each builds its own
//! NVRTC unit's kernels ([`Pipeline::module`]), and no other. Adding an arithmetic is one
//! implementation (with its `kernels/<arith>/` unit) and one line here.

use super::four_step::{FpPipeline, FsPipeline, GoldilocksFs};
use super::goldilocks::Passes;
use super::goldilocks::SmallPipeline;
use super::graphs::Graphs;
use super::launch::{carries_from_words, carries_to_words, Res};
use super::m61m31::MmPipeline;
use super::module::Device;
use crate::engine::EngineError;
use crate::transform::goldilocks::four_step::GlFourStep;
use crate::transform::plan::{Arith, Plan};
use crate::transform::twin::carry_fixup;
use cudarc::driver::{CudaModule, CudaSlice};
use std::sync::Arc;

/// An arithmetic's squaring and product on the device, for one plan.
///
/// # Safety
/// The contract of every `unsafe` method: each buffer passed is a buffer of `dev` sized for
/// this plan (a residue of n words and its [`Pipeline::carry_words`] words of pending carries,
/// the shift count's word, `tmp` of n words), and `dev` is the device the pipeline was built on;
/// the launches are only queued. The provided methods capture the launches into `graphs`, which
/// must only ever be given the same buffers (see [`super::launch`]).
pub(crate) trait Pipeline: Send {
    fn plan(&self) -> &Plan;
    /// The module of its NVRTC unit (kernels/manifest.txt), whose kernels it launches.
    fn module(&self) -> &Arc<CudaModule>;
    /// 64-bit words of one pending carry as the kernels keep it: 1 (an i64), or 2 (an i128,
    /// low word first: [`super::launch::carries_to_words`]; M61·M31's and FP64's).
    fn carry_width(&self) -> usize {
        1
    }
    /// 64-bit words of a residue's pending carries: one carry per carry segment.
    fn carry_words(&self) -> usize {
        self.carry_width() * self.plan().n() / self.plan().seg_len()
    }
    /// Where the device keeps the pending carry of carry segment `seg` (in units of
    /// [`Pipeline::carry_width`] words): the segment's index, or the four-step kernels' slot.
    fn carry_slot(&self, seg: usize) -> usize {
        seg
    }
    /// Pending carries in segment order as the device keeps them: at their slots, in
    /// `carry_width` words each.
    fn carries_to_device(&self, carries: &[i128]) -> Vec<i64> {
        let mut slots = vec![0; carries.len()];
        for (seg, &c) in carries.iter().enumerate() {
            slots[self.carry_slot(seg)] = c;
        }
        if self.carry_width() == 2 {
            carries_to_words(&slots)
        } else {
            slots.iter().map(|&c| c as i64).collect()
        }
    }
    /// The pending carries of a downloaded value (`words`, as the device keeps them) in segment
    /// order ([`Pipeline::carries_to_device`] undone).
    fn carries_from_device(&self, words: &[i64]) -> Vec<i128> {
        let slots =
            if self.carry_width() == 2 { carries_from_words(words) } else { words.iter().map(|&w| w.into()).collect() };
        (0..slots.len()).map(|seg| slots[self.carry_slot(seg)]).collect()
    }
    /// Apply the pending carries of a downloaded value (`words`, as the device keeps them) to
    /// its digits, as the CPU twin's carry_fixup does.
    fn apply_carries(&self, digits: &mut [i64], words: &[i64]) {
        carry_fixup(self.plan(), digits, &self.carries_from_device(words));
    }
    /// The transform and its length, for the engine's description ("NTT n=2^20").
    fn transform_name(&self) -> String {
        format!("NTT n=2^{}", self.plan().log2())
    }
    /// Queue one squaring of x; the shift count at `shift` doubles first, and with `ll` the
    /// carry walk subtracts 2·2^s.
    ///
    /// # Safety
    /// See [`Pipeline`].
    unsafe fn square(&self, dev: &Device, x: Res, shift: &CudaSlice<u32>, ll: bool) -> Result<(), EngineError>;
    /// Queue acc := acc·x (x is left as it was; `tmp` may be overwritten).
    ///
    /// # Safety
    /// See [`Pipeline`].
    unsafe fn multiply(
        &self,
        dev: &Device,
        acc: Res,
        x: Res,
        tmp: &CudaSlice<u64>,
        shift: &CudaSlice<u32>,
    ) -> Result<(), EngineError>;
    /// Microseconds per launch of each step of a squaring, each timed alone over `reps`
    /// launches (the data is whatever x holds; the shift count may advance).
    ///
    /// # Safety
    /// See [`Pipeline`].
    unsafe fn profile(
        &self,
        dev: &Device,
        x: Res,
        shift: &CudaSlice<u32>,
        reps: usize,
    ) -> Result<Vec<(String, f64)>, EngineError>;

    /// Queue `count` squarings of x ([`Pipeline::square`]) as replays of `graphs`' batches.
    ///
    /// # Safety
    /// See [`Pipeline`].
    unsafe fn queue_squarings(
        &self,
        dev: &Device,
        graphs: &mut Graphs,
        x: Res,
        shift: &CudaSlice<u32>,
        ll: bool,
        count: u64,
    ) -> Result<(), EngineError> {
        // SAFETY: the buffers are the caller's, under the trait's contract.
        graphs.squarings(dev, count, |m| (0..m).try_for_each(|_| unsafe { self.square(dev, x, shift, ll) }))
    }

    /// Queue acc := acc·x ([`Pipeline::multiply`]) as a replay of `graphs`' product.
    ///
    /// # Safety
    /// See [`Pipeline`].
    unsafe fn queue_multiply(
        &self,
        dev: &Device,
        graphs: &mut Graphs,
        acc: Res,
        x: Res,
        tmp: &CudaSlice<u64>,
        shift: &CudaSlice<u32>,
    ) -> Result<(), EngineError> {
        // SAFETY: the buffers are the caller's, under the trait's contract.
        graphs.product(dev, || unsafe { self.multiply(dev, acc, x, tmp, shift) })
    }
}

/// The pipeline of `plan`'s arithmetic on `dev`, its kernels built and its tables uploaded.
pub(crate) fn pipeline(dev: &Device, plan: Plan) -> Result<Box<dyn Pipeline>, EngineError> {
    Ok(match plan.arith() {
        Arith::Goldilocks if goldilocks_four_step() => {
            Box::new(FsPipeline::<GoldilocksFs>::new(dev, GlFourStep::plan(&plan)?)?)
        }
        Arith::Goldilocks if plan.is_small() => Box::new(SmallPipeline::new(dev, plan)?),
        Arith::Goldilocks => Box::new(Passes::new(dev, plan)?),
        Arith::M61M31 => Box::new(MmPipeline::new(dev, plan)?),
        Arith::Fp64 => Box::new(FpPipeline::new(dev, plan)?),
    })
}

/// Whether Goldilocks runs on the four-step pipeline (kernels/goldilocks/four_step.cuh, the FP64
/// arithmetic's kernels over its field; issue 37) instead of its multi-pass kernels:
/// MERSENNE_CERT_GOLDILOCKS_FOUR_STEP=1, for measuring the one against the other: measured
/// slower at every length (bench/RESULTS.md, 2026-11-29), so never the default. Its plans have
/// segments of 8 digits.
fn goldilocks_four_step() -> bool {
    std::env::var("MERSENNE_CERT_GOLDILOCKS_FOUR_STEP").as_deref() == Ok("1")
}

/// Whether `prove --tune` shapes `plan`'s passes: the multi-pass Goldilocks pipeline's only.
pub(crate) fn tunable(plan: &Plan) -> bool {
    matches!(plan.arith(), Arith::Goldilocks) && !plan.is_small() && !goldilocks_four_step()
}
