// gpu-selftest field-rate's NVRTC unit (kernels/manifest.txt): every arithmetic's rate kernels,
// a unit of its own so that no engine start compiles them (they add ~3 s, 14%, to a first
// compilation).
#include "goldilocks/field_rate.cuh"
#include "m61m31/field_rate.cuh"
#include "fp64/field_rate.cuh"
