// The CUDA intrinsics the kernels use, for the host (pipeline_io.cpp, gl_row_io.cpp; for
// tests/fp64_kernels_on_host.rs, tests/four_step_on_host.rs, scripts/fp64-kernel-equiv.sh): the
// kernels compiled as plain C++ run the blocks of a grid one after another (so fp_carry's ready flags are set before they
// are waited for), and a block's threads as fibers on one OS thread (host_block below): each runs
// until its next barrier, the lowest-numbered first, and goes on once every thread of the block
// (or of its group, at a group barrier) has reached it. So a block has the threads the GPU's
// has and each does its share, a value read before a barrier that another thread writes after
// it is read stale (as it can be on a GPU), and a barrier that not every thread reaches stops
// the run. The FP64 intrinsics are
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
// block (threadIdx.x set for each as it runs; blockDim.x is the caller's to set), always the
// lowest-numbered thread that can run, until its next barrier. At __syncthreads a thread waits
// for every thread of the block; at a group barrier (group_barrier(id, count): a named barrier
// or a warp's, kernels/common/four_step.cuh fs_sync_group) only for the `count` threads that
// reach barrier `id`, after which those run on, ahead of the rest of the block.
namespace host_block {
const size_t STACK = 1 << 16;
enum State : char { READY, BLOCK, GROUP, EXITED };
inline ucontext_t scheduler;
inline std::vector<ucontext_t> threads;
inline std::vector<char> state;
inline std::vector<unsigned> waits_on;
inline std::vector<std::vector<char>> stacks;
inline unsigned current = 0, count = 0;
inline unsigned arrived[64];
inline void (*body)(void*) = nullptr;
inline void* body_arg = nullptr;
inline void entry() {
    body(body_arg);
    state[current] = EXITED;  // back to the scheduler through uc_link
}
inline void barrier() {
    if (count <= 1) return;
    state[current] = BLOCK;
    swapcontext(&threads[current], &scheduler);
}
inline void group_barrier(unsigned id, unsigned n) {
    if (count <= 1) return;
    if (id >= 64 || n > count) {
        fprintf(stderr, "host_block: group barrier %u of %u threads in a block of %u\n", id, n, count);
        exit(3);
    }
    state[current] = GROUP;
    waits_on[current] = id;
    if (++arrived[id] == n) {
        arrived[id] = 0;
        for (unsigned t = 0; t < count; t++) {
            if (state[t] == GROUP && waits_on[t] == id) state[t] = READY;
        }
    }
    swapcontext(&threads[current], &scheduler);
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
    state.assign(nt, READY);
    waits_on.assign(nt, 0);
    memset(arrived, 0, sizeof arrived);
    if (stacks.size() < nt) stacks.resize(nt, std::vector<char>(STACK));
    for (unsigned t = 0; t < nt; t++) {
        getcontext(&threads[t]);
        threads[t].uc_stack.ss_sp = stacks[t].data();
        threads[t].uc_stack.ss_size = STACK;
        threads[t].uc_link = &scheduler;
        makecontext(&threads[t], entry, 0);
    }
    for (;;) {
        unsigned t = 0;
        while (t < nt && state[t] != READY) t++;
        if (t < nt) {
            current = t;
            threadIdx = {t, 0, 0};
            swapcontext(&scheduler, &threads[t]);
            continue;
        }
        unsigned exited = 0, blocked = 0;
        for (unsigned u = 0; u < nt; u++) {
            exited += state[u] == EXITED;
            blocked += state[u] == BLOCK;
        }
        if (exited == nt) break;
        if (blocked + exited < nt || exited > 0) {
            fprintf(stderr,
                    "host_block: of %u threads %u left the kernel and %u wait at __syncthreads, the rest at a "
                    "group barrier\n",
                    nt, exited, blocked);
            exit(3);
        }
        for (unsigned u = 0; u < nt; u++) state[u] = READY;
    }
    count = 0;
    threadIdx = {0, 0, 0};
}
}  // namespace host_block
inline void __syncthreads() { host_block::barrier(); }
// A warp's barrier: a group barrier of its 32 threads, past the named barriers' ids 0 … 15.
inline void __syncwarp() { host_block::group_barrier(16 + (threadIdx.x >> 5), 32); }
inline void __nanosleep(unsigned) {}
