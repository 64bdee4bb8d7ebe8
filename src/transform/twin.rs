//! The CPU twin of the GPU engine: the same plan, the same transform (forward radix-2 DIF,
//! natural → bit-reversed, pointwise square or multiply, inverse radix-2 DIT, bit-reversed →
//! natural: no bit-reversal pass), the same weighting and the same segmented carry with fix-up
//! and the same "−2·2^s" term. The GPU walks the carries at the end of a squaring and applies
//! the fix-up at the start of the next one (or on the host before a read); the twin does both
//! at once, which gives the same digits (the small-length kernel, kernels/goldilocks/small.cuh, also does
//! both at once). Each stage is a public function so that the GPU
//! self-test can compare every kernel with it; `engine::twin::TwinEngine` strings them into a slow engine.
//! The carry and the iterations serve every arithmetic's twin: [`Convolution`] gives M61·M31's and
//! FP64's their squaring, product and iterations from their convolution.

use crate::exponent::TestKind;
use crate::residue::Shift;
use crate::transform::goldilocks::field::Gl;
use crate::transform::plan::Plan;

/// Digits (balanced, signed) → weighted field elements: x_j = d_j·a_j.
pub fn weight_in(plan: &Plan, digits: &[i64]) -> Vec<Gl> {
    digits.iter().enumerate().map(|(j, &d)| Gl::from_i64(d).mul(plan.weight(j))).collect()
}

/// Field elements → signed convolution outputs: c_j = centered(x_j / (n·a_j)).
pub fn unweight_out(plan: &Plan, x: &[Gl]) -> Vec<i64> {
    x.iter().enumerate().map(|(j, v)| v.mul(plan.inv_weight(j)).to_i64_centered()).collect()
}

/// Forward DIF stages with half-sizes m_hi, m_hi/2, …, m_lo (powers of two, m_hi ≥ m_lo):
/// (u, v) → (u + v, (u − v)·ω_{2m}^i).
pub fn forward_stages(plan: &Plan, x: &mut [Gl], m_hi: usize, m_lo: usize) {
    let (tw, _) = plan.twiddles();
    let mut m = m_hi;
    while m >= m_lo && m > 0 {
        for blk in x.chunks_exact_mut(2 * m) {
            let (a, b) = blk.split_at_mut(m);
            for i in 0..m {
                let (u, v) = (a[i], b[i]);
                a[i] = u.add(v);
                b[i] = u.sub(v).mul(tw[m + i]);
            }
        }
        m /= 2;
    }
}

/// Inverse DIT stages with half-sizes m_lo, 2·m_lo, …, m_hi: (u, v) → (u + v·ω^−i, u − v·ω^−i).
pub fn inverse_stages(plan: &Plan, x: &mut [Gl], m_lo: usize, m_hi: usize) {
    let (_, itw) = plan.twiddles();
    let mut m = m_lo;
    while m <= m_hi {
        for blk in x.chunks_exact_mut(2 * m) {
            let (a, b) = blk.split_at_mut(m);
            for i in 0..m {
                let (u, v) = (a[i], b[i].mul(itw[m + i]));
                a[i] = u.add(v);
                b[i] = u.sub(v);
            }
        }
        m *= 2;
    }
}

/// A convolution output as the carry takes it: i64 (Goldilocks, |c| ≤ (P−1)/2) or i128
/// (M61·M31, |c| ≤ (M61·M31 − 1)/2 < 2^91); the carries have the same type.
pub trait Conv:
    Copy
    + Default
    + Send
    + Sync
    + From<i64>
    + std::ops::Add<Output = Self>
    + std::ops::AddAssign
    + std::ops::Sub<Output = Self>
    + std::ops::BitAnd<Output = Self>
    + std::ops::Shl<u32, Output = Self>
    + std::ops::Shr<u32, Output = Self>
{
    /// The low 64 bits as i64: exact for the balanced digits the carry produces.
    fn low(self) -> i64;
}

impl Conv for i64 {
    fn low(self) -> i64 {
        self
    }
}

impl Conv for i128 {
    fn low(self) -> i64 {
        self as i64
    }
}

/// Balanced remainder d of t modulo 2^w, in [−2^(w−1), 2^(w−1)), and the carry (t − d)/2^w,
/// which is (t + 2^(w−1)) >> w (kernels/goldilocks/carry.cuh computes it so, off the remainder's path).
/// For |t| < 2^62 (i64; 2^126 for i128) and 1 ≤ w ≤ 62.
fn balance<C: Conv>(t: C, w: u32) -> (i64, C) {
    let half = C::from(1) << (w - 1);
    let s = t + half;
    ((s & ((C::from(1) << w) - C::from(1))).low() - (1i64 << (w - 1)), s >> w)
}

/// Carry pass 1: each segment of K digits walks from a zero carry. `inject` adds a term to one
/// convolution output first (the LL −2·2^s; |c| ≤ (P−1)/2 leaves room for it in an i64).
/// Returns the digits and each segment's carry out.
pub fn carry_walk<C: Conv>(plan: &Plan, c: &[C], inject: Option<(usize, i64)>) -> (Vec<i64>, Vec<C>) {
    let k = plan.seg_len();
    let mut c = c.to_vec();
    if let Some((at, v)) = inject {
        c[at] += C::from(v);
    }
    let mut digits = vec![0i64; c.len()];
    let carries = c
        .chunks_exact(k)
        .zip(digits.chunks_exact_mut(k))
        .enumerate()
        .map(|(seg, (cs, ds))| {
            let mut carry = C::default();
            for ((&cj, dj), w) in cs.iter().zip(ds.iter_mut()).zip(plan.widths_from(seg * k)) {
                let (d, up) = balance((cj & ((C::from(1) << w) - C::from(1))) + carry, w);
                *dj = d;
                carry = (cj >> w) + up;
            }
            carry
        })
        .collect();
    (digits, carries)
}

/// Carry pass 2: segment i takes the carry out of segment i − 1 (the top one wraps to 0),
/// normalizes its first F digits and adds what is left (|·| ≤ slack) to digit F.
pub fn carry_fixup<C: Conv>(plan: &Plan, digits: &mut [i64], carries: &[C]) {
    let (k, f) = (plan.seg_len(), plan.fixup_depth());
    let segs = carries.len();
    for (seg, ds) in digits.chunks_exact_mut(k).enumerate() {
        let mut carry = carries[(seg + segs - 1) % segs];
        for (dj, w) in ds[..f].iter_mut().zip(plan.widths_from(seg * k)) {
            let (d, up) = balance(C::from(*dj) + carry, w);
            *dj = d;
            carry = up;
        }
        ds[f] += carry.low();
    }
}

/// Both carry passes.
pub fn carry<C: Conv>(plan: &Plan, c: &[C], inject: Option<(usize, i64)>) -> Vec<i64> {
    let (mut digits, carries) = carry_walk(plan, c, inject);
    carry_fixup(plan, &mut digits, &carries);
    digits
}

/// Forward transform of weighted digits (all stages).
pub fn forward(plan: &Plan, digits: &[i64]) -> Vec<Gl> {
    let mut x = weight_in(plan, digits);
    forward_stages(plan, &mut x, plan.n() / 2, 1);
    x
}

/// Inverse transform and unweighting (all stages): the convolution outputs.
pub fn inverse(plan: &Plan, mut x: Vec<Gl>) -> Vec<i64> {
    inverse_stages(plan, &mut x, 1, plan.n() / 2);
    unweight_out(plan, &x)
}

/// One squaring of balanced digits modulo M_p, with an optional injected term.
pub fn square_digits(plan: &Plan, digits: &[i64], inject: Option<(usize, i64)>) -> Vec<i64> {
    let x: Vec<Gl> = forward(plan, digits).into_iter().map(Gl::square).collect();
    carry(plan, &inverse(plan, x), inject)
}

/// The product of two digit vectors modulo M_p.
pub fn multiply_digits(plan: &Plan, a: &[i64], b: &[i64]) -> Vec<i64> {
    let fb = forward(plan, b);
    let x = forward(plan, a).into_iter().zip(fb).map(|(u, v)| u.mul(v)).collect();
    carry(plan, &inverse(plan, x), None)
}

/// `count` iterations of `kind` on digits that stand for x·2^shift: the digits and shift after
/// them (LL subtracts 2·2^s in the shifted domain, as the GPU does).
pub fn iterate_digits(plan: &Plan, kind: TestKind, digits: Vec<i64>, shift: Shift, count: u64) -> (Vec<i64>, Shift) {
    iterate_with(plan, kind, digits, shift, count, |d, inject| square_digits(plan, d, inject))
}

/// `count` iterations of `kind` with any arithmetic's squaring of digits (with its injected
/// term): the shift bookkeeping and the LL term that every twin shares.
pub fn iterate_with(
    plan: &Plan,
    kind: TestKind,
    mut digits: Vec<i64>,
    mut shift: Shift,
    count: u64,
    square: impl Fn(&[i64], Option<(usize, i64)>) -> Vec<i64>,
) -> (Vec<i64>, Shift) {
    for _ in 0..count {
        let next = shift.squared();
        let inject = (kind == TestKind::Ll).then(|| plan.minus_two_at(next.get()));
        digits = square(&digits, inject);
        shift = next;
    }
    (digits, shift)
}

/// An arithmetic whose twin computes the convolution outputs exactly as i128 (M61·M31, FP64):
/// its squaring, product and iterations of digits are that convolution and the carry.
pub trait Convolution {
    /// The convolution outputs of a·b (b = None: a²) as integers.
    fn convolution(&self, plan: &Plan, a: &[i64], b: Option<&[i64]>) -> Vec<i128>;

    /// One squaring of balanced digits modulo M_p, with an optional injected term.
    fn square_digits(&self, plan: &Plan, digits: &[i64], inject: Option<(usize, i64)>) -> Vec<i64> {
        carry(plan, &self.convolution(plan, digits, None), inject)
    }

    /// The product of two digit vectors modulo M_p.
    fn multiply_digits(&self, plan: &Plan, a: &[i64], b: &[i64]) -> Vec<i64> {
        carry(plan, &self.convolution(plan, a, Some(b)), None)
    }

    /// `count` iterations of `kind` on digits that stand for x·2^shift (see [`iterate_digits`]).
    fn iterate_digits(
        &self,
        plan: &Plan,
        kind: TestKind,
        digits: Vec<i64>,
        shift: Shift,
        count: u64,
    ) -> (Vec<i64>, Shift) {
        iterate_with(plan, kind, digits, shift, count, |d, inject| self.square_digits(plan, d, inject))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exponent::is_prime;
    use crate::residue::Residue;
    use crate::rng::SeededRng;
    use crate::transform::plan::{Arith, Length};
    use crate::transform::testing::extreme_digits;
    use quickcheck::{quickcheck, TestResult};
    use rug::integer::Order;
    use rug::Integer;

    fn residue(p: u32, seed: &[u64]) -> Residue {
        let mut x = Integer::from_digits(seed, Order::Lsf);
        x.keep_bits_mut(p);
        Residue::from_integer(p, &x)
    }

    /// One LL squaring through `plan` with shift s, against rug's (x² − 2) mod M_p.
    fn ll_step_matches_rug(plan: &Plan, r: &Residue, s: u32) -> bool {
        let p = plan.exponent();
        let next = Shift::new(p, s).squared();
        let d = square_digits(plan, &plan.residue_to_digits(r, s), Some(plan.minus_two_at(next.get())));
        let got = plan.digits_to_residue(&d, next.get()).unwrap();
        let x = r.to_integer();
        got == Residue::from_integer(p, &(Integer::from(&x * &x) - 2u32))
    }

    quickcheck! {
        /// balance against its definition in i128: t = d + up·2^w with d in [−2^(w−1), 2^(w−1)),
        /// for t anywhere below 2^62 in size (the edges of the range included) and every w.
        fn balance_is_the_balanced_remainder(t: i64, w: u8, edge: u8) -> bool {
            let w = u32::from(w) % 62 + 1;
            let t = match edge % 4 {
                0 => t >> 2,
                1 => (1i64 << 62) - 1 - (t & 0xFFFF),
                2 => -(1i64 << 62) + 1 + (t & 0xFFFF),
                _ => (t >> 40) + (t & 1) * (1i64 << (w - 1)),
            };
            let (d, up) = balance(t, w);
            let half = 1i128 << (w - 1);
            (-half..half).contains(&(d as i128)) && d as i128 + ((up as i128) << w) == t as i128
        }
    }

    fn prime_in(lo: u32, span: u32, pick: u32) -> Option<u32> {
        let p = lo + pick % span;
        is_prime(p as u64).then_some(p)
    }

    /// A residue with all p bits random.
    fn wide_residue(p: u32, seed: u64) -> Residue {
        SeededRng::new(seed).residue(p)
    }

    /// The largest exponent with a small plan, computed once.
    fn largest_small() -> u32 {
        static P: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        *P.get_or_init(Plan::largest_small_exponent)
    }

    /// `iters` iterations of the twin on `plan` from r at shift s, against rug.
    fn twin_matches_rug(plan: Plan, kind: TestKind, r: &Residue, s: u32, iters: u64) -> bool {
        let p = plan.exponent();
        let start = Shift::new(p, s);
        let (d, shift) = iterate_digits(&plan, kind, plan.residue_to_digits(r, start.get()), start, iters);
        let mut want = r.clone();
        for _ in 0..iters {
            let x = want.to_integer();
            let sq = Integer::from(&x * &x);
            want = Residue::from_integer(p, &if kind == TestKind::Ll { sq - 2u32 } else { sq });
        }
        plan.digits_to_residue(&d, shift.get()).unwrap() == want
    }

    quickcheck! {
        fn squaring_matches_rug(seed: Vec<u64>, pick: u32, s: u32) -> TestResult {
            // Small primes often, a few hundred thousand at most: CI stays fast.
            let Some(p) = prime_in(31, if pick.is_multiple_of(8) { 400_000 } else { 20_000 }, pick / 8) else {
                return TestResult::discard();
            };
            let Ok(plan) = Plan::new(p) else { return TestResult::discard() };
            let r = residue(p, &seed);
            TestResult::from_bool(ll_step_matches_rug(&plan, &r, s % p))
        }

        fn small_plans_match_rug(seed: u64, pick: u32, s: u32, extra: u8, iters: u8) -> TestResult {
            // Exponents of the one-block GPU kernel, every length 2^2 .. 2^SMALL_MAX_LOG2: often the smallest
            // ones, else anywhere up to the largest; the smallest length or a longer small one
            // (smaller digits, deeper fix-ups, longer segments); LL or PRP, 1 to 3 iterations.
            let span = if pick.is_multiple_of(4) { 2_000 } else { largest_small() - 12 };
            let Some(p) = prime_in(13, span, pick / 4) else { return TestResult::discard() };
            let base = Plan::new(p).unwrap();
            let log2 = (base.log2() + u32::from(extra % 3)).min(crate::transform::plan::SMALL_MAX_LOG2);
            let Ok(plan) = Plan::with_log2(p, log2) else { return TestResult::discard() };
            if !plan.is_small() {
                return TestResult::failed();
            }
            let kind = if extra & 0x80 == 0 { TestKind::Ll } else { TestKind::Prp };
            let r = wide_residue(p, seed);
            TestResult::from_bool(twin_matches_rug(plan, kind, &r, s % p, 1 + u64::from(iters % 3)))
        }

        fn multiply_matches_rug(a: Vec<u64>, b: Vec<u64>, pick: u32) -> TestResult {
            let Some(p) = prime_in(100, 60_000, pick) else { return TestResult::discard() };
            let plan = Plan::new(p).unwrap();
            let (ra, rb) = (residue(p, &a), residue(p, &b));
            let d = multiply_digits(&plan, &plan.residue_to_digits(&ra, 0), &plan.residue_to_digits(&rb, 0));
            let want = Residue::from_integer(p, &(ra.to_integer() * rb.to_integer()));
            TestResult::from_bool(plan.digits_to_residue(&d, 0).unwrap() == want)
        }

        fn carry_keeps_value_and_bounds(seed: Vec<i64>, pick: u32, s: u32) -> TestResult {
            let Some(p) = prime_in(1000, 30_000, pick) else { return TestResult::discard() };
            let plan = Plan::new(p).unwrap();
            let n = plan.n();
            let (_, w_max) = plan.widths();
            // Convolution outputs as large as the bound allows.
            let lim = (n as i64) << (2 * w_max - 2);
            let c: Vec<i64> = (0..n).map(|j| seed.get(j % seed.len().max(1)).copied().unwrap_or(0) % lim).collect();
            let inj = plan.minus_two_at(s % p);
            let d = carry(&plan, &c, Some(inj));
            let bounded = d.iter().enumerate()
                .all(|(j, &v)| v.unsigned_abs() <= (1 << (plan.width(j) - 1)) + plan.slack());
            let mut c2 = c.clone();
            c2[inj.0] += inj.1;
            TestResult::from_bool(bounded && plan.digits_to_residue(&d, 0).unwrap() == plan.digits_to_residue(&c2, 0).unwrap())
        }
    }

    /// The square of digit vector `d` (no carry) through `plan`, against rug: Σ c_j·2^start_j
    /// must be (Σ d_j·2^start_j)² mod M_p; a convolution output beyond (P − 1)/2 wraps and fails.
    fn square_matches_rug(plan: &Plan, d: &[i64]) -> bool {
        let p = plan.exponent();
        let c = inverse(plan, forward(plan, d).into_iter().map(Gl::square).collect());
        let x = plan.digits_to_residue(d, 0).unwrap().to_integer();
        plan.digits_to_residue(&c, 0).unwrap() == Residue::from_integer(p, &Integer::from(&x * &x))
    }

    #[test]
    fn worst_case_digits_at_every_bound() {
        // The largest odd exponent of each length 2^2..2^14 (the top of each band, where two wide
        // digits meet with ε = 1 on even log2), every digit at the largest magnitude the proof
        // allows: the outputs come close to (P − 1)/2 and must come back exact.
        for log2 in 2..=14 {
            let len = Length { odd: 1, log2 };
            let p = Arith::Goldilocks.largest_exponent_at(len).unwrap();
            let plan = Plan::with_log2(p, log2).unwrap();
            for mode in 0..4 {
                assert!(square_matches_rug(&plan, &extreme_digits(&plan, mode, 1)), "p={p} n={} mode={mode}", plan.n());
            }
            if log2 >= 6 {
                // c_0 of the all-equal digits is at least a quarter of the bound.
                let d = extreme_digits(&plan, 0, 1);
                let c0 = inverse(&plan, forward(&plan, &d).into_iter().map(Gl::square).collect())[0].unsigned_abs();
                assert!(c0 > (crate::transform::goldilocks::field::P - 1) / 8, "p={p} n={} c0={c0}", plan.n());
            }
        }
    }

    #[test]
    fn digits_beyond_the_bound_come_back_wrong() {
        // The rug comparison has teeth: digits 4 times larger than the proof allows overflow
        // (P − 1)/2 and the square is wrong.
        let p = Arith::Goldilocks.largest_exponent_at(Length { odd: 1, log2: 12 }).unwrap();
        let plan = Plan::with_log2(p, 12).unwrap();
        assert!(square_matches_rug(&plan, &extreme_digits(&plan, 0, 1)));
        assert!(!square_matches_rug(&plan, &extreme_digits(&plan, 0, 4)));
    }

    #[test]
    fn a_lost_segment_carry_is_caught() {
        // At a small length the carries cross segment boundaries in the fix-up: the rug
        // comparison passes with it and fails without it (it has teeth).
        let p = 23_209;
        let plan = Plan::new(p).unwrap();
        assert!(plan.is_small() && plan.n() / plan.seg_len() == 256);
        let r = wide_residue(p, 7);
        let s = 12_345;
        assert!(ll_step_matches_rug(&plan, &r, s));
        assert!(twin_matches_rug(plan.clone(), TestKind::Ll, &r, s, 3));
        let next = Shift::new(p, s).squared();
        let x = forward(&plan, &plan.residue_to_digits(&r, s)).into_iter().map(Gl::square).collect();
        let (walked, _) = carry_walk(&plan, &inverse(&plan, x), Some(plan.minus_two_at(next.get())));
        let x = r.to_integer();
        let want = Residue::from_integer(p, &(Integer::from(&x * &x) - 2u32));
        assert_ne!(plan.digits_to_residue(&walked, next.get()).unwrap(), want);
    }

    #[test]
    fn transform_round_trip() {
        let plan = Plan::new(86_243).unwrap();
        let d: Vec<i64> = (0..plan.n() as i64).map(|j| (j * 7919) % 1000 - 500).collect();
        assert_eq!(inverse(&plan, forward(&plan, &d)), d);
    }

    #[test]
    fn a_wrong_weight_is_caught() {
        // The rug comparison must fail when one weight-table entry is off: the test has teeth.
        let p = 9_941;
        let mut plan = Plan::new(p).unwrap();
        let r = residue(p, &[0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210, 42]);
        assert!(ll_step_matches_rug(&plan, &r, 17));
        plan.gl.weight_lo[1] = plan.gl.weight_lo[1].add(Gl::ONE);
        assert!(!ll_step_matches_rug(&plan, &r, 17));
    }
}
