// The FP64 arithmetic's field (issue 37): GF(p), p < 2^52, residues as integers held in doubles,
// written with the same IEEE-754 operations in the same order as src/transform/fp64/field.rs
// (the _rn intrinsics: the compiler neither contracts nor reorders them), so that the GPU and
// the CPU twin agree bit for bit. Ranges (docs/arithmetic.md, "FP64"): fp_mul takes
// |a|·|b| <= 2^50·p and returns |r| <= 3p/4; fp_reduce takes |x| < 2^53, returns |r| <= (p+1)/2.
#pragma once
#include "common/types.cuh"

#define FP_ROUND 6755399441055744.0 /* 1.5·2^52 */

// The field as kernels/common/four_step.cuh takes it (F): its values and operations.
struct Fp {
    double p, pinv;
    typedef double V;
    __device__ __forceinline__ double mul(double a, double b) const;
    __device__ __forceinline__ double reduce(double x) const;
    __device__ __forceinline__ void dif(double& x, double& y, double w) const;
    __device__ __forceinline__ void dit(double& x, double& y, double w) const;
    __device__ __forceinline__ void sum_diff(double& x, double& y) const;
    // A digit as a value: exact (|d| < 2^53), unreduced (src/transform/fp64/stages.rs weigh).
    __device__ __forceinline__ double from_i64(i64 d) const { return (double)d; }
};

__device__ __forceinline__ double fp_mul(double a, double b, Fp f) {
    const double h = __dmul_rn(a, b);
    const double l = __fma_rn(a, b, -h);
    const double q = __dsub_rn(__fma_rn(h, f.pinv, FP_ROUND), FP_ROUND);
    return __dadd_rn(__fma_rn(-q, f.p, h), l);
}

__device__ __forceinline__ double fp_reduce(double x, Fp f) {
    const double q = __dsub_rn(__fma_rn(x, f.pinv, FP_ROUND), FP_ROUND);
    return __fma_rn(-q, f.p, x);
}

// x's residue in [−(p−1)/2, (p−1)/2] for |x| < 3p/2 (a product, or a reduced value): x itself,
// less or plus p (selects, not branches).
__device__ __forceinline__ double fp_center_near(double x, Fp f) {
    const double half = __dmul_rn(__dsub_rn(f.p, 1.0), 0.5);
    const double down = __dsub_rn(x, f.p), up = __dadd_rn(x, f.p);
    const double s = x < -half ? up : x;
    return x > half ? down : s;
}

__device__ __forceinline__ double fp_center(double x, Fp f) { return fp_center_near(fp_reduce(x, f), f); }

// (x, y) -> (x + y, (x - y)·w)
__device__ __forceinline__ void fp_dif(double& x, double& y, double w, Fp f) {
    const double s = __dadd_rn(x, y);
    y = fp_mul(__dsub_rn(x, y), w, f);
    x = s;
}

// (x, y) -> (x + y·w, x - y·w)
__device__ __forceinline__ void fp_dit(double& x, double& y, double w, Fp f) {
    const double t = fp_mul(y, w, f);
    y = __dsub_rn(x, t);
    x = __dadd_rn(x, t);
}

// (x, y) -> (x + y, x - y): a butterfly by ω^0 = 1 (src/transform/fp64/field.rs sum_diff)
__device__ __forceinline__ void fp_sum_diff(double& x, double& y) {
    const double s = __dadd_rn(x, y);
    y = __dsub_rn(x, y);
    x = s;
}

__device__ __forceinline__ double Fp::mul(double a, double b) const { return fp_mul(a, b, *this); }
__device__ __forceinline__ double Fp::reduce(double x) const { return fp_reduce(x, *this); }
__device__ __forceinline__ void Fp::dif(double& x, double& y, double w) const { fp_dif(x, y, w, *this); }
__device__ __forceinline__ void Fp::dit(double& x, double& y, double w) const { fp_dit(x, y, w, *this); }
__device__ __forceinline__ void Fp::sum_diff(double& x, double& y) const { fp_sum_diff(x, y); }

// The balanced digits (a, t) of c = a + P1·t (src/transform/fp64/crt.rs) from c's residues x1,
// x2: |a| <= (P1 - 1)/2, |t| <= (P2 - 1)/2, both integers held exactly.
__device__ __forceinline__ void fp_crt_digits(double x1, double x2, Fp f1, Fp f2, double inv, double& a,
                                              double& t) {
    a = fp_center(x1, f1);
    const double d = __dsub_rn(fp_reduce(x2, f2), a);
    t = fp_center(fp_mul(d, inv, f2), f2);
}

// c as a signed 128-bit integer (lo, hi): t·P1 by a 64x64 -> 128 product on the integer pipe.
__device__ __forceinline__ void fp_crt(double x1, double x2, Fp f1, Fp f2, double inv, u64& lo, u64& hi) {
    double a, t;
    fp_crt_digits(x1, x2, f1, f2, inv, a, t);
    const long long ai = __double2ll_rn(a), ti = __double2ll_rn(t);
    const u64 p1 = (u64)f1.p;
    const u64 plo = (u64)ti * p1;
    long long phi = __mul64hi(ti, (long long)p1);
    const u64 sum = plo + (u64)ai;
    lo = sum;
    hi = (u64)(phi + (long long)(sum < plo) + (ai < 0 ? -1LL : 0LL));
}

// c as q·2^w + z (returned), for a carry walk in 64-bit integers (docs/arithmetic.md, "The
// carry walk"), on the FP64 pipe: h = t·P1 rounded and l = t·P1 - h (exact, an FMA), q = h/2^w
// rounded to an integer (the scaling is exact), r = h - q·2^w (exact: an integer of at most
// 2^(w-1)), z = (r + l) + a (exact: integers below 2^53 while |c| < 2^103 and w <= 51, which
// the FP64 bound guarantees). |q| <= (|c| + 2^52)/2^w + 1.
// Its residues are products (|x| <= 3P/4: the unweighted values), so the digits need no
// reduction: a = x1 centered, (x2 − a)·inv (|x2 − a|·|inv| <= (3P2/8 + P1/4)·P2 <= 2^50·P2 for
// every pair) centered: the same a and t as fp_crt_digits, three FP64 reductions fewer.
__device__ __forceinline__ i64 fp_crt_split(double x1, double x2, Fp f1, Fp f2, double inv, u32 w, i64& q) {
    const double a = fp_center_near(x1, f1);
    const double t = fp_center_near(fp_mul(__dsub_rn(x2, a), inv, f2), f2);
    const double h = __dmul_rn(t, f1.p);
    const double l = __fma_rn(t, f1.p, -h);
    const double down = __longlong_as_double((long long)(1023 - w) << 52);  // 2^-w
    const double up = __longlong_as_double((long long)(1023 + w) << 52);    // 2^w
    const double qd = rint(__dmul_rn(h, down));
    const double r = __fma_rn(-qd, up, h);
    q = __double2ll_rn(qd);
    return __double2ll_rn(__dadd_rn(__dadd_rn(r, l), a));
}
