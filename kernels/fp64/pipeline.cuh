// The FP64 arithmetic's squaring on the device (issue 37): three kernels (or two, fp_rows and
// fp_carry, between the squarings of a batch), each one global round trip of the residue,
// mirroring the CPU twin src/transform/fp64/stages.rs value for value (the same field
// operations in the same order, the same lazy-reduction flags):
//   fp_fwd   a tile of SEG columns × R rows a block (a thread a row at a time: a carry segment): the
//            pending carries applied (the fix-up), digits weighted, the R-point DIF stages of
//            each column in shared memory, the twiddles ω_n^(bitrev(r)·c); one prime a block
//            (blockIdx.y);
//   fp_rows  a row of C values a block: C-point DIF stages, the pointwise square (or product
//            with y's row, transformed here too), C-point DIT stages, in shared memory: the
//            first and last stages on the way in and out, the square inside the pass of the
//            last DIF and first DIT stages;
//   fp_inv   a tile as fp_fwd, both primes: inverse twiddles, R-point DIT stages, unweight, the
//            CRT to i128 and the carry walk of the thread's segment (the LL term -2·2^s on the
//            way), digits and the segment's carry out written back.
//   fp_carry fp_inv's steps, then (once the previous tile's carries are out) fp_fwd's for both
//            primes: in a batch of squarings it takes the place of an fp_inv and the next fp_fwd.
// fp_fwd and fp_inv move their tiles between global and shared memory along the rows, 8 loads
// in flight a thread (fp_tile_load, fp_tile_store), and work on a row's segment from shared
// memory. The stages, passes and copies are kernels/common/four_step.cuh's over this field (Fp):
// FS_S stages at a time in registers; every run-time flag that turns work on or off (a stage's
// reductions, the square's, the product) picks one of several compiled instances (fs_dispatch),
// so that no predicated-off instruction takes an issue slot.
// The element j = r·C + c of a prime's vector is row r, column c; n = R·C = 2^k. Launched with
// programmatic dependent launch, each waits for the previous kernel before touching memory.
#pragma once
#include "common/four_step.cuh"
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
// The shape of the plan (log2 R, log2 C, SEG) is read through lr(), lc(), seg() and len(), the
// threads of a column kernel's and of an fp_rows block through tile_nt() and row_nt(): the host
// compiles the unit for each shape with FP_LOG_R, FP_LOG_C, FP_SEG, FP_TILE_THREADS and
// FP_ROW_THREADS defined (module.rs unit preambles) and launches those threads, so that every
// length, stage index, loop count and address offset derived from them is a compile-time
// constant; without them (scripts/fp64-kernel-equiv.sh's runtime build) the fields and blockDim
// are read.
struct FpLayout {
    FpPrime q[2];
    double crt_inv;  // P1^-1 mod P2, centered
    u32 p, n, log_r, log_c;
    u32 lo_bits, seg_len, fixup_depth, pad;
#if defined(FP_LOG_R) && defined(FP_LOG_C) && defined(FP_SEG) && defined(FP_TILE_THREADS) && defined(FP_ROW_THREADS)
    __device__ __forceinline__ u32 lr() const { return FP_LOG_R; }
    __device__ __forceinline__ u32 lc() const { return FP_LOG_C; }
    __device__ __forceinline__ u32 seg() const { return FP_SEG; }
    __device__ __forceinline__ u32 len() const { return 1u << (FP_LOG_R + FP_LOG_C); }
    __device__ __forceinline__ u32 tile_nt() const { return FP_TILE_THREADS; }
    __device__ __forceinline__ u32 row_nt() const { return FP_ROW_THREADS; }
#else
    __device__ __forceinline__ u32 lr() const { return log_r; }
    __device__ __forceinline__ u32 lc() const { return log_c; }
    __device__ __forceinline__ u32 seg() const { return seg_len; }
    __device__ __forceinline__ u32 len() const { return n; }
    __device__ __forceinline__ u32 tile_nt() const { return blockDim.x; }
    __device__ __forceinline__ u32 row_nt() const { return blockDim.x; }
#endif
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
    __device__ __forceinline__ FpSteps(const FpLayout& L) : log_r(L.lr()), log_c(L.lc()), tw(L.lr() > 0) {}
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
        n = L.len();
        q = L.p / L.len();
        f = L.p & (L.len() - 1);
        const u32 r = (u32)(((u64)L.p * j) & (L.len() - 1));
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

// ---- shared memory: tiles and rows (kernels/common/four_step.cuh) ----

#define FP_MAX_SEG 8

// The kernels' launch bounds (threads, and blocks an SM to fit in registers: fp_fwd 4 of 37 KB
// of shared memory at 2^22, fp_rows and fp_inv 3 of 74 KB, so 64, 80 and 80 registers a
// thread); the host launches at most 256, but fp_rows 512 where the rows are few, and defines
// FP_ROW_BOUNDS as 512, 2 there, else as 256, 4 where a row leaves shared memory for four blocks
// (src/gpu/fp64/pipeline.rs preamble).
#ifndef FP_FWD_BOUNDS
#define FP_FWD_BOUNDS 256, 4
#endif
#ifndef FP_ROW_BOUNDS
#define FP_ROW_BOUNDS 256, 3
#endif
#ifndef FP_INV_BOUNDS
#define FP_INV_BOUNDS 256, 3
#endif

// The column stages of a tile (column t of R values from s + t·fs_stride(R)).
__device__ __forceinline__ void fp_column_stages(double* s, const FpLayout& L, const FpPrime& q, bool inverse) {
    const FpSteps st(L);
    const u32 stride = fs_stride(1u << L.lr());
    if (inverse) {
        fs_transform<Fp, true>(s, L.seg(), stride, L.lr(), (const double*)q.col_itw, fp_of(q), q.reduce,
                               st.col_inv(0), L.tile_nt());
    } else {
        fs_transform<Fp, false>(s, L.seg(), stride, L.lr(), (const double*)q.col_tw, fp_of(q), q.reduce,
                                st.col_fwd(0), L.tile_nt());
    }
}

// ---- moving values between global and shared memory ----

// The tile of columns c0 .. c0 + T of every row of v into shared memory (column t of R values
// from s + t·fs_stride(R)), or back: consecutive threads along a row's segment, so that a warp
// moves whole 64-byte runs of 4 rows.
__device__ __forceinline__ void fp_tile_load(double* s, const double* v, const FpLayout& L, u32 c0) {
    const u32 R = 1u << L.lr(), T = L.seg();
    fs_copy<double, true, true>(s, fs_stride(R), (double*)v + c0, 1u << L.lc(), fs_log2(T), R * T, L.tile_nt());
}
__device__ __forceinline__ void fp_tile_store(double* s, double* v, const FpLayout& L, u32 c0) {
    const u32 R = 1u << L.lr(), T = L.seg();
    fs_copy<double, false, true>(s, fs_stride(R), v + c0, 1u << L.lc(), fs_log2(T), R * T, L.tile_nt());
}

// Each row r of the tile times the twiddles ω^(k·c) of its columns c = c0 .. c0 + T - 1, k =
// bitrev(r) (ω: the table pair hi, lo; each value reduced first when RED): ω^(k·c0) from the
// tables, then a product by ω^k a column (stages.rs twiddle).
template <bool RED>
__device__ __forceinline__ void fp_twiddle_of(double* s, const FpLayout& L, u32 c0, u64 hi, u64 lo, Fp f) {
    const u32 R = 1u << L.lr(), T = L.seg(), stride = fs_stride(R);
    for (u32 r = threadIdx.x; r < R; r += L.tile_nt()) {
        const u32 k = fp_bitrev(r, L.lr());
        const double step = fp_pow(hi, lo, k, L.lo_bits, f);
        double w = fp_pow(hi, lo, k * c0, L.lo_bits, f);
#pragma unroll
        for (u32 t = 0; t < FP_MAX_SEG; t++) {
            if (t < T) {
                if (t > 0) w = fp_mul(w, step, f);
                double& x = s[t * stride + FS_PAD(r)];
                x = fp_mul(RED ? fp_reduce(x, f) : x, w, f);
            }
        }
    }
    __syncthreads();
}
__device__ __forceinline__ void fp_twiddle(double* s, const FpLayout& L, u32 c0, u64 hi, u64 lo, Fp f, bool red) {
    if (red) {
        fp_twiddle_of<true>(s, L, c0, hi, lo, f);
    } else {
        fp_twiddle_of<false>(s, L, c0, hi, lo, f);
    }
}

// ---- 1. fix-up, weights, column DIF, twiddles ----

// A pending carry (an i128, two words low first) from global memory through L2: fp_carry reads
// carries that another block of the same launch has just written.
__device__ __forceinline__ i128 fp_load_carry(const i128* c) {
    const longlong2 v = __ldcg((const longlong2*)c);
    return (i128)(((unsigned __int128)(u64)v.y << 64) | (u64)v.x);
}

// The digits of the tile at column c0 (raw words in tile 0 of s, SEG columns of fs_stride(R)
// each), a thread a row's segment at a time, with the carry out of the previous segment
// applied (twin carry_fixup), weighted for primes h0 .. h0 + NP - 1 into tiles 0 .. NP - 1 (tile
// i at s + i·tile).
template <int NP>
__device__ __forceinline__ void fp_weigh(double* s, u32 tile, const i128* carries, const FpLayout& L, u32 c0,
                                         u32 h0) {
    const u32 R = 1u << L.lr(), C = 1u << L.lc(), T = L.seg(), segs = L.len() / T, stride = fs_stride(R);
    for (u32 r = threadIdx.x; r < R; r += L.tile_nt()) {
        const u32 j0 = r * C + c0, seg = j0 / T;
        i64 d[FP_MAX_SEG];
#pragma unroll
        for (u32 t = 0; t < FP_MAX_SEG; t++) d[t] = t < T ? __double_as_longlong(s[t * stride + FS_PAD(r)]) : 0;
        i128 carry = fp_load_carry(carries + (seg + segs - 1) % segs);
        FpWidths ws(L, j0);
#pragma unroll
        for (u32 t = 0; t < FP_MAX_SEG; t++) {
            // Past the depth the carry is 0 but at the depth itself: d[depth] += carry.
            const bool fix = t < L.fixup_depth;
            i128 up = 0;
            const i64 b = fix ? fp_balance((i128)d[t] + carry, ws.next(), &up) : d[t] + (i64)carry;
            d[t] = b;
            carry = up;
        }
#pragma unroll
        for (int i = 0; i < NP; i++) {
            const FpPrime& q = L.q[h0 + i];
            const Fp f = fp_of(q);
            FpWidths we(L, j0);
            double w = fp_pow(q.w_hi, q.w_lo, we.e, L.lo_bits, f);
#pragma unroll
            for (u32 t = 0; t < FP_MAX_SEG; t++) {
                if (t < T) {
                    if (t > 0) {
                        const bool wide = we.e < we.f;
                        we.next();
                        w = fp_mul(w, wide ? q.w_wide : q.w_narrow, f);
                    }
                    s[i * tile + t * stride + FS_PAD(r)] = fp_mul((double)d[t], w, f);
                }
            }
        }
    }
    __syncthreads();
}

// Prime q's weighted tile in s through the column DIF stages and the twiddles, into z (that
// prime's vector).
__device__ __forceinline__ void fp_forward_tile(double* s, double* z, const FpLayout& L, const FpPrime& q, u32 c0) {
    fp_column_stages(s, L, q, false);
    if (L.lr() > 0) fp_twiddle(s, L, c0, q.t_hi, q.t_lo, fp_of(q), fp_reduces(q, FpSteps(L).tw_fwd()));
    fp_tile_store(s, z, L, c0);
}

// Grid (C / SEG tiles, 2 primes), up to 256 threads (each the rows r = thread, thread + blockDim,
// ...: a row's SEG digits are one carry segment), SEG·fs_stride(R) doubles of shared memory: x
// (digits and pending carries) into both primes' z. The first kernel of a batch of squarings
// (fp_carry takes its place in the others).
extern "C" __global__ void __launch_bounds__(FP_FWD_BOUNDS) fp_fwd(const u64* x, const i128* carries, double* z,
                                                                    FpLayout L) {
    extern __shared__ double fp_s[];
    fp_wait();
    const u32 c0 = blockIdx.x * L.seg();
    fp_tile_load(fp_s, (const double*)x, L, c0);
    __syncthreads();
    fp_weigh<1>(fp_s, 0, carries, L, c0, blockIdx.y);
    fp_forward_tile(fp_s, z + (size_t)blockIdx.y * L.len(), L, L.q[blockIdx.y], c0);
}

// ---- 2. rows: DIF, pointwise square or product, DIT ----

// A row's transform in prime q as kernels/common/four_step.cuh's fs_row_square takes it (W).
struct FpRow {
    typedef Fp F;
    const FpLayout& L;
    const FpPrime& q;
    FpSteps st;
    __device__ __forceinline__ u32 nt() const { return L.row_nt(); }
    __device__ __forceinline__ Fp f() const { return fp_of(q); }
    __device__ __forceinline__ const double* twf() const { return (const double*)q.row_tw; }
    __device__ __forceinline__ const double* twi() const { return (const double*)q.row_itw; }
    __device__ __forceinline__ u64 reduce() const { return q.reduce; }
    __device__ __forceinline__ u32 fwd() const { return st.row_fwd(0); }
    __device__ __forceinline__ u32 square() const { return st.square(); }
    __device__ __forceinline__ u32 inv() const { return st.row_inv(0); }
};

// Grid (R rows, 2 primes), up to 512 threads, fs_stride(C) doubles of shared memory (twice that
// with FP_PRODUCT: y's row beside): a row's C-point DIF stages, square (or product) and DIT
// stages (fs_row_square). With FP_ADVANCE, one thread doubles the shift count mod p (fp_inv and
// fp_carry read it after this kernel; nothing here does).
extern "C" __global__ void __launch_bounds__(FP_ROW_BOUNDS)
    fp_rows(double* z, const double* y, u32* shift, FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    fp_wait();
    if ((flags & FP_ADVANCE) && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) {
        shift[0] = (u32)((2ull * shift[0]) % L.p);
    }
    const FpRow w{L, L.q[blockIdx.y], FpSteps(L)};
    const size_t base = (size_t)blockIdx.y * L.len() + (size_t)blockIdx.x * (1u << L.lc());
    fs_row_square(fp_s, z + base, y + base, flags & FP_PRODUCT, L.lc(), w);
}

// ---- 3. inverse twiddles, column DIT, unweight, CRT, carry ----

// Both primes' tiles at column c0 of z into s (prime h's at s + h·tile), inverse twiddles and
// column DIT stages.
__device__ __forceinline__ void fp_inverse_tiles(double* s, u32 tile, const double* z, const FpLayout& L, u32 c0) {
    const FpSteps st(L);
    for (u32 h = 0; h < 2; h++) {
        const FpPrime& q = L.q[h];
        double* sh = s + h * tile;
        fp_tile_load(sh, z + (size_t)h * L.len(), L, c0);
        __syncthreads();
        if (L.lr() > 0) fp_twiddle(sh, L, c0, q.it_hi, q.it_lo, fp_of(q), fp_reduces(q, st.tw_inv()));
        fp_column_stages(sh, L, q, true);
    }
}

// Unweight, CRT, the LL term (FP_LL in flags), and the walk of each row's segment of the tile
// at column c0 (twin carry_walk): the digits as raw words over tile 0 of s, each segment's
// carry out to carries.
__device__ __forceinline__ void fp_carry_out(double* s, u32 tile, i128* carries, const u32* shift, const FpLayout& L,
                                             u32 flags, u32 c0) {
    const u32 R = 1u << L.lr(), C = 1u << L.lc(), T = L.seg(), stride = fs_stride(R);
    const Fp f1 = fp_of(L.q[0]), f2 = fp_of(L.q[1]);
    // The LL term's bit (none: ~0, past every digit: p < 2^31), and below, its place relative to
    // the next digit's first bit (u32 arithmetic: a bit before it wraps to more than any width).
    const u32 bit = (flags & FP_LL) ? (u32)(((u64)shift[0] + 1) % L.p) : ~0u;
    for (u32 r = threadIdx.x; r < R; r += L.tile_nt()) {
        const u32 j0 = r * C + c0;
        FpWidths ws(L, j0);
        u32 rel = bit - (u32)(((unsigned __int128)L.p * j0 + L.len() - 1) >> (L.lr() + L.lc()));
        i128 carry = 0;
        double u1 = fp_pow(L.q[0].iw_hi, L.q[0].iw_lo, ws.e, L.lo_bits, f1);
        double u2 = fp_pow(L.q[1].iw_hi, L.q[1].iw_lo, ws.e, L.lo_bits, f2);
        bool wide = false;
#pragma unroll
        for (u32 t = 0; t < FP_MAX_SEG; t++) {
            if (t < T) {
                if (t > 0) {
                    u1 = fp_mul(u1, wide ? L.q[0].iw_wide : L.q[0].iw_narrow, f1);
                    u2 = fp_mul(u2, wide ? L.q[1].iw_wide : L.q[1].iw_narrow, f2);
                }
                const u32 w = ws.next();
                wide = w != ws.q;
                const u32 at = t * stride + FS_PAD(r);
                const double y1 = fp_mul(fp_reduce(s[at], f1), u1, f1);
                const double y2 = fp_mul(fp_reduce(s[tile + at], f2), u2, f2);
                u64 lo, hi;
                fp_crt(y1, y2, f1, f2, L.crt_inv, lo, hi);
                // v = c + carry in, less 2^rel here, balanced whole (the same digit and carry as
                // balancing c's low w bits plus the carry and adding c >> w, as twin::balance).
                i128 v = (i128)(((unsigned __int128)hi << 64) | lo) + carry;
                if (rel < w) v -= (i128)(1ull << rel);
                rel -= w;
                // The digit over this row's slot of the first prime (read above, by this thread only).
                s[at] = __longlong_as_double(fp_balance(v, w, &carry));
            }
        }
        carries[j0 / T] = carry;
    }
    __syncthreads();
}

// Grid (C / SEG tiles), up to 256 threads (rows as fp_fwd), 2·SEG·fs_stride(R) doubles of shared
// memory (both primes' tiles, the second after the first): z into x's digits and pending
// carries. The last kernel of a batch of squarings.
extern "C" __global__ void __launch_bounds__(FP_INV_BOUNDS)
    fp_inv(const double* z, u64* x, i128* carries, const u32* shift, FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    fp_wait();
    const u32 c0 = blockIdx.x * L.seg(), tile = L.seg() * fs_stride(1u << L.lr());
    fp_inverse_tiles(fp_s, tile, z, L, c0);
    fp_carry_out(fp_s, tile, carries, shift, L, flags, c0);
    fp_tile_store(fp_s, (double*)x, L, c0);
}

// ---- 3 + 1. the carry kernel: fp_inv and the next squaring's fp_fwd in one ----

// The ready flags' acquire load and release store (plain accesses where the kernels are
// compiled for the host, one block at a time: tests/fp64_kernels_on_host.rs).
__device__ __forceinline__ u32 fp_load_acquire(const u32* a) {
    u32 v;
#ifdef __CUDA_ARCH__
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
#else
    v = *(volatile const u32*)a;
#endif
    return v;
}
__device__ __forceinline__ void fp_store_release(u32* a, u32 v) {
#ifdef __CUDA_ARCH__
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(a), "r"(v) : "memory");
#else
    *(volatile u32*)a = v;
#endif
}

// Grid (B + 1 blocks, B = C / SEG tiles), threads and shared memory as fp_inv: z's tile through
// fp_inv's steps (its digits stay in shared memory, its carries out go to `carries`), then,
// once the previous tile's carries are out, fp_fwd's steps for both primes back into z. The
// carries pass between blocks through `carries` and the ready flags sync[1 ..= B]: blocks take
// tiles in the order they start (a ticket from sync[0], which the last one resets), so the
// block a block waits for is running or done. Tile 0 takes the carries of the last tile, which
// are out last: its first block only publishes its carries, and block B does the tile again
// (z is only written after its carries are in) and writes it. One global round trip of the
// residue in place of fp_inv's and fp_fwd's two. No kernel here triggers its dependents early
// (griddepcontrol.launch_dependents): the next kernel's blocks would then wait on the SMs and
// could keep fp_carry's later blocks, which the waiting ones need, from starting.
extern "C" __global__ void __launch_bounds__(FP_INV_BOUNDS)
    fp_carry(double* z, i128* carries, const u32* shift, u32* sync, FpLayout L, u32 flags) {
    extern __shared__ double fp_s[];
    SHARED_VAR u32 ticket;
    fp_wait();
    const u32 T = L.seg(), B = (1u << L.lc()) / T, tile = T * fs_stride(1u << L.lr());
    if (threadIdx.x == 0) {
        const u32 b = atomicAdd(sync, 1);
        if (b == B) atomicExch(sync, 0);
        ticket = b;
    }
    __syncthreads();
    const u32 b = ticket, c0 = (b == B ? 0 : b) * T;
    fp_inverse_tiles(fp_s, tile, z, L, c0);
    fp_carry_out(fp_s, tile, carries, shift, L, flags, c0);
    if (b < B) {
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) fp_store_release(sync + 1 + b, 1);
    }
    if (b == 0) return;
    if (threadIdx.x == 0) {
        while (fp_load_acquire(sync + b) == 0) __nanosleep(64);
        sync[b] = 0;
    }
    __syncthreads();
    fp_weigh<2>(fp_s, tile, carries, L, c0, 0);
    for (u32 h = 0; h < 2; h++) fp_forward_tile(fp_s + h * tile, z + (size_t)h * L.len(), L, L.q[h], c0);
}
