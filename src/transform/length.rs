//! The plans of an arithmetic and the length search: a plan's layout at one length, checked by
//! the bound ([`super::bound`]) and given the arithmetic's carry segments and tables through
//! its implementation ([`super::registry`]); the largest exponent each length of an arithmetic
//! holds and the smallest length for an exponent; and the plans built from them
//! ([`Plan::with_length`], [`Plan::for_arith`], [`Plan::new`]).

use crate::transform::arith::{Arith, Length, MIN_EXPONENT};
use crate::transform::plan::{Plan, SMALL_MAX_LOG2};
use crate::transform::registry;
use crate::transform::PlanError;

impl Arith {
    /// The largest exponent with a plan of this arithmetic at any length.
    pub fn largest_exponent(self) -> u32 {
        self.lengths().into_iter().filter_map(|len| largest_exponent(self, len)).max().unwrap_or(0)
    }

    /// [`largest_exponent`] of this arithmetic at `len`, as a method: what the tests of the
    /// modules below the length search (twin.rs, m61m31/stages.rs) call.
    pub fn largest_exponent_at(self, len: Length) -> Option<u32> {
        largest_exponent(self, len)
    }
}

impl Plan {
    /// The smallest (power-of-two) Goldilocks length that satisfies the bound: [`Plan::for_arith`]
    /// of Goldilocks.
    pub fn new(p: u32) -> Result<Plan, PlanError> {
        Plan::for_arith(p, Arith::Goldilocks)
    }

    /// The smallest length of `arith` that satisfies its bound; beyond every length's bound,
    /// an error naming the largest supported exponent.
    pub fn for_arith(p: u32, arith: Arith) -> Result<Plan, PlanError> {
        Plan::with_length(p, arith, smallest_length(p, arith)?)
    }

    /// The Goldilocks plan with length n = 2^log2, if it is safe.
    pub fn with_log2(p: u32, log2: u32) -> Result<Plan, PlanError> {
        Plan::with_length(p, Arith::Goldilocks, Length { odd: 1, log2 })
    }

    /// The plan of `arith` with length `len`, if it is safe, with its tables.
    pub fn with_length(p: u32, arith: Arith, len: Length) -> Result<Plan, PlanError> {
        registry::get(arith).with_tables(Plan::layout_of(p, arith, len)?)
    }

    /// The largest exponent whose plan is small (n ≤ 2^SMALL_MAX_LOG2; lengths grow with p).
    pub fn largest_small_exponent() -> u32 {
        let exponents: Vec<u32> = (MIN_EXPONENT..32 << SMALL_MAX_LOG2).collect();
        MIN_EXPONENT + exponents.partition_point(|&p| Plan::new(p).is_ok_and(|q| q.is_small())) as u32 - 1
    }

    /// The layout and carry segments of a plan of `arith` at `len`, without tables: whether
    /// the plan exists, cheaply (for the length search).
    fn layout_of(p: u32, arith: Arith, len: Length) -> Result<Plan, PlanError> {
        let a = registry::get(arith);
        if !a.supports(len) {
            return Err(PlanError::NoPlan { p, why: format!("no {} transform of length {len}", a.name()) });
        }
        let layout = Plan::layout(p, arith, &a.bound(len), len)?;
        let seg_len = a.seg_len(&layout);
        layout.with_seg_len(seg_len)
    }
}

/// The largest odd exponent (a Mersenne prime's exponent is an odd prime) with a plan of
/// `arith` at length `len` (None: none at all). The bound and carry analysis depend on p only
/// through the widths and whether f = p mod n is 0, in 1..=n/2 (no two wide digits with ε = 1)
/// or above (module doc), so the largest odd exponent of a width band W is W·n − 1 or
/// (W − 1)·n + n/2 − 1 (n ≥ 4; for n = 2 both are W·2 − 1).
pub fn largest_exponent(arith: Arith, len: Length) -> Option<u32> {
    largest_exponent_with(arith, len, |_| true)
}

/// [`largest_exponent`] among the exponents for which `also` holds too (one with the same band
/// structure, e.g. which pair of primes an FP64 plan takes).
pub fn largest_exponent_with(arith: Arith, len: Length, also: impl Fn(u32) -> bool) -> Option<u32> {
    largest_exponent_where(len.n() as u64, |p| p >= MIN_EXPONENT && Plan::layout_of(p, arith, len).is_ok() && also(p))
}

/// The largest odd exponent p ≥ n (below 2^32) of length n for which `fits` holds, searched
/// band by band as [`largest_exponent`] explains.
pub(crate) fn largest_exponent_where(n: u64, fits: impl Fn(u32) -> bool) -> Option<u32> {
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
