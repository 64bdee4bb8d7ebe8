// gpu-selftest's checks of the field operations (kernels/manifest.txt): both arithmetics' field
// operations against the CPU's, a unit of its own so that no engine start compiles them.
#include "goldilocks/field_check.cuh"
#include "m61m31/field_check.cuh"
