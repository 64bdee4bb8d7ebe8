//! The exact transform: the arithmetics, each a type in its own folder (`goldilocks/`,
//! `m61m31/`, `fp64/`: fields, tables, an [`arithmetic::Arithmetic`]) and the
//! one [`registry`] from key to implementation; the plan (length, digit widths, the proven
//! overflow bound: `bound`, the length search: `length`), residue ↔ digits, and the CPU twin of
//! the GPU's squaring. Depends on `residue` (and `exponent` for test kinds) only; nothing above
//! it.

pub mod arith;
pub mod arithmetic;
pub mod bound;
pub mod digits;
pub mod field;
pub mod fp64;
pub mod goldilocks;
pub mod length;
pub mod line;
pub mod m61m31;
pub mod plan;
pub mod registry;
#[cfg(test)]
pub(crate) mod testing;
pub mod twin;

/// Why a transform plan or a digit vector is not usable.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("no transform plan for p={p}: {why}")]
    NoPlan { p: u32, why: String },
    #[error("{got} digits for a plan of {n}")]
    DigitCount { got: usize, n: usize },
    #[error(transparent)]
    Residue(#[from] crate::residue::ResidueError),
}

/// b with its log2(m) low bits reversed (m a power of two): the order both arithmetics' radix-2
/// passes leave their values in.
pub(crate) fn bit_reverse(b: usize, m: usize) -> usize {
    match m.trailing_zeros() {
        0 => 0,
        k => b.reverse_bits() >> (usize::BITS - k),
    }
}
