//! Goldilocks on the four-step pipeline (kernels/goldilocks/four_step.cuh): one prime, its tables
//! src/transform/goldilocks/four_step.rs's, on the plan [`GlFourStep::plan`] gives (segments of
//! 8 digits). A default nowhere: on an H200 it ran 11–75% slower than the multi-pass kernels at
//! every length 2^16 … 2^23 (bench/RESULTS.md, 2026-11-29), so `MERSENNE_CERT_GOLDILOCKS_FOUR_STEP=1`
//! takes it for the Goldilocks arithmetic (src/gpu/arith.rs) only to measure the skeleton again on
//! a second field after a change to it.

use super::setup::{FourStep, FsLayout, FsPrime, GlLayout, Setup, Uploads};
use crate::engine::EngineError;
use crate::gpu::module::Device;
use crate::transform::goldilocks::four_step::GlFourStep;
use crate::transform::plan::Plan;

/// Goldilocks' kernels gs_fwd, gs_rows, gs_inv, gs_carry.
pub(crate) struct GoldilocksFs;

impl FourStep for GoldilocksFs {
    const UNIT: &'static str = "goldilocks-fs";
    const KERNELS: [&'static str; 4] = ["gs_fwd", "gs_rows", "gs_inv", "gs_carry"];
    const PRIMES: u32 = 1;
    const NAME: &'static str = "goldilocks four-step";
    type Value = u64;
    type Primes = [FsPrime<u64, u64>; 1];
    type Extra = u64;

    fn setup(dev: &Device, plan: &Plan) -> Result<Setup<GlLayout>, EngineError> {
        let t = GlFourStep::new(plan)?;
        let mut up = Uploads::default();
        let mut tables = [0; 14];
        for (a, v) in tables.iter_mut().zip(&t.tables) {
            *a = up.table(dev, v)?;
        }
        // Canonical values: nothing is reduced lazily.
        let q = [FsPrime { k: 0, chain: t.chain, reduce: 0, tables }];
        Ok(up.setup(FsLayout::new(plan, q, 0, t.log_r, t.lo_bits)))
    }
}
