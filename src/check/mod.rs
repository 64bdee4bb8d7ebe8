//! Checks of results: the error checks that guard a run (Gerbicz for PRP, Jacobi for LL, GMP
//! spot checks), the verifier's independent replay of a certificate's checkpoint chain, and its
//! check of an embedded PRP proof.

pub mod gerbicz;
pub mod jacobi;
pub mod proof;
pub mod replay;
pub mod spot;
