//! The verifier: the independent replay of a certificate's checkpoint chain and the check of an
//! embedded PRP proof. Imports `cert`, `residue`, `proof`, `cpu_ref` and engines, never `run`.

pub mod proof;
pub mod replay;
