// gpu-selftest field-rate: the throughput of the field operations with nothing else in the way
// (values in registers, no memory traffic, no barriers, the GPU full of threads), which bounds
// any kernel built from them (src/gpu/rate.rs). Each thread holds 32 values and runs `rounds`
// rounds of:
//   rate_lines:  the forward and the inverse DFT of a line of 32 values with power-of-2
//                twiddles (dif_pow2<5>, dit_pow2<5>, as the passes' lines): 160 butterflies;
//   rate_addsub: 5 stages of butterflies with twiddle 1 (gl_add, gl_sub): 80 pairs;
//   rate_mul:    32 products gl_mul by 8 values held in registers.
// One word per thread is stored at the end, so that nothing is optimized away.

#define RATE_VALUES 32

__device__ __forceinline__ void rate_init(u64* v, u64 seed) {
    const u64 t = seed ^ (blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
    for (int i = 0; i < RATE_VALUES; i++) v[i] = (t * (2 * i + 1)) % GL_P;
}

__device__ __forceinline__ void rate_store(u64* out, const u64* v) {
    u64 x = 0;
#pragma unroll
    for (int i = 0; i < RATE_VALUES; i++) x ^= v[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

extern "C" __global__ void rate_lines(u64* out, u32 rounds, u64 seed) {
    u64 v[RATE_VALUES];
    rate_init(v, seed);
    for (u32 r = 0; r < rounds; r++) {
        dif_pow2<5>(v);
        dit_pow2<5>(v);
    }
    rate_store(out, v);
}

extern "C" __global__ void rate_addsub(u64* out, u32 rounds, u64 seed) {
    u64 v[RATE_VALUES];
    rate_init(v, seed);
    for (u32 r = 0; r < rounds; r++) {
#pragma unroll
        for (int q = 0; q < 5; q++)
#pragma unroll
            for (int i = 0; i < RATE_VALUES; i++)
                if (!(i & (1 << q))) {
                    const u64 a = v[i], b = v[i + (1 << q)];
                    v[i] = gl_add(a, b);
                    v[i + (1 << q)] = gl_sub(a, b);
                }
    }
    rate_store(out, v);
}

extern "C" __global__ void rate_mul(u64* out, u32 rounds, u64 seed) {
    u64 v[RATE_VALUES], w[8];
    rate_init(v, seed);
#pragma unroll
    for (int i = 0; i < 8; i++) w[i] = gl_add(v[4 * i], v[4 * i + 3]);
    for (u32 r = 0; r < rounds; r++)
#pragma unroll
        for (int i = 0; i < RATE_VALUES; i++) v[i] = gl_mul(v[i], w[i & 7]);
    rate_store(out, v);
}
