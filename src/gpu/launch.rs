//! Launching the kernels, for every arithmetic's pipeline: [`launch`] (with programmatic
//! dependent launch where the GPU has it) and its arguments ([`Arg`], [`Res`], [`Shape`]), CUDA
//! graph capture and the per-step timing of profiles, and fault injection ([`flip_bit`]).

use super::module::{cuda_err, Device, Timer};
use crate::engine::EngineError;
use cudarc::driver::{sys, CudaFunction, CudaGraph, CudaSlice, DevicePtr, DeviceRepr};
use std::ffi::c_void;

/// Flags of a squaring launch that every arithmetic's kernels take (FLAG_ADVANCE and FLAG_LL
/// of kernels/goldilocks/ops.cuh, MM_ADVANCE and MM_LL of kernels/m61m31/pipeline.cuh): double
/// the shift count first; subtract 2·2^s in the carry walk.
pub(crate) const ADVANCE: u32 = 4;
pub(crate) const LL: u32 = 8;

/// A residue on the device: n digit words and n / seg_len pending carries (raw addresses).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Res {
    pub x: u64,
    pub carries: u64,
}

/// Grid, block and dynamic shared memory of a launch.
pub(crate) struct Shape {
    pub blocks: u32,
    pub threads: u32,
    pub shared_bytes: u32,
}

/// A launch, with programmatic dependent launch where the device has it.
///
/// # Safety
/// `args` must match `f`'s parameter list in number, order and type, and every device
/// address among them must point at a live buffer of this device at least as large as the
/// kernel indexes for `shape` (for the engine's kernels: sized from the plan they index with).
pub(crate) unsafe fn launch(
    dev: &Device,
    f: &CudaFunction,
    shape: Shape,
    args: &[&dyn Arg],
) -> Result<(), EngineError> {
    // SAFETY: the caller's, under this function's contract.
    unsafe { launch_grid(dev, f, shape, 1, args) }
}

/// [`launch`] on a grid of `shape.blocks` × `grid_y` blocks.
///
/// # Safety
/// As [`launch`], for every block of the grid.
pub(crate) unsafe fn launch_grid(
    dev: &Device,
    f: &CudaFunction,
    shape: Shape,
    grid_y: u32,
    args: &[&dyn Arg],
) -> Result<(), EngineError> {
    let mut params: Vec<*mut c_void> = args.iter().map(|a| a.param()).collect();
    // SAFETY: a zeroed attribute is valid plain data; its id and value are set next.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: shape.blocks,
        gridDimY: grid_y,
        gridDimZ: 1,
        blockDimX: shape.threads,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: shape.shared_bytes,
        hStream: dev.stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: u32::from(dev.pdl),
    };
    dev.ctx.bind_to_thread().map_err(cuda_err("context"))?;
    // SAFETY: the caller guarantees the arguments match the kernel (this function's contract);
    // `params` points at them for the duration of the call.
    unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) }
        .result()
        .map_err(cuda_err("launch"))
}

/// A CUDA graph of `count` runs of `step` (each queues launches on the device's stream).
pub(crate) fn capture(
    dev: &Device,
    count: u64,
    mut step: impl FnMut() -> Result<(), EngineError>,
) -> Result<CudaGraph, EngineError> {
    let s = &dev.stream;
    s.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).map_err(cuda_err("capture"))?;
    let queued = (0..count).try_for_each(|_| step());
    let graph = s.end_capture(sys::CUgraphInstantiate_flags(0)).map_err(cuda_err("graph"))?;
    queued?;
    graph.ok_or_else(|| EngineError::Cuda("an empty graph was captured".into()))
}

/// One kernel launch (or a few) of a squaring, named, for [`time_steps`].
pub(crate) type Step<'a> = (String, Box<dyn Fn() -> Result<(), EngineError> + 'a>);

/// Microseconds per run of each step, each timed alone over `reps` runs replayed from a CUDA
/// graph (after one warm-up replay): the kernel breakdown `profile` prints.
pub(crate) fn time_steps(dev: &Device, reps: usize, steps: &[Step]) -> Result<Vec<(String, f64)>, EngineError> {
    let mut out = Vec::new();
    for (name, step) in steps {
        let graph = capture(dev, reps as u64, step)?;
        graph.launch().map_err(cuda_err("graph"))?;
        let timer = Timer::start(dev)?;
        graph.launch().map_err(cuda_err("graph"))?;
        out.push((name.clone(), timer.ms()? * 1000.0 / reps as f64));
    }
    Ok(out)
}

/// A raw device address of a buffer that lives as long as the pipeline using it.
pub(crate) fn addr<T>(dev: &Device, s: &CudaSlice<T>) -> u64 {
    let (ptr, _sync) = s.device_ptr(&dev.stream);
    ptr
}

/// Flip bit `bit` of word `word` (taken modulo its length) of `x` (fault injection).
pub(crate) fn flip_bit(dev: &Device, x: &CudaSlice<u64>, word: usize, bit: u32) -> Result<(), EngineError> {
    let word = (word % x.len()) as u64;
    let x = addr(dev, x);
    // SAFETY: flip_bit(u64* x, u64 word, u32 bit), and word lies inside x.
    unsafe { launch(dev, &dev.kernels.flip_bit, Shape { blocks: 1, threads: 1, shared_bytes: 0 }, &[&x, &word, &bit]) }
}

/// A kernel argument: cuLaunchKernelEx takes the address of each argument's value.
pub(crate) trait Arg {
    fn param(&self) -> *mut c_void;
}

impl<T: DeviceRepr> Arg for T {
    fn param(&self) -> *mut c_void {
        self as *const T as *mut c_void
    }
}
