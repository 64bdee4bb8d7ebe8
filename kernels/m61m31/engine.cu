// The M61·M31 arithmetic's NVRTC unit (kernels/manifest.txt): every kernel
// src/gpu/m61m31/pipeline.rs launches, and gpu-selftest's check of the field operations.
#include "m61m31/pipeline.cuh"
#include "common/fault_inject.cuh"
#include "m61m31/field_check.cuh"
