//! The CUDA libraries themselves, before any context: whether the driver and NVRTC can be
//! loaded (else [`EngineError::NoGpu`], never a panic), their versions, how many GPUs the
//! driver sees and their names. Below `module` (which opens a device) and `warm` (which opens
//! them ahead).

use crate::engine::EngineError;
use crate::trace;
use cudarc::driver::{sys, CudaContext};

pub(super) fn driver_version() -> i32 {
    let mut v = 0i32;
    // SAFETY: plain out-parameter call into the driver, after is_culib_present.
    let _ = unsafe { sys::cuDriverGetVersion(&mut v) };
    v
}

pub(super) fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0i32, 0i32);
    // SAFETY: plain out-parameter call, after is_culib_present.
    let _ = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// Check that the libraries are there before anything in cudarc touches them.
pub(super) fn libraries_present() -> Result<(), EngineError> {
    // SAFETY: these only try to dlopen the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(EngineError::NoGpu("the NVIDIA driver library (libcuda.so) was not found".into()));
    }
    trace::mark("gpu: libcuda present (dlopen)");
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(EngineError::NoGpu(
            "the CUDA run-time compiler library (libnvrtc.so, CUDA 13) was not found".into(),
        ));
    }
    trace::mark("gpu: libnvrtc present (dlopen, dlclose)");
    Ok(())
}

/// How many CUDA devices the driver sees (an error when the CUDA libraries are missing).
pub fn device_count() -> Result<usize, EngineError> {
    libraries_present()?;
    CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| EngineError::NoGpu(format!("cannot count CUDA devices: {e:?}")))
}

/// The name the driver gives GPU `ordinal` (e.g. "NVIDIA H100 80GB HBM3"), no context opened.
pub fn device_name(ordinal: usize) -> Result<String, EngineError> {
    libraries_present()?;
    let ordinal_c = i32::try_from(ordinal).unwrap_or(i32::MAX);
    cudarc::driver::result::init()
        .and_then(|()| cudarc::driver::result::device::get(ordinal_c))
        .and_then(cudarc::driver::result::device::get_name)
        .map_err(|e| EngineError::NoGpu(format!("cannot name CUDA device {ordinal}: {e:?}")))
}
