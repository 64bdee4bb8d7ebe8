//! The CPU reference: arithmetic modulo M_p on GMP (through rug), used as the engine when no GPU
//! is present, by the verifier's replay and by the spot checks that shadow a GPU run.

mod engine;
mod modmp;

pub use engine::GmpEngine;
pub use modmp::ModMp;
