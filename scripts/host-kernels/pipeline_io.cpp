// kernels/common/pipeline.cuh's kernels (compiled for the host through shim.h) over the FP64
// arithmetic (kernels/fp64/pipeline.cuh), or with -DFS_GOLDILOCKS over Goldilocks
// (kernels/goldilocks/four_step.cuh), on a plan's tables and values, and every kernel's output
// written out:
//   pipeline_io IN OUT IN written by tests/fp64_kernels_on_host.rs from the CPU twin's tables,
//                      which compares OUT with the twin's stages bit for bit (as `gpu-selftest
//                      fp64` does on a GPU), or by tests/four_step_on_host.rs (Goldilocks);
//   pipeline_io --random LOG_R LOG_C SEG SEED OUT
//                      (FP64) random tables and values of that shape (not a real plan's), for
//                      two versions of the kernels to be compared bit for bit
//                      (scripts/fp64-kernel-equiv.sh).
//   Either after --threads TILE ROW: the threads of a column kernel's (fwd, inv, carry) and of a
//   rows block, where the unit is not compiled for them (FP_TILE_THREADS, FP_ROW_THREADS: then
//   those); by default 1. What the kernels compute does not depend on them.
//   IN: u32 log_r, log_c, seg_len, p, fixup_depth, lo_bits, n; the arithmetic's Extra (FP64:
//       f64 crt_inv; Goldilocks: nothing); per prime (NP: FP64 2, Goldilocks 1) its field's
//       constants (FP64: f64 p, pinv; Goldilocks: nothing), the values w_narrow, w_wide,
//       iw_narrow, iw_wide, u64 reduce, then 14 tables (u64 length, values): row_tw, row_itw,
//       col_tw, col_itw, w_row, w_tile, iw_row, iw_tile, t_hi, t_lo, it_hi, it_lo, t_step, it_step
//       (--random: the last two are products of an entry of each of the two tables before them;
//       a plan's are centered powers); n i64 digits;
//       n/seg_len i128 pending carries (two i64, low first); u32 shift; NP·n values r and NP·n
//       values y (every prime's n values one after the other). A value is 8 bytes (an f64, or a
//       u64 below P).
//   OUT: fwd of (digits, carries) (NP·n values); rows of r squared, then times y (NP·n values
//       each); inv of r with the LL term at shift (n i64 digits, n/seg_len i128 carries); a
//       batch of three LL squarings of (digits, carries) from shift: fwd, rows and carry twice,
//       rows, inv (digits, carries, the shift after); the product of those digits and carries
//       with the input's (fwd of each, rows with the product, inv without the LL term: digits,
//       carries).
#include "shim.h"
#ifdef FS_GOLDILOCKS
#include "goldilocks/four_step.cuh"
#else
#include "fp64/pipeline.cuh"
#endif
#include "io.h"
V fs_s[1 << 17];

static std::vector<std::vector<V>> tables;
static u64 table() {
    tables.push_back(many<V>(one<u64>()));
    if (tables.back().empty()) tables.back().push_back(V{});
    return (u64)tables.back().data();
}
// The field's constants and the arithmetic's Extra, as IN holds them.
#ifdef FS_GOLDILOCKS
static void read_field(GlField&) {}
static void read_extra(GlArith::Extra&) {}
#else
static void read_field(Fp& f) { f.p = one<double>(), f.pinv = one<double>(); }
static void read_extra(Fp64Arith::Extra& x) { x.crt_inv = one<double>(); }
#endif

#ifndef FS_GOLDILOCKS
// IN for random tables and values of a shape: field values below the primes, digits of 28 bits,
// small pending carries, a random reduce mask.
static std::vector<char> random_input(u32 log_r, u32 log_c, u32 seg, u64 seed) {
    u64 st = 88172645463325252ull ^ (seed * 0x9E3779B97F4A7C15ull);
    auto rnd = [&] {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        return st;
    };
    const double P[2] = {1125899906842597.0, 1099511627689.0};
    auto fval = [&](int h) { return (double)((int64_t)(rnd() % (u64)P[h]) - (int64_t)(P[h] / 2)); };
    std::vector<char> b;
    auto add = [&](const void* p, size_t bytes) { b.insert(b.end(), (const char*)p, (const char*)p + bytes); };
    auto word = [&](auto v) { add(&v, sizeof v); };
    const u32 n = 1u << (log_r + log_c), lo_bits = log_r < 5 ? log_r : 5;
    for (u32 v : {log_r, log_c, seg, n * 30 + 2 * (u32)(rnd() % (n / 2 + 1)) + 1, 2u, lo_bits, n}) word(v);
    word(fval(1));
    for (int h = 0; h < 2; h++) {
        for (double v : {P[h], 1.0 / P[h], fval(h), fval(h), fval(h), fval(h)}) word(v);
        word(rnd());
        const u64 b = (1u << log_c) / seg > 1 ? (1u << log_c) / seg : 1, tiles = 2 * b;
        const u64 hi = b << (log_r - lo_bits), lo = b << lo_bits;
        const u64 lens[12] = {1u << log_c, 1u << log_c, 1u << log_r, 1u << log_r, 1u << log_r, tiles, 1u << log_r, tiles,
                              hi, lo, hi, lo};
        std::vector<double> drawn[12];
        for (int t = 0; t < 12; t++) {
            word(lens[t]);
            for (u64 i = 0; i < lens[t]; i++) drawn[t].push_back(fval(h)), word(drawn[t].back());
        }
        // t_step and it_step: products of t_hi's and t_lo's (it_hi's, it_lo's) entries, no draws
        // of their own, so that the input is the one earlier revisions' harnesses make (a plan's
        // are centered powers, within the range of such products).
        const Fp f{P[h], 1.0 / P[h]};
        for (int t : {8, 10}) {
            word((u64)1 << log_r);
            for (u32 r = 0; r < (1u << log_r); r++) {
                word(f.mul(drawn[t][r >> lo_bits], drawn[t + 1][r & ((1u << lo_bits) - 1)]));
            }
        }
    }
    for (u32 j = 0; j < n; j++) word((int64_t)(rnd() % (1u << 29)) - (1 << 28));
    for (u32 k = 0; k < n / seg; k++) word((i128)((int64_t)(rnd() % (1u << 20)) - (1 << 19)));
    word((u32)rnd());
    for (int v = 0; v < 2; v++) {
        for (int h = 0; h < 2; h++) {
            for (u32 i = 0; i < n; i++) word(fval(h));
        }
    }
    return b;
}

#endif

// One launch: the grid's blocks in order (each as `kernel` after blockIdx is set), nt threads a
// block.
template <class K> static void launch(u32 nt, u32 bx_count, u32 by_count, K kernel) {
    blockDim = {nt, 1, 1};
    for (u32 by = 0; by < by_count; by++) {
        for (u32 bx = 0; bx < bx_count; bx++) {
            blockIdx = {bx, by, 0};
            host_block::run(nt, kernel);
        }
    }
}

int main(int argc, char** argv) {
    std::vector<char> random;
    FILE* o;
    u32 tile_nt = 1, row_nt = 1;
    if (argc > 3 && !strcmp(argv[1], "--threads")) {
        tile_nt = atoi(argv[2]), row_nt = atoi(argv[3]);
        argc -= 3, argv += 3;
    }
#if defined(FP_TILE_THREADS) && defined(FP_ROW_THREADS)
    tile_nt = FP_TILE_THREADS, row_nt = FP_ROW_THREADS;
#endif
    if (tile_nt < 1 || tile_nt > 1024 || row_nt < 1 || row_nt > 1024) {
        fprintf(stderr, "pipeline_io: threads a block out of range\n");
        return 2;
    }
    if (argc == 7 && !strcmp(argv[1], "--random")) {
#ifdef FS_GOLDILOCKS
        fprintf(stderr, "pipeline_io: --random takes the FP64 arithmetic\n");
        return 2;
#else
        random = random_input(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
#endif
        in = fmemopen(random.data(), random.size(), "rb");
        o = fopen(argv[6], "wb");
    } else if (argc == 3) {
        in = fopen(argv[1], "rb");
        o = fopen(argv[2], "wb");
    } else {
        fprintf(stderr, "usage: pipeline_io [--threads TILE ROW] (IN OUT | --random LOG_R LOG_C SEG SEED OUT)\n");
        return 2;
    }
    if (!in || !o) return 2;
    FsLayout L;
    memset(&L, 0, sizeof L);
    L.log_r = one<u32>(), L.log_c = one<u32>(), L.seg_len = one<u32>(), L.p = one<u32>();
    L.fixup_depth = one<u32>(), L.lo_bits = one<u32>(), L.n = one<u32>();
    read_extra(L.x);
    for (u32 h = 0; h < A::NP; h++) {
        FsPrime& q = L.q[h];
        read_field(q.f);
        q.w_narrow = one<V>(), q.w_wide = one<V>(), q.iw_narrow = one<V>(), q.iw_wide = one<V>();
        q.reduce = one<u64>();
        q.row_tw = table(), q.row_itw = table(), q.col_tw = table(), q.col_itw = table();
        q.w_row = table(), q.w_tile = table(), q.iw_row = table(), q.iw_tile = table();
        q.t_hi = table(), q.t_lo = table(), q.it_hi = table(), q.it_lo = table();
        q.t_step = table(), q.it_step = table();
    }
    const u32 n = L.n, R = 1u << L.log_r, T = L.seg_len, B = (1u << L.log_c) / T;
    const std::vector<u64> x0 = many<u64>(n);
    const std::vector<i128> c0 = many<i128>(n / T);
    const u32 s0 = one<u32>() % L.p;
    const std::vector<V> r = many<V>(A::NP * n), y = many<V>(A::NP * n);
    std::vector<V> z(A::NP * n);
    // IN and OUT hold the carries in segment order (segment g = r·B + t at row r, tile t), the
    // kernels at their slots (fs_carry_slot).
    auto slots = [&](const std::vector<i128>& c) {
        std::vector<i128> k(c.size());
        for (u32 g = 0; g < c.size(); g++) k[fs_carry_slot(L, g / B, g % B * T)] = c[g];
        return k;
    };
    auto segments = [&](const std::vector<i128>& k) {
        std::vector<i128> c(k.size());
        for (u32 g = 0; g < c.size(); g++) c[g] = k[fs_carry_slot(L, g / B, g % B * T)];
        return c;
    };
    std::vector<u64> x = x0;
    std::vector<i128> carries = slots(c0);
    std::vector<u32> shift{s0}, sync(1 + B, 0);
    auto fwd = [&] { launch(tile_nt, B, A::NP, [&] { FS_NAME(fwd)(x.data(), carries.data(), z.data(), L); }); };
    auto rows = [&](u32 flags) {
        launch(row_nt, R, A::NP, [&] { FS_NAME(rows)(z.data(), y.data(), shift.data(), L, flags); });
    };
    auto inv = [&] {
        launch(tile_nt, B, 1, [&] { FS_NAME(inv)(z.data(), x.data(), carries.data(), shift.data(), L, FS_LL); });
    };
    auto carry = [&] {
        launch(tile_nt, B + 1, 1, [&] { FS_NAME(carry)(z.data(), carries.data(), shift.data(), sync.data(), L, FS_LL); });
    };
    fwd();
    put(o, z);
    for (u32 flags : {0u, (u32)FS_PRODUCT}) {
        z = r;
        rows(flags);
        put(o, z);
    }
    z = r;
    inv();
    put(o, x);
    put(o, segments(carries));
    x = x0, carries = slots(c0), shift[0] = s0;
    fwd();
    for (int k = 0; k < 2; k++) {
        rows(FS_ADVANCE);
        carry();
    }
    rows(FS_ADVANCE);
    inv();
    put(o, x);
    put(o, segments(carries));
    put(o, shift);
    // The engine's product: (digits, carries) after the squarings times the input's, no LL term.
    std::vector<V> w(A::NP * n);
    launch(tile_nt, B, A::NP, [&] { FS_NAME(fwd)(x.data(), carries.data(), w.data(), L); });
    x = x0, carries = slots(c0);
    fwd();
    launch(row_nt, R, A::NP, [&] { FS_NAME(rows)(z.data(), w.data(), shift.data(), L, FS_PRODUCT); });
    launch(tile_nt, B, 1, [&] { FS_NAME(inv)(z.data(), x.data(), carries.data(), shift.data(), L, 0); });
    put(o, x);
    put(o, segments(carries));
    fclose(o);
    return 0;
}
