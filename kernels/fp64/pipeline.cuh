// The FP64 arithmetic's squaring on the device (issue 37): kernels/common/pipeline.cuh's kernels
// (fp_fwd, fp_rows, fp_inv, fp_carry: src/gpu/four_step/pipeline.rs launches them) over the pair of
// primes of a plan (Fp, kernels/fp64/field.cuh), each output's two residues recombined by the
// CRT of the pair (fp_crt, fp_crt_split), mirroring the CPU twin src/transform/fp64/stages.rs value for value.
#pragma once
#include "fp64/field.cuh"

struct Fp64Arith {
    typedef Fp F;
    enum : u32 { NP = 2 };
    struct Extra {
        double crt_inv;  // P1^-1 mod P2, centered
    };
    // c = a + P1·t from the pair's residues y[0], y[1] (src/transform/fp64/crt.rs).
    __device__ __forceinline__ static __int128 combine(const Fp (&f)[2], const Extra& x, const double (&y)[2]) {
        u64 lo, hi;
        fp_crt(y[0], y[1], f[0], f[1], x.crt_inv, lo, hi);
        return (__int128)(((unsigned __int128)hi << 64) | lo);
    }
    // The same c as q·2^w + z.
    __device__ __forceinline__ static i64 split(const Fp (&f)[2], const Extra& x, const double (&y)[2], u32 w,
                                                i64& q) {
        return fp_crt_split(y[0], y[1], f[0], f[1], x.crt_inv, w, q);
    }
};

#define FS_ARITH Fp64Arith
#define FS_NAME(x) fp_##x
#include "common/pipeline.cuh"
