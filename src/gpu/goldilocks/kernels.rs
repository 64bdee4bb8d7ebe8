//! The Goldilocks unit's kernels (kernels/goldilocks/engine.cu): built on the device when a
//! Goldilocks pipeline is, and loaded by name for [`super::Passes`] and [`super::SmallPipeline`].

use crate::engine::EngineError;
use crate::gpu::module::{function, functions, Device};
use crate::transform::plan::MAX_SHARED_LOG2;
use cudarc::driver::{CudaFunction, CudaModule};
use std::sync::Arc;

/// The unit's name in kernels/manifest.txt.
pub(crate) const UNIT: &str = "goldilocks";

/// The most stages per line of the _late kernels (kernels/goldilocks/ntt_block.cuh), and so the tuner's
/// largest candidate; the kernels of 9 and 10 stages would add ~14 s to each compilation.
pub(crate) const LATE_MAX_STAGES: u32 = 8;
/// The most stages per round of the one-block kernels (small_r1 .. small_r4, kernels/goldilocks/small.cuh).
pub(crate) const SMALL_MAX_STAGES: u32 = 4;

/// Every kernel the Goldilocks pipelines launch.
pub(crate) struct GlKernels {
    pub module: Arc<CudaModule>,
    /// ntt[R − 1]: the ntt_r<R> kernel (R radix-2 stages per line), the row pass of any op.
    pub ntt: Vec<CudaFunction>,
    /// The column passes and a squaring's row pass, letting the next kernel launch half way.
    pub early: PassKernels,
    /// The same, letting it launch only as their blocks exit (the kernels named _late), up to
    /// LATE_MAX_STAGES stages per line.
    pub late: PassKernels,
    /// small[V − 1]: the small_r<V> kernel (one block, rounds of V stages).
    pub small: Vec<CudaFunction>,
    pub expand_weights: CudaFunction,
}

/// The column passes and a squaring's row pass (kernels/goldilocks/ntt_block.cuh), of one launch trigger.
pub(crate) struct PassKernels {
    /// square_rows[R − 1]: ntt_sq_r<R>, the row pass of a squaring alone.
    pub square_rows: Vec<CudaFunction>,
    /// columns[R − 1]: ntt_col_r<R>, the column passes (of any op).
    pub columns: Vec<CudaFunction>,
}

impl GlKernels {
    /// The unit's kernels on `dev` (built on the first call).
    pub fn load(dev: &Device) -> Result<GlKernels, EngineError> {
        let module = dev.module(UNIT)?;
        let m = &module;
        let pass_kernels = |suffix: &str, max: u32| -> Result<PassKernels, EngineError> {
            Ok(PassKernels {
                square_rows: functions(m, "ntt_sq_r", suffix, max)?,
                columns: functions(m, "ntt_col_r", suffix, max)?,
            })
        };
        Ok(GlKernels {
            ntt: functions(m, "ntt_r", "", MAX_SHARED_LOG2)?,
            early: pass_kernels("", MAX_SHARED_LOG2)?,
            late: pass_kernels("_late", LATE_MAX_STAGES)?,
            small: functions(m, "small_r", "", SMALL_MAX_STAGES)?,
            expand_weights: function(m, "expand_weights")?,
            module,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::module::kernel_file;

    /// The ntt kernels that kernels/goldilocks/ntt_block.cuh instantiates are the ones
    /// GlKernels::load asks for: every stage count with its _late kernels up to LATE_MAX_STAGES,
    /// without them above.
    #[test]
    fn the_late_kernels_are_instantiated_up_to_late_max_stages() {
        let text = kernel_file("goldilocks/ntt_block.cuh");
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("NTT_KERNEL")).collect();
        let expected: Vec<String> = (1..=MAX_SHARED_LOG2)
            .map(
                |r| if r <= LATE_MAX_STAGES { format!("NTT_KERNEL_AND_LATE({r})") } else { format!("NTT_KERNEL({r})") },
            )
            .collect();
        assert_eq!(lines, expected);
        assert!(text.contains("#define NTT_KERNEL_AND_LATE(R) NTT_KERNEL(R) NTT_PASS_KERNELS(R, _late, true)"));
    }
}
