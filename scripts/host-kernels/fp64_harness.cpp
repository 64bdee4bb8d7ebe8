// Runs the FP64 kernels (kernels/fp64/pipeline.cuh, compiled for the host through shim.h) on
// random tables and values of one shape and writes every kernel's output to a file, so that two
// versions of the kernels can be compared bit for bit without a GPU
// (scripts/fp64-kernel-equiv.sh). The data need not be a real plan's: each version performs its
// operations on the same input, and any difference in what it computes shows.
// Usage: fp64_harness LOG_R LOG_C SEG SEED OUT
#include "shim.h"
#include "fp64/pipeline.cuh"
#include <cstdio>
#include <cstdlib>
#include <vector>
double fp_s[1 << 17];
static uint64_t st = 88172645463325252ull;
static uint64_t rnd() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return st; }
static const double P[2] = {1125899906842597.0, 1099511627689.0};
static double fval(int h) { return (double)((int64_t)(rnd() % (uint64_t)P[h]) - (int64_t)(P[h] / 2)); }
static std::vector<std::vector<double>> keep;
static u64 table(int h, size_t len) {
    keep.emplace_back(len ? len : 1);
    for (auto& x : keep.back()) x = fval(h);
    return (u64)keep.back().data();
}
static void dump(FILE* o, const void* p, size_t bytes) { fwrite(p, 1, bytes, o); }
int main(int argc, char** argv) {
    const u32 log_r = atoi(argv[1]), log_c = atoi(argv[2]), T = atoi(argv[3]);
    st ^= atoi(argv[4]) * 0x9E3779B97F4A7C15ull;
    FILE* o = fopen(argv[5], "wb");
    const u32 R = 1u << log_r, C = 1u << log_c, n = R * C, lo_bits = (log_r + log_c + 1) / 2;
    FpLayout L;
    memset(&L, 0, sizeof L);
    for (int h = 0; h < 2; h++) {
        FpPrime& q = L.q[h];
        q.p = P[h];
        q.pinv = 1.0 / P[h];
        q.w_narrow = fval(h); q.w_wide = fval(h); q.iw_narrow = fval(h); q.iw_wide = fval(h);
        q.reduce = rnd();
        q.row_tw = table(h, C); q.row_itw = table(h, C); q.col_tw = table(h, R); q.col_itw = table(h, R);
        const size_t hi = (n >> lo_bits) + 1, lo = 1u << lo_bits;
        q.w_hi = table(h, hi); q.w_lo = table(h, lo); q.iw_hi = table(h, hi); q.iw_lo = table(h, lo);
        q.t_hi = table(h, hi); q.t_lo = table(h, lo); q.it_hi = table(h, hi); q.it_lo = table(h, lo);
    }
    L.crt_inv = fval(1);
    L.n = n; L.log_r = log_r; L.log_c = log_c; L.lo_bits = lo_bits; L.seg_len = T;
    L.p = n * 30 + 2 * (rnd() % (n / 2)) + 1;
    L.fixup_depth = 2;
    const u32 segs = n / T, B = C / T;
    std::vector<u64> x(n);
    std::vector<i128> carries(segs);
    for (auto& d : x) d = (u64)(int64_t)((int64_t)(rnd() % (1u << 29)) - (1 << 28));
    for (auto& c : carries) c = (i128)((int64_t)(rnd() % (1u << 20)) - (1 << 19));
    std::vector<double> z(2 * n), y(2 * n);
    for (int h = 0; h < 2; h++) {
        for (u32 i = 0; i < n; i++) {
            z[h * n + i] = fval(h);
            y[h * n + i] = fval(h);
        }
    }
    std::vector<u32> shift{(u32)(rnd() % L.p)}, sync(1 + B, 0);
    // fp_fwd
    for (u32 by = 0; by < 2; by++) {
        for (u32 bx = 0; bx < B; bx++) {
            blockIdx = {bx, by, 0};
            fp_fwd(x.data(), carries.data(), z.data(), L);
        }
    }
    dump(o, z.data(), z.size() * 8);
    // fp_rows: square with advance, then product
    for (u32 fl : {4u, 1u}) {
        for (u32 by = 0; by < 2; by++) {
            for (u32 bx = 0; bx < R; bx++) {
                blockIdx = {bx, by, 0};
                fp_rows(z.data(), y.data(), shift.data(), L, fl);
            }
        }
        dump(o, z.data(), z.size() * 8);
        dump(o, shift.data(), 4);
    }
    // fp_inv with LL
    for (u32 bx = 0; bx < B; bx++) {
        blockIdx = {bx, 0, 0};
        fp_inv(z.data(), x.data(), carries.data(), shift.data(), L, 8);
    }
    dump(o, x.data(), x.size() * 8);
    dump(o, carries.data(), carries.size() * 16);
    // fp_carry twice (blocks in ticket order, one after another)
    for (int rep = 0; rep < 2; rep++) {
        for (u32 b = 0; b <= B; b++) {
            blockIdx = {b, 0, 0};
            fp_carry(z.data(), carries.data(), shift.data(), sync.data(), L, 8);
        }
        dump(o, z.data(), z.size() * 8);
        dump(o, carries.data(), carries.size() * 16);
        dump(o, sync.data(), sync.size() * 4);
    }
    fclose(o);
    return 0;
}
