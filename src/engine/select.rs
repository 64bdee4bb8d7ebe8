//! Engine selection: turns the user's `--engine auto|cpu|gpu|twin` into a concrete engine: under
//! `auto` the CPU when it finishes first ([`decide`], from [`super::cost`]), else the GPU, falling
//! back to the CPU when no CUDA GPU is usable. A transform engine (GPU, twin) squares in the
//! arithmetic it is given ([`super::arith`] settles it).

use crate::cpu_ref::GmpEngine;
use crate::engine::cost::Estimate;
use crate::engine::twin::TwinEngine;
use crate::engine::{Engine, EngineChoice, EngineError};
use crate::exponent::TestKind;
use crate::transform::plan::{Arith, Plan};

/// Build the engine the user asked for, a transform engine in `arith`. Under `Auto` a GPU error
/// is not fatal: the CPU engine is used and the reason is returned alongside, for the caller to
/// report.
pub fn open_engine(
    choice: EngineChoice,
    arith: Arith,
    p: u32,
    kind: TestKind,
    shift: u32,
) -> Result<(Box<dyn Engine>, Option<String>), EngineError> {
    open_engine_on(choice, arith, 0, p, kind, shift)
}

/// [`open_engine`] on GPU `gpu` (CUDA's numbering) when the choice gives a GPU.
pub fn open_engine_on(
    choice: EngineChoice,
    arith: Arith,
    gpu: usize,
    p: u32,
    kind: TestKind,
    shift: u32,
) -> Result<(Box<dyn Engine>, Option<String>), EngineError> {
    match choice {
        EngineChoice::Cpu => Ok((Box::new(GmpEngine::new(p, kind, shift)), None)),
        EngineChoice::Twin => Ok((Box::new(TwinEngine::with_arith(p, arith, kind, shift)?), None)),
        EngineChoice::Gpu => Ok((open_gpu(gpu, arith, p, kind, shift)?, None)),
        EngineChoice::Auto => match open_gpu(gpu, arith, p, kind, shift) {
            Ok(e) => Ok((e, None)),
            Err(why) => Ok((Box::new(GmpEngine::new(p, kind, shift)), Some(why.to_string()))),
        },
    }
}

/// Settle `--engine auto` for a test of `iterations` iterations of p, before any GPU is opened:
/// `Cpu` when GMP finishes before the GPU (its start-up included), else `Auto` (the GPU, falling
/// back to the CPU when none is usable). `doubled`: every segment is computed twice (LL's
/// `--ll-check double`; [`Estimate::of_test`] says how that costs on each). Other choices stay
/// as they are. With `Auto` comes one line saying what was chosen and why, for stderr.
pub fn decide(
    choice: EngineChoice,
    p: u32,
    kind: TestKind,
    iterations: u64,
    doubled: bool,
) -> (EngineChoice, Option<String>) {
    if choice != EngineChoice::Auto {
        return (choice, None);
    }
    let e = Estimate::of_test(p, kind, iterations, doubled, crate::host::cores());
    let twice = if doubled { ", each segment computed twice" } else { "" };
    if e.cpu_wins() {
        (EngineChoice::Cpu, Some(format!("engine auto: the CPU (GMP), it finishes first: {}{twice}", e.describe())))
    } else {
        (EngineChoice::Auto, Some(format!("engine auto: the GPU, it finishes first: {}{twice}", e.describe())))
    }
}

/// Is a CUDA GPU usable here? Returns its description, or why not.
pub fn gpu_usable() -> Result<String, EngineError> {
    crate::gpu::probe()
}

/// Resolve `Auto` to `Gpu` when a GPU is usable, else `Cpu`; other choices stay as they are.
pub fn resolve(choice: EngineChoice) -> EngineChoice {
    match choice {
        EngineChoice::Auto if gpu_usable().is_ok() => EngineChoice::Gpu,
        EngineChoice::Auto => EngineChoice::Cpu,
        c => c,
    }
}

/// The GPU engine in `arith`: Goldilocks on its tuned plan (`prove --tune`), any other arithmetic
/// on its shortest plan.
fn open_gpu(gpu: usize, arith: Arith, p: u32, kind: TestKind, shift: u32) -> Result<Box<dyn Engine>, EngineError> {
    use crate::gpu::GpuEngine;
    Ok(Box::new(match arith {
        Arith::Goldilocks => GpuEngine::on_gpu(gpu, p, kind, shift)?,
        _ => GpuEngine::on_gpu_with_plan(gpu, Plan::for_arith(p, arith)?, kind, shift)?,
    }))
}
