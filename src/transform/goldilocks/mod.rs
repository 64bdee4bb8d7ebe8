//! The Goldilocks arithmetic, GF(2^64 − 2^32 + 1): the field ([`field`]), the IBDWT's weights and
//! twiddles ([`tables`]), the carry segments ([`segments`]), the plan and tables of the four-step
//! kernels ([`four_step`]), and [`Goldilocks`], its
//! [`Arithmetic`]: lengths 2^1..2^26, convolution outputs below (P − 1)/2, digits of at most 31
//! bits, the CPU twin's stages of src/transform/twin.rs.

pub mod field;
pub mod four_step;
pub mod segments;
pub mod tables;

pub use field::{Gl, P};

use crate::exponent::TestKind;
use crate::residue::Shift;
use crate::transform::arith::{Arith, Bound, Length, MAX_LOG2};
use crate::transform::arithmetic::{Arithmetic, TwinStages};
use crate::transform::plan::Plan;
use crate::transform::{twin, PlanError};
use tables::GlTables;

/// GF(2^64 − 2^32 + 1): IBDWT lengths 2^k; its twin's tables are the plan's own.
pub struct Goldilocks;

impl Arithmetic for Goldilocks {
    fn id(&self) -> Arith {
        Arith::Goldilocks
    }
    fn name(&self) -> &'static str {
        "goldilocks"
    }
    fn lengths(&self) -> Vec<Length> {
        (1..=MAX_LOG2).map(|log2| Length { odd: 1, log2 }).collect()
    }
    fn supports(&self, len: Length) -> bool {
        len.odd == 1 && (1..=MAX_LOG2).contains(&len.log2)
    }
    fn bound(&self, _len: Length) -> Bound {
        // At most 31 bits: the GPU takes a balanced digit from the low word (kernels/goldilocks/carry.cuh).
        Bound { limit: ((P - 1) / 2) as u128, max_bits: 31, limit_name: "(P-1)/2" }
    }
    fn seg_len(&self, layout: &Plan) -> usize {
        segments::seg_len(layout.log2(), layout.fixup_depth(), layout.line_stages(), layout.is_small())
    }
    fn with_tables(&self, layout: Plan) -> Result<Plan, PlanError> {
        let p = layout.exponent();
        let tables = GlTables::new(layout.log2()).map_err(|why| PlanError::NoPlan { p, why: why.to_string() })?;
        Ok(layout.with_goldilocks_tables(tables))
    }
    fn twin(&self, _plan: &Plan) -> Result<Box<dyn TwinStages>, PlanError> {
        Ok(Box::new(GoldilocksTwin))
    }
}

/// The twin's stages (src/transform/twin.rs) on the plan's own tables.
struct GoldilocksTwin;

impl TwinStages for GoldilocksTwin {
    fn transform_name(&self, plan: &Plan) -> String {
        format!("NTT n={}", plan.n())
    }
    fn iterate(&self, plan: &Plan, kind: TestKind, digits: Vec<i64>, shift: Shift, count: u64) -> (Vec<i64>, Shift) {
        twin::iterate_digits(plan, kind, digits, shift, count)
    }
    fn multiply(&self, plan: &Plan, a: &[i64], b: &[i64]) -> Vec<i64> {
        twin::multiply_digits(plan, a, b)
    }
}
