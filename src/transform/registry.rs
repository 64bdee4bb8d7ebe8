//! The arithmetics as types on the host, and the one registry. [`Arithmetic`] is what the
//! layers above ask of an arithmetic beyond the facts its key carries ([`Arith`]: name,
//! lengths, bound, in `arith`): today the CPU twin's stages for a plan ([`TwinStages`]); [`get`]
//! maps the key to it. Adding an arithmetic is its modules (fields, stages; gpu/ and kernels/
//! likewise) and one line in [`get`].

use crate::exponent::TestKind;
use crate::residue::Shift;
use crate::transform::m61m31::M61M31Tables;
use crate::transform::plan::{Arith, Plan};
use crate::transform::{twin, PlanError};

/// One arithmetic, as the layers above the transform use it.
pub trait Arithmetic: Sync {
    /// Its key.
    fn id(&self) -> Arith;
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

/// The implementation of arithmetic `id`.
pub fn get(id: Arith) -> &'static dyn Arithmetic {
    match id {
        Arith::Goldilocks => &Goldilocks,
        Arith::M61M31 => &M61M31,
    }
}

/// GF(2^64 − 2^32 + 1): its twin's tables are the plan's own.
struct Goldilocks;

impl Arithmetic for Goldilocks {
    fn id(&self) -> Arith {
        Arith::Goldilocks
    }
    fn twin(&self, _plan: &Plan) -> Result<Box<dyn TwinStages>, PlanError> {
        Ok(Box::new(GoldilocksTwin))
    }
}

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

/// GF(M61²) × GF(M31²): its twin's tables are both fields' ([`M61M31Tables`]).
struct M61M31;

impl Arithmetic for M61M31 {
    fn id(&self) -> Arith {
        Arith::M61M31
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
        crate::transform::m61m31::iterate_digits(plan, self, kind, digits, shift, count)
    }
    fn multiply(&self, plan: &Plan, a: &[i64], b: &[i64]) -> Vec<i64> {
        crate::transform::m61m31::multiply_digits(plan, self, a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_maps_to_its_own_arithmetic_and_twin() {
        for id in Arith::ALL {
            assert_eq!(get(id).id(), id);
        }
        // Each twin is its arithmetic's own stage functions, on its own tables.
        let (p, kind) = (9_689, TestKind::Ll);
        let gl = Plan::for_arith(p, Arith::Goldilocks).unwrap();
        let mm = Plan::for_arith(p, Arith::M61M31).unwrap();
        let (d, shift) = (gl.residue_to_digits(&crate::residue::Residue::from_u64(p, 4), 5), Shift::new(p, 5));
        let twin = get(Arith::Goldilocks).twin(&gl).unwrap();
        assert_eq!(twin.iterate(&gl, kind, d.clone(), shift, 3), twin::iterate_digits(&gl, kind, d, shift, 3));
        assert_eq!(twin.transform_name(&gl), format!("NTT n={}", gl.n()));
        let d = mm.residue_to_digits(&crate::residue::Residue::from_u64(p, 4), 5);
        let (twin, tables) = (get(Arith::M61M31).twin(&mm).unwrap(), M61M31Tables::new(&mm).unwrap());
        let want = crate::transform::m61m31::iterate_digits(&mm, &tables, kind, d.clone(), shift, 3);
        assert_eq!(twin.iterate(&mm, kind, d, shift, 3), want);
        assert_eq!(twin.transform_name(&mm), format!("m61m31 n={}", mm.length()));
    }
}
