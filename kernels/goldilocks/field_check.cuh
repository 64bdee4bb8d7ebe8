// gpu-selftest's check of the field operations (goldilocks/field.cuh) against the CPU field
// (src/transform/goldilocks.rs) on edge words: for each pair i, out[4i .. 4i+4] = a + b, a - b (of a and b
// reduced below P, as those two require), a·b and a·2^(i mod 96) (of the words as they are:
// gl_mul and gl_shl take any).
#pragma once
#include "goldilocks/field.cuh"

// gl_shl<e> for a run-time e < 96.
template <int E>
__device__ u64 shl_any(u64 x, u32 e) {
    if constexpr (E < 96) {
        return e == E ? gl_shl<E>(x) : shl_any<E + 1>(x, e);
    } else {
        return 0;
    }
}

extern "C" __global__ void field_ops(const u64* a, const u64* b, u64* out, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u64 ca = a[i] >= GL_P ? a[i] - GL_P : a[i], cb = b[i] >= GL_P ? b[i] - GL_P : b[i];
    out[4 * i] = gl_add(ca, cb);
    out[4 * i + 1] = gl_sub(ca, cb);
    out[4 * i + 2] = gl_mul(a[i], b[i]);
    out[4 * i + 3] = shl_any<0>(a[i], i % 96);
}
