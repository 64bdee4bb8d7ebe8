// Goldilocks field P = 2^64 - 2^32 + 1 and the IBDWT digit layout: the device transcription of
// src/field.rs and src/plan.rs (same formulas, same canonical results). Prepended to every
// kernel file by src/gpu/module.rs; the kernels include nothing else.

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

#define GL_P 0xFFFFFFFF00000001ull
#define GL_EPS 0xFFFFFFFFull

// The plan, as the kernels see it (mirrors src/gpu/layout.rs: same field order).
struct Layout {
    const u64* tw;     // tw[m + i] = w_{2m}^i
    const u64* itw;    // itw[m + i] = w_{2m}^-i
    const u64* w_hi;   // weight a_j = w_hi[e >> lo_bits] * w_lo[e & mask], e = weight_exp(j)
    const u64* w_lo;
    const u64* iw_hi;  // 1/(n a_j), 1/n folded into iw_hi
    const u64* iw_lo;
    u32 p;
    u32 log_n;
    u32 lo_bits;
    u32 seg_log;       // log2 of the digits per carry segment
    u32 fixup_depth;
};

__device__ __forceinline__ u64 gl_add(u64 a, u64 b) {
    u64 s = a + b;
    if (s < a) s += GL_EPS;  // carry: 2^64 = EPS mod P
    return s >= GL_P ? s - GL_P : s;
}

__device__ __forceinline__ u64 gl_sub(u64 a, u64 b) {
    u64 d = a - b;
    return a < b ? d - GL_EPS : d;  // borrow: d + P - 2^64 = d - EPS
}

// 128-bit product folded with 2^96 = -1 and 2^64 = 2^32 - 1.
__device__ __forceinline__ u64 gl_mul(u64 a, u64 b) {
    u64 lo = a * b;
    u64 hi = __umul64hi(a, b);
    u64 hh = hi >> 32;
    u64 hl = hi & GL_EPS;
    u64 t0 = lo - hh;
    if (lo < hh) t0 -= GL_EPS;
    u64 t1 = (hl << 32) - hl;  // hl * EPS
    u64 s = t0 + t1;
    if (s < t0) s += GL_EPS;
    return s >= GL_P ? s - GL_P : s;
}

__device__ __forceinline__ u64 gl_from_i64(i64 d) { return d < 0 ? (u64)d + GL_P : (u64)d; }

__device__ __forceinline__ i64 gl_centered(u64 v) { return v > GL_P / 2 ? (i64)(v - GL_P) : (i64)v; }

// Lowest bit of digit j: ceil(p j / n).
__device__ __forceinline__ u64 digit_start(const Layout& L, u64 j) {
    return ((u64)L.p * j + (1ull << L.log_n) - 1) >> L.log_n;
}

__device__ __forceinline__ u32 digit_width(const Layout& L, u64 j) {
    return (u32)(digit_start(L, j + 1) - digit_start(L, j));
}

// e_j = ceil(pj/n) n - pj = (-pj) mod n.
__device__ __forceinline__ u64 weight_exp(const Layout& L, u64 j) {
    u64 mask = (1ull << L.log_n) - 1;
    return (0ull - (u64)L.p * j) & mask;
}

__device__ __forceinline__ u64 weight(const Layout& L, u64 j) {
    u64 e = weight_exp(L, j);
    return gl_mul(L.w_hi[e >> L.lo_bits], L.w_lo[e & ((1ull << L.lo_bits) - 1)]);
}

__device__ __forceinline__ u64 inv_weight(const Layout& L, u64 j) {
    u64 e = weight_exp(L, j);
    return gl_mul(L.iw_hi[e >> L.lo_bits], L.iw_lo[e & ((1ull << L.lo_bits) - 1)]);
}

// Signed digit (stored as its two's-complement bits) to weighted field element.
__device__ __forceinline__ u64 weigh_digit(const Layout& L, u64 raw, u64 j) {
    return gl_mul(gl_from_i64((i64)raw), weight(L, j));
}

// Field element to signed convolution output (two's-complement bits).
__device__ __forceinline__ u64 unweigh_value(const Layout& L, u64 v, u64 j) {
    return (u64)gl_centered(gl_mul(v, inv_weight(L, j)));
}
