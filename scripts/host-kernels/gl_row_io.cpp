// The skeleton's row transform (kernels/common/four_step.cuh fs_row_square) over the Goldilocks
// field (GlField, kernels/goldilocks/field.cuh), compiled for the host through shim.h: the
// skeleton with a second field beside the FP64 one, checked by tests/four_step_on_host.rs.
//   gl_row_io THREADS IN OUT
//   IN: u32 log_c (at most 14); C u64 twiddles tw[m + j] = w_2m^j (m = 1 .. C/2, j < m; tw[0]
//       unused), C inverse ones; a row x and a row y (C u64 each, canonical).
//   OUT: x's C-point DIF stages, pointwise square and DIT stages (C times x's cyclic convolution
//        with itself), then with the product by y's transformed row instead (C u64 each).
#include "shim.h"
#include "goldilocks/field.cuh"
#include "common/four_step.cuh"
#include "io.h"
static u64 gl_s[2 * fs_stride(1 << 14)];

// A row of the Goldilocks field as fs_row_square takes it (W): nothing reduced, no steps to
// count (the reduce mask is 0).
struct GlRow {
    typedef GlField F;
    const u64* tw;
    const u64* itw;
    u32 threads;
    GlField f() const { return GlField{}; }
    const u64* twf() const { return tw; }
    const u64* twi() const { return itw; }
    u64 reduce() const { return 0; }
    u32 fwd() const { return 0; }
    u32 square() const { return 0; }
    u32 inv() const { return 0; }
    u32 nt() const { return threads; }
};

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: gl_row_io THREADS IN OUT\n");
        return 2;
    }
    const u32 nt = (u32)atoi(argv[1]);
    in = fopen(argv[2], "rb");
    FILE* o = fopen(argv[3], "wb");
    u32 lc = 0;
    if (nt < 1 || nt > 1024 || !in || !o || fread(&lc, 4, 1, in) != 1 || lc > 14) {
        fprintf(stderr, "gl_row_io: bad arguments or input\n");
        return 2;
    }
    const size_t C = (size_t)1 << lc;
    const std::vector<u64> tw = many<u64>(C), itw = many<u64>(C), x = many<u64>(C), y = many<u64>(C);
    const GlRow w{tw.data(), itw.data(), nt};
    blockDim = {nt, 1, 1};
    for (bool product : {false, true}) {
        std::vector<u64> z = x;
        auto kernel = [&] { fs_row_square(gl_s, z.data(), y.data(), product, lc, w); };
        host_block::run(nt, kernel);
        put(o, z);
    }
    fclose(o);
    return 0;
}
