// Fault injection for tests: flip one bit of one word of device memory.
#pragma once
#include "common/types.cuh"

extern "C" __global__ void flip_bit(u64* x, u64 word, u32 bit) {
    if (blockIdx.x == 0 && threadIdx.x == 0) x[word] ^= 1ull << (bit & 63);
}
