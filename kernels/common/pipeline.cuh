// A squaring on the device as a four-step NTT in one or more prime fields (issue 37), over the
// arithmetic FS_ARITH that the unit defines before it includes this file (kernels/fp64/pipeline.cuh
// is the first): three kernels (or two, FS_NAME(rows) and FS_NAME(carry), between the squarings
// of a batch), each one global round trip of the residue, mirroring the arithmetic's CPU twin
// value for value (src/transform/fp64/stages.rs: the same field operations in the same order,
// the same lazy-reduction flags):
//   fwd    a tile of SEG columns × R rows a block (a thread a row at a time: a carry segment): the
//          pending carries applied (the fix-up), digits weighted, the R-point DIF stages of each
//          column in shared memory, the twiddles ω_n^(bitrev(r)·c); one prime a block
//          (blockIdx.y);
//   rows   a row of C values a block: C-point DIF stages, the pointwise square (or product with
//          y's row, transformed here too), C-point DIT stages, in shared memory: the first and
//          last stages on the way in and out, the square inside the pass of the last DIF and
//          first DIT stages;
//   inv    a tile as fwd, every prime: inverse twiddles, R-point DIT stages, unweight, the
//          primes' values combined into the convolution's integer (A::combine or A::split:
//          the FP64 pair's CRT) and the carry walk of the thread's segment (the LL term -2·2^s
//          on the way), digits and the segment's carry out written back.
//   carry  inv's steps, then (once the previous tile's carries are out) fwd's for every prime:
//          in a batch of squarings it takes the place of an inv and the next fwd.
// fwd and inv move their tiles between global and shared memory along the rows, 8 loads in
// flight a thread (fs_tile_load, fs_tile_store), and work on a row's segment from shared
// memory. The stages, passes and copies are kernels/common/four_step.cuh's over the
// arithmetic's field: FS_S stages at a time in registers; every run-time flag that turns work on
// or off (a stage's reductions, the square's, the product) picks one of several compiled
// instances (fs_dispatch), so that no predicated-off instruction takes an issue slot.
// The element j = r·C + c of a prime's vector is row r, column c; n = R·C = 2^k. Launched with
// programmatic dependent launch, each waits for the previous kernel before touching memory.
//
// FS_ARITH (A) provides: F, the field (kernels/common/four_step.cuh's interface, and V
// from_i64(i64): a digit as a value of the field, within the bounds of F::mul); NP, its primes;
// Extra, what the combination needs beyond the primes (in the layout after them); combine(f, x,
// y), the integer c that the primes' unweighted values y[0 .. NP) of one output stand for (f:
// the primes' fields, x: the Extra), as an i128, and split(f, x, y, w, q), the same c as q·2^w +
// z, z returned, with |q| <= (|c| + 2^52)/2^w + 1 and |z| < 2^53, for the 64-bit walk
// (FP_CARRY64); and FS_NAME(x), the kernels' names.
#pragma once
#include "common/four_step.cuh"

typedef __int128 i128;
typedef FS_ARITH A;
typedef A::F F;
typedef F::V V;

#define FS_ADVANCE 4
#define FS_LL 8
#define FS_PRODUCT 1

// The raw bits of a value slot that holds a digit (digits and values share shared memory and
// the residue's buffer), and back.
__device__ __forceinline__ i64 fs_bits(double v) { return __double_as_longlong(v); }
__device__ __forceinline__ i64 fs_bits(u64 v) { return (i64)v; }
__device__ __forceinline__ void fs_set_bits(double& v, i64 b) { v = __longlong_as_double(b); }
__device__ __forceinline__ void fs_set_bits(u64& v, i64 b) { v = (u64)b; }

// One prime's constants and tables (device addresses); field for field FsPrime in
// src/gpu/four_step/setup.rs. reduce: bit s set = every value is reduced before step s of the
// squaring (src/transform/fp64/stages.rs StepIndex). row_tw[m + j] = w_2m^j of the C-point
// transform, col_tw of the R-point one (itw: w^-j); a segment's first weight rho^e (unweight
// rho^-e n^-1) is a row's entry times a tile's (w_row, w_tile: fs_first_power, stages.rs
// RowTile), a row's twiddle at a tile's first column a hi entry times a lo entry of the tile
// (fs_tile_power) for w_n and w_n^-1, and
// t_step[r] = w_n^bitrev(r). Along a segment a weight is the previous one times w_narrow or
// w_wide (the previous digit narrow or wide), an unweight times iw_narrow or iw_wide, the
// twiddle of column c + 1 that of column c times w_n^k: a few table entries a segment, not a
// digit (stages.rs weights, twiddle).
struct FsPrime {
    F f;
    V w_narrow, w_wide, iw_narrow, iw_wide;  // the weight chains' factors (stages.rs Chain)
    u64 reduce;
    u64 row_tw, row_itw, col_tw, col_itw;
    u64 w_row, w_tile, iw_row, iw_tile;  // a segment's first weight, unweight: fs_first_power
    u64 t_hi, t_lo, it_hi, it_lo;
    u64 t_step, it_step;  // ω_n^(±bitrev_R(r)) a row r, whole (stages.rs twiddle_step)
};

// The plan as these kernels see it (FsLayout in src/gpu/four_step/setup.rs).
// The shape of the plan (log2 R, log2 C, SEG) is read through lr(), lc(), seg() and len(), the
// threads of a column kernel's and of a rows block through tile_nt() and row_nt(): the host
// compiles the unit for each shape with FP_LOG_R, FP_LOG_C, FP_SEG, FP_TILE_THREADS and
// FP_ROW_THREADS defined (module.rs unit preambles) and launches those threads, so that every
// length, stage index, loop count and address offset derived from them is a compile-time
// constant; without them (scripts/fp64-kernel-equiv.sh's runtime build) the fields and blockDim
// are read; lob() is log2 of the rows a tile's lo twiddle table covers, min(log2 R, 5)
// (src/transform/fp64/shape.rs tile_twiddle_exponents; the field lo_bits at run time).
struct FsLayout {
    FsPrime q[A::NP];
    A::Extra x;
    u32 p, n, log_r, log_c;
    u32 lo_bits, seg_len, fixup_depth, pad;
#if defined(FP_LOG_R) && defined(FP_LOG_C) && defined(FP_SEG) && defined(FP_TILE_THREADS) && defined(FP_ROW_THREADS)
    __device__ __forceinline__ u32 lr() const { return FP_LOG_R; }
    __device__ __forceinline__ u32 lc() const { return FP_LOG_C; }
    __device__ __forceinline__ u32 seg() const { return FP_SEG; }
    __device__ __forceinline__ u32 len() const { return 1u << (FP_LOG_R + FP_LOG_C); }
    __device__ __forceinline__ u32 tile_nt() const { return FP_TILE_THREADS; }
    __device__ __forceinline__ u32 row_nt() const { return FP_ROW_THREADS; }
    __device__ __forceinline__ u32 lob() const { return FP_LOG_R < 5 ? FP_LOG_R : 5; }
#else
    __device__ __forceinline__ u32 lr() const { return log_r; }
    __device__ __forceinline__ u32 lc() const { return log_c; }
    __device__ __forceinline__ u32 seg() const { return seg_len; }
    __device__ __forceinline__ u32 len() const { return n; }
    __device__ __forceinline__ u32 tile_nt() const { return blockDim.x; }
    __device__ __forceinline__ u32 row_nt() const { return blockDim.x; }
    __device__ __forceinline__ u32 lob() const { return lo_bits; }
#endif
};

__device__ __forceinline__ void fs_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// The step indices of src/transform/fp64/stages.rs StepIndex.
struct FsSteps {
    u32 log_r, log_c, tw;
    __device__ __forceinline__ FsSteps(const FsLayout& L) : log_r(L.lr()), log_c(L.lc()), tw(L.lr() > 0) {}
    __device__ __forceinline__ u32 col_fwd(u32 s) const { return s; }
    __device__ __forceinline__ u32 tw_fwd() const { return log_r; }
    __device__ __forceinline__ u32 row_fwd(u32 s) const { return log_r + tw + s; }
    __device__ __forceinline__ u32 square() const { return row_fwd(log_c); }
    __device__ __forceinline__ u32 row_inv(u32 s) const { return square() + 1 + s; }
    __device__ __forceinline__ u32 tw_inv() const { return row_inv(log_c); }
    __device__ __forceinline__ u32 col_inv(u32 s) const { return tw_inv() + tw + s; }
};

__device__ __forceinline__ bool fs_reduces(const FsPrime& q, u32 step) { return (q.reduce >> step) & 1; }

// Row r's twiddle ω^(bitrev_R(r)·c0) at the tile of column c0 (tile t = c0/SEG) from the tile's
// tables: hi[t·R/L + r/L] · lo[t·L + r mod L], L = 2^lo_bits = min(R, 32) (src/transform/fp64/
// shape.rs tile_twiddle_exponents, stages.rs TilePowers::at): a warp's rows load one hi entry
// and a run of lo entries.
__device__ __forceinline__ V fs_tile_power(u64 hi, u64 lo, const FsLayout& L, u32 r, u32 c0, F f) {
    const u32 t = c0 / L.seg(), lb = L.lob();
    return f.mul(((const V*)hi)[(t << (L.lr() - lb)) + (r >> lb)], ((const V*)lo)[(t << lb) + (r & ((1u << lb) - 1))]);
}

// e_j = -p·j mod n (src/transform/plan.rs weight_exp).
__device__ __forceinline__ u32 fs_weight_exp(const FsLayout& L, u64 j) {
    const u32 r = (u32)(((u64)L.p * j) & (L.len() - 1));
    return r == 0 ? 0 : L.len() - r;
}

// The first weight (or unweight) of the segment at row r, column c0 (stages.rs RowTile::at):
// row r's entry times tile c0/SEG's, the second of its pair where e_(r·C) + e_(c0) ≥ n. One
// coalesced load a row and one the whole block shares.
__device__ __forceinline__ V fs_first_power(u64 row, u64 tile, const FsLayout& L, u32 r, u32 c0, F f) {
    const u32 a = fs_weight_exp(L, (u64)r << L.lc()), b = fs_weight_exp(L, c0);
    const u32 wrap = (u64)a + b >= L.len() ? 1 : 0;
    return f.mul(((const V*)row)[r], ((const V*)tile)[2 * (c0 / L.seg()) + wrap]);
}


// ---- the digit layout (src/transform/plan.rs; n = 2^k) ----

// e_j = (n - pj mod n) mod n, and the widths of digits j, j + 1, ... by the recurrence of
// Plan::widths_from: digit j is q + 1 bits wide iff e_j < f (p = q n + f).
struct FsWidths {
    u32 e, q, f, n;
    __device__ __forceinline__ FsWidths(const FsLayout& L, u64 j) {
        n = L.len();
        q = L.p / L.len();
        f = L.p & (L.len() - 1);
        e = fs_weight_exp(L, j);
    }
    __device__ __forceinline__ u32 next() {
        const bool wide = e < f;
        e = wide ? e + n - f : e - f;
        return q + wide;
    }
};

// The carries' integers: 64-bit where the plan proves every carry below 2^61 (FP_CARRY64: the
// host defines it from src/transform/fp64/shape.rs carries_fit_i64), so that a carry plus a
// digit or an output's low part z (< 2^53) stays below 2^62; else 128-bit (the widest FP64 pair
// at the top of 2^22, and the runtime-shape build).
#if defined(FP_CARRY64) && FP_CARRY64
#define FS_CARRY64 1
typedef i64 FsCarry;
#else
#define FS_CARRY64 0
typedef i128 FsCarry;
#endif

// x >> w (arithmetic) for 1 <= w <= 63.
__device__ __forceinline__ i64 fs_shr(i64 x, u32 w) { return x >> w; }
__device__ __forceinline__ i128 fs_shr(i128 x, u32 w) {
    const u64 lo = (u64)x, hi = (u64)(x >> 64);
    const u64 rlo = (lo >> w) | (hi << (64 - w)), rhi = (u64)((i64)hi >> w);
    return (i128)(((unsigned __int128)rhi << 64) | rlo);
}

// One output's integer c from its primes' unweighted values y as q·2^w + z (z returned): with
// FS_CARRY64 the arithmetic's split, else c itself (A::combine) and q = 0.
__device__ __forceinline__ FsCarry fs_output(const F (&f)[A::NP], const A::Extra& x, const V (&y)[A::NP], u32 w,
                                             FsCarry& q) {
#if FS_CARRY64
    return A::split(f, x, y, w, q);
#else
    q = 0;
    return A::combine(f, x, y);
#endif
}

// Balanced remainder d of t modulo 2^w in [-2^(w-1), 2^(w-1)) and the carry (t - d) / 2^w
// (src/transform/twin.rs balance), for 1 <= w <= 62 (and |t| < 2^62 for an i64).
template <class T>
__device__ __forceinline__ i64 fs_balance(T t, u32 w, T* up) {
    const i64 half = (i64)1 << (w - 1);
    const T s = t + half;
    *up = fs_shr(s, w);
    return (i64)((u64)s & ((1ull << w) - 1)) - half;
}

// ---- shared memory: tiles and rows (kernels/common/four_step.cuh) ----

#define FS_MAX_SEG 8

// The kernels' launch bounds (threads, and blocks an SM to fit in registers: FP64's fwd 4 of 37
// KB of shared memory at 2^22, rows and inv 3 of 74 KB, so 64, 80 and 80 registers a thread);
// the host launches at most 256 and defines FP_ROW_BOUNDS as 256, 4 where a row leaves shared
// memory for four blocks; the column kernels 512 at the lengths where that fills the SMs in
// fuller waves, FP_FWD_BOUNDS and FP_INV_BOUNDS 512, 2 there (src/gpu/four_step/pipeline.rs
// preamble).
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
__device__ __forceinline__ void fs_column_stages(V* s, const FsLayout& L, const FsPrime& q, bool inverse) {
    const FsSteps st(L);
    const u32 stride = fs_stride(1u << L.lr());
    if (inverse) {
        fs_transform<F, true>(s, L.seg(), stride, L.lr(), (const V*)q.col_itw, q.f, q.reduce, st.col_inv(0),
                              L.tile_nt());
    } else {
        fs_transform<F, false>(s, L.seg(), stride, L.lr(), (const V*)q.col_tw, q.f, q.reduce, st.col_fwd(0),
                               L.tile_nt());
    }
}

// ---- moving values between global and shared memory ----

// The tile of columns c0 .. c0 + T of every row of v into shared memory (column t of R values
// from s + t·fs_stride(R)), or back: consecutive threads along a row's segment, so that a warp
// moves whole 64-byte runs of 4 rows.
__device__ __forceinline__ void fs_tile_load(V* s, const V* v, const FsLayout& L, u32 c0) {
    const u32 R = 1u << L.lr(), T = L.seg();
    fs_copy<V, true, true>(s, fs_stride(R), (V*)v + c0, 1u << L.lc(), fs_log2(T), R * T, L.tile_nt());
}
__device__ __forceinline__ void fs_tile_store(V* s, V* v, const FsLayout& L, u32 c0) {
    const u32 R = 1u << L.lr(), T = L.seg();
    fs_copy<V, false, true>(s, fs_stride(R), v + c0, 1u << L.lc(), fs_log2(T), R * T, L.tile_nt());
}

// The twiddle step: each row r of the tile times the twiddles ω^(k·c) of its columns c = c0 ..
// c0 + T - 1, k = bitrev(r) (ω: the table pair hi, lo; each value reduced first when RED):
// ω^(k·c0) from the tables, then a product by ω^k (steps[r]: one coalesced load) a column
// (stages.rs twiddle). A thread's rows are r = thread + i·nt; K of them at a time take their
// table values (FsTwiddleRows) before they touch the tile, so where a thread has at most
// FS_TW_ROWS rows the column kernels fetch them ahead (fs_twiddle_ahead), before the tile's own
// loads or the DIF passes, and the tables' latency runs under those (fs_inverse_tiles,
// fs_forward_tile); else the step fetches a row at a time as it goes (fs_twiddle). FS_TW_K is
// the rows a fetch ahead holds: one where the unit is compiled for a shape whose threads have one
// row each, so that no register holds a row that does not exist (at 2^21, 512 threads of 64
// registers, the fetch ahead of two rows spilled in fp_carry and lost, 143.8 µs an iteration
// against 142.1 on an H200, 2026-11-29, call Z; of one row it does not spill and runs 138.0
// against 138.9, 2026-11-30, call AJ); FS_TW_ROWS in the runtime build.
#define FS_TW_ROWS 2
#if defined(FP_LOG_R) && defined(FP_TILE_THREADS)
#define FS_TW_K ((1u << FP_LOG_R) <= FP_TILE_THREADS ? 1u : FS_TW_ROWS)
#else
#define FS_TW_K FS_TW_ROWS
#endif
template <u32 K>
struct FsTwiddleRows {
    V w[K], step[K];  // ω^(k·c0) and ω^k of rows r0 + thread + i·nt
};
template <u32 K>
__device__ __forceinline__ FsTwiddleRows<K> fs_twiddle_fetch(const FsLayout& L, u32 r0, u32 c0, u64 hi, u64 lo,
                                                             u64 steps, F f) {
    FsTwiddleRows<K> t;
#pragma unroll
    for (u32 i = 0; i < K; i++) {
        const u32 r = r0 + threadIdx.x + i * L.tile_nt();
        if (r < (1u << L.lr())) {
            t.step[i] = ((const V*)steps)[r];
            t.w[i] = fs_tile_power(hi, lo, L, r, c0, f);
        }
    }
    return t;
}
template <bool RED, u32 K>
__device__ __forceinline__ void fs_twiddle_rows_of(V* s, const FsLayout& L, u32 r0, const FsTwiddleRows<K>& tw,
                                                   F f) {
    const u32 T = L.seg(), stride = fs_stride(1u << L.lr());
#pragma unroll
    for (u32 i = 0; i < K; i++) {
        const u32 r = r0 + threadIdx.x + i * L.tile_nt();
        if (r < (1u << L.lr())) {
            V w = tw.w[i];
#pragma unroll
            for (u32 t = 0; t < FS_MAX_SEG; t++) {
                if (t < T) {
                    if (t > 0) w = f.mul(w, tw.step[i]);
                    V& x = s[t * stride + FS_PAD(r)];
                    x = f.mul(RED ? f.reduce(x) : x, w);
                }
            }
        }
    }
}
template <u32 K>
__device__ __forceinline__ void fs_twiddle_rows(V* s, const FsLayout& L, u32 r0, const FsTwiddleRows<K>& tw, F f,
                                                bool red) {
    if (red) {
        fs_twiddle_rows_of<true, K>(s, L, r0, tw, f);
    } else {
        fs_twiddle_rows_of<false, K>(s, L, r0, tw, f);
    }
}
// Whether the column kernels fetch a twiddle step's tables ahead: where a thread's rows are
// FS_TW_ROWS or fewer, so that one fetch covers them.
__device__ __forceinline__ bool fs_twiddle_ahead(const FsLayout& L) {
    return (1u << L.lr()) <= FS_TW_ROWS * L.tile_nt();
}
// The whole step, a row at a time, then the barrier.
template <bool RED>
__device__ __forceinline__ void fs_twiddle_of(V* s, const FsLayout& L, u32 c0, u64 hi, u64 lo, u64 steps, F f) {
    for (u32 r0 = 0; r0 < (1u << L.lr()); r0 += L.tile_nt()) {
        fs_twiddle_rows_of<RED, 1>(s, L, r0, fs_twiddle_fetch<1>(L, r0, c0, hi, lo, steps, f), f);
    }
}
__device__ __forceinline__ void fs_twiddle(V* s, const FsLayout& L, u32 c0, u64 hi, u64 lo, u64 steps, F f,
                                           bool red) {
    if (red) {
        fs_twiddle_of<true>(s, L, c0, hi, lo, steps, f);
    } else {
        fs_twiddle_of<false>(s, L, c0, hi, lo, steps, f);
    }
    __syncthreads();
}
// A column kernel's twiddle step for prime q (the inverse one's tables, or the forward one's) in
// two halves: fs_twiddle_begin fetches the tables ahead where fs_twiddle_ahead holds (before the
// work whose latency it is to hide), fs_twiddle_end applies the step (none where R = 1) from
// those values or fetching as it goes, then the barrier.
__device__ __forceinline__ bool fs_twiddle_early(const FsLayout& L) { return L.lr() > 0 && fs_twiddle_ahead(L); }
__device__ __forceinline__ void fs_twiddle_begin(FsTwiddleRows<FS_TW_K>& tw, const FsLayout& L,
                                                 const FsPrime& q, u32 c0, bool inverse) {
    if (fs_twiddle_early(L)) {
        tw = inverse ? fs_twiddle_fetch<FS_TW_K>(L, 0, c0, q.it_hi, q.it_lo, q.it_step, q.f)
                     : fs_twiddle_fetch<FS_TW_K>(L, 0, c0, q.t_hi, q.t_lo, q.t_step, q.f);
    }
}
__device__ __forceinline__ void fs_twiddle_end(V* s, const FsLayout& L, const FsTwiddleRows<FS_TW_K>& tw,
                                               const FsPrime& q, u32 c0, bool inverse) {
    const FsSteps st(L);
    if (fs_twiddle_early(L)) {
        fs_twiddle_rows<FS_TW_K>(s, L, 0, tw, q.f, fs_reduces(q, inverse ? st.tw_inv() : st.tw_fwd()));
        __syncthreads();
    } else if (L.lr() > 0) {
        if (inverse) {
            fs_twiddle(s, L, c0, q.it_hi, q.it_lo, q.it_step, q.f, fs_reduces(q, st.tw_inv()));
        } else {
            fs_twiddle(s, L, c0, q.t_hi, q.t_lo, q.t_step, q.f, fs_reduces(q, st.tw_fwd()));
        }
    }
}

// ---- 1. fix-up, weights, column DIF, twiddles ----

// Where the carry out of the segment at row r, column c0 is kept: tile-major (slot (c0 / SEG)·R
// + r: src/transform/fp64/shape.rs carry_slot), so that a tile's carries are consecutive and a
// warp's loads and stores of them coalesce (a row-major slot, r·C/SEG + c0/SEG, put the 32 rows
// of a warp's access in 32 lines: +2.1% an iteration at 2^22, +2.6% at 2^21 on an H200,
// bench/RESULTS.md 2026-11-30, call AG).
__device__ __forceinline__ u32 fs_carry_slot(const FsLayout& L, u32 r, u32 c0) {
    return ((c0 / L.seg()) << L.lr()) + r;
}
// The slot of the carry into that segment: the previous segment's, along the row or, at column
// 0, the last of the row before (cyclically).
__device__ __forceinline__ u32 fs_carry_in_slot(const FsLayout& L, u32 r, u32 c0) {
    const u32 R = 1u << L.lr(), C = 1u << L.lc();
    return c0 > 0 ? fs_carry_slot(L, r, c0 - L.seg()) : fs_carry_slot(L, (r + R - 1) & (R - 1), C - L.seg());
}

// A pending carry (an i128, two words low first; with FP_CARRY64 below 2^61, its low word) from
// global memory through L2: the carry kernel reads carries that another block of the same launch
// has just written.
__device__ __forceinline__ FsCarry fs_load_carry(const i128* c) {
#if FS_CARRY64
    return __ldcg((const long long*)c);
#else
    const longlong2 v = __ldcg((const longlong2*)c);
    return (i128)(((unsigned __int128)(u64)v.y << 64) | (u64)v.x);
#endif
}

// The digits of the tile at column c0 (raw words in tile 0 of s, SEG columns of fs_stride(R)
// each), a thread a row's segment at a time, with the carry out of the previous segment
// applied (twin carry_fixup), weighted for primes h0 .. h0 + NQ - 1 into tiles 0 .. NQ - 1 (tile
// i at s + i·tile).
template <int NQ>
__device__ __forceinline__ void fs_weigh(V* s, u32 tile, const i128* carries, const FsLayout& L, u32 c0, u32 h0) {
    const u32 R = 1u << L.lr(), C = 1u << L.lc(), T = L.seg(), stride = fs_stride(R);
    for (u32 r = threadIdx.x; r < R; r += L.tile_nt()) {
        const u32 j0 = r * C + c0;
        i64 d[FS_MAX_SEG];
#pragma unroll
        for (u32 t = 0; t < FS_MAX_SEG; t++) d[t] = t < T ? fs_bits(s[t * stride + FS_PAD(r)]) : 0;
        FsCarry carry = fs_load_carry(carries + fs_carry_in_slot(L, r, c0));
        FsWidths ws(L, j0);
#pragma unroll
        for (u32 t = 0; t < FS_MAX_SEG; t++) {
            // Past the depth the carry is 0 but at the depth itself: d[depth] += carry.
            const bool fix = t < L.fixup_depth;
            FsCarry up = 0;
            const i64 b = fix ? fs_balance((FsCarry)d[t] + carry, ws.next(), &up) : d[t] + (i64)carry;
            d[t] = b;
            carry = up;
        }
#pragma unroll
        for (int i = 0; i < NQ; i++) {
            const FsPrime& q = L.q[h0 + i];
            const F f = q.f;
            FsWidths we(L, j0);
            V w = fs_first_power(q.w_row, q.w_tile, L, r, c0, f);
#pragma unroll
            for (u32 t = 0; t < FS_MAX_SEG; t++) {
                if (t < T) {
                    if (t > 0) {
                        const bool wide = we.e < we.f;
                        we.next();
                        w = f.mul(w, wide ? q.w_wide : q.w_narrow);
                    }
                    s[i * tile + t * stride + FS_PAD(r)] = f.mul(f.from_i64(d[t]), w);
                }
            }
        }
    }
    __syncthreads();
}

// Prime q's weighted tile in s through the column DIF stages and the twiddles, into z (that
// prime's vector); the twiddle tables read before the stages where they can be
// (fs_twiddle_begin).
__device__ __forceinline__ void fs_forward_tile(V* s, V* z, const FsLayout& L, const FsPrime& q, u32 c0) {
    FsTwiddleRows<FS_TW_K> tw;
    fs_twiddle_begin(tw, L, q, c0, false);
    fs_column_stages(s, L, q, false);
    fs_twiddle_end(s, L, tw, q, c0, false);
    fs_tile_store(s, z, L, c0);
}

// Grid (C / SEG tiles, NP primes), up to 256 threads (each the rows r = thread, thread +
// blockDim, ...: a row's SEG digits are one carry segment), SEG·fs_stride(R) values of shared
// memory: x (digits and pending carries) into every prime's z. The first kernel of a batch of
// squarings (the carry kernel takes its place in the others).
extern "C" __global__ void __launch_bounds__(FP_FWD_BOUNDS) FS_NAME(fwd)(const u64* x, const i128* carries, V* z,
                                                                          FsLayout L) {
    extern __shared__ V fs_s[];
    fs_wait();
    const u32 c0 = blockIdx.x * L.seg();
    fs_tile_load(fs_s, (const V*)x, L, c0);
    __syncthreads();
    fs_weigh<1>(fs_s, 0, carries, L, c0, blockIdx.y);
    fs_forward_tile(fs_s, z + (size_t)blockIdx.y * L.len(), L, L.q[blockIdx.y], c0);
}

// ---- 2. rows: DIF, pointwise square or product, DIT ----

// A row's transform in prime q as kernels/common/four_step.cuh's fs_row_square takes it (W).
struct FsRow {
    typedef ::F F;
    const FsLayout& L;
    const FsPrime& q;
    FsSteps st;
    __device__ __forceinline__ u32 nt() const { return L.row_nt(); }
    __device__ __forceinline__ F f() const { return q.f; }
    __device__ __forceinline__ const V* twf() const { return (const V*)q.row_tw; }
    __device__ __forceinline__ const V* twi() const { return (const V*)q.row_itw; }
    __device__ __forceinline__ u64 reduce() const { return q.reduce; }
    __device__ __forceinline__ u32 fwd() const { return st.row_fwd(0); }
    __device__ __forceinline__ u32 square() const { return st.square(); }
    __device__ __forceinline__ u32 inv() const { return st.row_inv(0); }
};

// Grid (R rows, NP primes), up to 256 threads, fs_stride(C) values of shared memory (twice that
// with FS_PRODUCT: y's row beside): a row's C-point DIF stages, square (or product) and DIT
// stages (fs_row_square). With FS_ADVANCE, one thread doubles the shift count mod p (inv and
// carry read it after this kernel; nothing here does).
extern "C" __global__ void __launch_bounds__(FP_ROW_BOUNDS)
    FS_NAME(rows)(V* z, const V* y, u32* shift, FsLayout L, u32 flags) {
    extern __shared__ V fs_s[];
    fs_wait();
    if ((flags & FS_ADVANCE) && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) {
        shift[0] = (u32)((2ull * shift[0]) % L.p);
    }
    const FsRow w{L, L.q[blockIdx.y], FsSteps(L)};
    const size_t base = (size_t)blockIdx.y * L.len() + (size_t)blockIdx.x * (1u << L.lc());
    fs_row_square(fs_s, z + base, y + base, flags & FS_PRODUCT, L.lc(), w);
}

// ---- 3. inverse twiddles, column DIT, unweight, combination, carry ----

// Every prime's tile at column c0 of z into s (prime h's at s + h·tile), inverse twiddles and
// column DIT stages; a prime's twiddle tables read before its tile where they can be
// (fs_twiddle_begin).
__device__ __forceinline__ void fs_inverse_tiles(V* s, u32 tile, const V* z, const FsLayout& L, u32 c0) {
    for (u32 h = 0; h < A::NP; h++) {
        const FsPrime& q = L.q[h];
        V* sh = s + h * tile;
        FsTwiddleRows<FS_TW_K> tw;
        fs_twiddle_begin(tw, L, q, c0, true);
        fs_tile_load(sh, z + (size_t)h * L.len(), L, c0);
        __syncthreads();
        fs_twiddle_end(sh, L, tw, q, c0, true);
        fs_column_stages(sh, L, q, true);
    }
}

// Unweight, combination, the LL term (FS_LL in flags), and the walk of each row's segment of the
// tile at column c0 (twin carry_walk): the digits as raw words over tile 0 of s, each segment's
// carry out to carries.
__device__ __forceinline__ void fs_carry_out(V* s, u32 tile, i128* carries, const u32* shift, const FsLayout& L,
                                             u32 flags, u32 c0) {
    const u32 R = 1u << L.lr(), C = 1u << L.lc(), T = L.seg(), stride = fs_stride(R);
    // The LL term's bit (none: ~0, past every digit: p < 2^31), and below, its place relative to
    // the next digit's first bit (u32 arithmetic: a bit before it wraps to more than any width).
    F f[A::NP];
#pragma unroll
    for (u32 h = 0; h < A::NP; h++) f[h] = L.q[h].f;
    const u32 bit = (flags & FS_LL) ? (u32)(((u64)shift[0] + 1) % L.p) : ~0u;
    for (u32 r = threadIdx.x; r < R; r += L.tile_nt()) {
        const u32 j0 = r * C + c0;
        FsWidths ws(L, j0);
        u32 rel = bit - (u32)(((unsigned __int128)L.p * j0 + L.len() - 1) >> (L.lr() + L.lc()));
        FsCarry carry = 0;
        V u[A::NP];
#pragma unroll
        for (u32 h = 0; h < A::NP; h++) u[h] = fs_first_power(L.q[h].iw_row, L.q[h].iw_tile, L, r, c0, f[h]);
        bool wide = false;
#pragma unroll
        for (u32 t = 0; t < FS_MAX_SEG; t++) {
            if (t < T) {
                if (t > 0) {
#pragma unroll
                    for (u32 h = 0; h < A::NP; h++) {
                        u[h] = f[h].mul(u[h], wide ? L.q[h].iw_wide : L.q[h].iw_narrow);
                    }
                }
                const u32 w = ws.next();
                wide = w != ws.q;
                const u32 at = t * stride + FS_PAD(r);
                V y[A::NP];
#pragma unroll
                for (u32 h = 0; h < A::NP; h++) y[h] = f[h].mul(f[h].reduce(s[h * tile + at]), u[h]);
                // c = q·2^w + z (fs_output); v = z + carry in, less 2^rel here, balanced (the same
                // digit and carry as balancing c + carry in whole, as twin::balance), q added to
                // its carry out.
                FsCarry q;
                FsCarry v = fs_output(f, L.x, y, w, q) + carry;
                if (rel < w) v -= (FsCarry)(1ull << rel);
                rel -= w;
                // The digit over this row's slot of the first prime (read above, by this thread only).
                fs_set_bits(s[at], fs_balance(v, w, &carry));
                carry += q;
            }
        }
        carries[fs_carry_slot(L, r, c0)] = carry;
    }
    __syncthreads();
}

// Grid (C / SEG tiles), up to 256 threads (rows as fwd), NP·SEG·fs_stride(R) values of shared
// memory (every prime's tile, one after the other): z into x's digits and pending carries. The
// last kernel of a batch of squarings.
extern "C" __global__ void __launch_bounds__(FP_INV_BOUNDS)
    FS_NAME(inv)(const V* z, u64* x, i128* carries, const u32* shift, FsLayout L, u32 flags) {
    extern __shared__ V fs_s[];
    fs_wait();
    const u32 c0 = blockIdx.x * L.seg(), tile = L.seg() * fs_stride(1u << L.lr());
    fs_inverse_tiles(fs_s, tile, z, L, c0);
    fs_carry_out(fs_s, tile, carries, shift, L, flags, c0);
    fs_tile_store(fs_s, (V*)x, L, c0);
}

// ---- 3 + 1. the carry kernel: inv and the next squaring's fwd in one ----

// The ready flags' acquire load and release store (plain accesses where the kernels are
// compiled for the host, one block at a time: tests/fp64_kernels_on_host.rs).
__device__ __forceinline__ u32 fs_load_acquire(const u32* a) {
    u32 v;
#ifdef __CUDA_ARCH__
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
#else
    v = *(volatile const u32*)a;
#endif
    return v;
}
__device__ __forceinline__ void fs_store_release(u32* a, u32 v) {
#ifdef __CUDA_ARCH__
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(a), "r"(v) : "memory");
#else
    *(volatile u32*)a = v;
#endif
}

// Grid (B + 1 blocks, B = C / SEG tiles), threads and shared memory as inv: z's tile through
// inv's steps (its digits stay in shared memory, its carries out go to `carries`), then, once
// the previous tile's carries are out, fwd's steps for every prime back into z. The carries
// pass between blocks through `carries` and the ready flags sync[1 ..= B]: blocks take tiles in
// the order they start (a ticket from sync[0], which the last one resets), so the block a block
// waits for is running or done. Tile 0 takes the carries of the last tile, which are out last:
// its first block only publishes its carries, and block B does the tile again (z is only
// written after its carries are in) and writes it. One global round trip of the residue in
// place of inv's and fwd's two. It triggers its dependents (griddepcontrol.launch_dependents) as
// each block starts, so that the next kernel (rows) is launched once every carry block has
// started, and its blocks take the SMs as this kernel's leave, during its last wave, then wait
// for it whole (fs_wait): no carry block waits for a slot then, and every block a carry block
// waits for has started. On an H200 this took 138.7 µs an iteration to 136.5 at 2^21 and 243.0
// to 242.1 at 2^22 (2026-11-30, call AL); the same trigger in fp_rows lost 10–47% at 2^17,
// 2^19 and 2^20 (where fp_inv or fp_carry follow it), so no other kernel here triggers early.
extern "C" __global__ void __launch_bounds__(FP_INV_BOUNDS)
    FS_NAME(carry)(V* z, i128* carries, const u32* shift, u32* sync, FsLayout L, u32 flags) {
    extern __shared__ V fs_s[];
    SHARED_VAR u32 ticket;
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    fs_wait();
    const u32 T = L.seg(), B = (1u << L.lc()) / T, tile = T * fs_stride(1u << L.lr());
    if (threadIdx.x == 0) {
        const u32 b = atomicAdd(sync, 1);
        if (b == B) atomicExch(sync, 0);
        ticket = b;
    }
    __syncthreads();
    const u32 b = ticket, c0 = (b == B ? 0 : b) * T;
    fs_inverse_tiles(fs_s, tile, z, L, c0);
    fs_carry_out(fs_s, tile, carries, shift, L, flags, c0);
    if (b < B) {
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) fs_store_release(sync + 1 + b, 1);
    }
    if (b == 0) return;
    if (threadIdx.x == 0) {
        while (fs_load_acquire(sync + b) == 0) __nanosleep(64);
        sync[b] = 0;
    }
    __syncthreads();
    fs_weigh<A::NP>(fs_s, tile, carries, L, c0, 0);
    for (u32 h = 0; h < A::NP; h++) fs_forward_tile(fs_s + h * tile, z + (size_t)h * L.len(), L, L.q[h], c0);
}
