//! The verifier: the independent replay of a certificate's checkpoint chain (on every GPU and
//! core of a host, or sharded over many machines and merged) and the check of an embedded PRP
//! proof. Imports `cert`, `residue`, `proof`, `cpu_ref` and engines, never `run`. [`Mode`] is
//! what `verify` is asked to check (src/cli/verify.rs builds it and its [`Options`] from the
//! arguments); [`Mode::run`] runs it to its [`Ending`].

mod mode;
pub mod proof;
pub mod replay;
pub mod schedule;
mod segment;
pub mod shard;

pub use mode::{Ending, Mode, Options, PROOF_CHECKED, SPOT_CHECKED};
