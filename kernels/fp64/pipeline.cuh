// The FP64 arithmetic's squaring on the device (issue 37): three kernels, each one global round
// trip of the residue, mirroring the CPU twin src/transform/fp64/stages.rs value for value (the
// same field operations in the same order, the same lazy-reduction flags):
//   fp_fwd   a tile of SEG columns × R rows a block (a thread a row at a time: a carry segment): the
//            pending carries applied (the fix-up), digits weighted, the R-point DIF stages of
//            each column in shared memory, the twiddles ω_n^(bitrev(r)·c); one prime a block
//            (blockIdx.y);
//   fp_rows  a row of C values a block: C-point DIF stages, the pointwise square (or product
//            with y's row, transformed here too), C-point DIT stages, in shared memory;
//   fp_inv   a tile as fp_fwd, both primes: inverse twiddles, R-point DIT stages, unweight, the
//            CRT to i128 and the carry walk of the thread's segment (the LL term -2·2^s on the
//            way), digits and the segment's carry out written back.
// fp_fwd and fp_inv move their tiles between global and shared memory 16 bytes a thread along
// the rows (fp_tile_load, fp_tile_store), and work on a row's segment from shared memory.
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
// Along a segment a weight is the previous one times w_narrow or w_wide (the previous digit
// narrow or wide), an unweight times iw_narrow or iw_wide, the twiddle of column c + 1 that of
// column c times w_n^k: two table entries a segment, not a digit (stages.rs weights, twiddle).
struct FpPrime {
    double p, pinv;
    double w_narrow, w_wide, iw_narrow, iw_wide;  // the weight chains' factors (stages.rs Chain)
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

// ---- radix-2 stages in shared memory, 2^S values of a line in a thread's registers ----

// Shared memory holds a pad word after every 8 values: a thread's 2^S values of a pass (spaced
// m_lo apart, down to m_lo = 1) then fall in distinct banks across a half-warp.
#define FP_PAD(a) ((a) + ((a) >> 3))
// Doubles of shared memory for `words` values.
#define FP_PADDED(words) ((words) + ((words) >> 3))

// S consecutive radix-2 stages, stage indices k0 .. k0 + S - 1 of an L-point transform (L =
// 2^log_l), on `lines` lines stored one after the other from s: forward DIF stage k has half-size
// m = L >> (k + 1), (x, y) -> (x + y, (x - y) w_2m^off); inverse DIT stage k has m = 1 << k,
// (x, y) -> (x + y w_2m^-off, x - y w_2m^-off); off is the lower element's position in its
// half-block, tw[m + off] the twiddle (Ntt::forward_stage / inverse_stage, butterfly for
// butterfly: the same values in any grouping). A thread holds a group of 2^S values spaced
// m_lo apart: it runs the S stages in registers. `first` is the schedule index of stage 0 (bit
// first + k of the reduce mask: reduce both inputs of stage k first).
template <int S, bool INV>
__device__ __forceinline__ void fp_pass(double* s, u32 origin, u32 lines, u32 log_l, u32 k0, const double* tw,
                                        const FpPrime& q, u32 first) {
    const Fp f = fp_of(q);
    const u32 m_lo_log = INV ? k0 : log_l - k0 - S;
    const u32 m_lo = 1u << m_lo_log, groups_log = log_l - S;
    for (u32 g = threadIdx.x; g < (lines << groups_log); g += blockDim.x) {
        const u32 line = g >> groups_log, gi = g & ((1u << groups_log) - 1);
        const u32 o = gi & (m_lo - 1), blk = gi >> m_lo_log;
        const u32 base = origin + (line << log_l) + (blk << (m_lo_log + S)) + o;
        double v[1 << S];
#pragma unroll
        for (int k = 0; k < (1 << S); k++) v[k] = s[FP_PAD(base + (k << m_lo_log))];
#pragma unroll
        for (int jj = 0; jj < S; jj++) {
            const int j = INV ? jj : S - 1 - jj;  // DIF: largest half-size first
            const u32 m = m_lo << j;
            const bool red = (q.reduce >> (first + k0 + jj)) & 1;
#pragma unroll
            for (int k = 0; k < (1 << S); k++) {
                if (k & (1 << j)) continue;
                double& x = v[k];
                double& y = v[k + (1 << j)];
                if (red) {
                    x = fp_reduce(x, f);
                    y = fp_reduce(y, f);
                }
                const double w = tw[m + o + ((u32)(k & ((1 << j) - 1)) << m_lo_log)];
                if (INV) {
                    fp_dit(x, y, w, f);
                } else {
                    fp_dif(x, y, w, f);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < (1 << S); k++) s[FP_PAD(base + (k << m_lo_log))] = v[k];
    }
    __syncthreads();
}

// Every stage of an L-point transform (forward DIF or inverse DIT) on `lines` lines in shared
// memory, in passes of up to 3 stages (the first pass takes the remainder); `first`: the
// schedule index of stage 0.
template <bool INV>
__device__ __forceinline__ void fp_transform(double* s, u32 origin, u32 lines, u32 log_l, const double* tw,
                                             const FpPrime& q, u32 first) {
    const u32 head = log_l % 3;
    if (head == 1) fp_pass<1, INV>(s, origin, lines, log_l, 0, tw, q, first);
    if (head == 2) fp_pass<2, INV>(s, origin, lines, log_l, 0, tw, q, first);
    for (u32 k = head; k < log_l; k += 3) fp_pass<3, INV>(s, origin, lines, log_l, k, tw, q, first);
}

// The column stages of a tile from logical index `origin` (value (r, t) at origin + t R + r:
// column t contiguous, T lines of R).
__device__ __forceinline__ void fp_column_stages(double* s, u32 origin, const FpLayout& L, const FpPrime& q,
                                                 bool inverse) {
    const FpSteps st(L);
    if (inverse) {
        fp_transform<true>(s, origin, L.seg_len, L.log_r, (const double*)q.col_itw, q, st.col_inv(0));
    } else {
        fp_transform<false>(s, origin, L.seg_len, L.log_r, (const double*)q.col_tw, q, st.col_fwd(0));
    }
}

// The tile of block blockIdx.x (columns c0 .. c0 + T of every row) of v into shared memory at
// logical index origin + t R + r, or back: 16 bytes a thread, consecutive threads along a row's
// segment (T / 2 of them a row), so that a warp reads whole 64-byte runs of few rows.
__device__ __forceinline__ void fp_tile_load(double* s, u32 origin, const double* v, const FpLayout& L) {
    const u32 R = 1u << L.log_r, C = 1u << L.log_c, T = L.seg_len, c0 = blockIdx.x * T, half = __ffs(T) - 2;
    for (u32 i = threadIdx.x; i < R * T / 2; i += blockDim.x) {
        const u32 r = i >> half, t = 2 * (i & ((T / 2) - 1));
        const double2 w = ((const double2*)(v + (size_t)r * C + c0))[t / 2];
        s[FP_PAD(origin + t * R + r)] = w.x;
        s[FP_PAD(origin + (t + 1) * R + r)] = w.y;
    }
}
__device__ __forceinline__ void fp_tile_store(const double* s, u32 origin, double* v, const FpLayout& L) {
    const u32 R = 1u << L.log_r, C = 1u << L.log_c, T = L.seg_len, c0 = blockIdx.x * T, half = __ffs(T) - 2;
    for (u32 i = threadIdx.x; i < R * T / 2; i += blockDim.x) {
        const u32 r = i >> half, t = 2 * (i & ((T / 2) - 1));
        ((double2*)(v + (size_t)r * C + c0))[t / 2] =
            make_double2(s[FP_PAD(origin + t * R + r)], s[FP_PAD(origin + (t + 1) * R + r)]);
    }
}

// Grid (C / SEG tiles, 2 primes), up to 512 threads (each the rows r = thread, thread + blockDim,
// ...: a row's SEG digits are one carry segment), FP_PADDED(R·SEG) doubles of shared memory.
// With FP_ADVANCE, one thread doubles the shift count mod p (nothing else here reads it).
extern "C" __global__ void __launch_bounds__(512) fp_fwd(const u64* x, const i128* carries, double* z, u32* shift,
                                                         FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    fp_wait();
    const u32 R = 1u << L.log_r, C = 1u << L.log_c, T = L.seg_len, segs = L.n / T, c0 = blockIdx.x * T;
    const FpPrime& q = L.q[blockIdx.y];
    const Fp f = fp_of(q);
    if ((flags & FP_ADVANCE) && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) {
        shift[0] = (u32)((2ull * shift[0]) % L.p);
    }
    // The tile's digits, 16 bytes a thread (consecutive threads along a row's segment), into
    // the shared tile as raw words: fp_tile_load.
    fp_tile_load(fp_s, 0, (const double*)x, L);
    __syncthreads();
    for (u32 r = threadIdx.x; r < R; r += blockDim.x) {
        const u32 j0 = r * C + c0, seg = j0 / T;
        // The segment's digits with the carry out of the previous segment (twin carry_fixup).
        i64 d[FP_MAX_SEG];
        for (u32 t = 0; t < T; t++) d[t] = __double_as_longlong(fp_s[FP_PAD(t * R + r)]);
        i128 carry = carries[(seg + segs - 1) % segs];
        FpWidths ws(L, j0);
        for (u32 t = 0; t < L.fixup_depth; t++) {
            i128 up;
            d[t] = fp_balance((i128)d[t] + carry, ws.next(), &up);
            carry = up;
        }
        d[L.fixup_depth] += (i64)carry;
        FpWidths we(L, j0);
        double w = fp_pow(q.w_hi, q.w_lo, we.e, L.lo_bits, f);
        for (u32 t = 0; t < T; t++) {
            if (t > 0) {
                const bool wide = we.e < we.f;
                we.next();
                w = fp_mul(w, wide ? q.w_wide : q.w_narrow, f);
            }
            fp_s[FP_PAD(t * R + r)] = fp_mul((double)d[t], w, f);
        }
    }
    __syncthreads();
    fp_column_stages(fp_s, 0, L, q, false);
    if (L.log_r > 0) {
        const bool red = fp_reduces(q, FpSteps(L).tw_fwd());
        for (u32 r = threadIdx.x; r < R; r += blockDim.x) {
            const u32 k = fp_bitrev(r, L.log_r);
            const double step = fp_pow(q.t_hi, q.t_lo, k, L.lo_bits, f);
            double w = fp_pow(q.t_hi, q.t_lo, k * c0, L.lo_bits, f);
            for (u32 t = 0; t < T; t++) {
                if (t > 0) w = fp_mul(w, step, f);
                double v = fp_s[FP_PAD(t * R + r)];
                if (red) v = fp_reduce(v, f);
                fp_s[FP_PAD(t * R + r)] = fp_mul(v, w, f);
            }
        }
        __syncthreads();
    }
    fp_tile_store(fp_s, 0, z + (size_t)blockIdx.y * L.n, L);
}

// ---- 2. rows: DIF, pointwise square or product, DIT ----

// The stages of one row in shared memory.
__device__ __forceinline__ void fp_row_stages(double* s, u32 origin, const FpLayout& L, const FpPrime& q,
                                              bool inverse) {
    const FpSteps st(L);
    if (inverse) {
        fp_transform<true>(s, origin, 1, L.log_c, (const double*)q.row_itw, q, st.row_inv(0));
    } else {
        fp_transform<false>(s, origin, 1, L.log_c, (const double*)q.row_tw, q, st.row_fwd(0));
    }
}

// Grid (R rows, 2 primes), up to 512 threads, FP_PADDED(C) doubles of shared memory (FP_PADDED(2C) with
// FP_PRODUCT: y's row beside, from logical index C).
extern "C" __global__ void __launch_bounds__(512) fp_rows(double* z, const double* y, FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    fp_wait();
    const u32 C = 1u << L.log_c;
    const FpPrime& q = L.q[blockIdx.y];
    const Fp f = fp_of(q);
    const size_t base = (size_t)blockIdx.y * L.n + (size_t)blockIdx.x * C;
    const bool product = flags & FP_PRODUCT;
    for (u32 i = threadIdx.x; i < C; i += blockDim.x) {
        fp_s[FP_PAD(i)] = z[base + i];
        if (product) fp_s[FP_PAD(C + i)] = y[base + i];
    }
    __syncthreads();
    fp_row_stages(fp_s, 0, L, q, false);
    if (product) fp_row_stages(fp_s, C, L, q, false);
    const bool red = fp_reduces(q, FpSteps(L).square());
    for (u32 i = threadIdx.x; i < C; i += blockDim.x) {
        double a = fp_s[FP_PAD(i)];
        if (red) a = fp_reduce(a, f);
        double b = a;
        if (product) {
            b = fp_s[FP_PAD(C + i)];
            if (red) b = fp_reduce(b, f);
        }
        fp_s[FP_PAD(i)] = fp_mul(a, b, f);
    }
    __syncthreads();
    fp_row_stages(fp_s, 0, L, q, true);
    for (u32 i = threadIdx.x; i < C; i += blockDim.x) z[base + i] = fp_s[FP_PAD(i)];
}

// ---- 3. inverse twiddles, column DIT, unweight, CRT, carry ----

// Grid (C / SEG tiles), up to 512 threads (rows as fp_fwd), FP_PADDED(2·R·SEG) doubles of shared
// memory (both primes' tiles, the second from logical index R·SEG).
extern "C" __global__ void __launch_bounds__(512) fp_inv(const double* z, u64* x, i128* carries, const u32* shift,
                                                         FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    fp_wait();
    const u32 R = 1u << L.log_r, C = 1u << L.log_c, T = L.seg_len, c0 = blockIdx.x * T;
    const FpSteps st(L);
    for (u32 h = 0; h < 2; h++) {
        const FpPrime& q = L.q[h];
        const Fp f = fp_of(q);
        const bool red = fp_reduces(q, st.tw_inv());
        const u32 origin = h * R * T;
        fp_tile_load(fp_s, origin, z + (size_t)h * L.n, L);
        __syncthreads();
        if (L.log_r > 0) {
            for (u32 r = threadIdx.x; r < R; r += blockDim.x) {
                const u32 k = fp_bitrev(r, L.log_r);
                const double step = fp_pow(q.it_hi, q.it_lo, k, L.lo_bits, f);
                double w = fp_pow(q.it_hi, q.it_lo, k * c0, L.lo_bits, f);
                for (u32 t = 0; t < T; t++) {
                    if (t > 0) w = fp_mul(w, step, f);
                    double v = fp_s[FP_PAD(origin + t * R + r)];
                    if (red) v = fp_reduce(v, f);
                    fp_s[FP_PAD(origin + t * R + r)] = fp_mul(v, w, f);
                }
            }
            __syncthreads();
        }
        fp_column_stages(fp_s, origin, L, q, true);
    }
    // Unweight, CRT, the LL term, and the walk of each row's segment (twin carry_walk).
    const Fp f1 = fp_of(L.q[0]), f2 = fp_of(L.q[1]);
    const u64 bit = (flags & FP_LL) ? ((u64)shift[0] + 1) % L.p : ~0ull;
    for (u32 r = threadIdx.x; r < R; r += blockDim.x) {
        const u32 j0 = r * C + c0;
        FpWidths ws(L, j0);
        u64 start = (u64)(((unsigned __int128)L.p * j0 + L.n - 1) >> (L.log_r + L.log_c));
        i128 carry = 0;
        double u1 = fp_pow(L.q[0].iw_hi, L.q[0].iw_lo, ws.e, L.lo_bits, f1);
        double u2 = fp_pow(L.q[1].iw_hi, L.q[1].iw_lo, ws.e, L.lo_bits, f2);
        bool wide = false;
        for (u32 t = 0; t < T; t++) {
            if (t > 0) {
                u1 = fp_mul(u1, wide ? L.q[0].iw_wide : L.q[0].iw_narrow, f1);
                u2 = fp_mul(u2, wide ? L.q[1].iw_wide : L.q[1].iw_narrow, f2);
            }
            const u32 w = ws.next();
            wide = w != ws.q;
            const double y1 = fp_mul(fp_reduce(fp_s[FP_PAD(t * R + r)], f1), u1, f1);
            const double y2 = fp_mul(fp_reduce(fp_s[FP_PAD(R * T + t * R + r)], f2), u2, f2);
            u64 lo, hi;
            fp_crt(y1, y2, f1, f2, L.crt_inv, lo, hi);
            i128 c = (i128)(((unsigned __int128)hi << 64) | lo);
            if (bit >= start && bit < start + w) c -= (i128)1 << (u32)(bit - start);
            start += w;
            i128 up;
            // The digit over this row's slot of the first prime (read above, by this thread only).
            const i64 d = fp_balance((i128)((u64)c & ((1ull << w) - 1)) + carry, w, &up);
            fp_s[FP_PAD(t * R + r)] = __longlong_as_double(d);
            carry = fp_shr(c, w) + up;
        }
        carries[j0 / T] = carry;
    }
    __syncthreads();
    fp_tile_store(fp_s, 0, (double*)x, L);
}
