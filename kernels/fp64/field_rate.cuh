// The FP64 field's checks and rates (issue 37), for `gpu-selftest field-rate`
// (src/gpu/selftest/fp64.rs); the field itself is fp64/field.cuh:
//   fp64_check:     the operations on given inputs, for the comparison with the CPU;
//   fp64_crt_check: the CRT of given residue pairs to 128-bit integers;
//   rate_fp64_mul:  32 products per round and thread, by 8 values in registers;
//   rate_fp64_bfly: 64 radix-2 DIF butterflies per round and thread (two lines of 16 values,
//                   4 stages), the sums reduced every second stage (the lazy schedule);
//   rate_fp64_crt:  16 CRTs per round and thread (fed back).

#pragma once
#include "fp64/field.cuh"

// Per element i: out[6i ..] = mul(a, b), center(4x), dif(x, y, w), dit(x, y, w).
extern "C" __global__ void fp64_check(const double* a, const double* b, const double* x, const double* y,
                                      const double* w, double* out, u32 n, double p, double pinv) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Fp f = {p, pinv};
    double* o = out + 6 * (size_t)i;
    o[0] = fp_mul(a[i], b[i], f);
    o[1] = fp_center(__dmul_rn(4.0, x[i]), f);
    double u = x[i], v = y[i];
    fp_dif(u, v, w[i], f);
    o[2] = u;
    o[3] = v;
    u = x[i];
    v = y[i];
    fp_dit(u, v, w[i], f);
    o[4] = u;
    o[5] = v;
}

extern "C" __global__ void fp64_crt_check(const double* x1, const double* x2, u64* out, u32 n, double p1,
                                          double pinv1, double p2, double pinv2, double inv) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fp_crt(x1[i], x2[i], Fp{p1, pinv1}, Fp{p2, pinv2}, inv, out[2 * (size_t)i], out[2 * (size_t)i + 1]);
}

// The rate kernels run in P1 (the rates do not depend on the prime).
#define FP_P1 25168793567233.0
#define FP_P2 331363165143041.0

template <int N>
__device__ __forceinline__ void fp_init(double* v, u64 seed, u64 salt) {
    const u64 t = (seed ^ salt) ^ (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
    for (int i = 0; i < N; i++) v[i] = (double)((t * (2 * i + 1)) % 12582912000000ULL) - 6291456000000.0;
}

template <int N>
__device__ __forceinline__ void fp_store(u64* out, const double* v) {
    u64 x = 0;
#pragma unroll
    for (int i = 0; i < N; i++) x ^= (u64)__double_as_longlong(v[i]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

extern "C" __global__ void rate_fp64_mul(u64* out, u32 rounds, u64 seed) {
    const Fp f = {FP_P1, 1.0 / FP_P1};
    double v[32], w[8];
    fp_init<32>(v, seed, 1);
    fp_init<8>(w, seed, 2);
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < 32; i++) v[i] = fp_mul(v[i], w[i & 7], f);
    fp_store<32>(out, v);
}

extern "C" __global__ void rate_fp64_bfly(u64* out, u32 rounds, u64 seed) {
    const Fp f = {FP_P1, 1.0 / FP_P1};
    double v[32], w[8];
    fp_init<32>(v, seed, 3);
    fp_init<8>(w, seed, 4);
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int line = 0; line < 32; line += 16)
#pragma unroll
            for (int s = 0; s < 4; s++) {
                const int m = 8 >> s;
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    const int lo = line + (j / m) * 2 * m + j % m;
                    fp_dif(v[lo], v[lo + m], w[(j + s) & 7], f);
                    if (s & 1) v[lo] = fp_reduce(v[lo], f);
                }
            }
    fp_store<32>(out, v);
}

extern "C" __global__ void rate_fp64_crt(u64* out, u32 rounds, u64 seed) {
    const Fp f1 = {FP_P1, 1.0 / FP_P1}, f2 = {FP_P2, 1.0 / FP_P2};
    const double inv = 12345.0;  // any residue: the rate does not depend on it
    double x[16], y[16];
    fp_init<16>(x, seed, 5);
    fp_init<16>(y, seed, 6);
    u64 acc = 0;
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < 16; i++) {
            u64 lo, hi;
            fp_crt(x[i], y[i], f1, f2, inv, lo, hi);
            acc ^= lo ^ hi;
            x[i] = __dadd_rn(x[i], 1.0);
        }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
