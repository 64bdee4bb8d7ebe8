// Carry propagation, fused into the NTT passes (src/plan.rs explains the scheme and its bounds;
// src/ntt.rs carry_walk + carry_fixup are the CPU twin). The last inverse pass unweighs into
// shared memory and walks each segment of 2^seg_log consecutive digits from a zero carry
// (walk_segment), storing the digits and the segment's carry out in carries[]. The next
// iteration's first forward pass applies those carries as it loads the digits (fixed_digit):
// the carry out of segment r - 1 (cyclically) is the carry into segment r. Between launches a
// residue is thus "digits + pending carries"; the host applies them before it reads one.

__device__ __forceinline__ i64 balance(i64 t, u32 w, i64* up) {
    const i64 half = 1ll << (w - 1);
    const i64 d = ((t + half) & ((1ll << w) - 1)) - half;
    *up = (t - d) >> w;
    return d;
}

// Digit j, at position pos of its segment, after the fix-up of that segment with its incoming
// carry: the first fixup_depth digits balanced, the carry left added to the next one. Each
// thread redoes the short carry chain of the digits before its own (they are in L1).
__device__ __forceinline__ i64 fixed_digit(const u64* x, const i64* carries, const Layout& L, u64 j, u32 pos) {
    const i64 d = (i64)x[j];
    if (pos > L.fixup_depth) return d;
    const u64 start = j - pos;
    const u64 segs_mask = ((1ull << L.log_n) >> L.seg_log) - 1;
    i64 cin = carries[((start >> L.seg_log) - 1) & segs_mask];
    for (u32 i = 0; i < pos; i++) {
        i64 up;
        balance((i64)x[start + i] + cin, digit_width(L, start + i), &up);
        cin = up;
    }
    if (pos == L.fixup_depth) return d + cin;
    i64 up;
    return balance(d + cin, digit_width(L, j), &up);
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
        i64 v = (c & ((1ll << w) - 1)) + c_in;
        if (bit >= start && bit < next) v -= 1ll << (bit - start);
        i64 up;
        d[k] = balance(v, w, &up);
        c_in = (c >> w) + up;
        start = next;
    }
    return c_in;
}
