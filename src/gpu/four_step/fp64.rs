//! The FP64 arithmetic on the four-step pipeline (kernels/fp64/pipeline.cuh): both primes'
//! tables are the CPU twin's (src/transform/fp64/stages.rs `Fp64Tables`), uploaded, not
//! recomputed.

use super::setup::{FourStep, Fp64Layout, FsLayout, FsPrime, Setup, Uploads};
use crate::engine::EngineError;
use crate::gpu::module::Device;
use crate::transform::fp64::stages::{Fp64Tables, PrimeTables};
use crate::transform::plan::Plan;

/// The FP64 arithmetic's kernels fp_fwd, fp_rows, fp_inv, fp_carry over its pair of primes.
pub(crate) struct Fp64;

impl FourStep for Fp64 {
    const UNIT: &'static str = "fp64";
    const KERNELS: [&'static str; 4] = ["fp_fwd", "fp_rows", "fp_inv", "fp_carry"];
    const PRIMES: u32 = 2;
    const NAME: &'static str = "fp64";
    type Value = f64;
    type Primes = [FsPrime<[f64; 2], f64>; 2];
    type Extra = f64;

    fn setup(dev: &Device, plan: &Plan) -> Result<Setup<Fp64Layout>, EngineError> {
        let t = Fp64Tables::new(plan)?;
        let mut up = Uploads::default();
        let mut prime = |q: &PrimeTables| -> Result<FsPrime<[f64; 2], f64>, EngineError> {
            let none: &[f64] = &[];
            let (col_tw, col_itw) = q.col.as_ref().map_or((none, none), |c| (c.twiddles(), c.inv_twiddles()));
            let (w, iw, tw, itw) = (&q.weight, &q.inv_weight, &q.twiddle, &q.inv_twiddle);
            let sources: [&[f64]; 14] = [
                q.row.twiddles(),
                q.row.inv_twiddles(),
                col_tw,
                col_itw,
                &w.row,
                &w.tile,
                &iw.row,
                &iw.tile,
                &tw.hi,
                &tw.lo,
                &itw.hi,
                &itw.lo,
                &q.twiddle_step,
                &q.inv_twiddle_step,
            ];
            let mut tables = [0; 14];
            for (a, v) in tables.iter_mut().zip(sources) {
                *a = up.table(dev, &v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())?;
            }
            let (ws, iws) = (q.weight_step, q.inv_weight_step);
            Ok(FsPrime {
                k: [q.f.p(), q.f.pinv()],
                chain: [ws.narrow, ws.wide, iws.narrow, iws.wide],
                reduce: q.reduce_mask(),
                tables,
            })
        };
        let q = [prime(&t.primes[0])?, prime(&t.primes[1])?];
        Ok(up.setup(FsLayout::new(plan, q, t.crt.inv, t.log_r, t.primes[0].twiddle.lo_bits)))
    }
}
