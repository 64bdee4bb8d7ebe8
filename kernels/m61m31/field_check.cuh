// gpu-selftest's check of the second arithmetic's field operations (fields.cuh), against
// src/gpu/selftest/mersenne.rs:
// for each i, with complex values x = (a[i], b[i]), y, z, u the same at i + 1, i + 2, i + 3 (mod n),
// a[] and b[] partial M61 values (< 2^61 + 8) and their low 31 bits the M31 values (in [0, P]),
// out[MERSENNE_OUT i ..] holds, canonical: field_ops_fq's 22 words for M61 (e = i mod 61), then for
// M31 (e = i mod 31), then crt(a[i], b[i] & P) as (lo, hi).
#pragma once
#include "m61m31/fields.cuh"

#define MERSENNE_OUT 46

template <class F>
__device__ void field_ops_fq(Cx<F> x, Cx<F> y, Cx<F> z, Cx<F> u, u32 e, u64* o) {
    o[0] = F::canon(F::add(x.re, x.im));
    o[1] = F::canon(F::sub(x.re, x.im));
    o[2] = F::canon(F::mul(x.re, x.im));
    o[3] = F::canon(F::shl(x.re, e));
    const Cx<F> m3 = cx_mul3(x, y), m4 = cx_mul4(x, y), w = cx_w8<F>(x);
    Cx<F> s = x, t = y;
    cx_bfly<F>(s, t, z);
    Cx<F> v[4] = {x, y, z, u};
    cx_radix4<F>(v[0], v[1], v[2], v[3]);
    const Cx<F> all[9] = {m3, m4, w, s, t, v[0], v[1], v[2], v[3]};
#pragma unroll
    for (int k = 0; k < 9; k++) {
        o[4 + 2 * k] = F::canon(all[k].re);
        o[5 + 2 * k] = F::canon(all[k].im);
    }
}

extern "C" __global__ void field_ops_m61m31(const u64* a, const u64* b, u64* out, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u64* o = out + (u64)MERSENNE_OUT * i;
    Cx<F61> c61[4];
    Cx<F31> c31[4];
#pragma unroll
    for (u32 k = 0; k < 4; k++) {
        const u32 j = (u32)(((u64)i + k) % n);
        c61[k] = {a[j], b[j]};
        c31[k] = {(u32)(a[j] & M31_P), (u32)(b[j] & M31_P)};
    }
    field_ops_fq<F61>(c61[0], c61[1], c61[2], c61[3], i % 61, o);
    field_ops_fq<F31>(c31[0], c31[1], c31[2], c31[3], i % 31, o + 22);
    crt(a[i], (u32)(b[i] & M31_P), o[44], o[45]);
}
