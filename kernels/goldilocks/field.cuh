// Goldilocks field P = 2^64 - 2^32 + 1 and the IBDWT digit layout: the device transcription of
// src/transform/goldilocks.rs and src/transform/plan.rs (same formulas, same canonical results).
#pragma once
#include "common/types.cuh"

#define GL_P 0xFFFFFFFF00000001ull
#define GL_EPS 0xFFFFFFFFull

// The plan, as the kernels see it (mirrors src/gpu/layout.rs: same field order).
struct Layout {
    const u64* tw;     // tw[m + i] = w_{2m}^i
    const u64* itw;    // itw[m + i] = w_{2m}^-i
    const u64* w;      // w[j] = a_j, the IBDWT weight of digit j (goldilocks/weights.cuh expands it)
    const u64* iw;     // iw[j] = 1/(n a_j)
    u32 p;
    u32 log_n;
    u32 seg_log;       // log2 of the digits per carry segment
    u32 fixup_depth;
};

// The field operations take and return canonical values (< P), except that gl_mul accepts any
// 64-bit inputs. Carries and borrows come from PTX carry chains (add.cc/addc, sub.cc/subc) rather
// than 64-bit comparisons: the kernels are bound by the integer ALU pipe (bench/RESULTS.md).
// Compiled for the host (scripts/host-kernels/, where __CUDA_ARCH__ is not defined) the same
// values come from 128-bit integer arithmetic.

// a + (b + EPS) carries out of 64 bits iff a + b >= P, and is then a + b - P; otherwise the sum
// is that minus EPS. (b + EPS cannot overflow: b < P.)
__device__ __forceinline__ u64 gl_add(u64 a, u64 b) {
#ifndef __CUDA_ARCH__
    const unsigned __int128 t = (unsigned __int128)a + b;
    return t >= GL_P ? (u64)(t - GL_P) : (u64)t;
#else
    u64 x;
    u32 c;
    asm("add.cc.u64 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=l"(x), "=r"(c) : "l"(a), "l"(b + GL_EPS));
    return x - (u64)(c - 1u);  // c = 0: subtract EPS (the u32 0xFFFFFFFF, zero-extended)
#endif
}

// a - b, and on a borrow + P - 2^64 = - EPS (cannot underflow again: a - b + 2^64 > EPS).
__device__ __forceinline__ u64 gl_sub(u64 a, u64 b) {
#ifndef __CUDA_ARCH__
    return a >= b ? a - b : a - b + GL_P;
#else
    u64 d;
    u32 borrow;
    asm("sub.cc.u64 %0, %2, %3;\n\tsubc.u32 %1, 0, 0;" : "=l"(d), "=r"(borrow) : "l"(a), "l"(b));
    return d - (u64)borrow;  // borrow: 0xFFFFFFFF = EPS, zero-extended
#endif
}

// t0 + t1 mod P (canonical) for any 64-bit t0 and t1 <= 2^64 - 2^33 + 1 (the largest h*EPS, h < 2^32).
__device__ __forceinline__ u64 gl_add_folded(u64 t0, u64 t1) {
#ifndef __CUDA_ARCH__
    return (u64)(((unsigned __int128)t0 + t1) % GL_P);
#else
    u64 s, u;
    u32 c, c2;
    asm("add.cc.u64 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=l"(s), "=r"(c) : "l"(t0), "l"(t1));
    s += (u64)(0u - c);  // carry: + EPS (no overflow: t0 + t1 - 2^64 < t1)
    // s >= P iff s + EPS carries out, and then s - P = s + EPS mod 2^64.
    asm("add.cc.u64 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=l"(u), "=r"(c2) : "l"(s), "l"(GL_EPS));
    return c2 ? u : s;
#endif
}

// h*EPS = h*2^32 - h, for h < 2^32.
__device__ __forceinline__ u64 gl_times_eps(u32 h) {
#ifndef __CUDA_ARCH__
    return (u64)h * GL_EPS;
#else
    u64 t;
    asm("mul.wide.u32 %0, %1, %2;" : "=l"(t) : "r"(h), "r"(0xFFFFFFFFu));
    return t;
#endif
}

// The 128-bit value lo + 2^64 hi, hi = 2^32 hh + hl, folded with 2^96 = -1 and 2^64 = EPS:
// lo - hh + hl*EPS.
__device__ __forceinline__ u64 gl_reduce128(u64 lo, u64 hi) {
#ifndef __CUDA_ARCH__
    return (u64)((((unsigned __int128)hi << 64) | lo) % GL_P);
#else
    u64 t0;
    u32 borrow;
    asm("sub.cc.u64 %0, %2, %3;\n\tsubc.u32 %1, 0, 0;" : "=l"(t0), "=r"(borrow) : "l"(lo), "l"(hi >> 32));
    t0 -= (u64)borrow;  // lo - hh + 2^64 > EPS: no second borrow
    return gl_add_folded(t0, gl_times_eps((u32)hi));
#endif
}

__device__ __forceinline__ u64 gl_mul(u64 a, u64 b) { return gl_reduce128(a * b, __umul64hi(a, b)); }

// x*2^E for a compile-time 0 <= E < 96, without a general product (2 has order 192: the 64th
// roots of unity are powers of 2, w_64 = 2^GL_W64_LOG2, which src/transform/line.rs checks). x may be any
// 64-bit word.
#define GL_W64_LOG2 39
template <int E>
__device__ __forceinline__ u64 gl_shl(u64 x) {
    static_assert(E >= 0 && E < 96, "gl_shl takes 0 <= E < 96");
    if constexpr (E == 0) {
        return x >= GL_P ? x - GL_P : x;
    } else if constexpr (E < 32) {
        // lo + 2^64 hi with hi < 2^32: lo + hi*EPS.
        return gl_add_folded(x << E, gl_times_eps((u32)(x >> (64 - E))));
    } else if constexpr (E < 64) {
        return gl_reduce128(x << E, x >> (64 - E));
    } else {
        // x = xh 2^32 + xl, F = E - 64: x 2^F = al + 2^32 b with a = xl 2^F = ah 2^32 + al and
        // b = xh 2^F + ah < 2^63 (two products on the FMA pipe), so x 2^E = al 2^64 + b 2^96 =
        // al*EPS - b, both canonical: 7 instructions instead of 22 for shifts and a reduction.
        constexpr u32 m = 1u << (E - 64);
        u64 a, b;
        asm("mul.wide.u32 %0, %1, %2;" : "=l"(a) : "r"((u32)x), "r"(m));
        asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(b) : "r"((u32)(x >> 32)), "r"(m), "l"(a >> 32));
        return gl_sub(gl_times_eps((u32)a), b);
    }
}

__device__ __forceinline__ u64 gl_from_i64(i64 d) { return d < 0 ? (u64)d + GL_P : (u64)d; }

__device__ __forceinline__ i64 gl_centered(u64 v) { return v > GL_P / 2 ? (i64)(v - GL_P) : (i64)v; }

// The field as kernels/common/four_step.cuh takes it (F): canonical values, so nothing is ever
// reduced lazily (reduce is the identity and a transform's reduce mask is 0).
struct GlField {
    typedef u64 V;
    __device__ __forceinline__ u64 mul(u64 a, u64 b) const { return gl_mul(a, b); }
    __device__ __forceinline__ u64 reduce(u64 x) const { return x; }
    __device__ __forceinline__ u64 from_i64(i64 d) const { return gl_from_i64(d); }
    // (x, y) -> (x + y, (x - y)·w)
    __device__ __forceinline__ void dif(u64& x, u64& y, u64 w) const {
        const u64 s = gl_add(x, y);
        y = gl_mul(gl_sub(x, y), w);
        x = s;
    }
    // (x, y) -> (x + y·w, x - y·w)
    __device__ __forceinline__ void dit(u64& x, u64& y, u64 w) const {
        const u64 t = gl_mul(y, w);
        y = gl_sub(x, t);
        x = gl_add(x, t);
    }
    // (x, y) -> (x + y, x - y)
    __device__ __forceinline__ void sum_diff(u64& x, u64& y) const {
        const u64 s = gl_add(x, y);
        y = gl_sub(x, y);
        x = s;
    }
};

// Lowest bit of digit j: ceil(p j / n).
__device__ __forceinline__ u64 digit_start(const Layout& L, u64 j) {
    return ((u64)L.p * j + (1ull << L.log_n) - 1) >> L.log_n;
}

// Signed digit (stored as its two's-complement bits) to field element weighted by w = L.w[j].
__device__ __forceinline__ u64 weigh_digit(u64 raw, u64 w) { return gl_mul(gl_from_i64((i64)raw), w); }

// Field element to signed convolution output (two's-complement bits), with iw = L.iw[j].
__device__ __forceinline__ u64 unweigh_value(u64 v, u64 iw) { return (u64)gl_centered(gl_mul(v, iw)); }
