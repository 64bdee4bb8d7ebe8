// The integer types every kernel file uses (the words of src/gpu/'s buffers).
#pragma once

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// A __shared__ variable declared in a kernel's body: one a block. (The host build of the FP64
// kernels, scripts/host-kernels/shim.h, runs a block's threads as fibers on one stack each and
// defines this as static: one for the block it runs.)
#ifndef SHARED_VAR
#define SHARED_VAR __shared__
#endif
