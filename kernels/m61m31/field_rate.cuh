// gpu-selftest field-rate, the second arithmetic (issue 24): the throughput of the GF(M61),
// GF(M31) and GF(M_q^2) operations of m61m31/fields.cuh in the style of goldilocks/field_rate.cuh (values in
// registers, no memory traffic, the GPU full of threads, one word per thread stored at the end).
// Per round and thread (src/gpu/selftest/rate.rs counts them; F = m61 or m31):
//   rate_F_addsub: 32 add+sub pairs (m61: folded each, m31: in [0, P]) on 32 values;
//   rate_F_mul:    32 products, by 8 values held in registers;
//   rate_F_shl:    32 products by run-time powers of 2 (as the IBDWT weights take them);
//   rate_Fc_bfly:  16 forward radix-2 butterflies with a general twiddle (cx_bfly: an add, a
//                  subtract and a product by 3) on 16 complex values, 8 twiddles in registers;
//   rate_Fc_mul3 / rate_Fc_mul4: 16 complex products (by 3 / 4 base products);
//   rate_Fc_radix4: 8 radix-4 DFTs (cx_radix4, twiddle i) on 16 complex values, i.e. 32
//                  radix-2 butterflies;
//   rate_Fc_w8:    16 products by w8 (two shifts);
//   rate_pair_bfly: 8 butterflies of cx_bfly in each field, interleaved as a transform of both
//                  would run them (8 complex values and 4 twiddles of each field);
//   rate_crt:      16 CRTs of (M61, M31) pairs to a centered 92-bit integer (fed back);
//   rate_copy:     a copy of a large buffer, for the memory bandwidth (no register-only rate).
#pragma once
#include "m61m31/fields.cuh"

template <class F, int N>
__device__ __forceinline__ void mf_init(typename F::W* v, u64 seed, u64 salt) {
    const u64 t = (seed ^ salt) ^ (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
    for (int i = 0; i < N; i++) v[i] = F::from_u64(t * (2 * i + 1) + salt);
}

template <class F, int N>
__device__ __forceinline__ void mf_init_cx(Cx<F>* v, u64 seed, u64 salt) {
    typename F::W w[2 * N];
    mf_init<F, 2 * N>(w, seed, salt);
#pragma unroll
    for (int i = 0; i < N; i++) v[i] = {w[2 * i], w[2 * i + 1]};
}

template <class W, int N>
__device__ __forceinline__ u64 mf_xor(const W* v) {
    u64 x = 0;
#pragma unroll
    for (int i = 0; i < N; i++) x ^= (u64)v[i];
    return x;
}

template <class F, int N>
__device__ __forceinline__ u64 mf_xor_cx(const Cx<F>* v) {
    u64 x = 0;
#pragma unroll
    for (int i = 0; i < N; i++) x ^= (u64)v[i].re ^ ((u64)v[i].im << 1);
    return x;
}

__device__ __forceinline__ void mf_store(u64* out, u64 x) { out[blockIdx.x * blockDim.x + threadIdx.x] = x; }

template <class F>
__device__ __forceinline__ void mf_addsub(u64* out, u32 rounds, u64 seed) {
    typename F::W v[32];
    mf_init<F, 32>(v, seed, 1);
    for (u32 r = 0; r < rounds; r++) {
#pragma unroll
        for (int i = 0; i < 16; i++) {
            const typename F::W a = v[i], b = v[i + 16];
            v[i] = F::add(a, b);
            v[i + 16] = F::sub(a, b);
        }
#pragma unroll
        for (int i = 0; i < 32; i += 2) {
            const typename F::W a = v[i], b = v[i + 1];
            v[i] = F::add(a, b);
            v[i + 1] = F::sub(a, b);
        }
    }
    mf_store(out, mf_xor<typename F::W, 32>(v));
}

template <class F>
__device__ __forceinline__ void mf_mul(u64* out, u32 rounds, u64 seed) {
    typename F::W v[32], w[8];
    mf_init<F, 32>(v, seed, 2);
    mf_init<F, 8>(w, seed, 3);
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < 32; i++) v[i] = F::mul(v[i], w[i & 7]);
    mf_store(out, mf_xor<typename F::W, 32>(v));
}

template <class F>
__device__ __forceinline__ void mf_shl(u64* out, u32 rounds, u64 seed) {
    typename F::W v[32];
    u32 e[8];
    mf_init<F, 32>(v, seed, 4);
#pragma unroll
    for (int i = 0; i < 8; i++) e[i] = 1 + (u32)((seed >> (5 * i)) % (F::Q - 1));
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < 32; i++) v[i] = F::shl(v[i], e[i & 7]);
    mf_store(out, mf_xor<typename F::W, 32>(v));
}

// Butterflies (i, i + N/2), then (2i, 2i + 1), with twiddles w[i mod N/2]: N butterflies a round.
template <class F, int N>
__device__ __forceinline__ void mf_bfly_round(Cx<F>* v, const Cx<F>* w) {
#pragma unroll
    for (int i = 0; i < N / 2; i++) cx_bfly<F>(v[i], v[i + N / 2], w[i]);
#pragma unroll
    for (int i = 0; i < N / 2; i++) cx_bfly<F>(v[2 * i], v[2 * i + 1], w[i]);
}

template <class F>
__device__ __forceinline__ void mf_cx_bfly(u64* out, u32 rounds, u64 seed) {
    Cx<F> v[16], w[8];
    mf_init_cx<F, 16>(v, seed, 5);
    mf_init_cx<F, 8>(w, seed, 6);
    for (u32 r = 0; r < rounds; r++) mf_bfly_round<F, 16>(v, w);
    mf_store(out, mf_xor_cx<F, 16>(v));
}

template <class F, bool THREE>
__device__ __forceinline__ void mf_cx_mul(u64* out, u32 rounds, u64 seed) {
    Cx<F> v[16], w[8];
    mf_init_cx<F, 16>(v, seed, 7);
    mf_init_cx<F, 8>(w, seed, 8);
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < 16; i++) v[i] = THREE ? cx_mul3(v[i], w[i & 7]) : cx_mul4(v[i], w[i & 7]);
    mf_store(out, mf_xor_cx<F, 16>(v));
}

template <class F>
__device__ __forceinline__ void mf_cx_radix4(u64* out, u32 rounds, u64 seed) {
    Cx<F> v[16];
    mf_init_cx<F, 16>(v, seed, 9);
    for (u32 r = 0; r < rounds; r++) {
#pragma unroll
        for (int i = 0; i < 4; i++) cx_radix4<F>(v[i], v[i + 4], v[i + 8], v[i + 12]);
#pragma unroll
        for (int i = 0; i < 16; i += 4) cx_radix4<F>(v[i], v[i + 1], v[i + 2], v[i + 3]);
    }
    mf_store(out, mf_xor_cx<F, 16>(v));
}

template <class F>
__device__ __forceinline__ void mf_cx_w8(u64* out, u32 rounds, u64 seed) {
    Cx<F> v[16];
    mf_init_cx<F, 16>(v, seed, 10);
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < 16; i++) v[i] = cx_w8<F>(v[i]);
    mf_store(out, mf_xor_cx<F, 16>(v));
}

#define RATE_FIELD(NAME, F)                                                                                   \
    extern "C" __global__ void rate_##NAME##_addsub(u64* out, u32 rounds, u64 seed) { mf_addsub<F>(out, rounds, seed); } \
    extern "C" __global__ void rate_##NAME##_mul(u64* out, u32 rounds, u64 seed) { mf_mul<F>(out, rounds, seed); }       \
    extern "C" __global__ void rate_##NAME##_shl(u64* out, u32 rounds, u64 seed) { mf_shl<F>(out, rounds, seed); }       \
    extern "C" __global__ void rate_##NAME##c_bfly(u64* out, u32 rounds, u64 seed) {                                    \
        mf_cx_bfly<F>(out, rounds, seed);                                                                                \
    }                                                                                                                    \
    extern "C" __global__ void rate_##NAME##c_mul3(u64* out, u32 rounds, u64 seed) {                                    \
        mf_cx_mul<F, true>(out, rounds, seed);                                                                           \
    }                                                                                                                    \
    extern "C" __global__ void rate_##NAME##c_mul4(u64* out, u32 rounds, u64 seed) {                                    \
        mf_cx_mul<F, false>(out, rounds, seed);                                                                          \
    }                                                                                                                    \
    extern "C" __global__ void rate_##NAME##c_radix4(u64* out, u32 rounds, u64 seed) {                                  \
        mf_cx_radix4<F>(out, rounds, seed);                                                                              \
    }                                                                                                                    \
    extern "C" __global__ void rate_##NAME##c_w8(u64* out, u32 rounds, u64 seed) { mf_cx_w8<F>(out, rounds, seed); }
RATE_FIELD(m61, F61)
RATE_FIELD(m31, F31)

extern "C" __global__ void rate_pair_bfly(u64* out, u32 rounds, u64 seed) {
    Cx<F61> a[8], wa[4];
    Cx<F31> b[8], wb[4];
    mf_init_cx<F61, 8>(a, seed, 11);
    mf_init_cx<F61, 4>(wa, seed, 12);
    mf_init_cx<F31, 8>(b, seed, 13);
    mf_init_cx<F31, 4>(wb, seed, 14);
    for (u32 r = 0; r < rounds; r++) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            cx_bfly<F61>(a[i], a[i + 4], wa[i]);
            cx_bfly<F31>(b[i], b[i + 4], wb[i]);
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            cx_bfly<F61>(a[2 * i], a[2 * i + 1], wa[i]);
            cx_bfly<F31>(b[2 * i], b[2 * i + 1], wb[i]);
        }
    }
    mf_store(out, mf_xor_cx<F61, 8>(a) ^ mf_xor_cx<F31, 8>(b));
}

extern "C" __global__ void rate_crt(u64* out, u32 rounds, u64 seed) {
    u64 a[16];
    u32 b[16];
    mf_init<F61, 16>(a, seed, 15);
    mf_init<F31, 16>(b, seed, 16);
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < 16; i++) {
            u64 lo, hi;
            crt(a[i], b[i], lo, hi);
            a[i] = m61_fold(lo);
            b[i] = m31_fold((u32)hi & M31_P);
        }
    mf_store(out, mf_xor<u64, 16>(a) ^ mf_xor<u32, 16>(b));
}

// The memory bandwidth the memory floor takes: a grid-stride copy of n words (src/gpu/selftest/rate.rs).
extern "C" __global__ void rate_copy(const u64* in, u64* out, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = in[i];
}
