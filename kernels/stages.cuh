// Radix-2 butterfly stages on 2^Q values held in registers, shared by the multi-pass kernels
// (ntt_block.cu) and the one-block kernel (small.cu); they differ only in where the twiddles
// come from. Tw supplies them: `tw.template get<q>(j)` is the twiddle of local stage q for the
// pairs whose lower value i has i mod 2^q = j, loaded from a table; or, for Pow2Tw, the stage
// is a pure one (twiddles w_{2^(q+1)}^j, powers of two) and multiplies by shifts. Forward
// (DIF) stages run Q-1 .. 0, local stage q pairing (i, i + 2^q) as a + b, (a - b) w; inverse (DIT) stages run 0 .. Q-1 as a + b w,
// a - b w: exactly src/ntt.rs forward_stages / inverse_stages. Each stage's twiddles are loaded
// together before its butterflies. The stage number is a template parameter (recursion rather
// than an unrolled loop), so that every array index is a compile-time constant and the arrays
// stay in registers.

// One stage's twiddles, loaded from a table before its butterflies.
template <int q>
struct LoadedStage {
    u64 t[1 << q];
    __device__ __forceinline__ u64 mul(u64 x, int j) const { return gl_mul(x, t[j]); }
};

template <int q, class Tw>
__device__ __forceinline__ LoadedStage<q> stage_twiddles(const Tw& tw) {
    LoadedStage<q> s;
#pragma unroll
    for (int j = 0; j < (1 << q); j++) s.t[j] = tw.template get<q>(j);
    return s;
}

// w_{2^(q+1)}^j (w_{-}^-j when INV) as a power of two, q <= 5: the generator 7 makes
// w_64 = 8^13 = 2^39, so w_{2^(q+1)} = 2^(39 * 2^(5-q)) (src/ntt.rs pow2_twiddle_exponent).
template <bool INV>
struct Pow2Tw {};

template <int q, bool INV>
struct Pow2Stage {
    static_assert(q <= 5, "pure stages of more than 64 points need roots that are not powers of two");
    __device__ __forceinline__ u64 mul(u64 x, int j) const {
        const u32 t = (u32)(j * (39 << (5 - q))) % 192u;
        return gl_mul_pow2(x, INV ? (192u - t) % 192u : t);
    }
};

template <int q, bool INV>
__device__ __forceinline__ Pow2Stage<q, INV> stage_twiddles(const Pow2Tw<INV>&) {
    return {};
}

template <int Q, int q, class Tw>
struct DifStages {
    static __device__ __forceinline__ void run(u64* v, const Tw& tw) {
        const auto t = stage_twiddles<q>(tw);
#pragma unroll
        for (int i = 0; i < (1 << Q); i++) {
            if (i & (1 << q)) continue;
            const u64 a = v[i], b = v[i + (1 << q)];
            v[i] = gl_add(a, b);
            v[i + (1 << q)] = t.mul(gl_sub(a, b), i & ((1 << q) - 1));
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
        const auto t = stage_twiddles<q>(tw);
#pragma unroll
        for (int i = 0; i < (1 << Q); i++) {
            if (i & (1 << q)) continue;
            const u64 a = v[i], b = t.mul(v[i + (1 << q)], i & ((1 << q) - 1));
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
