// The FP64 pair's CRT as the 64-bit carry walk takes it (kernels/fp64/field.cuh fp_crt_split:
// an output's residues as q·2^w + z), compiled for the host through shim.h, checked by
// tests/crt_split_on_host.rs against the recombination of src/transform/fp64/crt.rs.
//   crt_split_io IN OUT
//   IN: f64 P1, 1/P1, P2, 1/P2, P1^-1 mod P2 (centered); u64 count; count records of f64 x1,
//       f64 x2 (the residues, |x| <= 3P/4) and u64 w (the digit's width).
//   OUT: count records of i64 q, i64 z.
#include "shim.h"
#include "fp64/field.cuh"
#include "io.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: crt_split_io IN OUT\n");
        return 2;
    }
    in = fopen(argv[1], "rb");
    FILE* out = fopen(argv[2], "wb");
    if (!in || !out) return 2;
    const double p1 = one<double>(), pinv1 = one<double>(), p2 = one<double>(), pinv2 = one<double>();
    const double inv = one<double>();
    const Fp f1{p1, pinv1}, f2{p2, pinv2};
    for (u64 k = 0, count = one<u64>(); k < count; k++) {
        const double x1 = one<double>(), x2 = one<double>();
        const u32 w = (u32)one<u64>();
        i64 q;
        const i64 z = fp_crt_split(x1, x2, f1, f2, inv, w, q);
        fwrite(&q, 8, 1, out);
        fwrite(&z, 8, 1, out);
    }
    return fclose(out) == 0 ? 0 : 2;
}
