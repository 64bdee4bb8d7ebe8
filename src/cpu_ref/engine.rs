//! `GmpEngine`: the CPU engine. Holds the state and the Gerbicz accumulator as rug integers in the
//! shifted domain (x·2^s mod M_p) and squares with [`ModMp`].

use super::ModMp;
use crate::engine::{Engine, EngineError, Shift, Slots, Value};
use crate::exponent::TestKind;
use crate::residue::Residue;
use rug::Integer;

/// GMP engine for one exponent, test kind and starting shift count.
pub struct GmpEngine {
    kind: TestKind,
    m: ModMp,
    start_shift: Shift,
    x: Integer,
    x_shift: Shift,
    acc: Integer,
    acc_shift: Shift,
    /// Scratch slots (see [`Engine::stash`]).
    slots: Slots<Integer>,
}

impl GmpEngine {
    pub fn new(p: u32, kind: TestKind, shift: u32) -> Self {
        let s = Shift::new(p, shift);
        GmpEngine {
            kind,
            m: ModMp::new(p),
            start_shift: s,
            x: Integer::new(),
            x_shift: s,
            acc: Integer::new(),
            acc_shift: s,
            slots: Slots::default(),
        }
    }

    fn check(&self, r: &Residue) -> Result<(), EngineError> {
        if r.exponent() != self.m.exponent() {
            return Err(EngineError::WrongExponent { want: self.m.exponent(), got: r.exponent() });
        }
        Ok(())
    }

    fn shifted(&self, r: &Residue, s: Shift) -> Integer {
        r.mul_pow2(s.get()).to_integer()
    }

    fn unshifted(&self, x: &Integer, s: Shift) -> Residue {
        Residue::from_integer(self.m.exponent(), x).div_pow2(s.get())
    }

    /// One iteration on the state, in the shifted domain.
    #[inline]
    fn step(&mut self) {
        self.m.square(&mut self.x);
        self.x_shift = self.x_shift.squared();
        if self.kind == TestKind::Ll {
            // s² − 2 becomes X² − 2·2^(2σ): subtract 2^(σ'+1) with σ' the new shift.
            let p = self.m.exponent();
            let e = ((self.x_shift.get() as u64 + 1) % p as u64) as u32;
            self.m.sub_pow2(&mut self.x, e);
        }
    }
}

impl Engine for GmpEngine {
    fn describe(&self) -> String {
        format!("cpu: GMP (rug), shift-and-add reduction mod 2^{}-1", self.m.exponent())
    }

    fn fft_length(&self) -> Option<usize> {
        None
    }

    fn arith(&self) -> Option<crate::transform::plan::Arith> {
        None
    }

    fn load(&mut self, r: &Residue) -> Result<(), EngineError> {
        self.check(r)?;
        self.x_shift = self.start_shift;
        self.x = self.shifted(r, self.x_shift);
        Ok(())
    }

    fn iterate(&mut self, count: u64) -> Result<(), EngineError> {
        for _ in 0..count {
            self.step();
        }
        Ok(())
    }

    fn read(&mut self) -> Result<Residue, EngineError> {
        Ok(self.unshifted(&self.x, self.x_shift))
    }

    fn acc_reset(&mut self) -> Result<(), EngineError> {
        self.acc.clone_from(&self.x);
        self.acc_shift = self.x_shift;
        Ok(())
    }

    fn acc_mul(&mut self) -> Result<(), EngineError> {
        self.m.mul(&mut self.acc, &self.x);
        self.acc_shift = self.acc_shift.plus(self.x_shift);
        Ok(())
    }

    fn acc_read(&mut self) -> Result<Residue, EngineError> {
        Ok(self.unshifted(&self.acc, self.acc_shift))
    }

    fn acc_load(&mut self, r: &Residue) -> Result<(), EngineError> {
        self.check(r)?;
        self.acc_shift = self.start_shift;
        self.acc = self.shifted(r, self.acc_shift);
        Ok(())
    }

    fn stash(&mut self, from: Value, slot: usize) -> Result<(), EngineError> {
        self.slots.stash(slot, from, (&self.x, self.x_shift), (&self.acc, self.acc_shift))
    }

    fn unstash(&mut self, slot: usize) -> Result<(), EngineError> {
        self.slots.unstash(slot, (&mut self.x, &mut self.x_shift))
    }

    fn inject_fault(&mut self, word: usize, bit: u32) -> Result<(), EngineError> {
        let p = self.m.exponent();
        let pos = ((word as u64 * 64 + bit as u64) % p as u64) as u32;
        let was = self.x.get_bit(pos);
        self.x.set_bit(pos, !was);
        self.m.reduce(&mut self.x);
        Ok(())
    }

    fn kind(&self) -> TestKind {
        self.kind
    }

    fn exponent(&self) -> u32 {
        self.m.exponent()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::{quickcheck, TestResult};
    use rug::ops::RemRounding;

    /// The obviously-correct reference: the recurrence with plain `%`, no shift.
    fn reference(p: u32, kind: TestKind, k: u64) -> Integer {
        let m = (Integer::from(1) << p) - 1u32;
        let mut x = Integer::from(kind.start_value());
        for _ in 0..k {
            x = Integer::from(x.square_ref());
            if kind == TestKind::Ll {
                x -= 2;
            }
            x = x.rem_euc(&m);
        }
        x
    }

    fn run(p: u32, kind: TestKind, shift: u32, k: u64) -> Residue {
        let mut e = GmpEngine::new(p, kind, shift);
        e.load(&Residue::from_u64(p, kind.start_value())).unwrap();
        e.iterate(k).unwrap();
        e.read().unwrap()
    }

    quickcheck! {
        fn any_shift_gives_the_reference(p: u16, shift: u32, k: u8, prp: bool) -> TestResult {
            let p = p as u64 % 3000 + 2;
            if !crate::exponent::is_prime(p) { return TestResult::discard(); }
            let p = p as u32;
            let kind = if prp { TestKind::Prp } else { TestKind::Ll };
            let want = Residue::from_integer(p, &reference(p, kind, k as u64));
            TestResult::from_bool(run(p, kind, shift % p, k as u64) == want)
        }

        fn acc_mul_is_the_product(p: u16, shift: u32, a: u8, b: u8) -> TestResult {
            let p = p as u64 % 2000 + 3;
            if !crate::exponent::is_prime(p) { return TestResult::discard(); }
            let p = p as u32;
            let m = (Integer::from(1) << p) - 1u32;
            let mut e = GmpEngine::new(p, TestKind::Prp, shift % p);
            e.load(&Residue::from_u64(p, 3)).unwrap();
            e.iterate(a as u64).unwrap();
            e.acc_reset().unwrap();
            e.iterate(b as u64).unwrap();
            e.acc_mul().unwrap();
            let want = (reference(p, TestKind::Prp, a as u64) * reference(p, TestKind::Prp, a as u64 + b as u64)).rem_euc(&m);
            TestResult::from_bool(e.acc_read().unwrap().to_integer() == want && e.read().unwrap().to_integer() == reference(p, TestKind::Prp, a as u64 + b as u64))
        }
    }

    #[test]
    fn known_ll_results() {
        // M_127 is prime, M_11 = 23·89 is composite.
        assert!(run(127, TestKind::Ll, 5, 125).is_zero());
        assert!(!run(11, TestKind::Ll, 3, 9).is_zero());
    }

    #[test]
    fn fault_injection_changes_the_state() {
        let mut e = GmpEngine::new(89, TestKind::Prp, 7);
        e.load(&Residue::from_u64(89, 3)).unwrap();
        e.iterate(10).unwrap();
        let before = e.read().unwrap();
        e.inject_fault(0, 5).unwrap();
        assert_ne!(e.read().unwrap(), before);
    }

    #[test]
    fn wrong_exponent_is_an_error() {
        let mut e = GmpEngine::new(89, TestKind::Prp, 0);
        assert!(matches!(e.load(&Residue::from_u64(61, 3)), Err(EngineError::WrongExponent { .. })));
    }
}
