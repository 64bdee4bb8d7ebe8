//! The exact transform: the field it computes in, the plan (length, digit widths, weights, the
//! proven overflow bound), residue ↔ digits, and the CPU twin of the GPU's squaring.
//! Depends on `residue` (and `exponent` for test kinds) only; nothing above it.

pub mod digits;
pub mod goldilocks;
pub mod line;
pub mod plan;
pub mod twin;
