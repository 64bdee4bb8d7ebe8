// Radix-2 butterfly stages on 2^Q values held in registers, shared by the multi-pass kernels
// (ntt_block.cu) and the one-block kernel (small.cu); they differ only in where the twiddles
// come from. Tw supplies them: `tw.template get<q>(j)` is the twiddle of local stage q for the
// pairs whose lower value i has i mod 2^q = j. Forward (DIF) stages run Q-1 .. 0, local stage q
// pairing (i, i + 2^q) as a + b, (a - b) w; inverse (DIT) stages run 0 .. Q-1 as a + b w,
// a - b w: exactly src/ntt.rs forward_stages / inverse_stages. Each stage's twiddles are loaded
// together before its butterflies. The stage number is a template parameter (recursion rather
// than an unrolled loop), so that every array index is a compile-time constant and the arrays
// stay in registers.

template <int Q, int q, class Tw>
struct DifStages {
    static __device__ __forceinline__ void run(u64* v, const Tw& tw) {
        u64 t[1 << q];
#pragma unroll
        for (int j = 0; j < (1 << q); j++) t[j] = tw.template get<q>(j);
#pragma unroll
        for (int i = 0; i < (1 << Q); i++) {
            if (i & (1 << q)) continue;
            const u64 a = v[i], b = v[i + (1 << q)];
            v[i] = gl_add(a, b);
            v[i + (1 << q)] = gl_mul(gl_sub(a, b), t[i & ((1 << q) - 1)]);
        }
        DifStages<Q, q - 1, Tw>::run(v, tw);
    }
};
template <int Q, class Tw>
struct DifStages<Q, -1, Tw> {
    static __device__ __forceinline__ void run(u64*, const Tw&) {}
};

template <int Q, int q, class Tw>
struct DitStages {
    static __device__ __forceinline__ void run(u64* v, const Tw& tw) {
        u64 t[1 << q];
#pragma unroll
        for (int j = 0; j < (1 << q); j++) t[j] = tw.template get<q>(j);
#pragma unroll
        for (int i = 0; i < (1 << Q); i++) {
            if (i & (1 << q)) continue;
            const u64 a = v[i], b = gl_mul(v[i + (1 << q)], t[i & ((1 << q) - 1)]);
            v[i] = gl_add(a, b);
            v[i + (1 << q)] = gl_sub(a, b);
        }
        DitStages<Q, q + 1, Tw>::run(v, tw);
    }
};
template <int Q, class Tw>
struct DitStages<Q, Q, Tw> {
    static __device__ __forceinline__ void run(u64*, const Tw&) {}
};

template <int Q, class Tw>
__device__ __forceinline__ void dif_stages(u64* v, const Tw& tw) {
    DifStages<Q, Q - 1, Tw>::run(v, tw);
}

template <int Q, class Tw>
__device__ __forceinline__ void dit_stages(u64* v, const Tw& tw) {
    DitStages<Q, 0, Tw>::run(v, tw);
}
