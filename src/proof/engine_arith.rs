//! [`EngineArith`]: the proof arithmetic on a squaring [`Engine`], so that on a GPU the
//! middles' exponentiations (building) and the final squarings (verifying) run on the device.
//!
//! Only the engine interface is used, each call with its documented meaning: `load`/`read`
//! move unshifted residues in and out, `iterate` squares the state (x ← x² on a PRP engine),
//! `acc_reset` copies the state into the accumulator and `acc_mul` multiplies the state into
//! it. The engine keeps track of the shift counts of both values itself, so the values that
//! come back are unshifted whatever shift it runs at. `acc_load` is not needed.
//!
//! * a^(2^n): load a, iterate n, read.
//! * a·b: load a, acc := a, load b, acc := acc·b, read the accumulator.
//! * a^e·b: load b, acc := b, load a, then for each set bit i of e (from the lowest) square
//!   the state up to a^(2^i) and multiply it into the accumulator: ⌊log2 e⌋ squarings and
//!   popcount(e) multiplications (right-to-left binary exponentiation).
//!
//! * fold (a proof middle): each leaf is loaded once into the accumulator and kept in a
//!   scratch slot, a stack as in a binary counter; a node is left^h·right computed from the
//!   slots as above and stashed back, so only the root is read. The squarings and products are
//!   queued without waiting (`iterate_queued`): the host loads the next leaf meanwhile.
//!
//! [`ProofArith`] cannot fail, an engine can: the first engine error is kept (later calls do
//! nothing and return 0) and [`with_arith`] returns it instead of whatever the proof code made
//! of the dummy values.

use super::arith::{tree_levels, CpuArith, Leaves, ProofArith};
use super::ProofError;
use crate::engine::{Engine, EngineError, Value};
use crate::exponent::TestKind;
use crate::residue::Residue;

/// [`ProofArith`] on an engine for a PRP test (see the module doc).
pub struct EngineArith<'a> {
    engine: &'a mut dyn Engine,
    error: Option<EngineError>,
}

impl<'a> EngineArith<'a> {
    /// Wrap a PRP engine (its `iterate` must square); an LL engine is refused.
    pub fn new(engine: &'a mut dyn Engine) -> Result<Self, ProofError> {
        if engine.kind() != TestKind::Prp {
            return Err(
                EngineError::Other("proof arithmetic needs a PRP engine (x -> x^2); this one runs LL".into()).into()
            );
        }
        Ok(EngineArith { engine, error: None })
    }

    /// The first engine error, if any call failed (and clears it).
    pub fn take_error(&mut self) -> Option<EngineError> {
        self.error.take()
    }

    /// Run `f` on the engine unless an earlier call failed; on failure keep the error and
    /// return 0.
    fn guarded(&mut self, p: u32, f: impl FnOnce(&mut dyn Engine) -> Result<Residue, EngineError>) -> Residue {
        if self.error.is_none() {
            match f(&mut *self.engine) {
                Ok(r) => return r,
                Err(e) => self.error = Some(e),
            }
        }
        Residue::from_u64(p, 0)
    }
}

/// a^e · b (b = None: a^e) with e ≥ 1, read back.
fn exp_mul_on(engine: &mut dyn Engine, a: &Residue, e: u64, b: Option<&Residue>) -> Result<Residue, EngineError> {
    if let Some(b) = b {
        engine.load(b)?;
        engine.acc_reset()?;
    }
    engine.load(a)?;
    pow_into_acc(engine, e, b.is_some())?;
    engine.acc_read()
}

/// acc := state^e · acc (`started`), or state^e, for e ≥ 1: right-to-left binary
/// exponentiation, ⌊log2 e⌋ squarings of the state and popcount(e) products, all queued.
fn pow_into_acc(engine: &mut dyn Engine, e: u64, mut started: bool) -> Result<(), EngineError> {
    let mut at = 0u32;
    let mut rest = e;
    while rest != 0 {
        let bit = rest.trailing_zeros();
        rest &= rest - 1;
        if bit > at {
            engine.iterate_queued((bit - at) as u64)?;
            at = bit;
        }
        if started {
            engine.acc_mul()?;
        } else {
            engine.acc_reset()?;
            started = true;
        }
    }
    Ok(())
}

/// Slot `out` := slot `left`^h · slot `right`, on the engine.
fn node_on(engine: &mut dyn Engine, left: usize, h: u64, right: usize, out: usize) -> Result<(), EngineError> {
    engine.unstash(right)?;
    if h == 0 {
        return engine.stash(Value::State, out);
    }
    engine.acc_reset()?;
    engine.unstash(left)?;
    pow_into_acc(engine, h, true)?;
    engine.stash(Value::Acc, out)
}

/// [`ProofArith::fold`] in the engine's scratch slots (slot i: the value at stack depth i).
fn fold_on(
    engine: &mut dyn Engine,
    count: usize,
    heights: &[u64],
    leaf: &mut Leaves<'_>,
) -> Result<Residue, ProofError> {
    tree_levels(count, heights)?;
    let mut depth = 0usize;
    for q in 0..count {
        engine.acc_load(&leaf(q)?)?;
        engine.stash(Value::Acc, depth)?;
        depth += 1;
        let mut t = 0;
        while (q >> t) & 1 == 1 {
            node_on(engine, depth - 2, heights[t], depth - 1, depth - 2)?;
            depth -= 1;
            t += 1;
        }
    }
    engine.unstash(0)?;
    Ok(engine.read()?)
}

impl ProofArith for EngineArith<'_> {
    fn mul(&mut self, a: &Residue, b: &Residue) -> Residue {
        self.guarded(a.exponent(), |e| {
            e.load(a)?;
            e.acc_reset()?;
            e.load(b)?;
            e.acc_mul()?;
            e.acc_read()
        })
    }

    fn exp(&mut self, a: &Residue, e: u64) -> Residue {
        if e == 0 {
            return Residue::from_u64(a.exponent(), 1);
        }
        self.guarded(a.exponent(), |eng| exp_mul_on(eng, a, e, None))
    }

    fn square_n(&mut self, a: &Residue, n: u64) -> Residue {
        self.guarded(a.exponent(), |e| {
            e.load(a)?;
            e.iterate(n)?;
            e.read()
        })
    }

    fn exp_mul(&mut self, a: &Residue, e: u64, b: &Residue) -> Residue {
        if e == 0 {
            return self.guarded(a.exponent(), |eng| {
                eng.load(b)?;
                eng.read()
            });
        }
        self.guarded(a.exponent(), |eng| exp_mul_on(eng, a, e, Some(b)))
    }

    fn fold(&mut self, count: usize, heights: &[u64], leaf: &mut Leaves<'_>) -> Result<Residue, ProofError> {
        if let Some(e) = self.error.take() {
            return Err(e.into());
        }
        fold_on(&mut *self.engine, count, heights, leaf)
    }
}

/// Does the proof arithmetic run on this engine? On a transform engine (a GPU) yes; a GMP
/// engine gains nothing over [`CpuArith`], which also runs independent jobs in parallel.
pub fn runs_on_engine(engine: &dyn Engine) -> bool {
    engine.fft_length().is_some()
}

/// Run `f` with the arithmetic that suits `engine` ([`EngineArith`] on a GPU, [`CpuArith`]
/// otherwise); an engine failure is reported as [`ProofError::Engine`].
pub fn with_arith<T>(
    engine: &mut dyn Engine,
    f: impl FnOnce(&mut dyn ProofArith) -> Result<T, ProofError>,
) -> Result<T, ProofError> {
    if !runs_on_engine(engine) {
        return f(&mut CpuArith);
    }
    let mut arith = EngineArith::new(engine)?;
    let out = f(&mut arith);
    match arith.take_error() {
        Some(e) => Err(ProofError::Engine(e)),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_ref::GmpEngine;
    use crate::proof::arith::ExpMul;
    use crate::proof::pietrzak;
    use crate::rng::SeededRng;

    /// A pseudo-random residue.
    fn value(p: u32, seed: u64) -> Residue {
        SeededRng::new(seed).residue(p)
    }

    #[test]
    fn matches_cpu_arith_at_any_shift() {
        for (p, shift) in [(521u32, 0u32), (521, 77), (1279, 1000), (4423, 4422)] {
            let mut gmp = GmpEngine::new(p, TestKind::Prp, shift);
            let mut ea = EngineArith::new(&mut gmp).unwrap();
            let mut cpu = CpuArith;
            let (a, b) = (value(p, 3), value(p, 5));
            assert_eq!(ea.mul(&a, &b), cpu.mul(&a, &b), "p={p}");
            assert_eq!(ea.square_n(&a, 37), cpu.square_n(&a, 37));
            assert_eq!(ea.square_n(&a, 0), a);
            for e in [0u64, 1, 2, 3, 8, 0x8000_0000_0000_0000, 0xdead_beef_cafe_f00d, u64::MAX] {
                assert_eq!(ea.exp(&a, e), cpu.exp(&a, e), "p={p} e={e:#x}");
                assert_eq!(ea.exp_mul(&a, e, &b), cpu.exp_mul(&a, e, &b), "p={p} e={e:#x}");
            }
            let jobs = [ExpMul { base: &a, exp: 12345, factor: &b }, ExpMul { base: &b, exp: 777, factor: &a }];
            assert_eq!(ea.exp_mul_batch(&jobs), cpu.exp_mul_batch(&jobs));
            assert!(ea.take_error().is_none());
        }
    }

    #[test]
    fn fold_in_slots_matches_the_blocks() {
        use crate::engine::twin::TwinEngine;
        let p = 607u32;
        let heights = [0x9e37_79b9_7f4a_7c15u64, 3, 0, u64::MAX, 1 << 63, 12345];
        let leaves: Vec<Residue> = (0..64).map(|i| value(p, i)).collect();
        let mut twin = TwinEngine::new(p, TestKind::Prp, 5).unwrap();
        let mut gmp = GmpEngine::new(p, TestKind::Prp, 400);
        for levels in [0usize, 1, 3, 6] {
            let count = 1 << levels;
            let mut asked = Vec::new();
            let mut leaf = |i: usize| {
                asked.push(i);
                Ok(leaves[i].clone())
            };
            let want =
                super::super::arith::fold_in_blocks(&mut CpuArith, count, &heights[..levels], &mut leaf).unwrap();
            assert_eq!(asked, (0..count).collect::<Vec<_>>(), "each leaf once, in order");
            let mut leaf = |i: usize| Ok(leaves[i].clone());
            for engine in [&mut twin as &mut dyn Engine, &mut gmp] {
                let mut ea = EngineArith::new(engine).unwrap();
                assert_eq!(ea.fold(count, &heights[..levels], &mut leaf).unwrap(), want, "levels {levels}");
            }
        }
        let mut ea = EngineArith::new(&mut gmp).unwrap();
        let mut leaf = |_: usize| Ok(value(p, 1));
        assert!(matches!(ea.fold(4, &[1], &mut leaf), Err(ProofError::Arith(_))));
    }

    #[test]
    fn slots_keep_values_and_shifts() {
        use crate::engine::twin::TwinEngine;
        let p = 521u32;
        let (a, b) = (value(p, 8), value(p, 9));
        let mut twin = TwinEngine::new(p, TestKind::Prp, 100).unwrap();
        let mut gmp = GmpEngine::new(p, TestKind::Prp, 3);
        for e in [&mut twin as &mut dyn Engine, &mut gmp] {
            assert!(e.unstash(0).is_err(), "an empty slot");
            e.load(&a).unwrap();
            e.iterate(3).unwrap();
            e.stash(Value::State, 2).unwrap(); // a^8, at the shift after 3 squarings
            e.acc_load(&b).unwrap();
            e.stash(Value::Acc, 0).unwrap(); // b, at shift 0
            assert!(e.unstash(1).is_err(), "slots below a used one hold nothing");
            e.iterate_queued(5).unwrap();
            e.unstash(2).unwrap();
            e.iterate(1).unwrap();
            assert_eq!(e.read().unwrap(), CpuArith.square_n(&a, 4));
            e.acc_reset().unwrap();
            e.unstash(0).unwrap();
            e.acc_mul().unwrap();
            assert_eq!(e.acc_read().unwrap(), CpuArith.mul(&CpuArith.square_n(&a, 4), &b));
            e.stash(Value::Acc, 2).unwrap(); // a slot is overwritten in place
            e.unstash(2).unwrap();
            assert_eq!(e.read().unwrap(), CpuArith.mul(&CpuArith.square_n(&a, 4), &b));
        }
    }

    #[test]
    fn builds_and_verifies_the_same_proof_as_the_cpu() {
        let (p, power) = (1279u32, 4u32);
        let points = pietrzak::proof_points(p, power).unwrap();
        let mut x = Residue::from_u64(p, 3);
        let mut at = 0;
        let mut saved = Vec::new();
        for &k in &points {
            x = CpuArith.square_n(&x, k - at);
            at = k;
            saved.push(x.clone());
        }
        let cpu = pietrzak::build(p, power, |i| Ok(saved[i].clone()), &mut CpuArith).unwrap();
        let mut gmp = GmpEngine::new(p, TestKind::Prp, 999);
        let mut ea = EngineArith::new(&mut gmp).unwrap();
        let ours = pietrzak::build(p, power, |i| Ok(saved[i].clone()), &mut ea).unwrap();
        assert_eq!(ours, cpu);
        let report = ours.verify(&mut ea, 3).unwrap();
        assert!(report.outcome.probable_prime);
        assert!(ea.take_error().is_none());
        // A wrong middle is rejected on the engine too.
        let mut middles = cpu.middles().to_vec();
        middles[1] = CpuArith.mul(&middles[1], &Residue::from_u64(p, 2));
        let bad = crate::proof::Proof::new(cpu.b().clone(), middles).unwrap();
        assert!(matches!(bad.verify(&mut ea, 3), Err(ProofError::Rejected { .. })));
    }

    #[test]
    fn engine_errors_are_kept_and_reported() {
        let mut ll = GmpEngine::new(521, TestKind::Ll, 0);
        assert!(matches!(EngineArith::new(&mut ll), Err(ProofError::Engine(_))));
        let mut gmp = GmpEngine::new(521, TestKind::Prp, 0);
        let mut ea = EngineArith::new(&mut gmp).unwrap();
        let wrong = Residue::from_u64(607, 3);
        assert!(ea.square_n(&wrong, 3).is_zero());
        assert!(
            ea.mul(&Residue::from_u64(521, 3), &Residue::from_u64(521, 3)).is_zero(),
            "calls after an error do nothing"
        );
        assert!(matches!(ea.take_error(), Some(EngineError::WrongExponent { want: 521, got: 607 })));
        // with_arith on a GMP engine uses CpuArith; the closure's result comes back.
        let r = with_arith(&mut gmp, |a| Ok(a.square_n(&Residue::from_u64(521, 3), 2))).unwrap();
        assert!(r.equals_u64(81));
    }
}
