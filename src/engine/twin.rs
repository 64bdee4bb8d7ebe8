//! The CPU twin of the GPU engine as an [`Engine`]: the stages of the plan's arithmetic
//! ([`crate::transform::registry`]) strung into a slow engine that computes exactly what the GPU computes, digit for digit (for tests,
//! and to check the proof arithmetic on a transform engine).

use crate::engine::{Engine, EngineError, Shift, Slots, Value};
use crate::exponent::TestKind;
use crate::residue::Residue;
use crate::transform::arithmetic::TwinStages;
use crate::transform::plan::{Arith, Plan};
use crate::transform::registry;

/// A slow engine on the CPU that computes exactly what the GPU computes.
pub struct TwinEngine {
    plan: Plan,
    /// The plan's arithmetic's stages (and its tables).
    stages: Box<dyn TwinStages>,
    kind: TestKind,
    digits: Vec<i64>,
    shift: Shift,
    acc: Vec<i64>,
    acc_shift: Shift,
    slots: Slots<Vec<i64>>,
}

impl TwinEngine {
    /// The Goldilocks twin on the smallest length.
    pub fn new(p: u32, kind: TestKind, shift: u32) -> Result<TwinEngine, EngineError> {
        TwinEngine::with_arith(p, Arith::Goldilocks, kind, shift)
    }

    /// The twin of `arith` on its smallest length.
    pub fn with_arith(p: u32, arith: Arith, kind: TestKind, shift: u32) -> Result<TwinEngine, EngineError> {
        TwinEngine::with_plan(Plan::for_arith(p, arith)?, kind, shift)
    }

    /// An engine on a given plan of either arithmetic (e.g. a longer length than the smallest,
    /// to differ from a prover).
    pub fn with_plan(plan: Plan, kind: TestKind, shift: u32) -> Result<TwinEngine, EngineError> {
        let p = plan.exponent();
        let stages = registry::get(plan.arith()).twin(&plan)?;
        let start = Residue::from_u64(p, kind.start_value());
        let shift = Shift::new(p, shift);
        let digits = plan.residue_to_digits(&start, shift.get());
        Ok(TwinEngine {
            acc: digits.clone(),
            acc_shift: shift,
            digits,
            shift,
            plan,
            stages,
            kind,
            slots: Slots::default(),
        })
    }

    fn check(&self, r: &Residue) -> Result<(), EngineError> {
        if r.exponent() != self.plan.exponent() {
            return Err(EngineError::WrongExponent { want: self.plan.exponent(), got: r.exponent() });
        }
        Ok(())
    }
}

impl Engine for TwinEngine {
    fn describe(&self) -> String {
        let (lo, hi) = self.plan.widths();
        format!("cpu-twin {} widths {lo}-{hi} bits", self.stages.transform_name(&self.plan))
    }
    fn fft_length(&self) -> Option<usize> {
        Some(self.plan.n())
    }
    fn arith(&self) -> Option<Arith> {
        Some(self.plan.arith())
    }
    fn load(&mut self, r: &Residue) -> Result<(), EngineError> {
        self.check(r)?;
        self.digits = self.plan.residue_to_digits(r, self.shift.get());
        Ok(())
    }
    fn iterate(&mut self, count: u64) -> Result<(), EngineError> {
        let digits = std::mem::take(&mut self.digits);
        (self.digits, self.shift) = self.stages.iterate(&self.plan, self.kind, digits, self.shift, count);
        Ok(())
    }
    fn read(&mut self) -> Result<Residue, EngineError> {
        Ok(self.plan.digits_to_residue(&self.digits, self.shift.get())?)
    }
    fn acc_reset(&mut self) -> Result<(), EngineError> {
        self.acc = self.digits.clone();
        self.acc_shift = self.shift;
        Ok(())
    }
    fn acc_mul(&mut self) -> Result<(), EngineError> {
        self.acc = self.stages.multiply(&self.plan, &self.acc, &self.digits);
        self.acc_shift = self.acc_shift.plus(self.shift);
        Ok(())
    }
    fn acc_read(&mut self) -> Result<Residue, EngineError> {
        Ok(self.plan.digits_to_residue(&self.acc, self.acc_shift.get())?)
    }
    fn acc_load(&mut self, r: &Residue) -> Result<(), EngineError> {
        self.check(r)?;
        self.acc_shift = Shift::new(self.plan.exponent(), 0);
        self.acc = self.plan.residue_to_digits(r, 0);
        Ok(())
    }
    fn stash(&mut self, from: Value, slot: usize) -> Result<(), EngineError> {
        self.slots.stash(slot, from, (&self.digits, self.shift), (&self.acc, self.acc_shift))
    }
    fn unstash(&mut self, slot: usize) -> Result<(), EngineError> {
        self.slots.unstash(slot, (&mut self.digits, &mut self.shift))
    }
    fn inject_fault(&mut self, word: usize, bit: u32) -> Result<(), EngineError> {
        let n = self.digits.len();
        self.digits[word % n] ^= 1i64 << (bit % 64);
        Ok(())
    }
    fn kind(&self) -> TestKind {
        self.kind
    }
    fn exponent(&self) -> u32 {
        self.plan.exponent()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rug::Integer;

    #[test]
    fn engine_ll_of_known_primes_and_composite() {
        for (p, prime) in [(521u32, true), (607, true), (1279, true), (523, false)] {
            let mut e = TwinEngine::new(p, TestKind::Ll, p / 3).unwrap();
            e.iterate(TestKind::Ll.full_iterations(p)).unwrap();
            assert_eq!(e.read().unwrap().is_zero(), prime, "p={p}");
        }
    }

    #[test]
    fn m61m31_ll_of_every_mersenne_prime_up_to_4423() {
        for p in [13u32, 17, 19, 31, 61, 89, 107, 127, 521, 607, 1279, 2203, 2281, 3217, 4253, 4423] {
            let mut e = TwinEngine::with_arith(p, Arith::M61M31, TestKind::Ll, p / 3).unwrap();
            assert!(e.describe().starts_with("cpu-twin m61m31"), "{}", e.describe());
            e.iterate(TestKind::Ll.full_iterations(p)).unwrap();
            assert!(e.read().unwrap().is_zero(), "p={p}");
        }
    }

    #[test]
    fn m61m31_composite_res64_against_gmp() {
        // Prime exponents with composite M_p and composite exponents: the whole LL's res64.
        for p in [23u32, 29, 523, 1201, 2000, 3001] {
            let mut e = TwinEngine::with_arith(p, Arith::M61M31, TestKind::Ll, 7).unwrap();
            let iters = TestKind::Ll.full_iterations(p);
            e.iterate(iters).unwrap();
            let m = (Integer::from(1) << p) - 1u32;
            let mut x = Integer::from(4);
            for _ in 0..iters {
                x = (Integer::from(&x * &x) - 2u32).modulo(&m);
            }
            let got = e.read().unwrap();
            assert_eq!(got, Residue::from_integer(p, &x), "p={p}");
            assert!(!got.is_zero(), "p={p}");
        }
    }

    /// acc_mul after 10 squarings gives 3·3^(2^10); a full PRP-3 test of a prime M_p ends at 9.
    fn acc_and_prime_prp(e: &mut TwinEngine, p: u32) {
        e.acc_reset().unwrap();
        e.iterate(10).unwrap();
        e.acc_mul().unwrap(); // 3 · 3^(2^10)
        let want = Residue::from_integer(p, &Integer::from(Integer::u_pow_u(3, 1025)));
        assert_eq!(e.acc_read().unwrap(), want);
        e.iterate(TestKind::Prp.full_iterations(p) - 10).unwrap();
        assert!(e.read().unwrap().equals_u64(9), "p={p}");
    }

    #[test]
    fn m61m31_acc_and_prp() {
        for p in [4_423u32, 3_217, 9_689] {
            acc_and_prime_prp(&mut TwinEngine::with_arith(p, Arith::M61M31, TestKind::Prp, 1234).unwrap(), p);
        }
        // A composite M_p is no PRP; a fault shows.
        let mut e = TwinEngine::with_arith(4_441, Arith::M61M31, TestKind::Prp, 5).unwrap();
        e.iterate(TestKind::Prp.full_iterations(4_441)).unwrap();
        assert!(!e.read().unwrap().equals_u64(9));
        e.inject_fault(5, 3).unwrap();
        let before = e.read().unwrap();
        e.inject_fault(5, 3).unwrap();
        assert_ne!(before, e.read().unwrap());
    }

    #[test]
    fn m61m31_refuses_beyond_its_bound() {
        let top = Arith::M61M31.largest_exponent();
        let Err(e) = TwinEngine::with_arith(top + 2, Arith::M61M31, TestKind::Ll, 0) else { panic!("accepted") };
        assert!(e.to_string().contains(&top.to_string()), "{e}");
    }

    #[test]
    fn engine_acc_and_prp() {
        let p = 4_423;
        let mut e = TwinEngine::new(p, TestKind::Prp, 1234).unwrap();
        acc_and_prime_prp(&mut e, p);
        e.inject_fault(5, 3).unwrap();
        assert!(!e.read().unwrap().equals_u64(9));
    }
}
