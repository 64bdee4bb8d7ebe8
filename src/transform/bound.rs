//! Which layouts are safe: the no-overflow bound of a digit layout, the same proof for both
//! arithmetics, and the carry parameters it gives (plan.rs's module doc, "The carry scheme",
//! explains the walk and the fix-up they bound); from them the largest exponent per length and
//! the smallest length for an exponent.
//!
//! Digits are balanced: after a carry pass every digit satisfies |d| ≤ 2^(w−1) + slack, where w is
//! the digit's width. A squaring's cyclic convolution output is
//! c_m = Σ_{j+l ≡ m} d_j·d_l·2^ε(j,l) where, with u_j = e_j/n = ⌈pj/n⌉ − pj/n ∈ [0, 1)
//! (e_j = `Plan::weight_exp`), ε = u_j + u_l − u_m ∈ {0, 1} (the weights give
//! a_j·a_l/a_m = 2^ε: the digit products' bits that fall one above digit m's start; e.g.
//! c_0 = d_0² + 2·Σ_{j>0} d_j·d_{n−j}). Digit j is wide (w_max bits) iff e_j < f = p mod n. So
//! each term is at most the largest of m_w² (ε = 0), 2·m_w·m_n and 2·m_n² (ε = 1 with a narrow
//! digit), and 2·m_w² only if two wide digits can have ε = 1: e_j + e_l ≥ n with e_j, e_l ≤ f − 1,
//! i.e. 2(f − 1) ≥ n; m_w = 2^(w_max−1) + slack, m_n = 2^(w_min−1) + slack; with f = 0 all
//! digits are alike and ε = 0. So |c_m| ≤ n·T, T the largest admissible term
//! ([`largest_term`]), and the plan is accepted only if n·T ≤ L: for Goldilocks L = (P−1)/2, so
//! the field element (centered in (−P/2, P/2]) *is* the integer c_m; for M61·M31
//! L = (M61·M31 − 1)/2, so the Garner recombination ([`super::crt`]) of c mod M61 and c mod M31,
//! centered, *is* c_m. A product of two carried digit vectors (acc_mul) obeys the same bound.
//! (Until 2026-11-26 the Goldilocks bound took every term as m_w², which the 2·m_w² case exceeds
//! by up to 2× where 2(f − 1) ≥ n: the top of every even-log2 band, e.g. 2^22 from 85,983,232 to
//! 88,080,383, was not covered; those exponents now take the next length. docs/arithmetic.md
//! has the table.)
//!

use crate::transform::plan::{Arith, Length, Plan, MIN_EXPONENT};
use crate::transform::PlanError;

/// What the carry analysis of a candidate layout gives, when it is safe.
pub(super) struct CarryBounds {
    pub(super) fixup_depth: usize,
    pub(super) slack: u64,
}

/// The largest term |d_j·d_l·2^ε| of a convolution output (module doc), by the digits' widths
/// and ε; the same for both arithmetics.
fn largest_term(p: u32, n: usize, (w_min, w_max): (u32, u32), slack: u64) -> u128 {
    let (m_w, m_n) = ((1u128 << (w_max - 1)) + slack as u128, (1u128 << (w_min - 1)) + slack as u128);
    let f = p as usize % n;
    if f == 0 {
        return m_w * m_w;
    }
    // Saturating: widths up to 62 bits would overflow u128, and saturated terms fail the bound.
    let prod = |a: u128, b: u128, e: u32| a.saturating_mul(b).saturating_mul(1 << e);
    let wide_pair = prod(m_w, m_w, u32::from(2 * (f - 1) >= n));
    wide_pair.max(prod(m_w, m_n, 1)).max(prod(m_n, m_n, 1))
}

/// Check the bound for widths in [w_min, w_max] at length n and derive the carry parameters.
pub(super) fn carry_bounds(arith: Arith, p: u32, n: usize, w_min: u32, w_max: u32) -> Result<CarryBounds, String> {
    match arith {
        // At most 31 bits: the GPU takes a balanced digit from the low word (kernels/carry.cu).
        Arith::Goldilocks => {
            carry_bounds_within((crate::transform::goldilocks::P - 1) as u128 / 2, "(P-1)/2", 31, p, n, (w_min, w_max))
        }
        // Digits are i64 (balanced by i64 shifts up to 62 bits); the bound keeps them below 47.
        Arith::M61M31 => carry_bounds_within(crate::transform::crt::MAX_ABS, "(M61·M31-1)/2", 62, p, n, (w_min, w_max)),
    }
}

/// The bound with the limit `limit` (named `limit_name` in the refusal) on the recovered |c_m|
/// and digits of at most `max_bits` bits, and the carry parameters it gives: the same proof for
/// every arithmetic (module doc).
pub(super) fn carry_bounds_within(
    limit: u128,
    limit_name: &str,
    max_bits: u32,
    p: u32,
    n: usize,
    (w_min, w_max): (u32, u32),
) -> Result<CarryBounds, String> {
    if w_max > max_bits || w_min == 0 {
        return Err(format!("n={n}: digits of {w_min}..{w_max} bits cannot fit"));
    }
    for slack in 1u64..=2 {
        let c_max = (n as u128).saturating_mul(largest_term(p, n, (w_min, w_max), slack));
        if c_max > limit {
            return Err(format!(
                "n={n}: the convolution bound {c_max} exceeds {limit_name} with widths up to {w_max} bits"
            ));
        }
        let mut b_walk = 0u128;
        for _ in 0..64 {
            b_walk = (c_max >> w_min) + 3 + (b_walk >> w_min);
        }
        let (mut b, mut depth) = (b_walk, 0usize);
        loop {
            let next = 1 + (b >> w_min);
            if next >= b {
                break;
            }
            b = next;
            depth += 1;
        }
        if b > slack as u128 {
            continue; // assumed too little slack: redo the bound with more
        }
        return Ok(CarryBounds { fixup_depth: depth, slack });
    }
    Err(format!("p={p}, n={n}: digits of {w_min} bits leave the carry slack unbounded"))
}

/// The largest odd exponent (a Mersenne prime's exponent is an odd prime) with a plan of
/// `arith` at length `len` (None: none at all). The bound and carry analysis depend on p only
/// through the widths and whether f = p mod n is 0, in 1..=n/2 (no two wide digits with ε = 1)
/// or above (module doc), so the largest odd exponent of a width band W is W·n − 1 or
/// (W − 1)·n + n/2 − 1 (n ≥ 4; for n = 2 both are W·2 − 1).
pub fn largest_exponent(arith: Arith, len: Length) -> Option<u32> {
    largest_exponent_where(len.n() as u64, |p| p >= MIN_EXPONENT && Plan::layout_of(p, arith, len).is_ok())
}

/// The largest odd exponent p ≥ n (below 2^32) of length n for which `fits` holds, searched
/// band by band as [`largest_exponent`] explains.
pub(super) fn largest_exponent_where(n: u64, fits: impl Fn(u32) -> bool) -> Option<u32> {
    (1..=62u64)
        .rev()
        .find_map(|w| {
            let candidates = [w * n - 1, ((w - 1) * n + n / 2).saturating_sub(1) | 1];
            candidates.into_iter().filter(|&p| p <= u32::MAX as u64 && p >= n).find(|&p| fits(p as u32))
        })
        .map(|p| p as u32)
}

/// The smallest length of `arith` whose plan for p satisfies the bound (no tables built);
/// beyond every length's bound, an error naming the largest exponent `arith` supports.
pub fn smallest_length(p: u32, arith: Arith) -> Result<Length, PlanError> {
    if p < MIN_EXPONENT {
        return Err(PlanError::NoPlan {
            p,
            why: format!("exponents below {MIN_EXPONENT} are too small for the carry scheme"),
        });
    }
    let mut last = String::from("no length tried");
    for len in arith.lengths() {
        match Plan::layout_of(p, arith, len) {
            Ok(_) => return Ok(len),
            Err(PlanError::NoPlan { why, .. }) => last = why,
            Err(e) => return Err(e),
        }
    }
    let top = arith.largest_exponent();
    Err(PlanError::NoPlan { p, why: format!("the largest exponent {} supports is {top} ({last})", arith.name()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest odd exponent per M61·M31 length (docs/arithmetic.md has the same table).
    const M61M31_TABLE: [(u32, u32, u32); 30] = [
        (1, 10, 41_471),
        (3, 10, 122_879),
        (1, 11, 81_919),
        (3, 11, 242_687),
        (1, 12, 161_791),
        (3, 12, 479_231),
        (1, 13, 319_487),
        (3, 13, 946_175),
        (1, 14, 630_783),
        (3, 14, 1_867_775),
        (1, 15, 1_245_183),
        (3, 15, 3_686_399),
        (1, 16, 2_457_599),
        (3, 16, 7_274_495),
        (1, 17, 4_849_663),
        (3, 17, 14_352_383),
        (1, 18, 9_568_255),
        (3, 18, 28_311_551),
        (1, 19, 18_874_367),
        (3, 19, 55_836_671),
        (1, 20, 37_224_447),
        (3, 20, 110_100_479),
        (1, 21, 73_400_319),
        (3, 21, 217_055_231),
        (1, 22, 144_703_487),
        (3, 22, 427_819_007),
        (1, 23, 285_212_671),
        (3, 23, 843_055_103),
        (1, 24, 562_036_735),
        (3, 24, 1_660_944_383),
    ];

    #[test]
    fn m61m31_largest_exponents() {
        for (odd, log2, top) in M61M31_TABLE {
            let len = Length { odd, log2 };
            assert_eq!(largest_exponent(Arith::M61M31, len), Some(top), "{len}");
            let plan = Plan::with_length(top, Arith::M61M31, len).unwrap();
            println!(
                "| {len} | {top} | {} | {} | {} | {} |",
                plan.widths().1,
                plan.fixup_depth(),
                plan.slack(),
                plan.seg_len()
            );
            // The next odd exponent does not fit; the bound is what refuses it.
            let Err(PlanError::NoPlan { why, .. }) = Plan::with_length(top + 2, Arith::M61M31, len) else {
                panic!("{len}: {} accepted", top + 2)
            };
            assert!(why.contains("exceeds (M61·M31-1)/2"), "{why}");
        }
        let top = Arith::M61M31.largest_exponent();
        assert_eq!(top, 2_181_038_079);
        assert!(Plan::for_arith(top, Arith::M61M31).is_ok());
        let err = Plan::for_arith(top + 2, Arith::M61M31).unwrap_err().to_string();
        assert!(err.contains(&format!("the largest exponent m61m31 supports is {top}")), "{err}");
    }

    /// The largest odd exponent per Goldilocks length, the 2^ε factor included (module doc; the
    /// same table is in docs/arithmetic.md). Before that factor was counted the even-log2 bands
    /// reached higher, e.g. 2^22 to 88,080,383.
    const GOLDILOCKS_TABLE: [(u32, u32); 25] = [
        (2, 121),
        (3, 239),
        (4, 471),
        (5, 927),
        (6, 1_823),
        (7, 3_583),
        (8, 7_039),
        (9, 13_823),
        (10, 27_135),
        (11, 53_247),
        (12, 104_447),
        (13, 204_799),
        (14, 401_407),
        (15, 786_431),
        (16, 1_540_095),
        (17, 3_014_655),
        (18, 5_898_239),
        (19, 11_534_335),
        (20, 22_544_383),
        (21, 44_040_191),
        (22, 85_983_231),
        (23, 167_772_159),
        (24, 327_155_711),
        (25, 637_534_207),
        (26, 1_241_513_983),
    ];

    #[test]
    fn goldilocks_largest_exponents() {
        // 2^1 holds no exponent: the carry fix-up needs more digits than its segment has.
        assert_eq!(largest_exponent(Arith::Goldilocks, Length { odd: 1, log2: 1 }), None);
        for (log2, top) in GOLDILOCKS_TABLE {
            let len = Length { odd: 1, log2 };
            assert_eq!(largest_exponent(Arith::Goldilocks, len), Some(top), "{len}");
            assert_eq!(Plan::with_log2(top, log2).unwrap().log2(), log2);
            // The next odd exponent does not fit; the bound is what refuses it.
            let Err(PlanError::NoPlan { why, .. }) = Plan::with_log2(top + 2, log2) else {
                panic!("{len}: {} accepted", top + 2)
            };
            assert!(why.contains("exceeds (P-1)/2"), "{why}");
        }
        // At the top of an even band two wide digits can meet with ε = 1: 2·m_w² is the term.
        let plan = Plan::new(85_983_231).unwrap();
        assert_eq!(plan.log2(), 22);
        assert_eq!(Plan::new(85_983_233).unwrap().log2(), 23);
        assert_eq!(Plan::new(88_080_383).unwrap().log2(), 23);
        // What the bound without 2^ε accepted: 2^22 up to 88,080,383.
        assert!(Plan::with_log2(88_080_383, 22).is_err());
        let top = Arith::Goldilocks.largest_exponent();
        assert_eq!(top, 1_241_513_983);
        let err = Plan::new(top + 2).unwrap_err().to_string();
        assert!(err.contains(&format!("the largest exponent goldilocks supports is {top}")), "{err}");
    }
}
