// The Goldilocks arithmetic's NVRTC unit (kernels/manifest.txt): every kernel src/gpu/goldilocks/passes.rs
// and src/gpu/goldilocks/small.rs launch (gpu/goldilocks/kernels.rs loads them).
#include "goldilocks/ntt_block.cuh"
#include "goldilocks/small.cuh"
#include "common/fault_inject.cuh"
#include "goldilocks/weights.cuh"
