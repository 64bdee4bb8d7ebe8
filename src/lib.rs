//! mersenne-cert: Lucas–Lehmer and base-3 PRP tests of Mersenne numbers 2^p − 1, on an NVIDIA
//! GPU (exact IBDWT over the Goldilocks prime) or on the CPU (GMP), with signed certificates that
//! an independent verifier replays.
//!
//! Layers, lowest first; a module imports only modules of lower layers (its own submodules
//! aside), which `tests/layers.rs` checks, with the absence of import cycles:
//!
//! 1. [`exponent`], [`trace`], [`host`], [`fsutil`] — p and the test kind; the start-up trace,
//!    the machine, durable files.
//! 2. [`residue`] — the one value type every boundary speaks.
//! 3. [`rng`] — the seeded generator of reproducible inputs.
//! 4. [`transform`] — the exact arithmetic: one type per arithmetic (fields, tables, carry
//!    segments) and their registry, plan, digits, the CPU twin.
//! 5. [`engine`], [`cert`] — the squaring interface (and the arithmetic's tuner); the
//!    certificate: body, envelope, keys.
//! 6. [`cpu_ref`], [`gpu`], [`progress`] — the engines (GMP, CUDA); progress lines.
//! 7. [`decide`], [`proof`] — the one decision of a piece of work (engine, arithmetic, length,
//!    GPUs, why); Pietrzak PRP proofs.
//! 8. [`run`], [`verify`] — the driver, its checks, saves and report; the replay and the proof
//!    check, which never import [`run`].
//! 9. [`work`] — a GIMPS work directory (worktodo.txt in, results.json.txt and proof files out)
//!    on top of [`run`], and its PrimeNet client.
//! 10. [`cli`] — the binaries' arguments.
//!
//! `bin/` (`prove`, `verify`, `gpu-selftest`) sits on top.

/// What `--version` prints: the package version and the commit the binary was built from
/// (build.rs; "+dirty" when the tree differed from it).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("MERSENNE_CERT_COMMIT"), ")");

pub mod cert;
pub mod cli;
pub mod cpu_ref;
pub mod decide;
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
