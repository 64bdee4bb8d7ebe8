// Radix-2 butterfly stages on 2^Q values held in registers: with twiddles from a table, for the
// one-block kernel (goldilocks/small.cuh), and with twiddles that are powers of 2, by gl_shl (no general
// product), for the DFTs of the multi-pass kernels' lines (goldilocks/ntt_block.cuh; below). Tw supplies the
// table's twiddles: `tw.template get<q>(j)` is the twiddle of local stage q for the pairs whose
// lower value i has i mod 2^q = j. Forward (DIF) stages run Q-1 .. 0, local stage q pairing
// (i, i + 2^q) as a + b, (a - b) w; inverse (DIT) stages run 0 .. Q-1 as a + b w,
// a - b w: exactly src/transform/twin.rs forward_stages / inverse_stages. Each stage's twiddles are loaded
// together before its butterflies. The stage number is a template parameter (recursion rather
// than an unrolled loop), so that every array index is a compile-time constant and the arrays
// stay in registers.
#pragma once
#include "goldilocks/field.cuh"

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

// The same stages on 2^Q <= 64 values whose twiddles are compile-time powers of 2: stage q of a
// line of 2^Q values (the stage of half-size 2^q, q <= 5) takes w_{2^(q+1)}^j =
// 2^(GL_W64_LOG2 * 2^(5-q) * j mod 192) for its pairs (i, i + 2^q) with i mod 2^q = j, inverse
// stages the inverse; 2^96 = -1 turns an exponent of 96 or more into a swap. These are the
// twiddles of a line's own DFT: a pass multiplies by the twiddles that depend on the line apart
// (src/transform/line.rs is the CPU twin of this factorization).
template <int q, int j, bool INV>
__device__ constexpr int pow2_exp() {
    constexpr int e = (GL_W64_LOG2 * (1 << (5 - q)) * j) % 192;
    return INV ? (192 - e) % 192 : e;
}

template <int E>
__device__ __forceinline__ void dif_pow2_bfly(u64& a, u64& b) {
    const u64 x = a, y = b;
    a = gl_add(x, y);
    if constexpr (E == 0) b = gl_sub(x, y);
    else if constexpr (E < 96) b = gl_shl<E>(gl_sub(x, y));
    else if constexpr (E == 96) b = gl_sub(y, x);
    else b = gl_shl<E - 96>(gl_sub(y, x));
}

template <int E>
__device__ __forceinline__ void dit_pow2_bfly(u64& a, u64& b) {
    const u64 x = a, t = E % 96 == 0 ? b : gl_shl<E % 96>(b);
    a = E < 96 ? gl_add(x, t) : gl_sub(x, t);
    b = E < 96 ? gl_sub(x, t) : gl_add(x, t);
}

// The butterflies i, i+1, ... of stage q (one template per pair, so that each twiddle exponent
// is a constant).
template <int Q, int q, int i, bool INV>
struct Pow2Stage {
    static __device__ __forceinline__ void run(u64* v) {
        if constexpr (i < (1 << Q)) {
            if constexpr (!(i & (1 << q))) {
                constexpr int e = pow2_exp<q, i & ((1 << q) - 1), INV>();
                if constexpr (INV) dit_pow2_bfly<e>(v[i], v[i + (1 << q)]);
                else dif_pow2_bfly<e>(v[i], v[i + (1 << q)]);
            }
            Pow2Stage<Q, q, i + 1, INV>::run(v);
        }
    }
};

template <int Q, int q>
__device__ __forceinline__ void dif_pow2_from(u64* v) {
    if constexpr (q >= 0) {
        Pow2Stage<Q, q, 0, false>::run(v);
        dif_pow2_from<Q, q - 1>(v);
    }
}

template <int Q, int q>
__device__ __forceinline__ void dit_pow2_from(u64* v) {
    if constexpr (q < Q) {
        Pow2Stage<Q, q, 0, true>::run(v);
        dit_pow2_from<Q, q + 1>(v);
    }
}

// Forward (DIF, natural -> bit-reversed) and inverse (DIT) transforms of 2^Q values in registers.
template <int Q>
__device__ __forceinline__ void dif_pow2(u64* v) {
    static_assert(Q <= 6, "twiddles are powers of 2 up to the 64th roots of unity");
    dif_pow2_from<Q, Q - 1>(v);
}

template <int Q>
__device__ __forceinline__ void dit_pow2(u64* v) {
    static_assert(Q <= 6, "twiddles are powers of 2 up to the 64th roots of unity");
    dit_pow2_from<Q, 0>(v);
}

// Bit reversal of the B low bits of h.
template <int B>
__device__ constexpr int rev_bits(int h) {
    int r = 0;
    for (int i = 0; i < B; i++) r |= ((h >> i) & 1) << (B - 1 - i);
    return r;
}

// v[h] *= w_{2^Q}^(G*rev_{Q1}(h)) for h < 2^Q1 (Q <= 6: powers of 2), or by the inverse: the
// column twiddles of column G of a line of 2^Q values taken as columns of 2^Q1 (goldilocks/ntt_block.cuh).
template <int Q, int Q1, int G, bool INV, int h = 1>
__device__ __forceinline__ void column_twiddles_pow2(u64* v) {
    static_assert(Q <= 6, "twiddles are powers of 2 up to the 64th roots of unity");
    if constexpr (h < (1 << Q1)) {
        constexpr int e0 = (GL_W64_LOG2 * (1 << (6 - Q)) * G * rev_bits<Q1>(h)) % 192;
        constexpr int e = INV ? (192 - e0) % 192 : e0;
        if constexpr (e >= 96) v[h] = gl_sub(0, gl_shl<e - 96>(v[h]));
        else if constexpr (e > 0) v[h] = gl_shl<e>(v[h]);
        column_twiddles_pow2<Q, Q1, G, INV, h + 1>(v);
    }
}

// The same for a run-time column g < 2^(Q - Q1) (one branch per value of g: meant for g the same
// across a warp).
template <int Q, int Q1, bool INV, int G = 0>
__device__ __forceinline__ void column_twiddles_pow2(u64* v, u32 g) {
    if constexpr (G < (1 << (Q - Q1))) {
        if (g == G) column_twiddles_pow2<Q, Q1, G, INV>(v);
        else column_twiddles_pow2<Q, Q1, INV, G + 1>(v, g);
    }
}
