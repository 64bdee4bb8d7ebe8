// The full-length weight tables of a plan (Layout.w, Layout.iw), expanded on the device from the
// plan's two-level tables (src/transform/plan.rs weight, inv_weight): a_j = hi[e >> lo_bits]·lo[e & mask]
// with e = (−pj) mod n, and likewise 1/(n a_j). A pass then weighs or unweighs a value with one
// multiplication and one coalesced load, instead of two multiplications, the exponent and two
// table loads (bench/RESULTS.md, 2026-11-25).
#pragma once
#include "goldilocks/field.cuh"

extern "C" __global__ void expand_weights(u64* w, u64* iw, const u64* w_hi, const u64* w_lo, const u64* iw_hi,
                                          const u64* iw_lo, u32 p, u32 log_n, u32 lo_bits) {
    const u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >> log_n) return;
    const u64 e = (0ull - (u64)p * j) & ((1ull << log_n) - 1);
    const u64 hi = e >> lo_bits, lo = e & ((1ull << lo_bits) - 1);
    w[j] = gl_mul(w_hi[hi], w_lo[lo]);
    iw[j] = gl_mul(iw_hi[hi], iw_lo[lo]);
}
