// The integer types every kernel file uses (the words of src/gpu/'s buffers).
#pragma once

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
