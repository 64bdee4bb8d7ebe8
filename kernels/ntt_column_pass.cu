// Global NTT passes through shared memory ("column" passes). A pass runs R radix-2 stages, the
// half-sizes s*2^(R-1) down to s (forward, DIF) or s up to s*2^(R-1) (inverse, DIT). Column i of
// block-row B is the 2^R values B + i + k*s (k < 2^R); a thread block loads C = 2^c_log adjacent
// columns (coalesced runs of C words), runs the R stages in shared memory and stores them back.
// The first forward pass weighs the digits on load, the last inverse pass unweighs on store.
// Same butterflies as src/ntt.rs forward_stages / inverse_stages.

struct ColumnBlock {
    u64 s, i0, base;  // stride, first column, block-row start
    u32 c_log, total; // log2 C, C * 2^R values
};

__device__ __forceinline__ ColumnBlock column_block(u32 s_log, u32 R, u32 c_log) {
    ColumnBlock cb;
    cb.s = 1ull << s_log;
    const u64 col0 = (u64)blockIdx.x << c_log;
    cb.i0 = col0 & (cb.s - 1);
    cb.base = ((col0 >> s_log) << (s_log + R)) + cb.i0;
    cb.c_log = c_log;
    cb.total = 1u << (c_log + R);
    return cb;
}

// Global index of shared slot e = k*C + c.
__device__ __forceinline__ u64 column_index(const ColumnBlock& cb, u32 e) {
    return cb.base + (e & ((1u << cb.c_log) - 1)) + (u64)(e >> cb.c_log) * cb.s;
}

// Butterfly b of stage q: slots e0 < e1 = e0 + 2^q C, and the twiddle index offset within the stage.
__device__ __forceinline__ void column_pair(const ColumnBlock& cb, u32 q, u32 b, u32* e0, u32* e1, u64* tw_off) {
    const u32 c = b & ((1u << cb.c_log) - 1);
    const u32 kk = b >> cb.c_log;
    const u32 lo = kk & ((1u << q) - 1);
    const u32 k = ((kk >> q) << (q + 1)) | lo;
    *e0 = (k << cb.c_log) | c;
    *e1 = *e0 + (1u << (q + cb.c_log));
    *tw_off = cb.i0 + c + (u64)lo * cb.s;
}

extern "C" __global__ void fwd_columns(u64* x, Layout L, u32 s_log, u32 R, u32 c_log, u32 weigh) {
    extern __shared__ u64 sm[];
    const ColumnBlock cb = column_block(s_log, R, c_log);
    for (u32 e = threadIdx.x; e < cb.total; e += blockDim.x) {
        const u64 j = column_index(cb, e);
        sm[e] = weigh ? weigh_digit(L, x[j], j) : x[j];
    }
    __syncthreads();
    for (int q = (int)R - 1; q >= 0; q--) {
        const u64 m = cb.s << q;
        for (u32 b = threadIdx.x; b < cb.total / 2; b += blockDim.x) {
            u32 e0, e1;
            u64 off;
            column_pair(cb, q, b, &e0, &e1, &off);
            const u64 a = sm[e0], v = sm[e1];
            sm[e0] = gl_add(a, v);
            sm[e1] = gl_mul(gl_sub(a, v), L.tw[m + off]);
        }
        __syncthreads();
    }
    for (u32 e = threadIdx.x; e < cb.total; e += blockDim.x) x[column_index(cb, e)] = sm[e];
}

extern "C" __global__ void inv_columns(u64* x, Layout L, u32 s_log, u32 R, u32 c_log, u32 unweigh) {
    extern __shared__ u64 sm[];
    const ColumnBlock cb = column_block(s_log, R, c_log);
    for (u32 e = threadIdx.x; e < cb.total; e += blockDim.x) sm[e] = x[column_index(cb, e)];
    __syncthreads();
    for (u32 q = 0; q < R; q++) {
        const u64 m = cb.s << q;
        for (u32 b = threadIdx.x; b < cb.total / 2; b += blockDim.x) {
            u32 e0, e1;
            u64 off;
            column_pair(cb, q, b, &e0, &e1, &off);
            const u64 a = sm[e0], v = gl_mul(sm[e1], L.itw[m + off]);
            sm[e0] = gl_add(a, v);
            sm[e1] = gl_sub(a, v);
        }
        __syncthreads();
    }
    for (u32 e = threadIdx.x; e < cb.total; e += blockDim.x) {
        const u64 j = column_index(cb, e);
        x[j] = unweigh ? unweigh_value(L, sm[e], j) : sm[e];
    }
}
