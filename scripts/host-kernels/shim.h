// The CUDA intrinsics the kernels use, for the host (pipeline_io.cpp, gl_row_io.cpp; for
// tests/fp64_kernels_on_host.rs, tests/four_step_on_host.rs, scripts/fp64-kernel-equiv.sh): the
// kernels compiled as plain C++ run the blocks of a grid one after another (so fp_carry's ready flags are set before they
// are waited for), and a block's threads as fibers on one OS thread (host_block below): each runs
// until its next barrier, in thread order, and the next round of the block starts once every
// thread has reached it. So a block has the threads the GPU's has and each does its share, a
// value read before a barrier that another thread writes after it is read stale (as it can be
// on a GPU), and a barrier that not every thread reaches stops the run. The FP64 intrinsics are
// IEEE-754 double operations with round-to-nearest (compile with -ffp-contract=off).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <strings.h>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <ucontext.h>
#include <vector>
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __shared__
#define SHARED_VAR static
struct dim3h { unsigned x, y, z; };
static dim3h threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim{1, 1, 1};
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline long long __double2ll_rn(double x) { return llrint(x); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
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
// A block's threads as fibers: run(nt, kernel) runs kernel() as threads 0 .. nt - 1 of one
// block (threadIdx.x set for each as it runs; blockDim.x is the caller's to set), barrier by
// barrier.
namespace host_block {
const size_t STACK = 1 << 16;
inline ucontext_t scheduler;
inline std::vector<ucontext_t> threads;
inline std::vector<char> exited;
inline std::vector<std::vector<char>> stacks;
inline unsigned current = 0, count = 0;
inline void (*body)(void*) = nullptr;
inline void* body_arg = nullptr;
inline void entry() {
    body(body_arg);
    exited[current] = 1;  // back to the scheduler through uc_link
}
inline void barrier() {
    if (count > 1) swapcontext(&threads[current], &scheduler);
}
template <class K> void run(unsigned nt, K& kernel) {
    threadIdx = {0, 0, 0};
    if (nt <= 1) {
        kernel();
        return;
    }
    body = [](void* k) { (*(K*)k)(); };
    body_arg = &kernel;
    count = nt;
    threads.resize(nt);
    exited.assign(nt, 0);
    if (stacks.size() < nt) stacks.resize(nt, std::vector<char>(STACK));
    for (unsigned t = 0; t < nt; t++) {
        getcontext(&threads[t]);
        threads[t].uc_stack.ss_sp = stacks[t].data();
        threads[t].uc_stack.ss_size = STACK;
        threads[t].uc_link = &scheduler;
        makecontext(&threads[t], entry, 0);
    }
    for (;;) {
        unsigned done = 0;
        for (unsigned t = 0; t < nt; t++) {
            if (!exited[t]) {
                current = t;
                threadIdx = {t, 0, 0};
                swapcontext(&scheduler, &threads[t]);
            }
            done += exited[t];
        }
        if (done == nt) break;
        if (done > 0) {
            fprintf(stderr, "host_block: %u of %u threads left the kernel while the others wait at a barrier\n",
                    done, nt);
            exit(3);
        }
    }
    count = 0;
    threadIdx = {0, 0, 0};
}
}  // namespace host_block
inline void __syncthreads() { host_block::barrier(); }
inline void __nanosleep(unsigned) {}
