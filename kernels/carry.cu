// Carry propagation, fused into the NTT passes (src/plan.rs explains the scheme and its bounds;
// src/ntt.rs carry_walk + carry_fixup are the CPU twin). The last inverse pass unweighs into
// shared memory and walks each segment of 2^seg_log consecutive digits from a zero carry
// (walk_segment), storing the digits and the segment's carry out in carries[]. The next
// iteration's first forward pass stages its digits in shared memory the same way and applies
// those carries (fixup_segment): the carry out of segment r - 1 (cyclically) is the carry into
// segment r. Between launches a
// residue is thus "digits + pending carries"; the host applies them before it reads one.

// Balanced remainder d of t modulo 2^w and the carry (t - d) >> w, which is (t + 2^(w-1)) >> w:
// the carry does not wait for d, so a walk's chain from one carry to the next is an add, a shift
// and an add (src/ntt.rs balance is the CPU twin).
__device__ __forceinline__ i64 balance(i64 t, u32 w, i64* up) {
    const i64 half = 1ll << (w - 1);
    const i64 s = t + half;
    *up = s >> w;
    return (s & ((1ll << w) - 1)) - half;
}

// Fix-up of one segment (digits d[0], d[1], ... in shared memory) with incoming carry cin; j0 is
// the global index of d[0].
__device__ __forceinline__ void fixup_segment(i64* d, i64 cin, const Layout& L, u64 j0) {
    for (u32 k = 0; k < L.fixup_depth; k++) {
        i64 up;
        d[k] = balance(d[k] + cin, digit_width(L, j0 + k), &up);
        cin = up;
    }
    d[L.fixup_depth] += cin;
}

// Walk the 2^seg_log convolution outputs d[0..] of the segment starting at digit j into
// balanced digits, subtracting 2^bit on the way when bit falls in it; returns the carry out.
__device__ __forceinline__ i64 walk_segment(i64* d, const Layout& L, u64 j, u64 bit) {
    i64 c_in = 0;
    u64 start = digit_start(L, j);
    for (u32 k = 0; k < (1u << L.seg_log); k++, j++) {
        const u64 next = digit_start(L, j + 1);
        const u32 w = (u32)(next - start);
        const i64 c = d[k];
        i64 lo = c & ((1ll << w) - 1);
        if (bit >= start && bit < next) lo -= 1ll << (bit - start);  // before the carry joins
        i64 up;
        d[k] = balance(lo + c_in, w, &up);
        c_in = (c >> w) + up;
        start = next;
    }
    return c_in;
}
