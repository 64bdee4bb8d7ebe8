// The M61·M31 arithmetic's NVRTC unit (kernels/manifest.txt): every kernel
// src/gpu/m61m31/pipeline.rs launches (gpu/m61m31/kernels.rs loads them).
#include "m61m31/pipeline.cuh"
#include "common/fault_inject.cuh"
