//! The verifier: the independent replay of a certificate's checkpoint chain (on every GPU and
//! core of a host, or sharded over many machines and merged) and the check of an embedded PRP
//! proof. Imports `cert`, `residue`, `proof`, `cpu_ref` and engines, never `run`. [`Mode`] is
//! what `verify` is asked to check (src/cli/verify.rs builds it from the arguments).

pub mod proof;
pub mod replay;
pub mod schedule;
mod segment;
pub mod shard;

use std::path::{Path, PathBuf};

/// What `verify` is asked to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode<'a> {
    /// A GIMPS proof file on its own.
    GimpsProof(&'a Path),
    /// A certificate's replay accepted from the part reports of all its shards.
    Merge(&'a Path, &'a [PathBuf]),
    /// One shard of a certificate's replay, its part report written to a file.
    Shard(&'a Path, shard::ShardSpec, &'a Path),
    /// A certificate: its proof, its replay (all of it, or `--sample K` segments), or both.
    Certificate(&'a Path),
}
