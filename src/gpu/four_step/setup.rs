//! The four-step plan set up on the device, for [`super::FsPipeline`]: what an arithmetic brings
//! ([`FourStep`]: its unit, kernels and primes, and its tables, uploaded, not recomputed) and the
//! layout its kernels take ([`FsLayout`]: kernels/common/pipeline.cuh's, with the tables' raw
//! addresses, as the kernels' C struct holds them: see [`crate::gpu::launch`]).

use crate::engine::EngineError;
use crate::gpu::launch::{addr, Arg};
use crate::gpu::module::{cuda_err, Device};
use crate::transform::plan::Plan;
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};

/// One prime's constants and tables: FsPrime of kernels/common/pipeline.cuh, field for field.
/// `k` is the field's constants (F: FP64's p and pinv; Goldilocks' none, an empty struct's
/// padding), `chain` the weight chains' factors (w_narrow, w_wide, iw_narrow, iw_wide), `tables`
/// the device addresses of row_tw, row_itw, col_tw, col_itw, w_row, w_tile, iw_row, iw_tile,
/// t_hi, t_lo, it_hi, it_lo, t_step, it_step.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FsPrime<K: Copy, V: Copy> {
    pub k: K,
    pub chain: [V; 4],
    pub reduce: u64,
    pub tables: [u64; 14],
}

/// The plan as the kernels see it: FsLayout of kernels/common/pipeline.cuh, field for field (`q`
/// the primes, `x` the arithmetic's Extra).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct FsLayout<Q: Copy, X: Copy> {
    pub q: Q,
    pub x: X,
    pub p: u32,
    pub n: u32,
    pub log_r: u32,
    pub log_c: u32,
    pub lo_bits: u32,
    pub seg_len: u32,
    pub fixup_depth: u32,
    pub pad: u32,
}

/// The FP64 arithmetic's layout (kernels/fp64/pipeline.cuh): two primes, crt_inv.
pub(crate) type Fp64Layout = FsLayout<[FsPrime<[f64; 2], f64>; 2], f64>;
/// Goldilocks' (kernels/goldilocks/four_step.cuh): one prime, nothing after it.
pub(crate) type GlLayout = FsLayout<[FsPrime<u64, u64>; 1], u64>;

// Plain-old-data with the C layout the kernels declare, passed by value.
impl<Q: Copy, X: Copy> Arg for FsLayout<Q, X> {
    fn param(&self, _dev: &Device, _slot: &mut u64) -> *mut std::ffi::c_void {
        self as *const Self as *mut std::ffi::c_void
    }
}

impl<Q: Copy, X: Copy> FsLayout<Q, X> {
    /// The layout of `plan` with primes `q`, extra `x`, R = 2^log_r rows and tables of powers
    /// split at lo_bits.
    pub fn new(plan: &Plan, q: Q, x: X, log_r: u32, lo_bits: u32) -> FsLayout<Q, X> {
        FsLayout {
            q,
            x,
            p: plan.exponent(),
            n: plan.n() as u32,
            log_r,
            log_c: plan.log2() - log_r,
            lo_bits,
            seg_len: plan.seg_len() as u32,
            fixup_depth: plan.fixup_depth() as u32,
            pad: 0,
        }
    }
}

/// An arithmetic on the four-step pipeline (kernels/common/pipeline.cuh over its
/// kernels/<arith>/ header).
pub(crate) trait FourStep: 'static {
    /// Its unit in kernels/manifest.txt.
    const UNIT: &'static str;
    /// Its kernels fwd, rows, inv, carry (FS_NAME).
    const KERNELS: [&'static str; 4];
    /// Its primes (NP): the second grid dimension of fwd and rows, the tiles of inv and carry.
    const PRIMES: u32;
    /// Its name in the engine's description ("fp64").
    const NAME: &'static str;
    /// A value of its fields (F::V).
    type Value: DeviceRepr + ValidAsZeroBits + Copy + Unpin;
    /// Its FsLayout's primes (FsPrime q[NP]) and Extra.
    type Primes: Copy + Send + Sync;
    type Extra: Copy + Send + Sync;
    /// `plan`'s tables uploaded to `dev` and its layout.
    fn setup(dev: &Device, plan: &Plan) -> Result<Setup<LayoutOf<Self>>, EngineError>;
}

/// The FsLayout of arithmetic A.
pub(crate) type LayoutOf<A> = FsLayout<<A as FourStep>::Primes, <A as FourStep>::Extra>;

/// The plan on the device: the layout and the tables it points at.
pub(crate) struct Setup<L> {
    pub layout: L,
    /// Every table, whose addresses the layout holds.
    _tables: Vec<CudaSlice<u64>>,
}

/// The tables of a plan as they are uploaded: each a buffer of 64-bit words (a value's bits).
#[derive(Default)]
pub(crate) struct Uploads(Vec<CudaSlice<u64>>);

impl Uploads {
    /// `words` uploaded to `dev` (a table of none, R = 1's column twiddles, as one word): the
    /// buffer's device address.
    pub fn table(&mut self, dev: &Device, words: &[u64]) -> Result<u64, EngineError> {
        let b = dev
            .stream
            .clone_htod(if words.is_empty() { &[0][..] } else { words })
            .map_err(cuda_err("upload tables"))?;
        let a = addr(dev, &b);
        self.0.push(b);
        Ok(a)
    }

    /// The setup of `layout`, which holds these tables' addresses.
    pub fn setup<L>(self, layout: L) -> Setup<L> {
        Setup { layout, _tables: self.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The layouts as the kernels' C structs lay them out (kernels/common/pipeline.cuh): FsPrime
    /// is the field (FP64's p and pinv: 16 bytes; Goldilocks' empty struct: 1 byte, padded to 8),
    /// 4 values, the reduce mask and 14 addresses; FsLayout the primes, the Extra and 8 u32.
    #[test]
    fn layouts_match_the_kernels_structs() {
        assert_eq!(size_of::<FsPrime<[f64; 2], f64>>(), 168);
        assert_eq!(size_of::<FsPrime<u64, u64>>(), 160);
        assert_eq!((offset_of!(Fp64Layout, x), offset_of!(Fp64Layout, p), size_of::<Fp64Layout>()), (336, 344, 376));
        assert_eq!((offset_of!(GlLayout, x), offset_of!(GlLayout, p), size_of::<GlLayout>()), (160, 168, 200));
        assert_eq!(offset_of!(Fp64Layout, lo_bits) - offset_of!(Fp64Layout, p), 16);
    }
}
