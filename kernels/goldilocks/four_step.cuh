// Goldilocks on the four-step pipeline (issue 37: kernels/common/pipeline.cuh over a second
// arithmetic): one prime, canonical values (GlField: nothing is reduced lazily, the reduce masks
// are 0), an output's residue centered (gl_centered) is the convolution's integer, which the
// plan's bound keeps below (P - 1)/2. Kernels gs_fwd, gs_rows, gs_inv, gs_carry: the unit
// `goldilocks-fs` of kernels/manifest.txt. tests/four_step_on_host.rs checks LL squarings through
// them, compiled for the host, against GMP; the engine launches them only with
// MERSENNE_CERT_GOLDILOCKS_FOUR_STEP=1 (src/gpu/arith.rs: slower than the multi-pass kernels).
#pragma once
#include "goldilocks/field.cuh"

struct GlArith {
    typedef GlField F;
    enum : u32 { NP = 1 };
    struct Extra {
        u64 unused;
    };
    __device__ __forceinline__ static __int128 combine(const GlField (&)[1], const Extra&, const u64 (&y)[1]) {
        return gl_centered(y[0]);
    }
    // The centered residue c as q·2^w + z (q = c >> w, arithmetic; z = c mod 2^w).
    __device__ __forceinline__ static i64 split(const GlField (&)[1], const Extra&, const u64 (&y)[1], u32 w,
                                                i64& q) {
        const i64 c = gl_centered(y[0]);
        q = c >> w;
        return c & (((i64)1 << w) - 1);
    }
};

#define FS_ARITH GlArith
#define FS_NAME(x) gs_##x
#include "common/pipeline.cuh"
