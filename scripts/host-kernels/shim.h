// The CUDA intrinsics the FP64 kernels use, for the host (fp64_io.cpp, for
// tests/fp64_kernels_on_host.rs and scripts/fp64-kernel-equiv.sh): the kernels compiled as plain
// C++ run a block as one thread (blockDim.x = 1, so every loop over a block's threads does all
// the work and a barrier is a no-op) and the blocks of a grid one after another (so fp_carry's
// ready flags are set before they are waited for). The FP64 intrinsics are IEEE-754 double
// operations with round-to-nearest (compile with -ffp-contract=off).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <strings.h>
#include <cstddef>
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __shared__
struct dim3h { unsigned x, y, z; };
static dim3h threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim{1, 1, 1};
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline long long __double2ll_rn(double x) { return llrint(x); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline int __ffs(int x) { return ffs(x); }
inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
struct longlong2 { long long x, y; };
template <class T> inline T __ldcg(const T* p) { return *p; }
inline unsigned atomicAdd(unsigned* a, unsigned v) { unsigned o = *a; *a += v; return o; }
inline unsigned atomicExch(unsigned* a, unsigned v) { unsigned o = *a; *a = v; return o; }
inline void __threadfence() {}
inline void __syncthreads() {}
inline void __nanosleep(unsigned) {}
extern double fp_s[];
