//! mersenne-cert: Lucas–Lehmer and base-3 PRP tests of Mersenne numbers 2^p − 1, on an NVIDIA
//! GPU (exact IBDWT over the Goldilocks prime) or on the CPU (GMP), with signed certificates that
//! an independent verifier replays.
//!
//! Data flow: [`exponent`] validates p; an [`engine::Engine`] squares a [`residue::Residue`];
//! `run` drives the test and records checkpoints; `cert` signs them; `check::replay` verifies.

pub mod engine;
pub mod exponent;
pub mod field;
pub mod gpu;
pub mod ntt;
pub mod plan;
pub mod residue;
