//! Checks of results: the verifier's independent replay of a certificate's checkpoint chain
//! (and, during a run, the error checks that guard it).

pub mod replay;
