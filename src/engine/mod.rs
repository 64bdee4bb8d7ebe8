//! The engine interface: something that squares a residue modulo M_p many times.
//!
//! An engine owns its internal layout (weighted digits, transform order, shift count) and speaks
//! only [`Residue`] at its boundary: `load` takes the unshifted value, `read` returns it. It is
//! built for one exponent, one test kind and one starting shift count c: internally it holds
//! x·2^s with s = c·2^k mod p after k squarings, so that two runs with different shifts compute
//! on different data. For LL the "−2" is applied in the shifted domain (−2·2^s).
//!
//! Besides the main state an engine keeps a second value, the accumulator, used by the Gerbicz
//! check (PRP): `acc_reset` sets acc := state and `acc_mul` sets acc := acc·state, both without
//! leaving the device. For the proof arithmetic an engine also keeps numbered scratch slots in
//! its own memory (`stash`/`unstash`), so that a chain of products and powers never crosses to
//! the host until its result is read.

pub mod arith;
pub mod twin;

use crate::exponent::TestKind;
use crate::residue::Residue;
pub use crate::residue::Shift;
use thiserror::Error;

/// Why an engine could not be built or failed while running.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("no usable CUDA GPU: {0}")]
    NoGpu(String),
    #[error("CUDA error: {0}")]
    Cuda(String),
    #[error("no transform plan for p={p}: {why}")]
    NoPlan { p: u32, why: String },
    #[error("residue for p={got} loaded into an engine for p={want}")]
    WrongExponent { want: u32, got: u32 },
    #[error("engine failure: {0}")]
    Other(String),
}

impl From<crate::transform::PlanError> for EngineError {
    fn from(e: crate::transform::PlanError) -> EngineError {
        match e {
            crate::transform::PlanError::NoPlan { p, why } => EngineError::NoPlan { p, why },
            other => EngineError::Other(other.to_string()),
        }
    }
}

/// Which engine the user asked for (the binaries map their `--engine` values onto it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    /// The GPU when one is usable, else the CPU.
    Auto,
    /// GMP on the CPU.
    Cpu,
    /// The CUDA GPU; an error when none is usable.
    Gpu,
    /// The CPU twin of the GPU transform (slow: for checks without a GPU, e.g. replaying a
    /// certificate in another arithmetic than the prover's).
    Twin,
}

/// One of an engine's two working values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    State,
    Acc,
}

/// A squaring engine for one exponent and test kind. See the module doc for the contract.
pub trait Engine: Send {
    /// One line for humans and certificates: engine name, device, plan (length, widths).
    fn describe(&self) -> String;
    /// Transform length (GIMPS "fft-length"); `None` for engines without a transform (GMP).
    fn fft_length(&self) -> Option<usize>;
    /// The exact arithmetic the transform squares in; `None` for engines without one (GMP).
    fn arith(&self) -> Option<crate::transform::plan::Arith>;
    /// Replace the state with `r` (unshifted).
    fn load(&mut self, r: &Residue) -> Result<(), EngineError>;
    /// Apply `count` iterations (LL: s ← s²−2, PRP: x ← x²).
    fn iterate(&mut self, count: u64) -> Result<(), EngineError>;
    /// The current state, unshifted and canonical.
    fn read(&mut self) -> Result<Residue, EngineError>;
    /// acc := state.
    fn acc_reset(&mut self) -> Result<(), EngineError>;
    /// acc := acc · state mod M_p.
    fn acc_mul(&mut self) -> Result<(), EngineError>;
    /// The accumulator, unshifted and canonical.
    fn acc_read(&mut self) -> Result<Residue, EngineError>;
    /// Replace the accumulator with `r` (unshifted).
    fn acc_load(&mut self, r: &Residue) -> Result<(), EngineError>;
    /// Queue `count` iterations; the engine may return before they ran (a GPU queues them on
    /// its stream), and the next read waits for them. By default the same as `iterate`.
    fn iterate_queued(&mut self, count: u64) -> Result<(), EngineError> {
        self.iterate(count)
    }
    /// `read` (or `acc_read`), then `iterate_queued(count)`, in effect: a GPU queues the copy of
    /// the value, then the iterations, and converts the copy on the host while they run, so that
    /// it does not wait for the host between batches. By default exactly those two calls.
    fn read_then_queue(&mut self, what: Value, count: u64) -> Result<Residue, EngineError> {
        let x = match what {
            Value::State => self.read()?,
            Value::Acc => self.acc_read()?,
        };
        self.iterate_queued(count)?;
        Ok(x)
    }
    /// Copy `from` (with its shift count) into scratch slot `slot`, created on first use.
    fn stash(&mut self, from: Value, slot: usize) -> Result<(), EngineError>;
    /// Replace the state with the value in scratch slot `slot` (an error if it holds none).
    fn unstash(&mut self, slot: usize) -> Result<(), EngineError>;
    /// Fault injection for tests: flip bit `bit` of internal word `word` (taken modulo the
    /// internal word count) of the state, in the engine's own memory (device memory on a GPU).
    fn inject_fault(&mut self, word: usize, bit: u32) -> Result<(), EngineError>;
    /// The kind this engine runs.
    fn kind(&self) -> TestKind;
    /// The exponent this engine runs.
    fn exponent(&self) -> u32;
}

/// An engine's scratch slots: values of its own kind, each with its shift count.
pub struct Slots<T>(Vec<Option<(T, Shift)>>);

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots(Vec::new())
    }
}

impl<T> Slots<T> {
    /// Slot `slot`, created by `create` (with `shift`) when it held nothing yet.
    pub fn entry(
        &mut self,
        slot: usize,
        shift: Shift,
        create: impl FnOnce() -> Result<T, EngineError>,
    ) -> Result<&mut (T, Shift), EngineError> {
        if self.0.len() <= slot {
            self.0.resize_with(slot + 1, || None);
        }
        let e = &mut self.0[slot];
        if e.is_none() {
            *e = Some((create()?, shift));
        }
        Ok(e.as_mut().expect("filled above"))
    }
    /// [`Engine::stash`] for an engine that holds its two values as `T`s: a copy of `state` or
    /// `acc` (with its shift) into slot `slot`, reusing the slot's storage.
    pub fn stash(&mut self, slot: usize, from: Value, state: (&T, Shift), acc: (&T, Shift)) -> Result<(), EngineError>
    where
        T: Clone,
    {
        let (v, shift) = if from == Value::State { state } else { acc };
        let e = self.entry(slot, shift, || Ok(v.clone()))?;
        e.0.clone_from(v);
        e.1 = shift;
        Ok(())
    }
    /// [`Engine::unstash`] likewise: slot `slot` copied into `state` and its shift.
    pub fn unstash(&self, slot: usize, state: (&mut T, &mut Shift)) -> Result<(), EngineError>
    where
        T: Clone,
    {
        let (v, shift) = self.get(slot)?;
        state.0.clone_from(v);
        *state.1 = *shift;
        Ok(())
    }
    /// The value in slot `slot`, an error if it holds none.
    pub fn get(&self, slot: usize) -> Result<&(T, Shift), EngineError> {
        self.0
            .get(slot)
            .and_then(Option::as_ref)
            .ok_or_else(|| EngineError::Other(format!("scratch slot {slot} holds no value")))
    }
}
