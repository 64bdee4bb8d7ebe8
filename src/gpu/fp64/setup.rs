//! The FP64 plan set up on the device, for [`super::FpPipeline`]: both primes' tables
//! (src/transform/fp64/stages.rs `Fp64Tables`, uploaded, not recomputed) and the layout the
//! kernels take (with the tables' raw addresses, as the kernels' C struct holds them: see
//! [`crate::gpu::launch`]).

use crate::engine::EngineError;
use crate::gpu::launch::{addr, by_value};
use crate::gpu::module::{cuda_err, Device};
use crate::transform::fp64::stages::{Fp64Tables, Powers, PrimeTables};
use crate::transform::plan::Plan;
use cudarc::driver::CudaSlice;

/// One prime's constants and tables (FsPrime of kernels/common/pipeline.cuh over
/// kernels/fp64/pipeline.cuh's arithmetic, field for field: its `f` is p and pinv).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FpPrime {
    p: f64,
    pinv: f64,
    w_narrow: f64,
    w_wide: f64,
    iw_narrow: f64,
    iw_wide: f64,
    reduce: u64,
    row_tw: u64,
    row_itw: u64,
    col_tw: u64,
    col_itw: u64,
    w_hi: u64,
    w_lo: u64,
    iw_hi: u64,
    iw_lo: u64,
    t_hi: u64,
    t_lo: u64,
    it_hi: u64,
    it_lo: u64,
}

/// The plan as the kernels see it (FsLayout of kernels/common/pipeline.cuh, field for
/// field: its `x` is crt_inv).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct FpLayout {
    q: [FpPrime; 2],
    crt_inv: f64,
    p: u32,
    n: u32,
    pub log_r: u32,
    pub log_c: u32,
    lo_bits: u32,
    pub seg_len: u32,
    fixup_depth: u32,
    pad: u32,
}

// Plain-old-data with the C layout the kernels declare, passed by value.
by_value!(FpLayout);

/// The plan on the device: the layout and the tables it points at.
pub(super) struct Setup {
    pub layout: FpLayout,
    /// Every table of both primes, whose addresses the layout holds.
    _tables: Vec<CudaSlice<f64>>,
}

impl Setup {
    /// `plan`'s tables uploaded to `dev`.
    pub fn new(dev: &Device, plan: &Plan) -> Result<Setup, EngineError> {
        let t = Fp64Tables::new(plan)?;
        let mut tables = Vec::new();
        let mut up = |v: &[f64]| -> Result<u64, EngineError> {
            // A table of no entries (R = 1: no column transform) still gets a buffer of one.
            let b =
                dev.stream.clone_htod(if v.is_empty() { &[0.0][..] } else { v }).map_err(cuda_err("upload tables"))?;
            let a = addr(dev, &b);
            tables.push(b);
            Ok(a)
        };
        let mut prime = |q: &PrimeTables| -> Result<FpPrime, EngineError> {
            let none: &[f64] = &[];
            let (col_tw, col_itw) = q.col.as_ref().map_or((none, none), |c| (c.twiddles(), c.inv_twiddles()));
            let mut pow = |w: &Powers| -> Result<(u64, u64), EngineError> { Ok((up(&w.hi)?, up(&w.lo)?)) };
            let (w_hi, w_lo) = pow(&q.weight)?;
            let (iw_hi, iw_lo) = pow(&q.inv_weight)?;
            let (t_hi, t_lo) = pow(&q.twiddle)?;
            let (it_hi, it_lo) = pow(&q.inv_twiddle)?;
            Ok(FpPrime {
                p: q.f.p(),
                pinv: q.f.pinv(),
                w_narrow: q.weight_step.narrow,
                w_wide: q.weight_step.wide,
                iw_narrow: q.inv_weight_step.narrow,
                iw_wide: q.inv_weight_step.wide,
                reduce: q.reduce_mask(),
                row_tw: up(q.row.twiddles())?,
                row_itw: up(q.row.inv_twiddles())?,
                col_tw: up(col_tw)?,
                col_itw: up(col_itw)?,
                w_hi,
                w_lo,
                iw_hi,
                iw_lo,
                t_hi,
                t_lo,
                it_hi,
                it_lo,
            })
        };
        let q = [prime(&t.primes[0])?, prime(&t.primes[1])?];
        let layout = FpLayout {
            q,
            crt_inv: t.crt.inv,
            p: plan.exponent(),
            n: plan.n() as u32,
            log_r: t.log_r,
            log_c: t.log_c,
            lo_bits: t.primes[0].weight.lo_bits,
            seg_len: plan.seg_len() as u32,
            fixup_depth: plan.fixup_depth() as u32,
            pad: 0,
        };
        Ok(Setup { layout, _tables: tables })
    }
}
