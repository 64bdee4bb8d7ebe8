// The operations and flags of the Goldilocks kernels' launches (ntt_block.cuh, small.cuh); the
// same numbers as src/gpu/goldilocks/passes.rs's Op and flags (ADVANCE, LL: src/gpu/launch.rs).
#pragma once

#define OP_FORWARD 0
#define OP_INVERSE 1
#define OP_SQUARE 2
#define OP_MULTIPLY 3

#define FLAG_WEIGH 1
#define FLAG_UNWEIGH 2
#define FLAG_ADVANCE 4
#define FLAG_LL 8
#define FLAG_POW2 16
