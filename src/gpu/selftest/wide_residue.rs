//! A residue on the device with i128 pending carries ([`WideResidue`]: digits, each carry as two
//! words, the shift count), uploaded from the host and read back: what the M61·M31 and FP64
//! kernel checks (`m61m31`, `fp64_stages`) feed their kernels and compare with the twin.

use super::verdict::signed_words;
use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::launch::Res;
use crate::gpu::module::{cuda_err, Device};
use cudarc::driver::CudaSlice;

/// A residue on the device: digits, i128 carries as two words each, the shift count.
pub(super) struct WideResidue {
    pub x: CudaSlice<u64>,
    pub carries: CudaSlice<i64>,
    pub shift: CudaSlice<u32>,
}

impl WideResidue {
    /// `digits` with pending `carries` (in segment order; on the device where `pipe` keeps them),
    /// at shift count `shift`, in new buffers of `dev`.
    pub fn upload(
        dev: &Device,
        pipe: &dyn Pipeline,
        digits: &[i64],
        carries: &[i128],
        shift: u32,
    ) -> Result<WideResidue, EngineError> {
        let s = &dev.stream;
        Ok(WideResidue {
            x: s.clone_htod(&signed_words(digits)).map_err(cuda_err("upload"))?,
            carries: s.clone_htod(&pipe.carries_to_device(carries)).map_err(cuda_err("upload"))?,
            shift: s.clone_htod(&[shift]).map_err(cuda_err("upload"))?,
        })
    }

    /// The digits and carries, as the launches take them.
    pub fn res(&self) -> Res<'_> {
        Res { x: &self.x, carries: &self.carries }
    }

    /// The digits, pending carries (in segment order) and shift count, once the work queued on
    /// `dev` has run.
    pub fn download(&self, dev: &Device, pipe: &dyn Pipeline) -> Result<(Vec<i64>, Vec<i128>, u32), EngineError> {
        let s = &dev.stream;
        let x = s.clone_dtoh(&self.x).map_err(cuda_err("download"))?;
        let c = s.clone_dtoh(&self.carries).map_err(cuda_err("download"))?;
        let sh = s.clone_dtoh(&self.shift).map_err(cuda_err("download"))?;
        s.synchronize().map_err(cuda_err("run"))?;
        Ok((x.iter().map(|&w| w as i64).collect(), pipe.carries_from_device(&c), sh[0]))
    }
}
