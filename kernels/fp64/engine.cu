// The FP64 arithmetic's NVRTC unit (kernels/manifest.txt): every kernel src/gpu/fp64/pipeline.rs
// launches.
#include "fp64/pipeline.cuh"
#include "common/fault_inject.cuh"
