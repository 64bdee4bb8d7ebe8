//! The verifier: the independent replay of a certificate's checkpoint chain (on every GPU and
//! core of a host, or sharded over many machines and merged) and the check of an embedded PRP
//! proof. Imports `cert`, `residue`, `proof`, `cpu_ref` and engines, never `run`.

pub mod proof;
pub mod replay;
pub mod schedule;
mod segment;
pub mod shard;
