// The M61·M31 arithmetic's squaring on the device (issue 24): the kernels mirror, stage by stage,
// the CPU twin src/transform/m61m31.rs (weight_in, forward_radix3, forward_stages, pair_step,
// inverse_stages, inverse_radix3, unweight_out, recombine) and the i128 carry of
// src/transform/twin.rs (carry_walk, carry_fixup), so that every kernel's output can be compared
// with the twin's (src/gpu/selftest/m61m31.rs). src/gpu/m61m31/pipeline.rs launches them.
//
// A residue is n digits (i64 as u64 words) plus one pending carry per segment of seg_len digits,
// an i128 here (the walk's carries out exceed 64 bits at the longest lengths). A squaring:
//   mm_weigh     pending carries applied (the fix-up, recomputed by each thread of a segment's
//                first digits), digits weighted by rotations, packed: z_j = x_2j + i x_2j+1,
//                into both fields' complex vectors of N = n/2 values;
//   mm_radix3    (N = 3m) the radix-3 step between the three blocks of m;
//   mm_pass_r<R> R radix-2 DIF (forward) or DIT (inverse) stages over global memory, a thread
//                holding 2^R values in registers;
//   mm_block     the stages of half-size < 2^(log_c) on chunks of 2^log_c values in shared memory;
//   mm_pair      the right-angle pair step and the pointwise square or product;
//   mm_core      (N = 2^k) mm_block forward, mm_pair and mm_block inverse in one launch, a block
//                holding two chunks whose values pair with each other;
//   mm_carry     unweight (rotations, and 1/3), CRT to i128 (a thread per digit) and the carry
//                walk of each segment (a thread per segment), the LL term -2·2^s on the way.
// Every kernel but mm_weigh and mm_carry runs both fields at once: blockIdx.y = 0 is GF(M61^2),
// 1 is GF(M31^2). Launched with programmatic dependent launch, each waits for the previous kernel
// (griddepcontrol.wait) before touching memory.
#pragma once
#include "m61m31/fields.cuh"

typedef __int128 i128;

#define MM_ADVANCE 4
#define MM_LL 8

// One field's tables (device addresses) and constants; field for field MmTab in
// src/gpu/m61m31/pipeline.rs. tw[h + i] = w_2h^i, itw[h + i] = w_2h^-i, root[f] = w_N^f,
// rootc[a] = w_N^(bitrev(a) N / C) for a < C = 2^log_c (bitrev over log_c bits: the roots of the
// frequencies' high bits, in the storage order of a chunk).
struct MmTab {
    u64 tw, itw, root, rootc;
    u64 w3, iw3, inv_odd;  // w_3, w_3^-1 and 1/odd, base-field elements
    u32 inv_n;             // n^-1 mod q: digit j's weight is 2^(e_j inv_n mod q)
    u32 pad;
};

// The plan as these kernels see it (MmLayout in src/gpu/m61m31/pipeline.rs).
struct MmLayout {
    MmTab t[2];  // GF(M61^2), GF(M31^2)
    u32 p, n;    // exponent, real length
    u32 m, odd;  // N = n/2 = odd·m, m = 2^log_m
    u32 log_m, seg_len, fixup_depth, unscale;  // unscale = log2(n/odd) + 1: 2n = odd·2^unscale
};

__device__ __forceinline__ void mm_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// ---- field helpers for both GF(M_q^2) ----

template <class F>
__device__ __forceinline__ const MmTab& mm_tab(const MmLayout& L) {
    return L.t[F::Q == 61 ? 0 : 1];
}
template <class F>
__device__ __forceinline__ Cx<F>* mm_z(u64 z61, u64 z31) {
    return (Cx<F>*)(F::Q == 61 ? z61 : z31);
}
template <class F>
__device__ __forceinline__ typename F::W mm_neg(typename F::W x) {
    return F::sub(0, x);
}
template <class F>
__device__ __forceinline__ Cx<F> mm_scale(Cx<F> x, typename F::W b) {
    return {F::mul(x.re, b), F::mul(x.im, b)};
}
template <class F>
__device__ __forceinline__ Cx<F> mm_conj(Cx<F> x) {
    return {x.re, mm_neg<F>(x.im)};
}
// x·i = -im + re·i.
template <class F>
__device__ __forceinline__ Cx<F> mm_mul_i(Cx<F> x) {
    return {mm_neg<F>(x.im), x.re};
}
template <class F>
__device__ __forceinline__ Cx<F> mm_cneg(Cx<F> x) {
    return {mm_neg<F>(x.re), mm_neg<F>(x.im)};
}

// A digit |d| < 2^62 as an element of GF(M_q).
__device__ __forceinline__ u64 mm_from_i64(F61, i64 d) {
    return d >= 0 ? m61_fold((u64)d) : m61_fold((u64)(d + (i64)M61_4P));
}
__device__ __forceinline__ u32 mm_from_i64(F31, i64 d) {
    return d >= 0 ? m31_reduce64((u64)d) : m31_reduce64((u64)(d + ((i64)M31_P << 32)));
}

// ---- the digit layout (src/transform/plan.rs) ----

// x mod n and x / n for n = odd·2^(log_m + 1), odd in {1, 3}: a mask and a shift, and a
// division by the constant 3 (no 64-bit division by a run-time value).
__device__ __forceinline__ u64 mm_mod_n(const MmLayout& L, u64 x) {
    const u32 l = L.log_m + 1;
    const u64 lo = x & ((1ull << l) - 1);
    return L.odd == 1 ? lo : (((x >> l) % 3) << l) | lo;
}
__device__ __forceinline__ u64 mm_div_n(const MmLayout& L, u64 x) {
    const u64 hi = x >> (L.log_m + 1);
    return L.odd == 1 ? hi : hi / 3;
}

// Lowest bit of digit j: ceil(p j / n).
__device__ __forceinline__ u64 mm_start(const MmLayout& L, u64 j) { return mm_div_n(L, (u64)L.p * j + L.n - 1); }

// e_j = ceil(pj/n)·n - pj = (n - pj mod n) mod n, and the widths of digits j, j + 1, ... by the
// recurrence of Plan::widths_from: digit j is q + 1 bits wide iff e_j < f (p = q n + f).
struct MmWidths {
    u32 e, q, f, n;
    __device__ __forceinline__ MmWidths(const MmLayout& L, u64 j) {
        n = L.n;
        q = (u32)mm_div_n(L, L.p);
        f = (u32)mm_mod_n(L, L.p);
        const u32 r = (u32)mm_mod_n(L, (u64)L.p * j);
        e = r == 0 ? 0 : n - r;
    }
    __device__ __forceinline__ u32 next() {
        const bool wide = e < f;
        e = wide ? e + n - f : e - f;
        return q + wide;
    }
};

// The rotation s of digit j's weight 2^s in GF(M_q) from its e_j.
template <class F>
__device__ __forceinline__ u32 mm_weight_shift(const MmLayout& L, u32 e) {
    return (u32)((u64)(e % F::Q) * mm_tab<F>(L).inv_n % F::Q);
}

// x >> w (arithmetic) for 1 <= w <= 63 (every digit width): two 64-bit funnel shifts, where the
// general 128-bit shift also handles w >= 64.
__device__ __forceinline__ i128 mm_shr(i128 x, u32 w) {
    const u64 lo = (u64)x, hi = (u64)(x >> 64);
    const u64 rlo = (lo >> w) | (hi << (64 - w)), rhi = (u64)((i64)hi >> w);
    return (i128)(((unsigned __int128)rhi << 64) | rlo);
}

// The low w bits of x (1 <= w <= 63).
__device__ __forceinline__ u64 mm_low(i128 x, u32 w) { return (u64)x & ((1ull << w) - 1); }

// Balanced remainder d of t modulo 2^w in [-2^(w-1), 2^(w-1)) and the carry (t - d) / 2^w
// (src/transform/twin.rs balance), for 1 <= w <= 63.
__device__ __forceinline__ i64 mm_balance(i128 t, u32 w, i128* up) {
    const i64 half = (i64)1 << (w - 1);
    const i128 s = t + half;
    *up = mm_shr(s, w);
    return (i64)mm_low(s, w) - half;
}

// Digit j with its segment's pending carry applied (twin carry_fixup): the first fixup_depth
// digits of a segment are normalized in a chain from the carry out of the previous segment, and
// what is left is added to digit fixup_depth; each thread redoes the chain up to its digit.
__device__ __forceinline__ i64 mm_fixed_digit(const u64* x, const i128* carries, const MmLayout& L, u32 j) {
    const u32 K = L.seg_len, seg = j / K, k = j % K, F = L.fixup_depth;
    const i64 raw = (i64)x[j];
    if (k > F) return raw;
    const u32 segs = L.n / K, base = seg * K;
    i128 carry = carries[(seg + segs - 1) % segs];
    MmWidths ws(L, base);
    for (u32 i = 0; i < k; i++) {
        i128 up;
        mm_balance((i128)(i64)x[base + i] + carry, ws.next(), &up);
        carry = up;
    }
    if (k == F) return raw + (i64)carry;
    i128 up;
    return mm_balance((i128)raw + carry, ws.next(), &up);
}

// ---- 1. weight and pack ----

// z_j = d_2j 2^s_2j + i d_2j+1 2^s_2j+1 in both fields, from the digits with their pending
// carries; with MM_ADVANCE, thread 0 doubles the shift count mod p (nothing else reads it here).
extern "C" __global__ void mm_weigh(const u64* x, const i128* carries, u64 z61, u64 z31, u32* shift, MmLayout L,
                                    u32 flags) {
    mm_wait();
    const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if ((flags & MM_ADVANCE) && j == 0) shift[0] = (u32)((2ull * shift[0]) % L.p);
    if (j >= L.n / 2) return;
    const i64 d0 = mm_fixed_digit(x, carries, L, 2 * j), d1 = mm_fixed_digit(x, carries, L, 2 * j + 1);
    MmWidths ws(L, 2 * j);
    const u32 e0 = ws.e;
    ws.next();
    const u32 e1 = ws.e;
    ((Cx<F61>*)z61)[j] = {m61_shl(mm_from_i64(F61(), d0), mm_weight_shift<F61>(L, e0)),
                          m61_shl(mm_from_i64(F61(), d1), mm_weight_shift<F61>(L, e1))};
    ((Cx<F31>*)z31)[j] = {m31_shl(mm_from_i64(F31(), d0), mm_weight_shift<F31>(L, e0)),
                          m31_shl(mm_from_i64(F31(), d1), mm_weight_shift<F31>(L, e1))};
}

// ---- 2a. the radix-3 step (N = 3m) ----

template <class F>
__device__ __forceinline__ void mm_radix3_one(Cx<F>* z, const MmLayout& L, u32 i, bool inverse) {
    const MmTab& T = mm_tab<F>(L);
    const Cx<F>* root = (const Cx<F>*)T.root;
    const typename F::W w3 = (typename F::W)T.w3, iw3 = (typename F::W)T.iw3;
    const u32 m = L.m, N = 3 * m;
    if (!inverse) {
        const Cx<F> u0 = z[i], u1 = z[i + m], u2 = z[i + 2 * m];
        z[i] = cx_add(cx_add(u0, u1), u2);
        z[i + m] = cx_mul3(cx_add(cx_add(u0, mm_scale(u1, w3)), mm_scale(u2, iw3)), root[i]);
        z[i + 2 * m] = cx_mul3(cx_add(cx_add(u0, mm_scale(u1, iw3)), mm_scale(u2, w3)), root[2 * i]);
    } else {
        const Cx<F> v0 = z[i];
        const Cx<F> v1 = cx_mul3(z[i + m], root[(N - i) % N]);
        const Cx<F> v2 = cx_mul3(z[i + 2 * m], root[(N - 2 * i) % N]);
        z[i] = cx_add(cx_add(v0, v1), v2);
        z[i + m] = cx_add(cx_add(v0, mm_scale(v1, iw3)), mm_scale(v2, w3));
        z[i + 2 * m] = cx_add(cx_add(v0, mm_scale(v1, w3)), mm_scale(v2, iw3));
    }
}

extern "C" __global__ void mm_radix3(u64 z61, u64 z31, MmLayout L, u32 inverse) {
    mm_wait();
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= L.m) return;
    if (blockIdx.y == 0) {
        mm_radix3_one<F61>(mm_z<F61>(z61, z31), L, i, inverse);
    } else {
        mm_radix3_one<F31>(mm_z<F31>(z61, z31), L, i, inverse);
    }
}

// ---- 2b, 4. radix-2 stages over global memory ----

// Stages of half-size 2^(s_lo + R - 1) down to 2^s_lo (forward, DIF) or up (inverse, DIT) on the
// 2^R values base + k 2^s_lo of thread t's group: (u, v) -> (u + v, (u - v) w^i) forward,
// (u, v) -> (u + v w^-i, u - v w^-i) inverse, i the position in the half-block.
template <class F, int R>
__device__ __forceinline__ void mm_pass_one(Cx<F>* z, const MmLayout& L, u32 t, u32 s_lo, bool inverse) {
    const MmTab& T = mm_tab<F>(L);
    const Cx<F>* tw = (const Cx<F>*)(inverse ? T.itw : T.tw);
    const u32 c = t & ((1u << s_lo) - 1), base = ((t >> s_lo) << (s_lo + R)) | c;
    Cx<F> v[1 << R];
#pragma unroll
    for (int k = 0; k < (1 << R); k++) v[k] = z[base + ((u32)k << s_lo)];
    if (!inverse) {
#pragma unroll
        for (int r = R - 1; r >= 0; r--) {
            const u32 h = 1u << (s_lo + r);
#pragma unroll
            for (int k = 0; k < (1 << R); k++) {
                if (k & (1 << r)) continue;
                const u32 i = c + ((u32)(k & ((1 << r) - 1)) << s_lo);
                const Cx<F> u = v[k], w = v[k + (1 << r)];
                v[k] = cx_add(u, w);
                v[k + (1 << r)] = cx_mul3(cx_sub(u, w), tw[h + i]);
            }
        }
    } else {
#pragma unroll
        for (int r = 0; r < R; r++) {
            const u32 h = 1u << (s_lo + r);
#pragma unroll
            for (int k = 0; k < (1 << R); k++) {
                if (k & (1 << r)) continue;
                const u32 i = c + ((u32)(k & ((1 << r) - 1)) << s_lo);
                const Cx<F> u = v[k], w = cx_mul3(v[k + (1 << r)], tw[h + i]);
                v[k] = cx_add(u, w);
                v[k + (1 << r)] = cx_sub(u, w);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < (1 << R); k++) z[base + ((u32)k << s_lo)] = v[k];
}

#define MM_PASS_KERNEL(R)                                                                   \
    extern "C" __global__ void mm_pass_r##R(u64 z61, u64 z31, MmLayout L, u32 s_lo, u32 inverse) { \
        mm_wait();                                                                          \
        const u32 t = blockIdx.x * blockDim.x + threadIdx.x;                                \
        if (t >= (L.odd * L.m) >> R) return;                                                \
        if (blockIdx.y == 0) {                                                              \
            mm_pass_one<F61, R>(mm_z<F61>(z61, z31), L, t, s_lo, inverse);                  \
        } else {                                                                            \
            mm_pass_one<F31, R>(mm_z<F31>(z61, z31), L, t, s_lo, inverse);                  \
        }                                                                                   \
    }
MM_PASS_KERNEL(1)
MM_PASS_KERNEL(2)
MM_PASS_KERNEL(3)

// ---- 2b, 4. the stages of half-size < 2^log_c in shared memory ----

// One radix-2 stage of half-size h = 2^lh on sh, butterflies t, t + threads, ...
template <class F>
__device__ __forceinline__ void mm_block_r2(Cx<F>* sh, const Cx<F>* tw, u32 log_c, u32 lh, bool inverse, u32 t,
                                            u32 threads) {
    for (u32 b = t; b < (1u << (log_c - 1)); b += threads) {
        const u32 h = 1u << lh, i = b & (h - 1), k = ((b >> lh) << (lh + 1)) | i;
        const Cx<F> u = sh[k], w = sh[k + h];
        if (!inverse) {
            sh[k] = cx_add(u, w);
            sh[k + h] = cx_mul3(cx_sub(u, w), tw[h + i]);
        } else {
            const Cx<F> x = cx_mul3(w, tw[h + i]);
            sh[k] = cx_add(u, x);
            sh[k + h] = cx_sub(u, x);
        }
    }
}

// Two radix-2 stages of half-sizes h1 = 2 h0 and h0 = 2^l0 on the four values k + {0, 1, 2, 3} h0
// of thread t (forward: h1 then h0; inverse: h0 then h1).
template <class F>
__device__ __forceinline__ void mm_block_r4(Cx<F>* sh, const Cx<F>* tw, u32 l0, bool inverse, u32 t) {
    const u32 h0 = 1u << l0, h1 = 2 * h0, i = t & (h0 - 1), k = ((t >> l0) << (l0 + 2)) | i;
    Cx<F> a0 = sh[k], a1 = sh[k + h0], a2 = sh[k + 2 * h0], a3 = sh[k + 3 * h0];
    if (!inverse) {
        const Cx<F> b0 = cx_add(a0, a2), b2 = cx_mul3(cx_sub(a0, a2), tw[h1 + i]);
        const Cx<F> b1 = cx_add(a1, a3), b3 = cx_mul3(cx_sub(a1, a3), tw[h1 + h0 + i]);
        const Cx<F> w = tw[h0 + i];
        a0 = cx_add(b0, b1);
        a1 = cx_mul3(cx_sub(b0, b1), w);
        a2 = cx_add(b2, b3);
        a3 = cx_mul3(cx_sub(b2, b3), w);
    } else {
        const Cx<F> w = tw[h0 + i];
        const Cx<F> v1 = cx_mul3(a1, w), v3 = cx_mul3(a3, w);
        const Cx<F> b0 = cx_add(a0, v1), b1 = cx_sub(a0, v1), b2 = cx_add(a2, v3), b3 = cx_sub(a2, v3);
        const Cx<F> v2 = cx_mul3(b2, tw[h1 + i]), v3b = cx_mul3(b3, tw[h1 + h0 + i]);
        a0 = cx_add(b0, v2);
        a2 = cx_sub(b0, v2);
        a1 = cx_add(b1, v3b);
        a3 = cx_sub(b1, v3b);
    }
    sh[k] = a0;
    sh[k + h0] = a1;
    sh[k + 2 * h0] = a2;
    sh[k + 3 * h0] = a3;
}

// The stages of half-size < 2^log_c on the chunk sh (synchronized on entry and left so), threads
// t < threads with threads = max(2^(log_c - 2), 1): two at a time (radix 4), one alone (the last
// forward, the first inverse) when log_c is odd.
template <class F>
__device__ __forceinline__ void mm_block_stages(Cx<F>* sh, const Cx<F>* tw, u32 log_c, bool inverse, u32 t,
                                                u32 threads) {
    const bool single = log_c & 1;
    if (inverse && single) {
        mm_block_r2(sh, tw, log_c, 0, true, t, threads);
        __syncthreads();
    }
    for (u32 q = 0; q < log_c / 2; q++) {
        // Forward from the top pair of stages down; inverse from the bottom up.
        const u32 l0 = inverse ? (single ? 1 : 0) + 2 * q : log_c - 2 - 2 * q;
        mm_block_r4(sh, tw, l0, inverse, t);
        __syncthreads();
    }
    if (!inverse && single) {
        mm_block_r2(sh, tw, log_c, 0, false, t, threads);
        __syncthreads();
    }
}

// One block per chunk of 2^log_c values in shared memory, max(2^(log_c - 2), 1) threads.
template <class F>
__device__ __forceinline__ void mm_block_one(Cx<F>* z, const MmLayout& L, u32 log_c, bool inverse) {
    extern __shared__ u64 mm_shared[];
    Cx<F>* sh = (Cx<F>*)mm_shared;
    const MmTab& T = mm_tab<F>(L);
    const Cx<F>* tw = (const Cx<F>*)(inverse ? T.itw : T.tw);
    const u32 C = 1u << log_c, t = threadIdx.x, threads = blockDim.x;
    Cx<F>* chunk = z + ((u64)blockIdx.x << log_c);
    for (u32 k = t; k < C; k += threads) sh[k] = chunk[k];
    __syncthreads();
    mm_block_stages(sh, tw, log_c, inverse, t, threads);
    for (u32 k = t; k < C; k += threads) chunk[k] = sh[k];
}

extern "C" __global__ void mm_block(u64 z61, u64 z31, MmLayout L, u32 log_c, u32 inverse) {
    mm_wait();
    if (blockIdx.y == 0) {
        mm_block_one<F61>(mm_z<F61>(z61, z31), L, log_c, inverse);
    } else {
        mm_block_one<F31>(mm_z<F31>(z61, z31), L, log_c, inverse);
    }
}

// ---- 3. the pair step ----

__device__ __forceinline__ u32 mm_bitrev(u32 b, u32 log_m) { return log_m == 0 ? 0 : __brev(b) >> (32 - log_m); }

// (A, B) = (Z_f + conj Z_g, -i (Z_f - conj Z_g)).
template <class F>
__device__ __forceinline__ void mm_even_odd(Cx<F> zf, Cx<F> zg, Cx<F>& a, Cx<F>& b) {
    a = cx_add(zf, mm_conj(zg));
    b = mm_cneg(mm_mul_i(cx_sub(zf, mm_conj(zg))));
}

// The pair step of a pair of frequencies f and g = sigma(f) from their values xf, xg (and yf, yg of
// the other factor; square: y = x), into zf, zg; rf = w_N^f, rg = w_N^g. With P1 = A A',
// P2 = B B', P3 = A B' + B A' (2 A B for a square): Z'_f = P1 + w^f P2 + i P3 and, conjugation
// being a field automorphism, Z'_g = conj P1 + w^g conj P2 + i conj P3 (the twin's pair_product
// of the conjugates).
template <class F>
__device__ __forceinline__ void mm_pair_vals(Cx<F> xf, Cx<F> xg, Cx<F> yf, Cx<F> yg, bool square, Cx<F> rf,
                                             Cx<F> rg, Cx<F>& zf, Cx<F>& zg) {
    Cx<F> a, b, p1, p2, p3;
    mm_even_odd(xf, xg, a, b);
    if (square) {
        p1 = cx_mul3(a, a);
        p2 = cx_mul3(b, b);
        p3 = cx_mul3(a, b);
        p3 = cx_add(p3, p3);
    } else {
        Cx<F> a2, b2;
        mm_even_odd(yf, yg, a2, b2);
        p1 = cx_mul3(a, a2);
        p2 = cx_mul3(b, b2);
        p3 = cx_add(cx_mul3(a, b2), cx_mul3(b, a2));
    }
    zf = cx_add(cx_add(p1, cx_mul3(rf, p2)), mm_mul_i(p3));
    zg = cx_add(cx_add(mm_conj(p1), cx_mul3(rg, mm_conj(p2))), mm_mul_i(mm_conj(p3)));
}

// Position pos (frequency f) and its partner pg (frequency g = sigma(f)) together in global
// memory; y = x for a squaring. pg = pos for the fixed points (zf is written last).
template <class F>
__device__ __forceinline__ void mm_pair_at(Cx<F>* x, const Cx<F>* y, const MmLayout& L, u32 pos, u32 f, u32 pg,
                                           u32 g) {
    const Cx<F>* root = (const Cx<F>*)mm_tab<F>(L).root;
    Cx<F> zf, zg;
    mm_pair_vals(x[pos], x[pg], y[pos], y[pg], x == y, root[f], root[g], zf, zg);
    x[pg] = zg;
    x[pos] = zf;
}

// Thread t's pair. N = 2^k: sigma(f) = -f mod N (M_q = -1 mod 2^k), and in bit-reversed storage
// the partner of position pos in [2^h, 2^(h+1)) is 3·2^h - 1 - pos: thread t >= 1 takes
// pos = t + 2^h' and pg = 5·2^h' - 1 - t (2^h' the highest power of 2 in t), so that every thread
// has a pair and both reads are contiguous across a warp; thread 0 takes the fixed points 0 and 1.
// N = 3m: the thread of position t, if it is the smaller of its pair (sigma(f) = M_q f mod N).
template <class F>
__device__ __forceinline__ void mm_pair_one(Cx<F>* x, const Cx<F>* y, const MmLayout& L, u32 t) {
    const u32 m = L.m, odd = L.odd, N = odd * m;
    if (odd == 1) {
        if (t == 0) {
            mm_pair_at(x, y, L, 0, 0, 0, 0);
            if (N > 1) mm_pair_at(x, y, L, 1, N / 2, 1, N / 2);
            return;
        }
        const u32 top = 1u << (31 - __clz(t)), pos = t + top, pg = 5 * top - 1 - t;
        const u32 f = mm_bitrev(pos, L.log_m);
        mm_pair_at(x, y, L, pos, f, pg, (N - f) & (N - 1));
        return;
    }
    const u32 pos = t, f = pos / m + odd * mm_bitrev(pos % m, L.log_m);
    const u32 g = (u32)(((u64)((F::Q == 61 ? M61_P : (u64)M31_P) % N) * f) % N);
    const u32 pg = (g % odd) * m + mm_bitrev(g / odd, L.log_m);
    if (pg >= pos) mm_pair_at(x, y, L, pos, f, pg, g);
}

// Threads: N/2 for N = 2^k (N = 1: one), N for N = 3m.
extern "C" __global__ void mm_pair(u64 z61, u64 z31, u64 y61, u64 y31, MmLayout L) {
    mm_wait();
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 N = L.odd * L.m;
    if (t >= (L.odd == 1 ? (N + 1) / 2 : N)) return;
    if (blockIdx.y == 0) {
        mm_pair_one<F61>(mm_z<F61>(z61, z31), mm_z<F61>(y61, y31), L, t);
    } else {
        mm_pair_one<F31>(mm_z<F31>(z61, z31), mm_z<F31>(y61, y31), L, t);
    }
}

// ---- 2b, 3, 4 fused (N = 2^k >= 2): forward block, pair step, inverse block in shared memory ----

// In bit-reversed storage the partner of position pos in [2^h, 2^(h+1)) is 3·2^h - 1 - pos, so
// chunk c in [2^h', 2^(h'+1)) (h' >= 1) of 2^log_c values pairs with the mirrored chunk
// 3·2^h' - 1 - c, value k with value 2^log_c - 1 - k. Block b >= 1 takes the chunks b + 2^h'' and
// 5·2^h'' - 1 - b (2^h'' the highest power of 2 in b, as in mm_pair_one); block 0 takes chunks 0
// and 1, whose positions 0 .. 2^(log_c + 1) - 1 pair among themselves (mm_pair_one's mapping).
// Each chunk gets the forward block stages, then every pair the pair step (y = z: a squaring,
// else y is the other factor fully transformed, read from global memory), then the inverse block
// stages; 2 max(2^(log_c - 2), 1) threads, half per chunk.
template <class F>
__device__ __forceinline__ void mm_core_one(Cx<F>* z, const Cx<F>* y, const MmLayout& L, u32 log_c) {
    extern __shared__ u64 mm_shared[];
    Cx<F>* sh = (Cx<F>*)mm_shared;
    const MmTab& T = mm_tab<F>(L);
    const Cx<F>*root = (const Cx<F>*)T.root, *rootc = (const Cx<F>*)T.rootc;
    const u32 C = 1u << log_c, t = threadIdx.x, threads = blockDim.x, half = threads / 2, b = blockIdx.x;
    const u32 top = b == 0 ? 0 : 1u << (31 - __clz(b));
    const u64 o0 = b == 0 ? 0 : (u64)(b + top) << log_c, o1 = b == 0 ? C : (u64)(5 * top - 1 - b) << log_c;
    for (u32 k = t; k < C; k += threads) {
        sh[k] = z[o0 + k];
        sh[C + k] = z[o1 + k];
    }
    __syncthreads();
    const u32 which = t >= half ? 1 : 0;
    mm_block_stages(sh + which * C, (const Cx<F>*)T.tw, log_c, false, t - which * half, half);
    const bool square = z == y;
    const u32 N = L.m;  // N = 2^log_m
    for (u32 u = t; u < C; u += threads) {
        // Shared indices a, c of the pair (global positions o0 + a, o1 + c - C beyond the first
        // chunk; block 0's are its global positions).
        u32 a, c;
        if (b != 0) {
            a = u;
            c = 2 * C - 1 - u;
        } else if (u == 0) {
            a = 0;  // the fixed points 0 (frequency 0) and 1 (N/2)
            c = 0;
        } else {
            const u32 tu = 1u << (31 - __clz(u));
            a = u + tu;
            c = 5 * tu - 1 - u;
        }
        const u64 pa = a < C ? o0 + a : o1 + a - C, pc = c < C ? o0 + c : o1 + c - C;
        // w_N^f for the frequency f at position pos: its high log_c bits from rootc (coalesced),
        // its low bits (the chunk's, one value per chunk) from root.
        const u32 low = (1u << (L.log_m - log_c)) - 1;
        const Cx<F> rf = cx_mul3(rootc[pa & (C - 1)], root[mm_bitrev((u32)pa, L.log_m) & low]);
        const Cx<F> rg = cx_mul3(rootc[pc & (C - 1)], root[mm_bitrev((u32)pc, L.log_m) & low]);
        Cx<F> zf, zg;
        mm_pair_vals(sh[a], sh[c], square ? sh[a] : y[pa], square ? sh[c] : y[pc], square, rf, rg, zf, zg);
        sh[c] = zg;
        sh[a] = zf;
        if (b == 0 && u == 0 && N > 1) {
            mm_pair_vals(sh[1], sh[1], square ? sh[1] : y[1], square ? sh[1] : y[1], square, root[N / 2],
                         root[N / 2], zf, zg);
            sh[1] = zf;
        }
    }
    __syncthreads();
    mm_block_stages(sh + which * C, (const Cx<F>*)T.itw, log_c, true, t - which * half, half);
    for (u32 k = t; k < C; k += threads) {
        z[o0 + k] = sh[k];
        z[o1 + k] = sh[C + k];
    }
}

// z := the core of z and y (y = z: a squaring); N / 2^(log_c + 1) blocks.
extern "C" __global__ void mm_core(u64 z61, u64 z31, u64 y61, u64 y31, MmLayout L, u32 log_c) {
    mm_wait();
    if (blockIdx.y == 0) {
        mm_core_one<F61>(mm_z<F61>(z61, z31), mm_z<F61>(y61, y31), L, log_c);
    } else {
        mm_core_one<F31>(mm_z<F31>(z61, z31), mm_z<F31>(y61, y31), L, log_c);
    }
}

// ---- 5, 6. unweight, CRT and the carry walk ----

// y_j 2^(-s_j) / (2n) in GF(M_q), from the j-th real output of the inverse (e = e_j).
template <class F>
__device__ __forceinline__ typename F::W mm_unweigh(const Cx<F>* z, const MmLayout& L, u32 j, u32 e) {
    const Cx<F> v = z[j >> 1];
    const u32 back = (mm_weight_shift<F>(L, e) + L.unscale) % F::Q;
    const typename F::W y = F::shl((j & 1) ? v.im : v.re, (F::Q - back) % F::Q);
    return L.odd == 1 ? y : F::mul(y, (typename F::W)mm_tab<F>(L).inv_odd);
}

// The carry kernel's blocks: MM_CARRY_THREADS threads over L.carry_digits consecutive digits (a
// whole number of segments, src/gpu/m61m31/pipeline.rs), the convolution outputs staged in shared
// memory with one pad slot per segment (so the walking threads hit different banks).
#define MM_CARRY_THREADS 256

__device__ __forceinline__ u32 mm_slot(const MmLayout& L, u32 k) { return k + k / L.seg_len; }

// Three phases per block: each thread unweighs and recombines digits (j = base + tid, + threads,
// ...) into c_j (i128), subtracting 2^(bit - start) from the output of the digit holding
// bit = (s + 1) mod p with MM_LL (s the shift count, already advanced); one thread per segment
// walks its digits from a zero carry (twin carry_walk), its carry out to carries[seg]; all threads
// store the digits.
extern "C" __global__ void mm_carry(u64 z61, u64 z31, u64* x, i128* carries, const u32* shift, MmLayout L,
                                    u32 flags, u32 digits) {
    extern __shared__ i128 mm_c[];
    mm_wait();
    const u32 base = blockIdx.x * digits, K = L.seg_len;
    const u64 bit = (flags & MM_LL) ? ((u64)shift[0] + 1) % L.p : ~0ull;
    for (u32 k = threadIdx.x; k < digits; k += blockDim.x) {
        const u32 j = base + k;
        MmWidths ws(L, j);
        u64 lo, hi;
        crt(mm_unweigh<F61>((const Cx<F61>*)z61, L, j, ws.e), mm_unweigh<F31>((const Cx<F31>*)z31, L, j, ws.e), lo,
            hi);
        i128 c = (i128)(((unsigned __int128)hi << 64) | lo);
        if (bit != ~0ull) {
            const u64 start = mm_start(L, j);
            if (bit >= start && bit < start + ws.next()) c -= (i128)1 << (u32)(bit - start);
        }
        mm_c[mm_slot(L, k)] = c;
    }
    __syncthreads();
    for (u32 seg = threadIdx.x; seg < digits / K; seg += blockDim.x) {
        MmWidths ws(L, base + seg * K);
        i128 carry = 0;
        for (u32 k = seg * K; k < seg * K + K; k++) {
            const u32 w = ws.next();
            const i128 c = mm_c[k + seg];  // mm_slot(L, k): k / K = seg
            i128 up;
            mm_c[k + seg] = mm_balance((i128)mm_low(c, w) + carry, w, &up);
            carry = mm_shr(c, w) + up;
        }
        carries[(base / K) + seg] = carry;
    }
    __syncthreads();
    for (u32 k = threadIdx.x; k < digits; k += blockDim.x) x[base + k] = (u64)(i64)mm_c[mm_slot(L, k)];
}
