//! mersenne-cert: Lucas–Lehmer and base-3 PRP tests of Mersenne numbers 2^p − 1, on an NVIDIA
//! GPU (exact IBDWT over the Goldilocks prime) or on the CPU (GMP), with signed certificates that
//! an independent verifier replays.
//!
//! Layers, each importing only those before it: [`residue`] (the one value type) ←
//! [`transform`] (field, plan, digits, CPU twin) ← [`engine`] (the squaring interface; [`cpu_ref`]
//! and [`gpu`] implement it) ← [`run`] (the driver, its checks, saves and report) ← `bin/`.
//! [`cert`] signs what a run certifies, [`proof`] builds and checks PRP proofs, and [`verify`]
//! replays a certificate without importing [`run`]. [`work`] runs a GIMPS work directory
//! (worktodo.txt in, results.json.txt and proof files out) on top of [`run`].

/// What `--version` prints: the package version and the commit the binary was built from
/// (build.rs; "+dirty" when the tree differed from it).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("MERSENNE_CERT_COMMIT"), ")");

pub mod cert;
pub mod cli;
pub mod cpu_ref;
pub mod engine;
pub mod exponent;
pub mod fsutil;
pub mod gpu;
pub mod host;
pub mod progress;
pub mod proof;
pub mod residue;
pub mod rng;
pub mod run;
pub mod trace;
pub mod transform;
pub mod verify;
pub mod work;
