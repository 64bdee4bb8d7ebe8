//! The FP64 arithmetic (issue 37): an exact NTT over a pair of primes below 2^51 computed with f64
//! operations (on a GPU, on its FP64 units), the product recovered by CRT. [`field`]: GF(p) with
//! residues as signed doubles and the six-operation product; [`primes`]: the three pairs and their
//! roots; [`crt`]: the recombination; [`ntt`]: a radix-2 transform with lazy reduction and its
//! schedule; [`stages`]: the twin's four-step squaring that the GPU mirrors; [`shape`]: its split
//! n = R·C and the shape the kernels are compiled for; [`bound`]: the
//! proven bound, the pair a plan takes and the largest exponent per length; and [`Fp64Arith`],
//! its [`Arithmetic`]: lengths 2^1..2^22, convolution outputs below (P1·P2 − 1)/2 of the narrow
//! pair, (Q1·Q2 − 1)/2 of the wide one (to 2^21) or (Q3·Q4 − 1)/2 of the wider one (to 2^22),
//! carry segments of 8 digits.

pub mod bound;
pub mod crt;
pub mod field;
pub mod ntt;
pub mod primes;
pub mod shape;
pub mod stages;

use crate::exponent::TestKind;
use crate::residue::Shift;
use crate::transform::arith::{Arith, Bound, Length};
use crate::transform::arithmetic::{Arithmetic, TwinStages};
use crate::transform::plan::Plan;
use crate::transform::twin::Convolution;
use crate::transform::PlanError;
use shape::SEG_LEN;
use stages::Fp64Tables;

/// The FP64 arithmetic: its twin's tables are both primes' ([`Fp64Tables`]).
pub struct Fp64Arith;

impl Arithmetic for Fp64Arith {
    fn id(&self) -> Arith {
        Arith::Fp64
    }
    fn name(&self) -> &'static str {
        "fp64"
    }
    fn lengths(&self) -> Vec<Length> {
        bound::lengths()
    }
    /// The loosest pair's at `len` (a plan takes the first pair whose bound holds: [`bound`]).
    fn bound(&self, len: Length) -> Bound {
        bound::loosest(len)
    }
    /// SEG_LEN digits (a GPU thread walks one segment of a row's tile), or n where shorter.
    fn seg_len(&self, layout: &Plan) -> usize {
        SEG_LEN.min(layout.n())
    }
    fn with_tables(&self, layout: Plan) -> Result<Plan, PlanError> {
        Ok(layout)
    }
    fn twin(&self, plan: &Plan) -> Result<Box<dyn TwinStages>, PlanError> {
        Ok(Box::new(Fp64Tables::new(plan)?))
    }
}

impl TwinStages for Fp64Tables {
    fn transform_name(&self, plan: &Plan) -> String {
        format!("fp64 n={}", plan.length())
    }
    fn iterate(&self, plan: &Plan, kind: TestKind, digits: Vec<i64>, shift: Shift, count: u64) -> (Vec<i64>, Shift) {
        self.iterate_digits(plan, kind, digits, shift, count)
    }
    fn multiply(&self, plan: &Plan, a: &[i64], b: &[i64]) -> Vec<i64> {
        self.multiply_digits(plan, a, b)
    }
}
