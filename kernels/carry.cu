// Carry propagation, in parallel (src/plan.rs explains the scheme and its bounds; src/ntt.rs
// carry_walk / carry_fixup are the CPU twin). One thread per segment of seg_len digits.
// The state's shift count s lives on the device: carry_walk injects the LL term -2*2^s' with
// s' = 2s mod p when `inject` is set, and carry_fixup stores s' when `advance` is set, so an
// iteration needs no argument from the host and can be replayed from a CUDA graph.

__device__ __forceinline__ i64 balance(i64 t, u32 w, i64* up) {
    const i64 half = 1ll << (w - 1);
    const i64 d = ((t + half) & ((1ll << w) - 1)) - half;
    *up = (t - d) >> w;
    return d;
}

// The block's segments are staged through shared memory (rows of seg_len + 1 words, so that
// the threads' strided walks do not fall on one bank) to keep the global accesses coalesced.
extern "C" __global__ void carry_walk(u64* x, i64* carries, Layout L, const u32* shift, u32 inject) {
    extern __shared__ i64 cs[];
    const u32 K = L.seg_len;
    const u64 segs = (1ull << L.log_n) / K;
    const u64 seg0 = (u64)blockIdx.x * blockDim.x;
    const u32 here = (u32)min((u64)blockDim.x, segs - seg0);
    const u64 base = seg0 * K;
    for (u32 i = threadIdx.x; i < here * K; i += blockDim.x) cs[(i / K) * (K + 1) + i % K] = (i64)x[base + i];
    __syncthreads();
    if (threadIdx.x < here) {
        u64 bit = ~0ull;  // no injection
        if (inject) {
            u64 s2 = (2ull * (u64)shift[0]) % L.p;
            bit = (s2 + 1) % L.p;
        }
        i64* row = cs + threadIdx.x * (K + 1);
        i64 carry = 0;
        u64 j = base + (u64)threadIdx.x * K;
        u64 start = digit_start(L, j);
        for (u32 k = 0; k < K; k++, j++) {
            const u64 next = digit_start(L, j + 1);
            const u32 w = (u32)(next - start);
            const i64 c = row[k];
            i64 t = (c & ((1ll << w) - 1)) + carry;
            if (bit >= start && bit < next) t -= 1ll << (bit - start);
            i64 up;
            row[k] = balance(t, w, &up);
            carry = (c >> w) + up;
            start = next;
        }
        carries[seg0 + threadIdx.x] = carry;
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < here * K; i += blockDim.x) x[base + i] = (u64)cs[(i / K) * (K + 1) + i % K];
}

extern "C" __global__ void carry_fixup(u64* x, const i64* carries, Layout L, u32* shift, u32 advance) {
    const u64 segs = (1ull << L.log_n) / L.seg_len;
    const u64 seg = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (seg >= segs) return;
    i64 carry = carries[(seg + segs - 1) % segs];
    u64 j = seg * L.seg_len;
    for (u32 k = 0; k < L.fixup_depth; k++, j++) {
        i64 up;
        x[j] = (u64)balance((i64)x[j] + carry, digit_width(L, j), &up);
        carry = up;
    }
    x[j] = (u64)((i64)x[j] + carry);
    if (advance && seg == 0) shift[0] = (u32)((2ull * (u64)shift[0]) % L.p);
}
