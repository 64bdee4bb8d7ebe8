// Carry propagation, fused into the NTT passes (src/transform/plan.rs explains the scheme and its bounds;
// src/transform/twin.rs carry_walk + carry_fixup are the CPU twin). The last inverse pass unweighs into
// shared memory and walks each segment of 2^seg_log consecutive digits from a zero carry
// (walk_segment), storing the digits and the segment's carry out in carries[]. The next
// iteration's first forward pass stages its digits in shared memory the same way and applies
// those carries (fixup_segment): the carry out of segment r - 1 (cyclically) is the carry into
// segment r. Between launches a
// residue is thus "digits + pending carries"; the host applies them before it reads one.
#pragma once
#include "goldilocks/field.cuh"

// Widths of digits j, j + 1, ... by the recurrence of src/transform/plan.rs widths_from: with p = q*n + f
// and e = (-p*j) mod n, a digit is q + 1 bits wide iff e < f, and e steps by -f mod n: a few
// 32-bit instructions per digit in place of a 64-bit product and shifts.
struct Widths {
    u32 e, q, f, n;
    __device__ __forceinline__ Widths(const Layout& L, u64 j) {
        n = 1u << L.log_n;
        q = L.p >> L.log_n;
        f = L.p & (n - 1);
        e = (u32)(0ull - (u64)L.p * j) & (n - 1);
    }
    __device__ __forceinline__ u32 next() {
        const bool wide = e < f;
        e = wide ? e + n - f : e - f;
        return q + wide;
    }
};

// Balanced remainder d of t modulo 2^w and the carry (t - d) >> w, which is (t + 2^(w-1)) >> w:
// the carry does not wait for d, so a walk's chain from one carry to the next is an add, a shift
// and an add (src/transform/twin.rs balance is the CPU twin). Digits are at most 31 bits wide (src/transform/plan.rs),
// so d comes from the low word of t + 2^(w-1).
__device__ __forceinline__ i64 balance(i64 t, u32 w, i64* up) {
    const u32 half = 1u << (w - 1);
    const i64 s = t + half;
    *up = s >> w;
    return (i64)(int)(((u32)s & (2u * half - 1u)) - half);
}

// Fix-up of one segment (digits d[0], d[1], ... in shared memory) with incoming carry cin; j0 is
// the global index of d[0].
__device__ __forceinline__ void fixup_segment(i64* d, i64 cin, const Layout& L, u64 j0) {
    Widths ws(L, j0);
    for (u32 k = 0; k < L.fixup_depth; k++) {
        i64 up;
        d[k] = balance(d[k] + cin, ws.next(), &up);
        cin = up;
    }
    d[L.fixup_depth] += cin;
}

// Walk the 2^seg_log convolution outputs d[0..] of the segment starting at digit j into
// balanced digits, subtracting 2^bit on the way when bit falls in it; returns the carry out.
// The subtraction comes first, from the output of the digit that holds the bit rather than
// from its remainder (the same digits and carries, as src/transform/twin.rs carry_walk does it), and only
// the one thread whose segment holds the bit looks for that digit.
__device__ __forceinline__ i64 walk_segment(i64* d, const Layout& L, u64 j, u64 bit) {
    const u32 len = 1u << L.seg_log;
    const u64 start = digit_start(L, j);
    if (bit - start < digit_start(L, j + len) - start) {
        Widths ws(L, j);
        u32 k = 0, off = (u32)(bit - start);
        for (u32 w = ws.next(); off >= w; w = ws.next()) {
            off -= w;
            k++;
        }
        d[k] -= 1ll << off;
    }
    Widths ws(L, j);
    i64 c_in = 0;
    for (u32 k = 0; k < len; k++) {
        const u32 w = ws.next();
        const i64 c = d[k];
        i64 up;
        d[k] = balance((i64)((u32)c & ((1u << w) - 1u)) + c_in, w, &up);
        c_in = (c >> w) + up;
    }
    return c_in;
}
