//! The Goldilocks GPU pass schedule: the shapes of the global column passes ([`ColumnPass`]:
//! stages, stride, adjacent columns per block) and the line length the tuner sets
//! ([`PassSchedule::with_line_stages`]). The plan's carry segments are the outermost pass's runs
//! of adjacent columns; the host computes them with the same formula
//! (transform/goldilocks/segments.rs, `columns_log2`), and [`PassSchedule::column_passes`]
//! asserts (in debug builds, and in the tests here) that they agree.

use crate::transform::goldilocks::segments::columns_log2;
use crate::transform::plan::Plan;
use crate::transform::registry;
use crate::transform::PlanError;

/// One column pass: `stages` radix-2 stages down to half-size 2^s_log, over lines of values
/// base + c + k·2^s_log; a GPU block takes 2^c_log adjacent columns. In the outermost pass the
/// 2^c_log columns of one k are 2^c_log consecutive digits: that run is a carry segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnPass {
    pub stages: u32,
    pub s_log: u32,
    pub c_log: u32,
}

/// The GPU's pass schedule of a plan.
pub trait PassSchedule: Sized {
    /// The shapes of the global passes, outermost first. Blocks take enough adjacent columns
    /// for about 2^SHARED_BLOCKS_LOG2 blocks, within COLUMNS_LOG2, and in the outermost pass at
    /// least fixup_depth + 1 (a carry segment must hold its fix-up).
    fn column_passes(&self) -> Vec<ColumnPass>;
    /// The same plan with at most `k` stages per line of a GPU pass (5 ≤ k ≤ 10), its carry
    /// segments redone for them, for tuning.
    fn with_line_stages(self, k: u32) -> Result<Plan, PlanError>;
}

impl PassSchedule for Plan {
    fn column_passes(&self) -> Vec<ColumnPass> {
        let log2 = self.log2();
        let mut top = log2; // log2 of the block-row the next pass splits
        let passes: Vec<ColumnPass> = self
            .global_passes()
            .into_iter()
            .enumerate()
            .map(|(i, stages)| {
                top -= stages;
                ColumnPass { stages, s_log: top, c_log: columns_log2(log2, stages, top, self.fixup_depth(), i == 0) }
            })
            .collect();
        debug_assert!(
            passes.first().is_none_or(|c| self.seg_len() == 1 << c.c_log),
            "p={}: carry segments of {} digits are not the outer pass's runs {passes:?}",
            self.exponent(),
            self.seg_len()
        );
        passes
    }

    fn with_line_stages(self, k: u32) -> Result<Plan, PlanError> {
        let plan = self.lined(k)?;
        let seg_len = registry::get(plan.arith()).seg_len(&plan);
        plan.with_seg_len(seg_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::plan::SMALL_MAX_LOG2;
    use quickcheck::{quickcheck, TestResult};

    #[test]
    fn segments_are_the_runs_of_the_outer_pass() {
        let plan = Plan::new(1_257_787).unwrap().with_line_stages(6).unwrap();
        let passes = plan.column_passes();
        assert_eq!(passes[0], ColumnPass { stages: 5, s_log: 11, c_log: 4 });
        assert_eq!(passes[1], ColumnPass { stages: 5, s_log: 6, c_log: 4 });
        assert_eq!(plan.seg_len(), 16);
        assert_eq!(Plan::new(82_589_933).unwrap().seg_len(), 32);
        // Small lengths: no column pass, segments of at least 4 digits, at most 1024 of them.
        let (tiny, p10) = (Plan::new(127).unwrap(), Plan::new(23_209).unwrap());
        assert!(tiny.is_small() && tiny.column_passes().is_empty() && tiny.global_passes().is_empty());
        assert_eq!((tiny.n(), tiny.seg_len(), p10.log2(), p10.seg_len(), p10.shared_log2()), (8, 4, 10, 4, 10));
        let top = Plan::largest_small_exponent();
        let (last, next) = (Plan::new(top).unwrap(), Plan::new(top + 1).unwrap());
        assert!(
            last.is_small() && last.log2() == SMALL_MAX_LOG2 && !next.is_small() && next.log2() == SMALL_MAX_LOG2 + 1
        );
        assert!(SMALL_MAX_LOG2 != 13 || (top, last.seg_len()) == (204_800, 8), "{top} {}", last.seg_len());
        // Tiny digits need a deep fix-up: the segments grow to hold it.
        let deep = Plan::with_log2(521, 9).unwrap();
        assert!(deep.fixup_depth() >= 8 && deep.seg_len() == 16, "F={} K={}", deep.fixup_depth(), deep.seg_len());
    }

    quickcheck! {
        fn segments_hold_their_fixup(p: u32, extra: u8, stages: u8) -> TestResult {
            let p = 13 + p % 3_000_000;
            if !crate::exponent::is_prime(p as u64) { return TestResult::discard(); }
            let Ok(plan) = Plan::new(p) else { return TestResult::discard() };
            // Longer lengths than the smallest (smaller digits, deeper fix-ups) and other line lengths.
            let longer = Plan::with_log2(p, plan.log2() + u32::from(extra % 4)).ok();
            let tuned = longer.and_then(|q| q.with_line_stages(5 + u32::from(stages % 6)).ok());
            let ok = |q: &Plan| {
                let passes = q.column_passes();
                let stages: u32 = passes.iter().map(|c| c.stages).sum();
                let small_segments = || {
                    let k = q.seg_len();
                    q.is_small() && k.is_power_of_two() && k >= 4.min(q.n()) && q.n() / k <= 1024
                        && (k == 4 || k == q.n() >> 10 || k / 2 <= q.fixup_depth())
                };
                q.fixup_depth() < q.seg_len()
                    && stages + q.shared_log2() == q.log2()
                    && q.is_small() == passes.is_empty()
                    && passes.first().map_or_else(small_segments, |c| q.seg_len() == 1 << c.c_log && c.s_log + c.stages == q.log2())
                    && passes.iter().all(|c| c.c_log <= c.s_log)
            };
            TestResult::from_bool(ok(&plan) && tuned.as_ref().is_none_or(ok))
        }
    }
}
