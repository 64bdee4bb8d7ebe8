// The NTT passes of lengths above the small ones (src/gpu/goldilocks/passes.rs launches them). A pass
// runs R stages on lines of 2^R values; a thread block takes C = 2^c_log lines.
//
// R = R1 + R2: a thread first holds the 2^R1 values k = g + h*2^R2 of its line, then, after one
// exchange through shared memory, groups of 2^R2 values k = h*2^R2 + l.
// Column passes (s_log > 0): line c of block-row `base` is the values base + c + k*s; adjacent
// columns sit next to each other in memory, so threads vary c fastest (coalesced runs of C words).
// Row pass (s_log = 0): line c is the contiguous chunk base + c*2^R + k; threads vary g fastest.
// Either way a line's stages are computed as DFTs whose twiddles are powers of 2 (gl_shl,
// goldilocks/stages.cuh) and twiddle multiplications from the pass's table ptw (ntt_block): the same values
// as the stages of half-size m = s*2^q with twiddles w_{2m}^(i + (k mod 2^q)*s), i the column,
// that src/transform/twin.rs forward_stages / inverse_stages compute (src/transform/line.rs is the CPU twin of the
// factorization and builds the tables).
//
// op FORWARD: forward stages only; INVERSE: inverse stages only; SQUARE / MULTIPLY: forward
// stages, pointwise square (or product with `other`, already forward-transformed), inverse stages.
// flags WEIGH: apply the pending carries to the digits on load (fixup_segment), then weigh them;
// UNWEIGH: unweigh into signed outputs on store and walk them into digits and carries
// (walk_segment); both only in the outermost column pass, whose runs of adjacent columns are the
// carry segments (small lengths, where one block holds the whole residue, run on goldilocks/small.cuh).
// ADVANCE: block 0 doubles the shift count mod p first; LL: the walk subtracts 2·2^s (s the
// shift, as advanced by an earlier launch). POW2 (column passes of up to 6 stages with
// c_log >= 5, so that g is the same across a warp): the column twiddles of a line, powers of 2,
// by gl_shl in one branch per g rather than by products with table entries.
//
// Launched with programmatic dependent launch, a kernel waits (griddepcontrol.wait) for the
// previous one before touching memory, and lets the next one launch once every block is half
// way (after its exchange), so at most one kernel waits ahead of the running one; the _late
// kernels (LATE) let it launch only as their blocks exit, which is faster at 2^17-2^19
// (src/gpu/goldilocks/passes.rs).
#pragma once
#include "goldilocks/carry.cuh"
#include "goldilocks/ops.cuh"
#include "goldilocks/stages.cuh"

template <int R1, int R2>
struct Lines {
    // 32-bit index arithmetic throughout: n <= 2^26 words and twiddle tables of 2n entries.
    u32 s, base, line, tw0, cstride;
    u32 c, g, c_log;
    bool rows;

    // A column pass (s_log > 0) or the row pass (s_log ignored), as the kernel knows at compile time.
    __device__ __forceinline__ Lines(u32 s_log, u32 c_log_, bool columns) {
        c_log = c_log_;
        rows = !columns;
        s = columns ? 1u << s_log : 1u;
        if (rows) {
            g = threadIdx.x & ((1u << R2) - 1);
            c = threadIdx.x >> R2;
            base = (blockIdx.x << c_log) << (R1 + R2);
            cstride = 1u << (R1 + R2);
            tw0 = 0;
        } else {
            c = threadIdx.x & ((1u << c_log) - 1);
            g = threadIdx.x >> c_log;
            const u32 col0 = blockIdx.x << c_log;
            const u32 i0 = col0 & (s - 1);
            base = ((col0 >> s_log) << (s_log + R1 + R2)) + i0;
            cstride = 1;
            tw0 = i0 + c;
        }
        line = base + c * cstride;
    }
    // Global index of value k of this thread's line.
    __device__ __forceinline__ u32 at(u32 k) const { return line + k * s; }
    // Shared-memory slot of value k (one pad word per group of 2^R2, against bank conflicts).
    __device__ __forceinline__ u32 slot(u32 k) const {
        const u32 padded = k + (k >> R2);
        return rows ? c * ((1u << (R1 + R2)) + (1u << R1)) + padded : (padded << c_log) + c;
    }
    // Carry segments (column passes only): local segment k is the run of adjacent columns at k.
    // Their number and length, the slot of value k in the walk layout (rows of segment length
    // + 1 words), the global index of local segment r's first digit.
    __device__ __forceinline__ u32 segments() const { return 1u << (R1 + R2); }
    __device__ __forceinline__ u32 seg_len() const { return 1u << c_log; }
    __device__ __forceinline__ u32 walk_slot(u32 k) const { return k * (seg_len() + 1) + c; }
    __device__ __forceinline__ u32 seg_start(u32 r) const { return base + r * s; }
};

// Programmatic dependent launch: the next kernel may launch once every block got here.
__device__ __forceinline__ void launch_next() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// Load the digits of this thread's values k = g + h*2^R2 through shared memory, apply the
// pending carry to every carry segment of the block, and weigh them into v. The weights are
// loaded with the digits, so that their latency overlaps the fix-up.
template <int R1, int R2>
__device__ __forceinline__ void load_digits(const u64* x, const i64* carries, const Layout& L,
                                            const Lines<R1, R2>& ln, u64* v) {
    extern __shared__ u64 sm[];
    i64* d = (i64*)sm;
    const u64 segs_mask = ((1ull << L.log_n) >> L.seg_log) - 1;
    // Carry into local segment r: the carry out of the segment before it.
    auto carry_in = [&](u32 r) { return carries[((ln.seg_start(r) >> L.seg_log) - 1) & segs_mask]; };
    const u32 r0 = threadIdx.x;
    i64 cin = r0 < ln.segments() ? carry_in(r0) : 0;
#pragma unroll
    for (u32 h = 0; h < (1u << R1); h++) {
        const u32 k = ln.g + (h << R2);
        d[ln.walk_slot(k)] = (i64)x[ln.at(k)];
        v[h] = L.w[ln.at(k)];
    }
    __syncthreads();
    for (u32 r = r0; r < ln.segments(); r += blockDim.x) {
        if (r != r0) cin = carry_in(r);
        fixup_segment(d + r * (ln.seg_len() + 1), cin, L, ln.seg_start(r));
    }
    __syncthreads();
#pragma unroll
    for (u32 h = 0; h < (1u << R1); h++) v[h] = weigh_digit((u64)d[ln.walk_slot(ln.g + (h << R2))], v[h]);
    __syncthreads();  // the exchange reuses the shared memory
}

// Unweigh v (the values k = g + h*2^R2 of this thread) into signed outputs, walk every carry
// segment of the block through shared memory, store the digits and the segments' carries out.
template <int R1, int R2>
__device__ __forceinline__ void store_digits(u64* x, i64* carries, const u32* shift, const Layout& L,
                                             const Lines<R1, R2>& ln, const u64* v, u32 flags) {
    extern __shared__ u64 sm[];
    i64* d = (i64*)sm;
    u64 iw[1u << R1];  // loaded before the barrier, which then hides some of their latency
#pragma unroll
    for (u32 h = 0; h < (1u << R1); h++) iw[h] = L.iw[ln.at(ln.g + (h << R2))];
    __syncthreads();  // every thread has read its values of the exchange
#pragma unroll
    for (u32 h = 0; h < (1u << R1); h++) d[ln.walk_slot(ln.g + (h << R2))] = (i64)unweigh_value(v[h], iw[h]);
    __syncthreads();
    const u64 bit = (flags & FLAG_LL) ? ((u64)shift[0] + 1) % L.p : ~0ull;
    for (u32 r = threadIdx.x; r < ln.segments(); r += blockDim.x) {
        const u64 j0 = ln.seg_start(r);
        carries[j0 >> L.seg_log] = walk_segment(d + r * (ln.seg_len() + 1), L, j0, bit);
    }
    __syncthreads();
#pragma unroll
    for (u32 h = 0; h < (1u << R1); h++) {
        const u32 k = ln.g + (h << R2);
        x[ln.at(k)] = (u64)d[ln.walk_slot(k)];
    }
}

// One pass: R = R1 + R2 stages on each line. A line's 2^R values are factored as 2^R2 columns g
// of 2^R1 values k = g + h*2^R2: their DFT (dif_pow2<R1>, twiddles powers of 2), the twiddle
// w_{2^R}^(g*rev(h)) of position h (ptw[h*2^R2 + g]; the inverse's at ptw[2^R + h*2^R2 + g]), then,
// after the exchange, the DFT of each group of 2^R2 (dif_pow2<R2>) and, in a column pass, the
// pass's twiddle of value k of the line in column i, w_{2^R s}^(i*rev(k)) (ptw[2^(R+1) + k*s + i];
// the inverse's at ptw[2^(R+1) + 2^R s + k*s + i]): the same values as R radix-2 stages
// (src/transform/line.rs).
// COL: a column pass (s_log > 0, op FORWARD or INVERSE, any flags); otherwise the row pass (s_log
// 0, any op, no flags). Each kernel compiles only its own layout (and the column passes no
// pointwise op).
template <int R1, int R2, bool COL, bool LATE>
__device__ __forceinline__ void ntt_block(u64* x, const u64* other, const u64* ptw, i64* carries, u32* shift,
                                          const Layout& L, u32 s_log, u32 c_log, u32 op_in, u32 flags) {
    extern __shared__ u64 sm[];
    constexpr u32 H1 = 1u << R1, H2 = 1u << R2, LEN = H1 * H2;
    const u32 op = COL && op_in != OP_INVERSE ? OP_FORWARD : op_in;
    const Lines<R1, R2> ln(s_log, c_log, COL);
    // This thread's column twiddles (forward at 0, inverse at LEN); by gl_shl with FLAG_POW2.
    auto mid = [&](u64* v, u32 table) {
        if constexpr (COL && R1 + R2 <= 6) {
            if (flags & FLAG_POW2) {
                if (table) column_twiddles_pow2<R1 + R2, R1, true>(v, ln.g);
                else column_twiddles_pow2<R1 + R2, R1, false>(v, ln.g);
                return;
            }
        }
#pragma unroll
        for (u32 h = 1; h < H1; h++) v[h] = gl_mul(v[h], ptw[table + (h << R2) + ln.g]);
    };
    // The pass's twiddles of group h (column passes), forward or inverse as op says.
    const u64* outer = ptw + 2 * LEN + (op == OP_INVERSE ? ln.s * LEN : 0) + ln.tw0;
    auto pass_twiddles = [&](u64* u, u32 h) {
#pragma unroll
        for (u32 l = 0; l < H2; l++) u[l] = gl_mul(u[l], outer[((h << R2) + l) * ln.s]);
    };
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    if (COL && (flags & FLAG_ADVANCE) && blockIdx.x == 0 && threadIdx.x == 0) shift[0] = (u32)((2ull * shift[0]) % L.p);
    if (op != OP_INVERSE) {
        u64 v[H1];
        if (COL && (flags & FLAG_WEIGH)) {
            load_digits(x, carries, L, ln, v);
        } else {
#pragma unroll
            for (u32 h = 0; h < H1; h++) v[h] = x[ln.at(ln.g + (h << R2))];
            // Every load issued before the first butterfly (where the thread holds two groups of
            // the inner stages, as in the inverse below; with one, R1 = R2, both were slower at
            // 2^22 and 2^23: bench/RESULTS.md, 2026-11-25).
            if constexpr (R1 > R2) asm volatile("" ::: "memory");
        }
        dif_pow2<R1>(v);
        mid(v, 0);
#pragma unroll
        for (u32 h = 0; h < H1; h++) sm[ln.slot(ln.g + (h << R2))] = v[h];
        __syncthreads();
        if constexpr (!LATE) launch_next();
        for (u32 h = ln.g; h < H1; h += H2) {
            u64 u[H2];
#pragma unroll
            for (u32 l = 0; l < H2; l++) u[l] = sm[ln.slot((h << R2) + l)];
            dif_pow2<R2>(u);
            if (op == OP_FORWARD) {
                if (COL) pass_twiddles(u, h);
#pragma unroll
                for (u32 l = 0; l < H2; l++) x[ln.at((h << R2) + l)] = u[l];
                continue;
            }
            if (op == OP_SQUARE) {
#pragma unroll
                for (u32 l = 0; l < H2; l++) u[l] = gl_mul(u[l], u[l]);
            } else {
#pragma unroll
                for (u32 l = 0; l < H2; l++) u[l] = gl_mul(u[l], other[ln.at((h << R2) + l)]);
            }
            dit_pow2<R2>(u);
#pragma unroll
            for (u32 l = 0; l < H2; l++) sm[ln.slot((h << R2) + l)] = u[l];
        }
        if (op == OP_FORWARD) return;
    } else {
        // The group of values h*2^R2 + l in u: its inner stages, into shared memory.
        auto group = [&](u64* u, u32 h) {
            if (COL) pass_twiddles(u, h);
            dit_pow2<R2>(u);
#pragma unroll
            for (u32 l = 0; l < H2; l++) sm[ln.slot((h << R2) + l)] = u[l];
        };
        if constexpr (R1 > R2) {
            // The thread's H1 / H2 groups (h = g, g + H2, ...), all loaded first.
            u64 w[H1];
#pragma unroll
            for (u32 t = 0; t < H1 / H2; t++)
#pragma unroll
                for (u32 l = 0; l < H2; l++) w[t * H2 + l] = x[ln.at(((ln.g + t * H2) << R2) + l)];
            asm volatile("" ::: "memory");
#pragma unroll
            for (u32 t = 0; t < H1 / H2; t++) group(w + t * H2, ln.g + t * H2);
        } else {
            for (u32 h = ln.g; h < H1; h += H2) {
                u64 u[H2];
#pragma unroll
                for (u32 l = 0; l < H2; l++) u[l] = x[ln.at((h << R2) + l)];
                group(u, h);
            }
        }
        if constexpr (!LATE) launch_next();
    }
    __syncthreads();
    u64 v[H1];
#pragma unroll
    for (u32 h = 0; h < H1; h++) v[h] = sm[ln.slot(ln.g + (h << R2))];
    mid(v, LEN);
    dit_pow2<R1>(v);
    if (COL && (flags & FLAG_UNWEIGH)) {
        store_digits(x, carries, shift, L, ln, v, flags);
        return;
    }
#pragma unroll
    for (u32 h = 0; h < H1; h++) x[ln.at(ln.g + (h << R2))] = v[h];
}

// R1 = ceil(R/2), R2 = floor(R/2). ntt_col_r<R>: the column passes (s_log > 0, OP_FORWARD or
// OP_INVERSE, any flags). ntt_r<R>: the row pass (s_log ignored), any op. ntt_sq_r<R>: the row
// pass of a squaring (OP_SQUARE, no flags; the other arguments are as for ntt_r<R> and ignored),
// compiled on its own so that its code and registers serve that path alone: the row pass is the
// longest launch of an iteration, and the generic kernel's code for every op did not fit the
// instruction cache. Its launch bounds (256 threads, 3 blocks per SM: at most 80 registers)
// gained 1% at 2^22 and 2^23 and 2% at 2^16 on an H200; the generic kernels lost with them
// (bench/RESULTS.md). The column passes were split off the generic kernel likewise (2026-11-25).
// Up to R = 8 (the most stages per line the tuner tries), ntt_sq_r<R> and ntt_col_r<R> come twice:
// as named, and with the suffix _late (LATE: the next kernel launches as the blocks exit), which
// src/gpu/goldilocks/passes.rs takes at 2^17-2^19.
#define NTT_PASS_KERNELS(R, SUFFIX, LATE)                                                              \
    extern "C" __global__ void __launch_bounds__(256, 3) ntt_sq_r##R##SUFFIX(u64* x, const u64*, const u64* ptw, \
                                                                             i64* carries, u32* shift, Layout L, u32, \
                                                                             u32 c_log, u32, u32) {    \
        ntt_block<(R + 1) / 2, R / 2, false, LATE>(x, x, ptw, carries, shift, L, 0, c_log, OP_SQUARE, 0); \
    }                                                                                                  \
    extern "C" __global__ void ntt_col_r##R##SUFFIX(u64* x, const u64*, const u64* ptw, i64* carries, u32* shift, \
                                                    Layout L, u32 s_log, u32 c_log, u32 op, u32 flags) { \
        ntt_block<(R + 1) / 2, R / 2, true, LATE>(x, x, ptw, carries, shift, L, s_log, c_log, op, flags); \
    }
#define NTT_KERNEL(R)                                                                                  \
    extern "C" __global__ void ntt_r##R(u64* x, const u64* other, const u64* ptw, i64* carries, u32* shift, Layout L, \
                                        u32 s_log, u32 c_log, u32 op, u32 flags) {                     \
        ntt_block<(R + 1) / 2, R / 2, false, false>(x, other, ptw, carries, shift, L, s_log, c_log, op, flags); \
    }                                                                                                  \
    NTT_PASS_KERNELS(R, , false)
#define NTT_KERNEL_AND_LATE(R) NTT_KERNEL(R) NTT_PASS_KERNELS(R, _late, true)

NTT_KERNEL_AND_LATE(1)
NTT_KERNEL_AND_LATE(2)
NTT_KERNEL_AND_LATE(3)
NTT_KERNEL_AND_LATE(4)
NTT_KERNEL_AND_LATE(5)
NTT_KERNEL_AND_LATE(6)
NTT_KERNEL_AND_LATE(7)
NTT_KERNEL_AND_LATE(8)
NTT_KERNEL(9)
NTT_KERNEL(10)
