// The fields of the second arithmetic (issue 24): GF(M61) and GF(M31), M_q = 2^q - 1, their
// quadratic extensions GF(M_q^2) = GF(M_q)[i] with i^2 = -1, and the CRT of a pair of residues to
// one integer modulo M61 M31. Plain C on 64- and 32-bit words (no asm: reductions are shifts and
// adds), after goldilocks/field.cuh's typedefs. gpu-selftest checks every function here against u128
// arithmetic in Rust (goldilocks/field_check.cuh, src/gpu/selftest/mersenne.rs) and times them
// (m61m31/field_rate.cuh).
//
// Representations (the bounds each function takes are stated at it):
//   M61: a u64. "Partial" values are below 2^61 + 8 (m61_fold of any u64 is); canonical < M61_P.
//   M31: a u32 in [0, M31_P] (M31_P stands for 0); m31_canon makes it canonical.
// Products by powers of 2 are rotations (2 has order q); 1/sqrt(2) = 2^((q-1)/2), so the 8th root
// of unity w8 = (1 + i)/sqrt(2) multiplies by two shifts.
#pragma once
#include "common/types.cuh"

#define M61_P 0x1FFFFFFFFFFFFFFFull
#define M61_2P 0x3FFFFFFFFFFFFFFEull
#define M61_4P 0x7FFFFFFFFFFFFFFCull
#define M31_P 0x7FFFFFFFu

// ---- GF(M61) ----

// x modulo M61 up to a multiple of it: (x & P) + (x >> 61) <= 2^61 + 6, for any 64-bit x.
__device__ __forceinline__ u64 m61_fold(u64 x) { return (x & M61_P) + (x >> 61); }

// The canonical value (< M61_P) of any 64-bit x.
__device__ __forceinline__ u64 m61_canon(u64 x) {
    const u64 t = m61_fold(m61_fold(x));  // <= M61_P
    return t == M61_P ? 0 : t;
}

// a + b for a + b < 2^64 (e.g. partial values or sums of two); partial result.
__device__ __forceinline__ u64 m61_add(u64 a, u64 b) { return m61_fold(a + b); }

// a - b for b <= 2P (a partial value or a sum of two) and a < 2^64 - 2P; partial result.
__device__ __forceinline__ u64 m61_sub(u64 a, u64 b) { return m61_fold(a + (M61_2P - b)); }

// a * b for a * b < 2^125 - 2^122 (e.g. both below 2^62.4: partial values or sums of two);
// partial result. The 128-bit product lo + 2^64 hi is (lo & P) + floor(ab / 2^61) modulo P.
__device__ __forceinline__ u64 m61_mul(u64 a, u64 b) {
    const u64 lo = a * b, hi = __umul64hi(a, b);
    return m61_fold((lo & M61_P) + ((hi << 3) | (lo >> 61)));
}

// x * 2^e for any 64-bit x and 0 <= e < 61 (a run-time shift, as the IBDWT weights take it):
// the bits of x 2^e below 61 plus those above, shifted down; partial result.
__device__ __forceinline__ u64 m61_shl(u64 x, u32 e) { return m61_fold(((x << e) & M61_P) + (x >> (61 - e))); }

// ---- GF(M31) ----

// x modulo M31 in [0, P] for x <= 2P.
__device__ __forceinline__ u32 m31_fold(u32 x) { return (x & M31_P) + (x >> 31); }

__device__ __forceinline__ u32 m31_canon(u32 x) { return x == M31_P ? 0 : x; }

// Any 64-bit x modulo M31, in [0, P] (two folds in 64 bits leave <= P + 4, one in 32).
__device__ __forceinline__ u32 m31_reduce64(u64 x) {
    const u64 t = (x & M31_P) + (x >> 31);
    return m31_fold((u32)((t & M31_P) + (t >> 31)));
}

// a + b and a - b for a, b in [0, P].
__device__ __forceinline__ u32 m31_add(u32 a, u32 b) { return m31_fold(a + b); }
__device__ __forceinline__ u32 m31_sub(u32 a, u32 b) { return m31_fold(a + (M31_P - b)); }

// a * b for a, b in [0, P]: the 62-bit product folded once in 64 bits (<= 2P) and once in 32.
__device__ __forceinline__ u32 m31_mul(u32 a, u32 b) {
    const u64 x = (u64)a * b;
    return m31_fold((u32)(x & M31_P) + (u32)(x >> 31));
}

// x * 2^e for x in [0, P] and 0 <= e < 31: a rotation of the 31 bits.
__device__ __forceinline__ u32 m31_shl(u32 x, u32 e) { return ((x << e) & M31_P) | (x >> (31 - e)); }

// ---- the two fields as template parameters ----
// add1/sub1 and add2/sub2: the first and second level of a radix-4 butterfly. For M61 the first
// leaves its sums unfolded (partial inputs give < 2^62 + 2^61 + 4) and the second folds once; M31
// folds at every level (its 32-bit words have no room).

struct F61 {
    typedef u64 W;
    static constexpr u32 Q = 61;
    static __device__ __forceinline__ W from_u64(u64 x) { return m61_fold(x); }
    static __device__ __forceinline__ u64 canon(W x) { return m61_canon(x); }
    static __device__ __forceinline__ W add(W a, W b) { return m61_add(a, b); }
    static __device__ __forceinline__ W sub(W a, W b) { return m61_sub(a, b); }
    static __device__ __forceinline__ W mul(W a, W b) { return m61_mul(a, b); }
    static __device__ __forceinline__ W shl(W x, u32 e) { return m61_shl(x, e); }
    static __device__ __forceinline__ W add1(W a, W b) { return a + b; }
    static __device__ __forceinline__ W sub1(W a, W b) { return a + (M61_2P - b); }
    static __device__ __forceinline__ W add2(W a, W b) { return m61_fold(a + b); }
    static __device__ __forceinline__ W sub2(W a, W b) { return m61_fold(a + (M61_4P - b)); }
};

struct F31 {
    typedef u32 W;
    static constexpr u32 Q = 31;
    static __device__ __forceinline__ W from_u64(u64 x) { return m31_reduce64(x); }
    static __device__ __forceinline__ u64 canon(W x) { return m31_canon(x); }
    static __device__ __forceinline__ W add(W a, W b) { return m31_add(a, b); }
    static __device__ __forceinline__ W sub(W a, W b) { return m31_sub(a, b); }
    static __device__ __forceinline__ W mul(W a, W b) { return m31_mul(a, b); }
    static __device__ __forceinline__ W shl(W x, u32 e) { return m31_shl(x, e); }
    static __device__ __forceinline__ W add1(W a, W b) { return m31_add(a, b); }
    static __device__ __forceinline__ W sub1(W a, W b) { return m31_sub(a, b); }
    static __device__ __forceinline__ W add2(W a, W b) { return m31_add(a, b); }
    static __device__ __forceinline__ W sub2(W a, W b) { return m31_sub(a, b); }
};

// ---- GF(M_q^2) ----

template <class F>
struct Cx {
    typename F::W re, im;
};

template <class F>
__device__ __forceinline__ Cx<F> cx_add(Cx<F> x, Cx<F> y) {
    return {F::add(x.re, y.re), F::add(x.im, y.im)};
}
template <class F>
__device__ __forceinline__ Cx<F> cx_sub(Cx<F> x, Cx<F> y) {
    return {F::sub(x.re, y.re), F::sub(x.im, y.im)};
}

// x * y by 3 products (Karatsuba): ac - bd, (a + b)(c + d) - ac - bd.
__device__ __forceinline__ Cx<F61> cx_mul3(Cx<F61> x, Cx<F61> y) {
    const u64 ac = m61_mul(x.re, y.re), bd = m61_mul(x.im, y.im);
    const u64 s = m61_mul(x.re + x.im, y.re + y.im);  // sums of partial values: < 2^62 + 14
    return {m61_fold(ac + (M61_2P - bd)), m61_fold(s + (M61_4P - (ac + bd)))};
}
// M31: the products in 64 bits; (a + b)(c + d) >= ac + bd as integers, and P 2^31 >= P^2 >= bd.
__device__ __forceinline__ Cx<F31> cx_mul3(Cx<F31> x, Cx<F31> y) {
    const u64 ac = (u64)x.re * y.re, bd = (u64)x.im * y.im;
    const u64 s = (u64)(x.re + x.im) * (y.re + y.im);
    return {m31_reduce64(ac + ((u64)M31_P << 31) - bd), m31_reduce64(s - ac - bd)};
}

// x * y by 4 products: ac - bd, ad + bc.
__device__ __forceinline__ Cx<F61> cx_mul4(Cx<F61> x, Cx<F61> y) {
    return {m61_sub(m61_mul(x.re, y.re), m61_mul(x.im, y.im)), m61_add(m61_mul(x.re, y.im), m61_mul(x.im, y.re))};
}
__device__ __forceinline__ Cx<F31> cx_mul4(Cx<F31> x, Cx<F31> y) {
    const u64 ac = (u64)x.re * y.re, bd = (u64)x.im * y.im;
    return {m31_reduce64(ac + ((u64)M31_P << 31) - bd), m31_reduce64((u64)x.re * y.im + (u64)x.im * y.re)};
}

// x * w8, w8 = (1 + i) / sqrt(2): ((a - b) 2^((q-1)/2), (a + b) 2^((q-1)/2)).
template <class F>
__device__ __forceinline__ Cx<F> cx_w8(Cx<F> x) {
    return {F::shl(F::sub(x.re, x.im), (F::Q - 1) / 2), F::shl(F::add(x.re, x.im), (F::Q - 1) / 2)};
}

// The forward (DIF) radix-2 butterfly with a general twiddle: (x + y, (x - y) w).
template <class F>
__device__ __forceinline__ void cx_bfly(Cx<F>& x, Cx<F>& y, Cx<F> w) {
    const Cx<F> d = cx_sub(x, y);
    x = cx_add(x, y);
    y = cx_mul3(d, w);
}

// The DFT of 4 values with root i, in place: y_k = sum_j x_j i^(jk) (two radix-2 levels; the
// twiddle i is a swap and a sign, taken into the second level's additions).
template <class F>
__device__ __forceinline__ void cx_radix4(Cx<F>& x0, Cx<F>& x1, Cx<F>& x2, Cx<F>& x3) {
    typedef typename F::W W;
    const W ar = F::add1(x0.re, x2.re), ai = F::add1(x0.im, x2.im);
    const W br = F::sub1(x0.re, x2.re), bi = F::sub1(x0.im, x2.im);
    const W cr = F::add1(x1.re, x3.re), ci = F::add1(x1.im, x3.im);
    const W dr = F::sub1(x1.re, x3.re), di = F::sub1(x1.im, x3.im);
    x0 = {F::add2(ar, cr), F::add2(ai, ci)};
    x2 = {F::sub2(ar, cr), F::sub2(ai, ci)};
    x1 = {F::sub2(br, di), F::add2(bi, dr)};  // b + i d
    x3 = {F::add2(br, di), F::sub2(bi, dr)};  // b - i d
}

// ---- CRT ----

// The integer x, |x| < M61 M31 / 2, with x = r61 mod M61 and x = r31 mod M31, as a two's-complement
// 128-bit (lo, hi), for a partial r61 and r31 in [0, P]. With M31^-1 = 2^31 + 1 modulo M61
// ((2^31 - 1)(2^31 + 1) = 2^62 - 1 = 1): x = r31 + M31 t, t = (r61 - r31)(2^31 + 1) mod M61,
// then x - M61 M31 if x > M61 M31 / 2.
__device__ __forceinline__ void crt(u64 r61, u32 r31, u64& lo, u64& hi) {
    const u32 b = m31_canon(r31);
    const u64 d = m61_sub(r61, b);
    const u64 t = m61_canon(m61_shl(d, 31) + d);
    // M31 t + b = (t << 31) - t + b < 2^92.
    const u64 l = t * M31_P;
    u64 h = __umul64hi(t, (u64)M31_P);
    lo = l + b;
    h += lo < l;
    // M61 M31 = 2^92 - 2^61 - 2^31 + 1 = 2^64 0xFFFFFFF + 0xDFFFFFFF80000001; half of it (rounded
    // down) = 2^64 0x7FFFFFF + 0xEFFFFFFFC0000000.
    const u64 ml = 0xDFFFFFFF80000001ull, mh = 0xFFFFFFFull;
    const bool above = h > 0x7FFFFFFull || (h == 0x7FFFFFFull && lo > 0xEFFFFFFFC0000000ull);
    if (above) {
        const u64 nl = lo - ml;
        h = h - mh - (lo < ml);
        lo = nl;
    }
    hi = h;
}
