//! What an arithmetic is, as the layers above the fields ask it: [`Arithmetic`] (its name, its
//! lengths and bound, its carry segments, its tables, its CPU twin) and [`TwinStages`] (the twin's
//! squaring and product on one plan). One implementation per arithmetic (`goldilocks/`,
//! `m61m31/`); [`super::registry`] maps the [`Arith`] key to it.

use crate::exponent::TestKind;
use crate::residue::Shift;
use crate::transform::arith::{Arith, Bound, Length};
use crate::transform::plan::Plan;
use crate::transform::PlanError;

/// One arithmetic: everything the plan, the length search and the twin decide per arithmetic.
pub trait Arithmetic: Sync {
    /// Its key.
    fn id(&self) -> Arith;
    /// The name in `--arith`, result lines and certificates.
    fn name(&self) -> &'static str;
    /// The lengths it plans, shortest first.
    fn lengths(&self) -> Vec<Length>;
    /// Whether `len` is one of [`Arithmetic::lengths`].
    fn supports(&self, len: Length) -> bool {
        self.lengths().contains(&len)
    }
    /// What bounds its convolution outputs and its digits' widths at `len` ([`super::bound`]).
    fn bound(&self, len: Length) -> Bound;
    /// Digits per carry segment of `layout` (a plan of this arithmetic whose widths, fix-up
    /// depth and line length are set; the plan refuses it if the fix-up does not fit).
    fn seg_len(&self, layout: &Plan) -> usize;
    /// `layout` with the tables the plan carries for this arithmetic (none: as it is).
    fn with_tables(&self, layout: Plan) -> Result<Plan, PlanError>;
    /// The CPU twin's stages on `plan` (a plan of this arithmetic), its tables built once.
    fn twin(&self, plan: &Plan) -> Result<Box<dyn TwinStages>, PlanError>;
}

/// The CPU twin's squaring and product of one arithmetic on one plan: what the GPU computes,
/// digit for digit.
pub trait TwinStages: Send {
    /// The transform and its length, for descriptions ("NTT n=1024").
    fn transform_name(&self, plan: &Plan) -> String;
    /// `count` iterations of `kind` on digits that stand for x·2^shift: the digits and shift
    /// after them.
    fn iterate(&self, plan: &Plan, kind: TestKind, digits: Vec<i64>, shift: Shift, count: u64) -> (Vec<i64>, Shift);
    /// The product of two digit vectors modulo M_p.
    fn multiply(&self, plan: &Plan, a: &[i64], b: &[i64]) -> Vec<i64>;
}
