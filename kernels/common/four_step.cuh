// The skeleton of a four-step NTT's passes in shared memory, over a device-side field type F
// (issue 37: the kernels are written once, not tied to one arithmetic): radix-2 stages in a
// thread's registers, passes of them over lines of values in shared memory, the first and last
// passes of a line on its way in from and out to global memory, the copies between global and
// shared memory, and a row's whole forward transform, pointwise square (or product) and inverse
// transform. The arithmetic brings the field and its tables; kernels/fp64/pipeline.cuh is the
// first (F = Fp, kernels/fp64/field.cuh).
//
// F provides: a value type V (8 bytes: the padding below is laid out for 8-byte values), and
// the members V mul(V, V), V reduce(V), dif(V& x, V& y, V w): (x, y) -> (x + y, (x - y)·w),
// dit(V& x, V& y, V w): (x, y) -> (x + y·w, x - y·w) and sum_diff(V& x, V& y): (x, y) -> (x + y,
// x - y), the butterfly of either direction by ω^0 = 1 (stages of half-size m ≤ 4 take it for
// each block's first butterfly: src/transform/fp64/ntt.rs UNIT_HALF). Values may be held lazily reduced: a
// stage's `reduce` mask bit asks for every value to be reduced before it (for a field whose
// values are always reduced, pass 0). Every mask picks a compiled instance (fs_dispatch), so
// that no predicated-off instruction takes an issue slot.
#pragma once
#include "common/types.cuh"

// ---- shared memory: lines of values ----

// Shared memory pads each line of values (value a of a line at FS_PAD(a)) so that the accesses
// of a half-warp (16 threads, 8-byte values: value a's banks are those of a mod 16) fall in
// distinct banks: two pad words after every 16 values and one more after every 128, so that
// value a's slot (FS_PAD(a) mod 16) moves by 1, 2, 4, 8 for bits 0 … 3 of a, by 2, 4, 8 for
// bits 4 … 6 and by 1 for bit 7. A half-warp then takes 16 distinct slots where its values
// are 16 consecutive ones (a row of a tile a thread, a pass of half-size ≥ 16), 8 consecutive
// ones in each of two blocks 64 apart (a pass of half-size 8: bits 0 … 2 and 6), or 16 groups
// of 8 whose bits 4 … 7 differ (the passes of half-sizes 1, 2, 4 and the row's middle pass, a
// thread's group index with bits 0 and 4 swapped: fs_group). Lines start 2 mod 8 words apart
// (fs_stride), so that the 8 columns of 2 rows a half-warp moves in a tile do too. The layout
// before this one (a pad word after every 8 values) put two values of every half-warp of
// consecutive values in one slot: 1.57 wavefronts an access against 1.00 now at 2^20 … 2^22
// (H200 profile of 2026-11-29: 5.8M of fp_carry's 16.8M wavefronts at 2^22 were excess).
#define FS_PAD(a) ((a) + 2 * ((a) >> 4) + ((a) >> 7))
// FS_PAD_SPLIT: FS_PAD(x + y) = FS_PAD(x) + FS_PAD(y) where x and y have no bit in common (then
// (x + y) >> u = (x >> u) + (y >> u)). A group's values, base + (k << m) for k < 2^S with base =
// o + a multiple of 2^(m + S) and o < 2^m, so lie at FS_PAD(base) + FS_PAD(k << m): one base
// and compile-time offsets once m is a compile-time constant.
// Values of shared memory between the starts of lines of `words` values: 2 mod 8 (host:
// lines_bytes in src/gpu/four_step/pipeline.rs).
__device__ __forceinline__ constexpr u32 fs_stride(u32 words) { return FS_PAD(words) + ((2u - FS_PAD(words)) & 7u); }

// The group a thread takes in a pass whose groups are 8 consecutive values (half-sizes 1, 2, 4,
// and the row's middle pass): g with bits 0 and 4 swapped where the line has at least 32 groups,
// so that a half-warp's 16 groups differ in bits 4 … 7 of their first value (FS_PAD: distinct
// slots) instead of bits 3 … 6 (two in each slot).
__device__ __forceinline__ u32 fs_group(u32 g, u32 groups_log) {
    return groups_log < 5 ? g : (g & ~0x11u) | ((g & 1u) << 4) | ((g >> 4) & 1u);
}

// log2 of a power of two, folded where x is a compile-time constant.
__device__ __forceinline__ constexpr u32 fs_log2(u32 x) { return x <= 1 ? 0 : 1 + fs_log2(x >> 1); }

// Stages a register pass takes (2^FS_S values a thread; 4 spill at the FP64 kernels' bounds).
#define FS_S 3
// Loads a thread keeps in flight when it moves values between global and shared memory.
#define FS_COPY_DEPTH 8

// Op::run<M>(args...) with M = mask (< 2^S, the same in every thread) as a compile-time
// constant: a branch to one of 2^S instances, so that no reduction or product the mask turns
// off is issued as a predicated-off instruction.
template <class Op, int S, int M = 0, class... A>
__device__ __forceinline__ void fs_dispatch(u32 mask, A&&... args) {
    if constexpr (M + 1 < (1 << S)) {
        if (mask != M) {
            fs_dispatch<Op, S, M + 1>(mask, static_cast<A&&>(args)...);
            return;
        }
    }
    Op::template run<M>(static_cast<A&&>(args)...);
}

// ---- radix-2 stages, 2^S values of a line in a thread's registers ----

// S consecutive radix-2 stages, stage indices k0 .. k0 + S - 1 of an L-point transform (L =
// 2^log_l): forward DIF stage k has half-size m = L >> (k + 1), (x, y) -> (x + y, (x - y)
// w_2m^off); inverse DIT stage k has m = 1 << k, (x, y) -> (x + y w_2m^-off, x - y w_2m^-off);
// off is the lower element's position in its half-block, tw[m + off] the twiddle
// (src/transform/fp64/ntt.rs Ntt::forward_stage / inverse_stage, butterfly for butterfly: the
// same values in any grouping). The 2^S values of a group, spaced m_lo = 2^m_lo_log apart (o:
// the first one's offset in its block of m_lo·2^S), in registers. Bit jj of RED: reduce every
// value before the pass's stage jj. Where m_lo = 1 (so o = 0 and the stages' half-sizes are 1,
// 2, 4: every stage of half-size ≤ 4 runs in such a group, fs_transform) the butterflies with
// off = 0 take sum_diff, known at compile time once m_lo_log is.
template <class F, int S, bool INV, int RED>
__device__ __forceinline__ void fs_stages_of(typename F::V (&v)[1 << S], u32 o, u32 m_lo_log,
                                             const typename F::V* tw, F f) {
#pragma unroll
    for (int jj = 0; jj < S; jj++) {
        const int j = INV ? jj : S - 1 - jj;  // DIF: largest half-size first
        const u32 m = (1u << m_lo_log) << j;
        // The stage's twiddles from t = tw + m + o at offsets known once m_lo_log is (a
        // compile-time shape: immediate offsets of one address).
        const typename F::V* t = tw + (m + o);
        if (RED & (1 << jj)) {
#pragma unroll
            for (int k = 0; k < (1 << S); k++) v[k] = f.reduce(v[k]);
        }
#pragma unroll
        for (int k = 0; k < (1 << S); k++) {
            if (k & (1 << j)) continue;
            if (m_lo_log == 0 && (k & ((1 << j) - 1)) == 0) {
                f.sum_diff(v[k], v[k + (1 << j)]);
                continue;
            }
            const typename F::V w = t[(size_t)((u32)(k & ((1 << j) - 1)) << m_lo_log)];
            if (INV) {
                f.dit(v[k], v[k + (1 << j)], w);
            } else {
                f.dif(v[k], v[k + (1 << j)], w);
            }
        }
    }
}

template <class F, int S, bool INV>
struct FsStagesOp {
    template <int RED>
    __device__ __forceinline__ static void run(typename F::V (&v)[1 << S], u32 o, u32 m_lo_log,
                                               const typename F::V* tw, F f) {
        fs_stages_of<F, S, INV, RED>(v, o, m_lo_log, tw, f);
    }
};

// fs_stages_of with the reductions `red` (bit jj: before the pass's stage jj).
template <class F, int S, bool INV>
__device__ __forceinline__ void fs_stages(typename F::V (&v)[1 << S], u32 red, u32 o, u32 m_lo_log,
                                          const typename F::V* tw, F f) {
    fs_dispatch<FsStagesOp<F, S, INV>, S>(red, v, o, m_lo_log, tw, f);
}

// A pass's reductions: bits first + k0 .. first + k0 + S - 1 of a transform's reduce mask (bit
// s: reduce every value before step s of the squaring; `first`: the step of stage 0).
template <int S>
__device__ __forceinline__ u32 fs_red(u64 reduce, u32 first, u32 k0) {
    return (u32)(reduce >> (first + k0)) & ((1u << S) - 1);
}

// ---- passes over lines in shared memory ----

// A barrier among `count` threads of the block (a multiple of 32) that take named barrier `id`
// (1 … 15; 0 is __syncthreads'), or among a warp's threads where count is 32. On the host
// (scripts/host-kernels/shim.h) the threads that reach it may run on past it before the others
// of the block reach theirs, so a missing dependency reads stale values there too.
__device__ __forceinline__ void fs_sync_group(u32 id, u32 count) {
    if (count == 32) {
        __syncwarp();
    } else {
#ifdef __CUDA_ARCH__
        asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
#else
        host_block::group_barrier(id, count);
#endif
    }
}

// The barrier after a pass over `lines` lines of 2^groups_log groups each whose next pass has
// the same groups (fs_pass_of's order: thread t takes groups t + i·nt, so its lines are (t +
// i·nt) >> groups_log): where nt is a multiple of 2^groups_log ≥ 32, the threads with the same t
// >> groups_log take the same lines and no other thread touches them (a barrier among those
// 2^groups_log threads), and where 2^groups_log < 32 (nt a multiple of 32) a warp's lines are
// its own (a warp's barrier). Elsewhere, and where more groups than barriers would be needed,
// the block's. The columns of a tile (SEG lines of R values: 2^(log R − 3) groups a line) sync
// by pairs of warps at R = 2^9 and by warps up to R = 2^7, not by the block.
__device__ __forceinline__ void fs_sync_lines(u32 groups_log, u32 nt) {
    if (groups_log < 5 && nt % 32 == 0) {
        fs_sync_group(0, 32);
    } else if (groups_log >= 5 && nt % (1u << groups_log) == 0 && (nt >> groups_log) > 1 &&
               (nt >> groups_log) <= 15) {
        fs_sync_group(1 + (threadIdx.x >> groups_log), 1u << groups_log);
    } else {
        __syncthreads();
    }
}

// A pass over the groups of `lines` lines `stride` values apart from s, in shared memory (in
// place), with the reductions RED; then the block's barrier, or with `own` (the next pass has
// the same groups) the barrier of the threads that share the pass's lines (fs_sync_lines).
template <class F, int S, bool INV, int RED>
__device__ __forceinline__ void fs_pass_of(typename F::V* s, u32 lines, u32 stride, u32 log_l, u32 k0,
                                           const typename F::V* tw, F f, u32 nt, bool own) {
    const u32 m_lo_log = INV ? k0 : log_l - k0 - S;
    const u32 m_lo = 1u << m_lo_log, groups_log = log_l - S;
    for (u32 g0 = threadIdx.x; g0 < (lines << groups_log); g0 += nt) {
        const u32 g = S == 3 && m_lo_log == 0 ? fs_group(g0, groups_log) : g0;
        const u32 line = g >> groups_log, gi = g & ((1u << groups_log) - 1);
        // o = g mod m_lo: where nt is a multiple of m_lo, threadIdx.x mod m_lo in every one of a
        // thread's groups, so that their twiddles (at tw + m + o) are loaded once.
        const u32 o = ((nt & (m_lo - 1)) == 0 ? threadIdx.x : g) & (m_lo - 1), blk = gi >> m_lo_log;
        // FS_PAD(base + (k << m_lo_log)) = FS_PAD(base) + FS_PAD(k << m_lo_log) for base = o +
        // a multiple of 2^(m_lo_log + S), o < 2^m_lo_log (FS_PAD_SPLIT).
        typename F::V* sg = s + line * stride + FS_PAD((blk << (m_lo_log + S)) + o);
        typename F::V v[1 << S];
#pragma unroll
        for (int k = 0; k < (1 << S); k++) v[k] = sg[FS_PAD((u32)k << m_lo_log)];
        fs_stages_of<F, S, INV, RED>(v, o, m_lo_log, tw, f);
#pragma unroll
        for (int k = 0; k < (1 << S); k++) sg[FS_PAD((u32)k << m_lo_log)] = v[k];
    }
    if (own) {
        fs_sync_lines(groups_log, nt);
    } else {
        __syncthreads();
    }
}

// The first S DIF stages of a row of L = 2^log_l values, read from global memory `in` and
// written to shared memory s (the lines' padded layout), or the last S DIT stages, from s to
// `out`: a group's values are L / 2^S apart, consecutive threads take consecutive groups (so
// each load and store of a warp is one run), G groups a thread at a time (2^S·G loads in
// flight). Loads bypass L1 (__ldcg), as fs_copy's.
template <class F, int S, bool INV, int G, int RED>
__device__ __forceinline__ void fs_pass_global_of(typename F::V* s, const typename F::V* in, typename F::V* out,
                                                  u32 log_l, const typename F::V* tw, F f, u32 nt) {
    const u32 m_lo_log = log_l - S, groups = 1u << m_lo_log;
    for (u32 g0 = threadIdx.x; g0 < groups; g0 += G * nt) {
        typename F::V v[G][1 << S];
#pragma unroll
        for (int i = 0; i < G; i++) {
            const u32 o = g0 + i * nt;
#pragma unroll
            for (int k = 0; k < (1 << S); k++) {
                const u32 at = o + (k << m_lo_log);
                if (o < groups) v[i][k] = INV ? s[FS_PAD(at)] : __ldcg(in + at);
            }
        }
#pragma unroll
        for (int i = 0; i < G; i++) fs_stages_of<F, S, INV, RED>(v[i], g0 + i * nt, m_lo_log, tw, f);
#pragma unroll
        for (int i = 0; i < G; i++) {
            const u32 o = g0 + i * nt;
#pragma unroll
            for (int k = 0; k < (1 << S); k++) {
                const u32 at = o + (k << m_lo_log);
                if (o < groups) {
                    if (INV) {
                        out[at] = v[i][k];
                    } else {
                        s[FS_PAD(at)] = v[i][k];
                    }
                }
            }
        }
    }
}

template <class F, int S, bool INV, int G>
struct FsPassGlobalOp {
    template <int RED>
    __device__ __forceinline__ static void run(typename F::V* s, const typename F::V* in, typename F::V* out,
                                               u32 log_l, const typename F::V* tw, F f, u32 nt) {
        fs_pass_global_of<F, S, INV, G, RED>(s, in, out, log_l, tw, f, nt);
    }
};

// fs_pass_global_of with its stages' reductions from `reduce` (`first`: the step of the
// transform's stage 0).
template <class F, int S, bool INV, int G>
__device__ __forceinline__ void fs_pass_global(typename F::V* s, const typename F::V* in, typename F::V* out,
                                               u32 log_l, const typename F::V* tw, F f, u64 reduce, u32 first,
                                               u32 nt) {
    const u32 red = fs_red<S>(reduce, first, INV ? log_l - S : 0);
    fs_dispatch<FsPassGlobalOp<F, S, INV, G>, S>(red, s, in, out, log_l, tw, f, nt);
    if (!INV) __syncthreads();
}

template <class F, int S, bool INV>
struct FsPassOp {
    template <int RED>
    __device__ __forceinline__ static void run(typename F::V* s, u32 lines, u32 stride, u32 log_l, u32 k0,
                                               const typename F::V* tw, F f, u32 nt, bool own) {
        fs_pass_of<F, S, INV, RED>(s, lines, stride, log_l, k0, tw, f, nt, own);
    }
};

// fs_pass_of with the pass's reductions from `reduce` (reduce both inputs of stage k first);
// `first` is the step of the transform's stage 0; `own` as fs_pass_of's.
template <class F, int S, bool INV>
__device__ __forceinline__ void fs_pass(typename F::V* s, u32 lines, u32 stride, u32 log_l, u32 k0,
                                        const typename F::V* tw, F f, u64 reduce, u32 first, u32 nt,
                                        bool own = false) {
    fs_dispatch<FsPassOp<F, S, INV>, S>(fs_red<S>(reduce, first, k0), s, lines, stride, log_l, k0, tw, f, nt,
                                        own);
}

// Every stage of an L-point transform (forward DIF or inverse DIT) on `lines` lines in shared
// memory, in passes of up to FS_S stages: the remainder (the head) in the pass of the largest
// half-sizes, the first of DIF and the last of DIT, so that the stages of half-size ≤ 4 are one
// pass with m_lo = 1 (fs_stages_of); `first`: the step of stage 0. Between two passes of FS_S
// stages only the threads that share lines wait for each other (fs_sync_lines); the head pass
// and the last pass of FS_S end with the block's barrier.
template <class F, bool INV>
__device__ __forceinline__ void fs_transform(typename F::V* s, u32 lines, u32 stride, u32 log_l,
                                             const typename F::V* tw, F f, u64 reduce, u32 first, u32 nt) {
    static_assert(FS_S == 3, "the head pass takes 1 or 2 stages");
    const u32 head = log_l % FS_S, k_head = INV ? log_l - head : 0;
    if (!INV && head == 1) fs_pass<F, 1, INV>(s, lines, stride, log_l, k_head, tw, f, reduce, first, nt);
    if (!INV && head == 2) fs_pass<F, 2, INV>(s, lines, stride, log_l, k_head, tw, f, reduce, first, nt);
    const u32 k_end = INV ? log_l - head : log_l;
#pragma unroll
    for (u32 k = INV ? 0 : head; k < k_end; k += FS_S) {
        fs_pass<F, FS_S, INV>(s, lines, stride, log_l, k, tw, f, reduce, first, nt, k + FS_S < k_end);
    }
    if (INV && head == 1) fs_pass<F, 1, INV>(s, lines, stride, log_l, k_head, tw, f, reduce, first, nt);
    if (INV && head == 2) fs_pass<F, 2, INV>(s, lines, stride, log_l, k_head, tw, f, reduce, first, nt);
}

// ---- moving values between global and shared memory ----

// count values of `lines` (count / width of them, width a power of two) between global memory
// (value i at g[(i >> wl) · gstride + (i & (width - 1))]) and shared memory (at s[(i & (width -
// 1)) · sstride + FS_PAD(i >> wl)] when `transpose`, else s[(i >> wl) · sstride + FS_PAD(i &
// (width - 1))]), FS_COPY_DEPTH loads in flight a thread. Where each round of a thread's values
// lies at fixed steps from its first (with no bounds to check), one base address each side and
// compile-time offsets (once the shape is): the block's threads a multiple of the width (a
// thread's values share a column and step nt / width lines, transposed a multiple of 8 lines:
// FS_PAD_SPLIT), or the width a multiple of a round (they share a line and step nt values, a
// multiple of 8 where not transposed). Loads go through L2 only (__ldcg): each value is read
// once, and L1 (~28 KB beside three blocks' shared memory) is left to the twiddle tables (H200,
// 2026-11-29: −0.5% at 2^21 and 2^22).
template <class V, bool LOAD, bool TRANSPOSE>
__device__ __forceinline__ void fs_copy(V* s, u32 sstride, V* g, size_t gstride, u32 wl, u32 count, u32 nt) {
    const u32 mask = (1u << wl) - 1, da = nt >> wl;
    const bool lines = (nt & mask) == 0 && (!TRANSPOSE || da % 8 == 0);
    const bool along = (1u << wl) % (FS_COPY_DEPTH * nt) == 0 && (TRANSPOSE || nt % 8 == 0);
    if ((lines || along) && count % (FS_COPY_DEPTH * nt) == 0) {
        for (u32 i0 = threadIdx.x; i0 < count; i0 += FS_COPY_DEPTH * nt) {
            const u32 a0 = i0 >> wl, b = i0 & mask;
            V* gp = g + a0 * gstride + b;
            V* sp = s + (TRANSPOSE ? b * sstride + FS_PAD(a0) : a0 * sstride + FS_PAD(b));
            // Value u's offsets from gp and sp.
            auto go = [&](u32 u) { return lines ? u * da * gstride : (size_t)u * nt; };
            auto so = [&](u32 u) {
                return lines ? (TRANSPOSE ? FS_PAD(u * da) : u * da * sstride)
                             : (TRANSPOSE ? u * nt * sstride : FS_PAD(u * nt));
            };
            V v[FS_COPY_DEPTH];
#pragma unroll
            for (u32 u = 0; u < FS_COPY_DEPTH; u++) v[u] = LOAD ? __ldcg(gp + go(u)) : sp[so(u)];
#pragma unroll
            for (u32 u = 0; u < FS_COPY_DEPTH; u++) {
                if (LOAD) {
                    sp[so(u)] = v[u];
                } else {
                    gp[go(u)] = v[u];
                }
            }
        }
        return;
    }
    for (u32 i0 = threadIdx.x; i0 < count; i0 += FS_COPY_DEPTH * nt) {
        V v[FS_COPY_DEPTH];
#pragma unroll
        for (int u = 0; u < FS_COPY_DEPTH; u++) {
            const u32 i = i0 + u * nt;
            const u32 a = i >> wl, b = i & mask;
            const u32 si = TRANSPOSE ? b * sstride + FS_PAD(a) : a * sstride + FS_PAD(b);
            if (i < count) v[u] = LOAD ? __ldcg(g + a * gstride + b) : s[si];
        }
#pragma unroll
        for (int u = 0; u < FS_COPY_DEPTH; u++) {
            const u32 i = i0 + u * nt;
            const u32 a = i >> wl, b = i & mask;
            const u32 si = TRANSPOSE ? b * sstride + FS_PAD(a) : a * sstride + FS_PAD(b);
            if (i < count) {
                if (LOAD) {
                    s[si] = v[u];
                } else {
                    g[a * gstride + b] = v[u];
                }
            }
        }
    }
}

// ---- a row: forward transform, pointwise square or product, inverse transform ----

// A row's transform (W below) is the arithmetic's: W::F its field, and members f(), twf() and
// twi() (the twiddle tables of its forward and inverse stages), reduce() (the reduce mask),
// fwd(), square(), inv() (the steps of the first forward stage, the pointwise step and the first
// inverse stage) and nt() (the block's threads: a compile-time constant where the arithmetic
// knows it, so that each thread's loops over groups have known counts and offsets). Each is
// read where it is used, as the arithmetic keeps it (the FP64 kernels: from their parameters),
// so that none holds a register through the row. Every pass and copy takes the block's threads
// as nt.

// The pointwise square of a row (or product with the row `stride` values after it), the
// values reduced first when RED.
template <class F, bool RED>
__device__ __forceinline__ void fs_pointwise(typename F::V* s, u32 C, u32 stride, bool product, F f, u32 nt) {
    for (u32 i = threadIdx.x; i < C; i += nt) {
        typename F::V a = s[FS_PAD(i)];
        if (RED) a = f.reduce(a);
        typename F::V b = a;
        if (product) {
            b = s[stride + FS_PAD(i)];
            if (RED) b = f.reduce(b);
        }
        s[FS_PAD(i)] = f.mul(a, b);
    }
    __syncthreads();
}

template <class F>
struct FsPointwiseOp {
    template <int RED>
    __device__ __forceinline__ static void run(typename F::V* s, u32 C, u32 stride, bool product, F f, u32 nt) {
        fs_pointwise<F, RED>(s, C, stride, product, f, nt);
    }
};

// The last S DIF stages of a row of 2^log_l values, the pointwise square (or product with the
// transformed row `stride` values after it) and the first S DIT stages, in one pass: those
// stages pair values less than 2^S apart, so a thread's group is 2^S consecutive values. Bit 0
// of M: the square's reductions; bit 1: the product.
template <class F, int S, int M>
__device__ __forceinline__ void fs_middle_of(typename F::V* s, u32 stride, u32 log_l, u32 rd, u32 ri,
                                             const typename F::V* twf, const typename F::V* twi, F f, u32 nt) {
    constexpr bool RED = M & 1, PRODUCT = M & 2;
    for (u32 g0 = threadIdx.x; g0 < (1u << (log_l - S)); g0 += nt) {
        const u32 g = fs_group(g0, log_l - S);
        typename F::V* sg = s + FS_PAD(g << S);  // FS_PAD_SPLIT, m = 0
        typename F::V v[1 << S];
#pragma unroll
        for (int k = 0; k < (1 << S); k++) v[k] = sg[FS_PAD(k)];
        fs_stages<F, S, false>(v, rd, 0, 0, twf, f);
#pragma unroll
        for (int k = 0; k < (1 << S); k++) {
            const typename F::V a = RED ? f.reduce(v[k]) : v[k];
            typename F::V b = a;
            if (PRODUCT) {
                b = sg[stride + FS_PAD(k)];
                if (RED) b = f.reduce(b);
            }
            v[k] = f.mul(a, b);
        }
        fs_stages<F, S, true>(v, ri, 0, 0, twi, f);
#pragma unroll
        for (int k = 0; k < (1 << S); k++) sg[FS_PAD(k)] = v[k];
    }
}

template <class F, int S>
struct FsMiddleOp {
    template <int M>
    __device__ __forceinline__ static void run(typename F::V* s, u32 stride, u32 log_l, u32 rd, u32 ri,
                                               const typename F::V* twf, const typename F::V* twi, F f, u32 nt) {
        fs_middle_of<F, S, M>(s, stride, log_l, rd, ri, twf, twi, f, nt);
    }
};

template <class W, int S>
__device__ __forceinline__ void fs_middle(typename W::F::V* s, u32 stride, bool product, u32 log_l, const W& w) {
    const u32 rd = fs_red<S>(w.reduce(), w.fwd(), log_l - S), ri = fs_red<S>(w.reduce(), w.inv(), 0);
    const u32 m = (((w.reduce() >> w.square()) & 1) ? 1u : 0u) | (product ? 2u : 0u);
    fs_dispatch<FsMiddleOp<typename W::F, S>, 2>(m, s, stride, log_l, rd, ri, w.twf(), w.twi(), w.f(), w.nt());
    __syncthreads();
}

// A row of C = 2^lc values at z (global memory) squared, or times the row at y (transformed
// here too), in shared memory s (fs_stride(C) values, twice that with a product). For C ≥
// 2^FS_S the stages run as: the first h DIF stages (h = (lc - FS_S) mod FS_S) on the way in from
// global memory, passes of FS_S in shared memory, the last FS_S with the square and the first
// FS_S DIT stages (fs_middle), passes of FS_S, the last h DIT stages on the way out: 2·(lc - FS_S
// - h)/FS_S + 1 passes through shared memory (7 at 2^13, against 11 and a copy each way for the
// stages one transform at a time).
template <class W>
__device__ __forceinline__ void fs_row_square(typename W::F::V* s, typename W::F::V* z, const typename W::F::V* y,
                                              bool product, u32 lc, const W& w) {
    typedef typename W::F F;
    typedef typename F::V V;
    const u32 C = 1u << lc, stride = fs_stride(C), nt = w.nt();
    if (product) {
        fs_copy<V, true, false>(s + stride, 0, (V*)y, 0, lc, C, nt);
        __syncthreads();
        fs_transform<F, false>(s + stride, 1, 0, lc, w.twf(), w.f(), w.reduce(), w.fwd(), nt);
    }
    if (lc < FS_S) {
        fs_copy<V, true, false>(s, 0, z, 0, lc, C, nt);
        __syncthreads();
        fs_transform<F, false>(s, 1, 0, lc, w.twf(), w.f(), w.reduce(), w.fwd(), nt);
        fs_dispatch<FsPointwiseOp<F>, 1>((u32)((w.reduce() >> w.square()) & 1), s, C, stride, product, w.f(), nt);
        fs_transform<F, true>(s, 1, 0, lc, w.twi(), w.f(), w.reduce(), w.inv(), nt);
        fs_copy<V, false, false>(s, 0, z, 0, lc, C, nt);
        return;
    }
    const u32 h = (lc - FS_S) % FS_S;
    if (h == 1) {
        fs_pass_global<F, 1, false, 4>(s, z, nullptr, lc, w.twf(), w.f(), w.reduce(), w.fwd(), nt);
    } else if (h == 2) {
        fs_pass_global<F, 2, false, 2>(s, z, nullptr, lc, w.twf(), w.f(), w.reduce(), w.fwd(), nt);
    } else {
        fs_copy<V, true, false>(s, 0, z, 0, lc, C, nt);
        __syncthreads();
    }
#pragma unroll
    for (u32 k = h; k < lc - FS_S; k += FS_S) {
        fs_pass<F, FS_S, false>(s, 1, 0, lc, k, w.twf(), w.f(), w.reduce(), w.fwd(), nt);
    }
    fs_middle<W, FS_S>(s, stride, product, lc, w);
#pragma unroll
    for (u32 k = FS_S; k < lc - h; k += FS_S) {
        fs_pass<F, FS_S, true>(s, 1, 0, lc, k, w.twi(), w.f(), w.reduce(), w.inv(), nt);
    }
    if (h == 1) {
        fs_pass_global<F, 1, true, 4>(s, nullptr, z, lc, w.twi(), w.f(), w.reduce(), w.inv(), nt);
    } else if (h == 2) {
        fs_pass_global<F, 2, true, 2>(s, nullptr, z, lc, w.twi(), w.f(), w.reduce(), w.inv(), nt);
    } else {
        fs_copy<V, false, false>(s, 0, z, 0, lc, C, nt);
    }
}
