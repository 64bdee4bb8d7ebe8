//! mersenne-cert: Lucas–Lehmer and base-3 PRP tests of Mersenne numbers 2^p − 1, on an NVIDIA
//! GPU (exact IBDWT over the Goldilocks prime) or on the CPU (GMP), with signed certificates that
//! an independent verifier replays.
//!
//! Data flow: [`exponent`] validates p; an [`engine::Engine`] squares a [`residue::Residue`];
//! [`run`] drives the test, its error checks and saves, recording checkpoints per [`layout`];
//! [`report`] turns the run into a certificate body and a result line; [`cert`] signs it;
//! [`check::replay`] verifies it.

pub mod cert;
pub mod check;
pub mod cpu_ref;
mod digits;
pub mod engine;
pub mod exponent;
pub mod field;
pub mod fsutil;
pub mod gpu;
pub mod host;
pub mod layout;
pub mod line;
pub mod ntt;
pub mod plan;
pub mod progress;
pub mod proof;
pub mod report;
pub mod residue;
mod resume;
pub mod run;
mod run_options;
mod run_outcome;
pub mod select;
pub mod state;
pub mod trace;
