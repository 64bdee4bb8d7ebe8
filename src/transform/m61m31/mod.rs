//! The M61·M31 arithmetic, GF(M61²) × GF(M31²) with the product recovered by CRT: the fields
//! ([`m61`], [`m31`], their shared [`mersenne`] trait, the extension [`gfp2`]), the
//! recombination ([`crt`]), the twin's tables and stages ([`stages`]), and [`M61M31`], its
//! [`Arithmetic`]: lengths 2^k and 3·2^k, convolution outputs below (M61·M31 − 1)/2, digits
//! (i64) of at most 62 bits, carry segments of one GPU thread each.

pub mod crt;
pub mod gfp2;
pub mod m31;
pub mod m61;
pub mod mersenne;
pub mod stages;

use crate::exponent::TestKind;
use crate::residue::Shift;
use crate::transform::arith::{Arith, Bound, Length, MAX_LOG2};
use crate::transform::arithmetic::{Arithmetic, TwinStages};
use crate::transform::plan::Plan;
use crate::transform::twin::Convolution;
use crate::transform::PlanError;
use stages::M61M31Tables;

/// An M61·M31 plan's carry segments hold at least 2^SEG_MIN_LOG2 digits.
const SEG_MIN_LOG2: u32 = 4;

/// GF(M61²) × GF(M31²): its twin's tables are both fields' ([`M61M31Tables`]).
pub struct M61M31;

impl Arithmetic for M61M31 {
    fn id(&self) -> Arith {
        Arith::M61M31
    }
    fn name(&self) -> &'static str {
        "m61m31"
    }
    fn lengths(&self) -> Vec<Length> {
        let mut v: Vec<Length> = (1..=MAX_LOG2).map(|log2| Length { odd: 1, log2 }).collect();
        v.extend((1..MAX_LOG2 - 1).map(|log2| Length { odd: 3, log2 }));
        v.sort_by_key(|l| l.n());
        v
    }
    fn supports(&self, len: Length) -> bool {
        matches!(len.odd, 1 | 3) && len.log2 >= 1 && len.n() <= 1 << MAX_LOG2
    }
    fn bound(&self, _len: Length) -> Bound {
        // Digits are i64 (balanced by i64 shifts up to 62 bits); the bound keeps them below 47.
        Bound { limit: crt::MAX_ABS, max_bits: 62, limit_name: "(M61·M31-1)/2" }
    }
    /// The smallest power of two above the fix-up depth, at least 2^SEG_MIN_LOG2 (the GPU walks
    /// each segment in one thread, kernels/m61m31/pipeline.cuh), or one segment where that does
    /// not divide n.
    fn seg_len(&self, layout: &Plan) -> usize {
        let k = (layout.fixup_depth() + 1).next_power_of_two().max(1 << SEG_MIN_LOG2);
        if layout.n().is_multiple_of(k) {
            k
        } else {
            layout.n()
        }
    }
    fn with_tables(&self, layout: Plan) -> Result<Plan, PlanError> {
        Ok(layout)
    }
    fn twin(&self, plan: &Plan) -> Result<Box<dyn TwinStages>, PlanError> {
        Ok(Box::new(M61M31Tables::new(plan)?))
    }
}

impl TwinStages for M61M31Tables {
    fn transform_name(&self, plan: &Plan) -> String {
        format!("m61m31 n={}", plan.length())
    }
    fn iterate(&self, plan: &Plan, kind: TestKind, digits: Vec<i64>, shift: Shift, count: u64) -> (Vec<i64>, Shift) {
        self.iterate_digits(plan, kind, digits, shift, count)
    }
    fn multiply(&self, plan: &Plan, a: &[i64], b: &[i64]) -> Vec<i64> {
        self.multiply_digits(plan, a, b)
    }
}
