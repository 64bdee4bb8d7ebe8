//! Launching the kernels, for every arithmetic's pipeline: [`launch`] (with programmatic
//! dependent launch where the GPU has it) and its arguments ([`Arg`], [`Res`], [`Shape`]), CUDA
//! graph capture and the per-step timing of profiles, device-to-device copies ([`copy`]), the
//! two-word form of i128 pending carries ([`carries_to_words`]) and fault injection
//! ([`flip_bit`]).
//!
//! Buffers are passed as cudarc's typed `&CudaSlice<T>` ([`Res`] holds two), not as raw
//! addresses, down to the launch. Two places still hold raw `u64` addresses, because cudarc has
//! no typed form for them: (1) cudarc's own launch builder takes typed slices but no launch
//! attributes, and programmatic dependent launch is one, so [`launch_grid`] calls
//! cuLaunchKernelEx itself and takes each slice's address there ([`Arg`]); (2) the plan structs
//! the kernels take by value (`Layout`, `MmLayout`, `FpLayout`) hold their tables' addresses, as the kernels'
//! C structs do, and the pipeline that builds one owns those tables for as long as it lives.
//! Graph capture bakes the addresses of the buffers a step launched with into the graph; the
//! engine's graphs ([`super::graphs::Graphs`]) are therefore only replayed on the buffers they
//! were captured with, which the engine owns for as long as the graphs.

use super::module::{cuda_err, Device, Timer};
use crate::engine::EngineError;
use cudarc::driver::{sys, CudaFunction, CudaGraph, CudaModule, CudaSlice, DevicePtr};
use std::ffi::c_void;
use std::sync::Arc;

/// Flags of a squaring launch that every arithmetic's kernels take (FLAG_ADVANCE and FLAG_LL
/// of kernels/goldilocks/ops.cuh, MM_ADVANCE and MM_LL of kernels/m61m31/pipeline.cuh, FS_ADVANCE
/// and FS_LL of kernels/common/pipeline.cuh): double
/// the shift count first; subtract 2·2^s in the carry walk.
pub(crate) const ADVANCE: u32 = 4;
pub(crate) const LL: u32 = 8;

/// A residue on the device: n digit words and its pending carries (one word per segment, or
/// two: [`super::arith::Pipeline::carry_width`]).
#[derive(Clone, Copy)]
pub(crate) struct Res<'a> {
    pub x: &'a CudaSlice<u64>,
    pub carries: &'a CudaSlice<i64>,
}

/// i128 pending carries as the device stores them (M61·M31's and FP64's kernels: two words each,
/// low first).
pub(crate) fn carries_to_words(c: &[i128]) -> Vec<i64> {
    c.iter().flat_map(|&v| [v as i64, (v >> 64) as i64]).collect()
}

/// The i128 pending carries in the device's words ([`carries_to_words`] undone).
pub(crate) fn carries_from_words(w: &[i64]) -> Vec<i128> {
    w.chunks_exact(2).map(|c| (i128::from(c[1]) << 64) | i128::from(c[0] as u64)).collect()
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
/// `args` must match `f`'s parameter list in number, order and type, and every buffer among
/// them (and every address a plan struct among them holds) must be a buffer of this device at
/// least as large as the kernel indexes for `shape` (for the engine's kernels: sized from the
/// plan they index with), alive until the launch has run.
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
    // A buffer's parameter is its address: each gets a slot here, which lives through the call.
    let mut slots = vec![0u64; args.len()];
    let mut params: Vec<*mut c_void> = args.iter().zip(slots.iter_mut()).map(|(a, slot)| a.param(dev, slot)).collect();
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

/// A buffer's raw device address, for the plan structs the kernels take (see the module doc)
/// and the driver calls cudarc has no typed form of.
pub(crate) fn addr<T>(dev: &Device, s: &CudaSlice<T>) -> u64 {
    let (ptr, _sync) = s.device_ptr(&dev.stream);
    ptr
}

/// Queue a copy of `from` over `to` (of the same length).
///
/// Device buffers are written through shared references here as by every launch: what the GPU
/// writes is no Rust memory, and cudarc's `&mut` serves its event tracking, which the engine's
/// context turns off (module.rs).
pub(crate) fn copy<T>(dev: &Device, to: &CudaSlice<T>, from: &CudaSlice<T>) -> Result<(), EngineError> {
    if to.len() != from.len() {
        return Err(EngineError::Other(format!("copy of {} words over {}", from.len(), to.len())));
    }
    let bytes = from.len() * std::mem::size_of::<T>();
    // SAFETY: two live buffers of this device of `bytes` bytes each, the copy queued on its stream.
    unsafe { cudarc::driver::result::memcpy_dtod_async(addr(dev, to), addr(dev, from), bytes, dev.stream.cu_stream()) }
        .map_err(cuda_err("copy"))
}

/// Flip bit `bit` of word `word` (taken modulo its length) of `x` (fault injection), with the
/// flip_bit kernel (kernels/common/fault_inject.cuh) of `module`, an engine unit's.
pub(crate) fn flip_bit(
    dev: &Device,
    module: &Arc<CudaModule>,
    x: &CudaSlice<u64>,
    word: usize,
    bit: u32,
) -> Result<(), EngineError> {
    let word = (word % x.len()) as u64;
    let f = super::module::function(module, "flip_bit")?;
    // SAFETY: flip_bit(u64* x, u64 word, u32 bit), and word lies inside x.
    unsafe { launch(dev, &f, Shape { blocks: 1, threads: 1, shared_bytes: 0 }, &[x, &word, &bit]) }
}

/// A kernel argument: cuLaunchKernelEx takes the address of each argument's value; a buffer's
/// value is its device address, which `slot` holds through the launch.
pub(crate) trait Arg {
    fn param(&self, dev: &Device, slot: &mut u64) -> *mut c_void;
}

impl<T> Arg for CudaSlice<T> {
    fn param(&self, dev: &Device, slot: &mut u64) -> *mut c_void {
        *slot = addr(dev, self);
        slot as *mut u64 as *mut c_void
    }
}

/// Arguments passed by value (scalars and the plan structs the kernels declare).
macro_rules! by_value {
    ($($t:ty),*) => {$(
        impl $crate::gpu::launch::Arg for $t {
            fn param(
                &self,
                _dev: &$crate::gpu::module::Device,
                _slot: &mut u64,
            ) -> *mut std::ffi::c_void {
                self as *const $t as *mut std::ffi::c_void
            }
        }
    )*};
}
by_value!(u32, u64, f64);
pub(crate) use by_value;

#[cfg(test)]
mod tests {
    use super::*;

    /// Two words a carry, low word first, as kernels/m61m31/ and kernels/fp64/ read and write them.
    #[test]
    fn carries_are_two_words_low_first() {
        let c = [0i128, -1, 1 << 64, -(1 << 64) - 5, i128::from(i64::MIN) * 3, (1i128 << 100) + 7];
        let w = carries_to_words(&c);
        assert_eq!(&w[..6], &[0, 0, -1, -1, 0, 1]);
        assert_eq!(carries_from_words(&w), c);
    }

    quickcheck::quickcheck! {
        fn carries_round_trip(c: Vec<i128>) -> bool {
            carries_from_words(&carries_to_words(&c)) == c
        }
    }
}
