//! The M61·M31 unit's kernels (kernels/m61m31/engine.cu): built on the device when an M61·M31
//! pipeline is, and loaded by name for [`super::MmPipeline`].

use crate::engine::EngineError;
use crate::gpu::module::{function, functions, Device};
use cudarc::driver::{CudaFunction, CudaModule};
use std::sync::Arc;

/// The unit's name in kernels/manifest.txt.
pub(crate) const UNIT: &str = "m61m31";

/// The most stages of one mm_pass_r<R> kernel (kernels/m61m31/pipeline.cuh instantiates 1 ..= this): at
/// 2^22 on an H100 a pass of 4 stages took 80 µs (140 registers a thread), one of 3 took 42
/// (bench/notes/gpu.md, 2026-11-26).
pub(crate) const MM_PASS_MAX_STAGES: u32 = 3;

/// The M61·M31 kernels (kernels/m61m31/pipeline.cuh), launched by pipeline.rs.
pub(crate) struct MmKernels {
    pub module: Arc<CudaModule>,
    pub weigh: CudaFunction,
    pub radix3: CudaFunction,
    /// passes[R − 1]: mm_pass_r<R>, R radix-2 stages over global memory.
    pub passes: Vec<CudaFunction>,
    pub block: CudaFunction,
    pub pair: CudaFunction,
    /// mm_core: forward block, pair step and inverse block in one launch (2^k lengths).
    pub core: CudaFunction,
    pub carry: CudaFunction,
}

impl MmKernels {
    /// The unit's kernels on `dev` (built on the first call).
    pub fn load(dev: &Device) -> Result<MmKernels, EngineError> {
        let module = dev.module(UNIT)?;
        let m = &module;
        Ok(MmKernels {
            weigh: function(m, "mm_weigh")?,
            radix3: function(m, "mm_radix3")?,
            passes: functions(m, "mm_pass_r", "", MM_PASS_MAX_STAGES)?,
            block: function(m, "mm_block")?,
            pair: function(m, "mm_pair")?,
            core: function(m, "mm_core")?,
            carry: function(m, "mm_carry")?,
            module,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::module::kernel_file;

    /// kernels/m61m31/pipeline.cuh instantiates mm_pass_r1 ..= mm_pass_r<MM_PASS_MAX_STAGES>, as
    /// MmKernels::load asks.
    #[test]
    fn the_m61m31_passes_are_instantiated_up_to_their_max() {
        let text = kernel_file("m61m31/pipeline.cuh");
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("MM_PASS_KERNEL(")).collect();
        let expected: Vec<String> = (1..=MM_PASS_MAX_STAGES).map(|r| format!("MM_PASS_KERNEL({r})")).collect();
        assert_eq!(lines, expected);
    }
}
