//! The GPU engine: an exact IBDWT squaring over the Goldilocks prime or GF(M61²) × GF(M31²), entirely on an NVIDIA GPU
//! (CUDA driver API through cudarc, kernels compiled at start-up by NVRTC). The only module of
//! the crate with `unsafe` and raw CUDA handles.
//!
//! - `driver`: the CUDA libraries' presence and versions, the GPU count;
//! - `arith`: the device side of an arithmetic (trait `Pipeline`) and the one place that
//!   picks it for a plan; `graphs`: batches of launches captured as CUDA graphs; `launch`:
//!   kernel launches and their arguments, shared by every pipeline;
//! - `module`: context, NVRTC build (kernels/manifest.txt's units, each when first asked for:
//!   an engine builds its arithmetic's unit only) and disk cache of the kernels;
//! - `goldilocks`: that arithmetic's unit's kernels (`kernels`) and pipelines: `passes` (the plan
//!   on the device and the launch sequence of one iteration) and `small` (at small lengths, one
//!   block and one launch for a whole batch of iterations);
//! - `m61m31`: the second arithmetic, GF(M61²) × GF(M31²): its kernels, `setup` (tables, layout,
//!   launch geometry) and `pipeline` (the launches);
//! - `engine`: [`GpuEngine`], the [`crate::engine::Engine`] implementation;
//! - `selftest`: `check`, kernel-by-kernel comparison with the CPU twin, for `gpu-selftest`;
//!   and `rate`: the field operations' throughput and the floor it sets, for `gpu-selftest`
//!   (with `floor_m61m31`, the floor model of the GF(M61²) × GF(M31²) arithmetic);
//! - `tune`: the fastest pass shape per length on this GPU (`prove --tune`), cached;
//! - `warm`: [`WarmUp`], the GPUs opened on a thread ahead of need (a replay's host work).

mod arith;
mod driver;
mod engine;
mod four_step;
mod goldilocks;
mod graphs;
mod launch;
mod m61m31;
mod module;
mod selftest;
mod tune;
mod warm;

pub use engine::GpuEngine;
pub use goldilocks::schedule::PassSchedule;
pub use selftest::check::KernelChecker;
pub use selftest::floor_fp64::{launches as fp64_launches, Fp64Floor, LaunchWork};
pub use selftest::floor_m61m31::{predicted, FqRates, MLength, MersenneFloor, MersenneRates};
pub use selftest::fp64::Fp64Rates;
pub use selftest::rate::{field_rate, FieldRate, Floor};
pub use selftest::verdict::KernelVerdict;
pub use tune::{tune, Tuning};
pub use warm::WarmUp;

use crate::engine::EngineError;
use crate::exponent::TestKind;

pub use driver::{device_count, device_name};

/// A description of the usable GPU (name, architecture, memory, driver; no kernels built), or
/// why there is none.
pub fn probe() -> Result<String, EngineError> {
    Ok(module::Device::open()?.description())
}

/// The plan a [`GpuEngine`] takes for `plan` ([`GpuEngine::on_gpu_tuned`]): its passes shaped
/// as `prove --tune` stored for its length on this GPU where it ran, else `plan` as it is.
pub fn engine_plan(plan: crate::transform::plan::Plan) -> Result<crate::transform::plan::Plan, EngineError> {
    Ok(tune::tuned(&module::Device::open()?, plan))
}

/// Microseconds per LL iteration on `plan`, timed with CUDA events over `iters` iterations after
/// a warm-up.
pub fn bench_plan(plan: crate::transform::plan::Plan, iters: u64) -> Result<f64, EngineError> {
    let mut e = GpuEngine::with_plan(plan, TestKind::Ll, 0)?;
    e.launch_iterations(200)?;
    e.synchronize()?;
    let timer = module::Timer::start(e.device_handle())?;
    e.launch_iterations(iters)?;
    Ok(timer.ms()? * 1000.0 / iters.max(1) as f64)
}
