// The small-length kernel (src/transform/plan.rs, "Small lengths": n = 2^log_n <= 2^SMALL_MAX_LOG2): ONE
// thread block holds the whole residue in shared memory and runs `count` squarings in one
// launch, looping inside the kernel (op OP_SQUARE, flags FLAG_ADVANCE / FLAG_LL as in
// goldilocks/ntt_block.cuh: each iteration doubles the shift count mod p first, then the walk subtracts
// 2*2^s), or one product x := x*other (op OP_MULTIPLY, for the Gerbicz accumulator; the forward
// transform of `other` goes through `tmp`, n words of global memory). The residue format is the
// one of every kernel (goldilocks/carry.cuh): digits plus one pending carry per segment; the kernel applies
// the pending carries on load and leaves none (zeros) at exit.
//
// An iteration is the CPU twin's square_digits (src/transform/twin.rs), value for value:
//   weigh -> forward radix-2 DIF stages (half-sizes n/2 .. 1) -> square -> inverse DIT stages
//   (1 .. n/2) -> unweigh -> walk every segment (walk_segment, one thread each) -> fix-up every
//   segment with the carry out of the one before, cyclically (fixup_segment).
// The log_n stages run in `rounds` rounds of Q <= V stages each (V, the template parameter,
// picks the kernel small_rV): a round cuts the values into groups of 2^Q that its Q stages pair
// among themselves (index base + k*2^q_lo, k < 2^Q), each thread loads whole groups from shared
// memory into registers, runs the Q stages there and stores them back: one barrier per round.
// The last forward round and the first inverse round have the same groups, so they run as one
// (forward, pointwise, inverse). Weighing is fused into the first round, unweighing into the
// last. Shared memory holds value i at slot i + (i >> pad_log) (one pad word per 2^pad_log,
// against bank conflicts; pad_log >= seg_log keeps each carry segment contiguous for
// walk_segment), then one carry per segment. Twiddles come from the plan's tables (L.tw, L.itw:
// tw[m + i] = w_{2m}^i) through the read-only cache.
#pragma once
#include "goldilocks/carry.cuh"
#include "goldilocks/ops.cuh"
#include "goldilocks/stages.cuh"

// Slot of value i in shared memory.
__device__ __forceinline__ u32 small_slot(u32 i, u32 pad_log) { return i + (i >> pad_log); }

// Twiddles of one group's stages (goldilocks/stages.cuh): local stage q is stage q0+q, and the pair whose
// lower value has index (base + i*2^q0), i mod 2^q = j, takes w_{2^(q0+q+1)}^(lo + j*2^q0), i.e.
// tw[2^(q0+q) + lo + j*2^q0] (lo = base mod 2^q0), through the read-only cache.
struct GroupTw {
    const u64* table;
    u32 q0, lo;
    template <int q>
    __device__ __forceinline__ u64 get(int j) const {
        return __ldg(table + (1u << (q0 + q)) + lo + ((u32)j << q0));
    }
};

// What one round does to its groups.
#define SMALL_FORWARD 1  // forward stages
#define SMALL_INVERSE 2  // inverse stages
#define SMALL_WEIGH 4    // the values are digits: weigh them first
#define SMALL_UNWEIGH 8  // store signed convolution outputs (unweighed) instead of field values
#define SMALL_POINTWISE 16  // between the stages: square, or multiply by other[] when given

// One round of Q stages whose lowest is q0, over every group.
template <int Q>
__device__ __forceinline__ void small_round(const Layout& L, u32 pad_log, u32 q0, u32 what, const u64* other) {
    extern __shared__ u64 sm[];
    const u32 groups = 1u << (L.log_n - Q), lo_mask = (1u << q0) - 1;
    for (u32 g = threadIdx.x; g < groups; g += blockDim.x) {
        const u32 lo = g & lo_mask;
        const u32 base = lo + ((g >> q0) << (q0 + Q));
        u64 v[1 << Q];
#pragma unroll
        for (int k = 0; k < (1 << Q); k++) {
            const u32 i = base + (k << q0);
            v[k] = sm[small_slot(i, pad_log)];
            if (what & SMALL_WEIGH) v[k] = weigh_digit(v[k], L.w[i]);
        }
        if (what & SMALL_FORWARD) dif_stages<Q>(v, GroupTw{L.tw, q0, lo});
        if (what & SMALL_POINTWISE) {
#pragma unroll
            for (int k = 0; k < (1 << Q); k++) v[k] = gl_mul(v[k], other ? other[base + (k << q0)] : v[k]);
        }
        if (what & SMALL_INVERSE) dit_stages<Q>(v, GroupTw{L.itw, q0, lo});
#pragma unroll
        for (int k = 0; k < (1 << Q); k++) {
            const u32 i = base + (k << q0);
            sm[small_slot(i, pad_log)] = (what & SMALL_UNWEIGH) ? unweigh_value(v[k], L.iw[i]) : v[k];
        }
    }
}

// small_round<Q> for a run-time Q in 1 .. V.
template <int V, int Q = 1>
__device__ __forceinline__ void small_round_q(u32 q, const Layout& L, u32 pad_log, u32 q0, u32 what,
                                              const u64* other) {
    if (q == Q) {
        small_round<Q>(L, pad_log, q0, what, other);
    } else if constexpr (Q < V) {
        small_round_q<V, Q + 1>(q, L, pad_log, q0, what, other);
    }
}

// Digits from global memory (and their segments' pending carries, applied) into shared memory.
__device__ __forceinline__ void small_load(const u64* x, const i64* carries, const Layout& L, u32 pad_log) {
    extern __shared__ u64 sm[];
    const u32 n = 1u << L.log_n, segs = n >> L.seg_log;
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) sm[small_slot(i, pad_log)] = x[i];
    __syncthreads();
    for (u32 r = threadIdx.x; r < segs; r += blockDim.x) {
        const u32 j = r << L.seg_log;
        fixup_segment((i64*)sm + small_slot(j, pad_log), carries[(r - 1) & (segs - 1)], L, j);
    }
    __syncthreads();
}

// Digits in shared memory -> their weighted forward transform (square = false), or -> forward
// transform, pointwise product (square, or by `other`), inverse transform, signed outputs. The
// rounds are as equal as possible, the outer ones one stage longer, each with one call site
// (not inlined, one copy of the round code per kernel: the loop stays small in the instruction
// cache).
template <int V>
__device__ __noinline__ void small_transform(const Layout L, u32 pad_log, bool square, const u64* other) {
    const u32 rounds = (L.log_n + V - 1) / V, last = rounds - 1;
    const u32 base = L.log_n / rounds, extra = L.log_n % rounds;
    for (u32 phase = 0; phase < (square ? 2 * rounds - 1 : rounds); phase++) {
        const u32 r = phase <= last ? phase : 2 * last - phase;
        // Round r: stages low .. low + q - 1, above those of the rounds after it.
        const u32 q = base + (r < extra ? 1 : 0);
        const u32 low = (last - r) * base + (extra > r + 1 ? extra - r - 1 : 0);
        u32 what = phase < last ? SMALL_FORWARD : phase > last ? SMALL_INVERSE
                 : square ? SMALL_FORWARD | SMALL_POINTWISE | SMALL_INVERSE : SMALL_FORWARD;
        if (r == 0 && phase <= last) what |= SMALL_WEIGH;
        if (r == 0 && (what & SMALL_INVERSE)) what |= SMALL_UNWEIGH;
        small_round_q<V>(q, L, pad_log, low, what, other);
        __syncthreads();
    }
}

// Signed convolution outputs in shared memory -> balanced digits: every segment walks
// (subtracting 2^bit where it falls), then takes the carry out of the one before.
__device__ __forceinline__ void small_carry(i64* cs, const Layout& L, u32 pad_log, u64 bit) {
    extern __shared__ u64 sm[];
    const u32 segs = (1u << L.log_n) >> L.seg_log;
    for (u32 r = threadIdx.x; r < segs; r += blockDim.x) {
        const u32 j = r << L.seg_log;
        cs[r] = walk_segment((i64*)sm + small_slot(j, pad_log), L, j, bit);
    }
    __syncthreads();
    for (u32 r = threadIdx.x; r < segs; r += blockDim.x) {
        const u32 j = r << L.seg_log;
        fixup_segment((i64*)sm + small_slot(j, pad_log), cs[(r - 1) & (segs - 1)], L, j);
    }
    __syncthreads();
}

template <int V>
__device__ __forceinline__ void small_kernel(u64* x, i64* carries, const u64* other, const i64* other_carries,
                                             u64* tmp, u32* shift, const Layout& L, u32 count, u32 op, u32 flags) {
    extern __shared__ u64 sm[];
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    const u32 n = 1u << L.log_n, segs = n >> L.seg_log;
    const u32 pad_log = L.seg_log > 4 ? L.seg_log : 4;
    i64* cs = (i64*)sm + small_slot(n, pad_log);
    const u64* pointwise = nullptr;
    if (op == OP_MULTIPLY) {
        small_load(other, other_carries, L, pad_log);
        small_transform<V>(L, pad_log, false, nullptr);
        for (u32 i = threadIdx.x; i < n; i += blockDim.x) tmp[i] = sm[small_slot(i, pad_log)];
        __syncthreads();
        pointwise = tmp;
        count = 1;
        flags = 0;
    }
    small_load(x, carries, L, pad_log);
    u32 s = shift[0];
    for (u32 it = 0; it < count; it++) {
        if (flags & FLAG_ADVANCE) s = (u32)((2ull * s) % L.p);
        small_transform<V>(L, pad_log, true, pointwise);
        small_carry(cs, L, pad_log, (flags & FLAG_LL) ? ((u64)s + 1) % L.p : ~0ull);
    }
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) x[i] = sm[small_slot(i, pad_log)];
    for (u32 r = threadIdx.x; r < segs; r += blockDim.x) carries[r] = 0;
    if (threadIdx.x == 0) shift[0] = s;
}

// small_r<V>: rounds of at most V stages (2^V values per thread and group).
#define SMALL_KERNEL(V, THREADS)                                                                        \
    extern "C" __global__ void __launch_bounds__(THREADS)                                               \
        small_r##V(u64* x, i64* carries, const u64* other, const i64* other_carries, u64* tmp, u32* shift, \
                   Layout L, u32 count, u32 op, u32 flags) {                                            \
        small_kernel<V>(x, carries, other, other_carries, tmp, shift, L, count, op, flags);             \
    }

SMALL_KERNEL(1, 1024)
SMALL_KERNEL(2, 1024)
SMALL_KERNEL(3, 1024)
SMALL_KERNEL(4, 512)
