//! Checks of results: the error checks that guard a run (Gerbicz for PRP, Jacobi for LL, GMP
//! spot checks) and the verifier's independent replay of a certificate's checkpoint chain.

pub mod gerbicz;
pub mod jacobi;
pub mod replay;
pub mod spot;
