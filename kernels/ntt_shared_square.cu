// The innermost stages in shared memory: each block takes a contiguous chunk of 2^shared_log
// values, runs the forward DIF stages with half-sizes chunk/2 .. 1, then (mode 0) squares each
// value or (mode 1) multiplies it by the same position of `other` (already forward-transformed),
// and runs the inverse DIT stages 1 .. chunk/2; mode 2 stops after the forward stages.
// When the whole transform fits one chunk, `flags` bit 0 weighs on load, bit 1 unweighs on store.

#define MODE_SQUARE 0
#define MODE_MULTIPLY 1
#define MODE_FORWARD 2

extern "C" __global__ void shared_square(u64* x, const u64* other, Layout L, u32 mode, u32 flags) {
    extern __shared__ u64 sm[];
    const u32 len = 1u << L.shared_log;
    const u32 half = len >> 1;
    const u64 base = (u64)blockIdx.x << L.shared_log;
    for (u32 i = threadIdx.x; i < len; i += blockDim.x) {
        u64 j = base + i;
        sm[i] = (flags & 1) ? weigh_digit(L, x[j], j) : x[j];
    }
    __syncthreads();
    for (u32 lm = L.shared_log; lm-- > 0;) {
        const u32 m = 1u << lm;
        for (u32 b = threadIdx.x; b < half; b += blockDim.x) {
            u32 i = b & (m - 1);
            u32 pos = ((b >> lm) << (lm + 1)) | i;
            u64 a = sm[pos], c = sm[pos + m];
            sm[pos] = gl_add(a, c);
            sm[pos + m] = gl_mul(gl_sub(a, c), L.tw[m + i]);
        }
        __syncthreads();
    }
    if (mode == MODE_FORWARD) {
        for (u32 i = threadIdx.x; i < len; i += blockDim.x) x[base + i] = sm[i];
        return;
    }
    for (u32 i = threadIdx.x; i < len; i += blockDim.x) {
        u64 a = sm[i];
        sm[i] = gl_mul(a, mode == MODE_SQUARE ? a : other[base + i]);
    }
    __syncthreads();
    for (u32 lm = 0; lm < L.shared_log; lm++) {
        const u32 m = 1u << lm;
        for (u32 b = threadIdx.x; b < half; b += blockDim.x) {
            u32 i = b & (m - 1);
            u32 pos = ((b >> lm) << (lm + 1)) | i;
            u64 a = sm[pos], c = gl_mul(sm[pos + m], L.itw[m + i]);
            sm[pos] = gl_add(a, c);
            sm[pos + m] = gl_sub(a, c);
        }
        __syncthreads();
    }
    for (u32 i = threadIdx.x; i < len; i += blockDim.x) {
        u64 j = base + i;
        x[j] = (flags & 2) ? unweigh_value(L, sm[i], j) : sm[i];
    }
}
