// Carry propagation in one kernel (src/plan.rs explains the scheme and its bounds; src/ntt.rs
// carry_walk + carry_fixup are the CPU twin). Each thread walks one segment of seg_len digits
// from a zero carry (staged through shared memory, rows padded to seg_len + 1 words against bank
// conflicts); the fix-up of a segment takes the carry out of the segment before it: inside the
// block from shared memory, across blocks by decoupled look-back (blocks take tickets in start
// order, so a block only ever waits for one that is already running). The wrap-around fix-up of
// segment 0 and the shift update are done by the last block to finish, when every block has
// read the shift and stored its digits.
//
// The shift count s lives on the device: with `inject` the LL term -2*2^s' (s' = 2s mod p) is
// added on the way; with `advance` s' is stored. An iteration thus needs no host argument and
// replays from a CUDA graph. sync[0] (tickets), sync[1] (blocks done) and flags[] return to zero
// at the end of every launch.

__device__ __forceinline__ i64 balance(i64 t, u32 w, i64* up) {
    const i64 half = 1ll << (w - 1);
    const i64 d = ((t + half) & ((1ll << w) - 1)) - half;
    *up = (t - d) >> w;
    return d;
}

// Fix-up of one segment (digits d[0], d[1], ... at stride 1) with incoming carry cin; j0 is the
// global index of d[0].
__device__ __forceinline__ void fixup(i64* d, i64 cin, const Layout& L, u64 j0) {
    for (u32 k = 0; k < L.fixup_depth; k++) {
        i64 up;
        d[k] = balance(d[k] + cin, digit_width(L, j0 + k), &up);
        cin = up;
    }
    d[L.fixup_depth] += cin;
}

#define CARRY_MAX_BLOCK 256

extern "C" __global__ void carry(u64* x, i64* pub, u32* flags, u32* sync, Layout L, u32* shift, u32 inject,
                                 u32 advance) {
    extern __shared__ i64 cs[];
    __shared__ i64 co[CARRY_MAX_BLOCK];
    __shared__ u32 ticket_sh;
    const u32 K = L.seg_len, row_len = K + 1;
    const u64 segs = (1ull << L.log_n) / K;
    const u32 nb = gridDim.x;
    if (threadIdx.x == 0) ticket_sh = atomicAdd(&sync[0], 1u);
    __syncthreads();
    const u32 t = ticket_sh;
    const u64 seg0 = (u64)t * blockDim.x;
    const u32 here = (u32)min((u64)blockDim.x, segs - seg0);
    const u64 base = seg0 * K;
    for (u32 i = threadIdx.x; i < here * K; i += blockDim.x) cs[(i / K) * row_len + i % K] = (i64)x[base + i];
    __syncthreads();
    i64* row = cs + threadIdx.x * row_len;
    if (threadIdx.x < here) {
        u64 bit = ~0ull;  // no injection
        if (inject) bit = ((2ull * (u64)shift[0]) % L.p + 1) % L.p;
        i64 c_in = 0;
        u64 j = base + (u64)threadIdx.x * K;
        u64 start = digit_start(L, j);
        for (u32 k = 0; k < K; k++, j++) {
            const u64 next = digit_start(L, j + 1);
            const u32 w = (u32)(next - start);
            const i64 c = row[k];
            i64 v = (c & ((1ll << w) - 1)) + c_in;
            if (bit >= start && bit < next) v -= 1ll << (bit - start);
            i64 up;
            row[k] = balance(v, w, &up);
            c_in = (c >> w) + up;
            start = next;
        }
        co[threadIdx.x] = c_in;
        if (threadIdx.x == here - 1 && nb > 1) {
            pub[t] = c_in;
            __threadfence();
            atomicExch(&flags[t], 1u);
        }
    }
    __syncthreads();
    if (threadIdx.x < here) {
        const u64 j0 = base + (u64)threadIdx.x * K;
        if (threadIdx.x > 0) {
            fixup(row, co[threadIdx.x - 1], L, j0);
        } else if (t > 0) {
            while (atomicAdd(&flags[t - 1], 0u) == 0u) {
            }
            __threadfence();
            const i64 cin = __ldcg(&pub[t - 1]);
            flags[t - 1] = 0u;
            fixup(row, cin, L, j0);
        } else if (nb == 1) {
            fixup(row, co[here - 1], L, j0);
        }
        // else: segment 0 of the first block waits for the wrap-around below.
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < here * K; i += blockDim.x) x[base + i] = (u64)cs[(i / K) * row_len + i % K];
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const u32 finished = atomicAdd(&sync[1], 1u);
        if (finished == nb - 1) {
            __threadfence();
            if (nb > 1) {
                while (atomicAdd(&flags[nb - 1], 0u) == 0u) {
                }
                __threadfence();
                i64 cin = __ldcg(&pub[nb - 1]);
                flags[nb - 1] = 0u;
                i64 d[16 + 1];
                for (u32 k = 0; k <= L.fixup_depth; k++) d[k] = (i64)__ldcg(&x[k]);
                fixup(d, cin, L, 0);
                for (u32 k = 0; k <= L.fixup_depth; k++) x[k] = (u64)d[k];
            }
            if (advance) shift[0] = (u32)((2ull * (u64)shift[0]) % L.p);
            sync[0] = 0u;
            sync[1] = 0u;
            __threadfence();
        }
    }
}
