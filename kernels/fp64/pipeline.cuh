// The FP64 arithmetic's squaring on the device (issue 37): three kernels, each one global round
// trip of the residue, mirroring the CPU twin src/transform/fp64/stages.rs value for value (the
// same field operations in the same order, the same lazy-reduction flags):
//   fp_fwd   a tile of SEG columns × R rows a block (thread r: row r, one carry segment): the
//            pending carries applied (the fix-up), digits weighted, the R-point DIF stages of
//            each column in shared memory, the twiddles ω_n^(bitrev(r)·c); one prime a block
//            (blockIdx.y);
//   fp_rows  a row of C values a block: C-point DIF stages, the pointwise square (or product
//            with y's row, transformed here too), C-point DIT stages, in shared memory;
//   fp_inv   a tile as fp_fwd, both primes: inverse twiddles, R-point DIT stages, unweight, the
//            CRT to i128 and the carry walk of the thread's segment (the LL term -2·2^s on the
//            way), digits and the segment's carry out written back.
// The element j = r·C + c of a prime's vector is row r, column c; n = R·C = 2^k. Launched with
// programmatic dependent launch, each waits for the previous kernel before touching memory.
#pragma once
#include "fp64/field.cuh"

typedef __int128 i128;

#define FP_ADVANCE 4
#define FP_LL 8
#define FP_PRODUCT 1

// One prime's constants and tables (device addresses); field for field FpPrime in
// src/gpu/fp64/setup.rs. reduce: bit s set = every value is reduced before step s of the
// squaring (src/transform/fp64/stages.rs StepIndex). row_tw[m + j] = w_2m^j of the C-point
// transform, col_tw of the R-point one (itw: w^-j); the powers g^e = hi[e >> lo_bits] ·
// lo[e & mask] of rho (the weights), rho^-1 n^-1 (the unweights), w_n and w_n^-1 (twiddles).
struct FpPrime {
    double p, pinv;
    u64 reduce;
    u64 row_tw, row_itw, col_tw, col_itw;
    u64 w_hi, w_lo, iw_hi, iw_lo, t_hi, t_lo, it_hi, it_lo;
};

// The plan as these kernels see it (FpLayout in src/gpu/fp64/setup.rs).
struct FpLayout {
    FpPrime q[2];
    double crt_inv;  // P1^-1 mod P2, centered
    u32 p, n, log_r, log_c;
    u32 lo_bits, seg_len, fixup_depth, pad;
};

__device__ __forceinline__ void fp_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ Fp fp_of(const FpPrime& q) { return Fp{q.p, q.pinv}; }

// The step indices of src/transform/fp64/stages.rs StepIndex.
struct FpSteps {
    u32 log_r, log_c, tw;
    __device__ __forceinline__ FpSteps(const FpLayout& L) : log_r(L.log_r), log_c(L.log_c), tw(L.log_r > 0) {}
    __device__ __forceinline__ u32 col_fwd(u32 s) const { return s; }
    __device__ __forceinline__ u32 tw_fwd() const { return log_r; }
    __device__ __forceinline__ u32 row_fwd(u32 s) const { return log_r + tw + s; }
    __device__ __forceinline__ u32 square() const { return row_fwd(log_c); }
    __device__ __forceinline__ u32 row_inv(u32 s) const { return square() + 1 + s; }
    __device__ __forceinline__ u32 tw_inv() const { return row_inv(log_c); }
    __device__ __forceinline__ u32 col_inv(u32 s) const { return tw_inv() + tw + s; }
};

__device__ __forceinline__ bool fp_reduces(const FpPrime& q, u32 step) { return (q.reduce >> step) & 1; }

// g^e = hi[e >> lo_bits] · lo[e & mask] (src/transform/fp64/stages.rs Powers::at).
__device__ __forceinline__ double fp_pow(u64 hi, u64 lo, u32 e, u32 lo_bits, Fp f) {
    return fp_mul(((const double*)hi)[e >> lo_bits], ((const double*)lo)[e & ((1u << lo_bits) - 1)], f);
}

__device__ __forceinline__ u32 fp_bitrev(u32 x, u32 bits) { return bits == 0 ? 0 : __brev(x) >> (32 - bits); }

// ---- the digit layout (src/transform/plan.rs; n = 2^k) ----

// e_j = (n - pj mod n) mod n, and the widths of digits j, j + 1, ... by the recurrence of
// Plan::widths_from: digit j is q + 1 bits wide iff e_j < f (p = q n + f).
struct FpWidths {
    u32 e, q, f, n;
    __device__ __forceinline__ FpWidths(const FpLayout& L, u64 j) {
        n = L.n;
        q = L.p / L.n;
        f = L.p & (L.n - 1);
        const u32 r = (u32)(((u64)L.p * j) & (L.n - 1));
        e = r == 0 ? 0 : n - r;
    }
    __device__ __forceinline__ u32 next() {
        const bool wide = e < f;
        e = wide ? e + n - f : e - f;
        return q + wide;
    }
};

// x >> w (arithmetic) for 1 <= w <= 63.
__device__ __forceinline__ i128 fp_shr(i128 x, u32 w) {
    const u64 lo = (u64)x, hi = (u64)(x >> 64);
    const u64 rlo = (lo >> w) | (hi << (64 - w)), rhi = (u64)((i64)hi >> w);
    return (i128)(((unsigned __int128)rhi << 64) | rlo);
}

// Balanced remainder d of t modulo 2^w in [-2^(w-1), 2^(w-1)) and the carry (t - d) / 2^w
// (src/transform/twin.rs balance), for 1 <= w <= 63.
__device__ __forceinline__ i64 fp_balance(i128 t, u32 w, i128* up) {
    const i64 half = (i64)1 << (w - 1);
    const i128 s = t + half;
    *up = fp_shr(s, w);
    return (i64)((u64)s & ((1ull << w) - 1)) - half;
}

// ---- 1. fix-up, weights, column DIF, twiddles ----

#define FP_MAX_SEG 8

// Column stages over the tile in shared memory (s[t R + r]: column t contiguous), R-point
// radix-2: forward DIF (natural in, bit-reversed out) or inverse DIT, as Ntt::forward_stage /
// inverse_stage on each column.
__device__ __forceinline__ void fp_column_stages(double* s, const FpLayout& L, const FpPrime& q, bool inverse) {
    const FpSteps st(L);
    const Fp f = fp_of(q);
    const u32 R = 1u << L.log_r, T = L.seg_len, half = R / 2;
    const double* tw = (const double*)(inverse ? q.col_itw : q.col_tw);
    for (u32 k = 0; k < L.log_r; k++) {
        const u32 m = inverse ? 1u << k : R >> (k + 1);
        const bool red = fp_reduces(q, inverse ? st.col_inv(k) : st.col_fwd(k));
        for (u32 idx = threadIdx.x; idx < half * T; idx += blockDim.x) {
            const u32 t = idx / half, i = idx % half, off = i % m;
            double* col = s + t * R + (i / m) * 2 * m + off;
            double x = col[0], y = col[m];
            if (red) {
                x = fp_reduce(x, f);
                y = fp_reduce(y, f);
            }
            if (inverse) {
                fp_dit(x, y, tw[m + off], f);
            } else {
                fp_dif(x, y, tw[m + off], f);
            }
            col[0] = x;
            col[m] = y;
        }
        __syncthreads();
    }
}

// Grid (C / SEG tiles, 2 primes), R threads (thread r: row r), R·SEG doubles of shared memory.
// With FP_ADVANCE, one thread doubles the shift count mod p (nothing else here reads it).
extern "C" __global__ void __launch_bounds__(1024) fp_fwd(const u64* x, const i128* carries, double* z, u32* shift,
                                                          FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    fp_wait();
    const u32 r = threadIdx.x, R = 1u << L.log_r, C = 1u << L.log_c, T = L.seg_len;
    const u32 c0 = blockIdx.x * T, j0 = r * C + c0, segs = L.n / T, seg = j0 / T;
    const FpPrime& q = L.q[blockIdx.y];
    const Fp f = fp_of(q);
    if ((flags & FP_ADVANCE) && blockIdx.x == 0 && blockIdx.y == 0 && r == 0) {
        shift[0] = (u32)((2ull * shift[0]) % L.p);
    }
    // The segment's digits with the carry out of the previous segment (twin carry_fixup).
    i64 d[FP_MAX_SEG];
    for (u32 t = 0; t < T; t++) d[t] = (i64)x[j0 + t];
    {
        i128 carry = carries[(seg + segs - 1) % segs];
        FpWidths ws(L, j0);
        for (u32 t = 0; t < L.fixup_depth; t++) {
            i128 up;
            d[t] = fp_balance((i128)d[t] + carry, ws.next(), &up);
            carry = up;
        }
        d[L.fixup_depth] += (i64)carry;
    }
    FpWidths ws(L, j0);
    for (u32 t = 0; t < T; t++) {
        fp_s[t * R + r] = fp_mul((double)d[t], fp_pow(q.w_hi, q.w_lo, ws.e, L.lo_bits, f), f);
        ws.next();
    }
    __syncthreads();
    fp_column_stages(fp_s, L, q, false);
    double* out = z + (size_t)blockIdx.y * L.n;
    const FpSteps st(L);
    const bool red = fp_reduces(q, st.tw_fwd());
    const u32 k = fp_bitrev(r, L.log_r);
    for (u32 t = 0; t < T; t++) {
        double v = fp_s[t * R + r];
        if (L.log_r > 0) {
            if (red) v = fp_reduce(v, f);
            v = fp_mul(v, fp_pow(q.t_hi, q.t_lo, k * (c0 + t), L.lo_bits, f), f);
        }
        out[j0 + t] = v;
    }
}

// ---- 2. rows: DIF, pointwise square or product, DIT ----

__device__ __forceinline__ void fp_row_stages(double* s, const FpLayout& L, const FpPrime& q, bool inverse) {
    const FpSteps st(L);
    const Fp f = fp_of(q);
    const u32 C = 1u << L.log_c;
    const double* tw = (const double*)(inverse ? q.row_itw : q.row_tw);
    for (u32 k = 0; k < L.log_c; k++) {
        const u32 m = inverse ? 1u << k : C >> (k + 1);
        const bool red = fp_reduces(q, inverse ? st.row_inv(k) : st.row_fwd(k));
        for (u32 i = threadIdx.x; i < C / 2; i += blockDim.x) {
            const u32 off = i % m;
            double* a = s + (i / m) * 2 * m + off;
            double x = a[0], y = a[m];
            if (red) {
                x = fp_reduce(x, f);
                y = fp_reduce(y, f);
            }
            if (inverse) {
                fp_dit(x, y, tw[m + off], f);
            } else {
                fp_dif(x, y, tw[m + off], f);
            }
            a[0] = x;
            a[m] = y;
        }
        __syncthreads();
    }
}

// Grid (R rows, 2 primes), C doubles of shared memory (2C with FP_PRODUCT: y's row beside).
extern "C" __global__ void fp_rows(double* z, const double* y, FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    fp_wait();
    const u32 C = 1u << L.log_c;
    const FpPrime& q = L.q[blockIdx.y];
    const Fp f = fp_of(q);
    const size_t base = (size_t)blockIdx.y * L.n + (size_t)blockIdx.x * C;
    const bool product = flags & FP_PRODUCT;
    double* s2 = fp_s + C;
    for (u32 i = threadIdx.x; i < C; i += blockDim.x) {
        fp_s[i] = z[base + i];
        if (product) s2[i] = y[base + i];
    }
    __syncthreads();
    fp_row_stages(fp_s, L, q, false);
    if (product) fp_row_stages(s2, L, q, false);
    const bool red = fp_reduces(q, FpSteps(L).square());
    for (u32 i = threadIdx.x; i < C; i += blockDim.x) {
        double a = fp_s[i];
        if (red) a = fp_reduce(a, f);
        double b = a;
        if (product) {
            b = s2[i];
            if (red) b = fp_reduce(b, f);
        }
        fp_s[i] = fp_mul(a, b, f);
    }
    __syncthreads();
    fp_row_stages(fp_s, L, q, true);
    for (u32 i = threadIdx.x; i < C; i += blockDim.x) z[base + i] = fp_s[i];
}

// ---- 3. inverse twiddles, column DIT, unweight, CRT, carry ----

// Grid (C / SEG tiles), R threads, 2·R·SEG doubles of shared memory (both primes' tiles).
extern "C" __global__ void __launch_bounds__(1024) fp_inv(const double* z, u64* x, i128* carries, const u32* shift,
                                                          FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    fp_wait();
    const u32 r = threadIdx.x, R = 1u << L.log_r, C = 1u << L.log_c, T = L.seg_len;
    const u32 c0 = blockIdx.x * T, j0 = r * C + c0, seg = j0 / T;
    const FpSteps st(L);
    const u32 k = fp_bitrev(r, L.log_r);
    for (u32 h = 0; h < 2; h++) {
        const FpPrime& q = L.q[h];
        const Fp f = fp_of(q);
        const bool red = fp_reduces(q, st.tw_inv());
        double* s = fp_s + h * R * T;
        for (u32 t = 0; t < T; t++) {
            double v = z[(size_t)h * L.n + j0 + t];
            if (L.log_r > 0) {
                if (red) v = fp_reduce(v, f);
                v = fp_mul(v, fp_pow(q.it_hi, q.it_lo, k * (c0 + t), L.lo_bits, f), f);
            }
            s[t * R + r] = v;
        }
        __syncthreads();
        fp_column_stages(s, L, q, true);
    }
    // Unweight, CRT, the LL term, and the walk of this thread's segment (twin carry_walk).
    const Fp f1 = fp_of(L.q[0]), f2 = fp_of(L.q[1]);
    const u64 bit = (flags & FP_LL) ? ((u64)shift[0] + 1) % L.p : ~0ull;
    FpWidths ws(L, j0);
    u64 start = (u64)(((unsigned __int128)L.p * j0 + L.n - 1) >> (L.log_r + L.log_c));
    i128 carry = 0;
    for (u32 t = 0; t < T; t++) {
        const u32 e = ws.e, w = ws.next();
        const double y1 = fp_mul(fp_reduce(fp_s[t * R + r], f1), fp_pow(L.q[0].iw_hi, L.q[0].iw_lo, e, L.lo_bits, f1), f1);
        const double y2 =
            fp_mul(fp_reduce(fp_s[R * T + t * R + r], f2), fp_pow(L.q[1].iw_hi, L.q[1].iw_lo, e, L.lo_bits, f2), f2);
        u64 lo, hi;
        fp_crt(y1, y2, f1, f2, L.crt_inv, lo, hi);
        i128 c = (i128)(((unsigned __int128)hi << 64) | lo);
        if (bit >= start && bit < start + w) c -= (i128)1 << (u32)(bit - start);
        start += w;
        i128 up;
        x[j0 + t] = (u64)fp_balance((i128)((u64)c & ((1ull << w) - 1)) + carry, w, &up);
        carry = fp_shr(c, w) + up;
    }
    carries[seg] = carry;
}
