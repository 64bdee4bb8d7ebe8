// Global-memory NTT passes: R radix-2 stages per pass (R = 1..5), 2^R values per thread in
// registers. A pass covers the stage half-sizes s*2^(R-1) down to s (forward, DIF) or s up to
// s*2^(R-1) (inverse, DIT); thread t owns the values B + i + k*s, k < 2^R. The first forward pass
// weighs the digits on load; the last inverse pass unweighs on store. Same butterflies as
// src/ntt.rs forward_stages / inverse_stages.

template <int R>
__device__ __forceinline__ void fwd_pass(u64* x, const Layout& L, u32 s_log, u32 weigh) {
    const u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= (1ull << (L.log_n - R))) return;
    const u64 s = 1ull << s_log;
    const u64 i = tid & (s - 1);
    const u64 base = ((tid >> s_log) << (s_log + R)) + i;
    u64 v[1 << R];
#pragma unroll
    for (int k = 0; k < (1 << R); k++) {
        u64 j = base + k * s;
        v[k] = weigh ? weigh_digit(L, x[j], j) : x[j];
    }
#pragma unroll
    for (int q = R - 1; q >= 0; q--) {
        const u64 m = s << q;
#pragma unroll
        for (int k = 0; k < (1 << R); k++) {
            if (k & (1 << q)) continue;
            u64 a = v[k], b = v[k + (1 << q)];
            v[k] = gl_add(a, b);
            v[k + (1 << q)] = gl_mul(gl_sub(a, b), L.tw[m + i + (k & ((1 << q) - 1)) * s]);
        }
    }
#pragma unroll
    for (int k = 0; k < (1 << R); k++) x[base + k * s] = v[k];
}

template <int R>
__device__ __forceinline__ void inv_pass(u64* x, const Layout& L, u32 s_log, u32 unweigh) {
    const u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= (1ull << (L.log_n - R))) return;
    const u64 s = 1ull << s_log;
    const u64 i = tid & (s - 1);
    const u64 base = ((tid >> s_log) << (s_log + R)) + i;
    u64 v[1 << R];
#pragma unroll
    for (int k = 0; k < (1 << R); k++) v[k] = x[base + k * s];
#pragma unroll
    for (int q = 0; q < R; q++) {
        const u64 m = s << q;
#pragma unroll
        for (int k = 0; k < (1 << R); k++) {
            if (k & (1 << q)) continue;
            u64 a = v[k];
            u64 b = gl_mul(v[k + (1 << q)], L.itw[m + i + (k & ((1 << q) - 1)) * s]);
            v[k] = gl_add(a, b);
            v[k + (1 << q)] = gl_sub(a, b);
        }
    }
#pragma unroll
    for (int k = 0; k < (1 << R); k++) {
        u64 j = base + k * s;
        x[j] = unweigh ? unweigh_value(L, v[k], j) : v[k];
    }
}

#define PASS_KERNELS(R)                                                                   \
    extern "C" __global__ void fwd_pass_r##R(u64* x, Layout L, u32 s_log, u32 weigh) {    \
        fwd_pass<R>(x, L, s_log, weigh);                                                  \
    }                                                                                     \
    extern "C" __global__ void inv_pass_r##R(u64* x, Layout L, u32 s_log, u32 unweigh) { \
        inv_pass<R>(x, L, s_log, unweigh);                                                \
    }

PASS_KERNELS(1)
PASS_KERNELS(2)
PASS_KERNELS(3)
PASS_KERNELS(4)
PASS_KERNELS(5)
