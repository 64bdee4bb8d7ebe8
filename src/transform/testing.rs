//! What the twins' tests share (every arithmetic's stages are checked the same way): random and
//! worst-case balanced digits of a plan, the convolution by its definition, a product of digits
//! against rug, and LL iterations of an arithmetic's twin against rug.

use crate::exponent::is_prime;
use crate::residue::{Residue, Shift};
use crate::rng::SeededRng;
use crate::transform::arith::Arith;
use crate::transform::plan::Plan;
use quickcheck::TestResult;
use rug::Integer;

/// Balanced random digits of the plan's widths.
pub fn random_digits(plan: &Plan, seed: u64) -> Vec<i64> {
    let mut rng = SeededRng::new(seed);
    (0..plan.n())
        .map(|j| {
            let w = plan.width(j);
            (rng.next_u64() & ((1 << w) - 1)) as i64 - (1 << (w - 1))
        })
        .collect()
}

/// Digits at `scale` times the largest magnitude the proof allows (2^(w−1) + slack): `mode` 0 all
/// negative, 1 all positive, 2 alternating, 3 in runs of three. At scale 1 the convolution
/// outputs come close to the bound (c_0 ≈ Σ 2^ε·m²).
pub fn extreme_digits(plan: &Plan, mode: u32, scale: i64) -> Vec<i64> {
    let top = |j: usize| scale * ((1i64 << (plan.width(j) - 1)) + plan.slack() as i64);
    (0..plan.n())
        .map(|j| match mode {
            0 => -top(j),
            1 => top(j),
            2 if j % 2 == 0 => top(j),
            2 => -top(j),
            _ if (j / 3) % 2 == 0 => -top(j),
            _ => top(j),
        })
        .collect()
}

/// Whether `got` (digits) is a·b (b = None: a²) modulo M_p, by rug.
pub fn matches_rug(plan: &Plan, a: &[i64], b: Option<&[i64]>, got: &[i64]) -> bool {
    let ra = plan.digits_to_residue(a, 0).unwrap().to_integer();
    let rb = b.map_or_else(|| ra.clone(), |b| plan.digits_to_residue(b, 0).unwrap().to_integer());
    plan.digits_to_residue(got, 0).unwrap() == Residue::from_integer(plan.exponent(), &(ra * rb))
}

/// c_m = Σ_{j+l ≡ m} d_j·d_l·2^ε(j,l), ε = (e_j + e_l − e_m)/n: the definition, in i128.
pub fn direct_convolution(plan: &Plan, a: &[i64], b: &[i64]) -> Vec<i128> {
    let n = plan.n();
    (0..n)
        .map(|m| {
            (0..n)
                .map(|j| {
                    let l = (m + n - j) % n;
                    let eps = (plan.weight_exp(j) + plan.weight_exp(l) - plan.weight_exp(m)) / n;
                    (i128::from(a[j]) * i128::from(b[l])) << eps
                })
                .sum()
        })
        .collect()
}

/// `count` LL iterations of digits standing for x·2^shift on a plan: an arithmetic's twin.
pub type LlIterate<'a> = &'a dyn Fn(&Plan, Vec<i64>, Shift, u64) -> (Vec<i64>, Shift);

/// 1 to 3 LL iterations (from `iters`) of a random residue at a random shift through `iterate`
/// (`arith`'s twin), for the prime exponent 13 + pick mod `span` (others are discarded), against
/// rug.
pub fn ll_iterations_match_rug(
    arith: Arith,
    iterate: LlIterate,
    span: u32,
    (seed, pick, s, iters): (u64, u32, u32, u8),
) -> TestResult {
    let p = 13 + pick % span;
    if !is_prime(u64::from(p)) {
        return TestResult::discard();
    }
    let plan = Plan::for_arith(p, arith).unwrap();
    let r = SeededRng::new(seed).residue(p);
    let start = Shift::new(p, s % p);
    let count = 1 + u64::from(iters % 3);
    let (d, shift) = iterate(&plan, plan.residue_to_digits(&r, start.get()), start, count);
    let mut want = r.to_integer();
    for _ in 0..count {
        want = Residue::from_integer(p, &(Integer::from(&want * &want) - 2u32)).to_integer();
    }
    TestResult::from_bool(plan.digits_to_residue(&d, shift.get()).unwrap().to_integer() == want)
}
