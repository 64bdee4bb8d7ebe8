// gpu-selftest field-rate: the throughput of the field operations with nothing else in the way
// (values in registers, no memory traffic, no barriers, the GPU full of threads), which bounds
// any kernel built from them (src/gpu/selftest/rate.rs). Each thread holds 32 values (64 for lines of 64)
// and runs `rounds` rounds of:
//   rate_lines<Q> (Q = 1..6): the forward and the inverse DFT of each of its lines of 2^Q values,
//                with power-of-2 twiddles (dif_pow2<Q>, dit_pow2<Q>, as the passes' lines), i.e.
//                Q butterflies per value (rate_lines1: twiddle 1 only, gl_add and gl_sub);
//   rate_mul:    one product gl_mul per value, by 8 values held in registers.
// One word per thread is stored at the end, so that nothing is optimized away.
#pragma once
#include "goldilocks/stages.cuh"

template <int N>
__device__ __forceinline__ void rate_init(u64* v, u64 seed) {
    const u64 t = seed ^ (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
    for (int i = 0; i < N; i++) v[i] = (t * (2 * i + 1)) % GL_P;
}

template <int N>
__device__ __forceinline__ void rate_store(u64* out, const u64* v) {
    u64 x = 0;
#pragma unroll
    for (int i = 0; i < N; i++) x ^= v[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

template <int Q>
__device__ __forceinline__ void rate_lines(u64* out, u32 rounds, u64 seed) {
    constexpr int N = Q == 6 ? 64 : 32;
    u64 v[N];
    rate_init<N>(v, seed);
    for (u32 r = 0; r < rounds; r++) {
#pragma unroll
        for (int j = 0; j < N; j += 1 << Q) {
            dif_pow2<Q>(v + j);
            dit_pow2<Q>(v + j);
        }
    }
    rate_store<N>(out, v);
}

#define RATE_LINES(Q) \
    extern "C" __global__ void rate_lines##Q(u64* out, u32 rounds, u64 seed) { rate_lines<Q>(out, rounds, seed); }
RATE_LINES(1)
RATE_LINES(2)
RATE_LINES(3)
RATE_LINES(4)
RATE_LINES(5)
RATE_LINES(6)

extern "C" __global__ void rate_mul(u64* out, u32 rounds, u64 seed) {
    u64 v[32], w[8];
    rate_init<32>(v, seed);
#pragma unroll
    for (int i = 0; i < 8; i++) w[i] = gl_add(v[4 * i], v[4 * i + 3]);
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < 32; i++) v[i] = gl_mul(v[i], w[i & 7]);
    rate_store<32>(out, v);
}
