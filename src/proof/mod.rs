//! Pietrzak PRP proofs, compatible with GIMPS "PRP PROOF" VERSION=2 files (gpuowl/PRPLL,
//! prime95): a run saves 2^power residues ([`points`]), [`pietrzak::build`] turns them into the
//! final residue B = 3^(2^p) plus `power` middles, and anyone can check the claim with about
//! p/2^power squarings ([`Proof::verify`]). The certificate embeds the GIMPS file bytes
//! ([`Proof::to_gimps_bytes`]), so there is one format.

pub mod arith;
pub mod engine_arith;
pub mod gimps;
pub mod outcome;
pub mod pietrzak;
pub mod points;
pub mod prefetch;
pub mod session;

use crate::residue::Residue;
use arith::ProofArith;
use gimps::FormatError;
pub use outcome::{prp_outcome, PrpOutcome};
use pietrzak::ScheduleError;
use points::{ProofStore, StoreError};
use std::path::PathBuf;
use thiserror::Error;

/// Everything that can go wrong reading, building or verifying a proof.
#[derive(Debug, Error)]
pub enum ProofError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{which} has exponent {got}, but the proof is for p={expected}")]
    MixedExponents { expected: u32, which: String, got: u32 },
    #[error("{which} is zero or shares a factor with M_p; no honest PRP run produces that")]
    NotAUnit { which: String },
    #[error("{which} is not a square modulo M_p (its Jacobi symbol is -1); every value of an honest proof is one")]
    NotASquare { which: String },
    #[error("no private random exponent for the proof check: {0}")]
    NoRandomness(String),
    #[error(
        "proof rejected: after the reduction and {squarings} squarings A has res64 {a_res64:016X}, \
         but B reduces to res64 {b_res64:016X}"
    )]
    Rejected { squarings: u64, a_res64: u64, b_res64: u64 },
    #[error("proof arithmetic on the engine failed: {0}")]
    Engine(#[from] crate::engine::EngineError),
    #[error("proof arithmetic broke its contract: {0}")]
    Arith(String),
    #[error("the freshly built proof failed its own verification, not publishing it: {0}")]
    SelfCheck(Box<ProofError>),
}

/// A PRP proof: the final residue B = 3^(2^p) mod M_p and the middles, one per level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    b: Residue,
    middles: Vec<Residue>,
}

/// What a verified proof establishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofReport {
    pub p: u32,
    pub power: u32,
    /// Squarings of the final check: ⌈p/2^power⌉.
    pub squarings: u64,
    /// The 64-bit challenges h_0..h_{power−1} of the hash chain.
    pub challenges: Vec<u64>,
    /// The exponent the last level used instead of h_{power−1}: drawn privately at random by
    /// [`Proof::verify`] (see [`pietrzak::verify`]).
    pub last_exponent: u64,
    pub outcome: PrpOutcome,
}

impl Proof {
    /// A proof from B and its middles; power = number of middles. Checks that (p, power) is a
    /// valid proof shape and that every middle has B's exponent.
    pub fn new(b: Residue, middles: Vec<Residue>) -> Result<Proof, ProofError> {
        let p = b.exponent();
        pietrzak::check_params(p, u32::try_from(middles.len()).unwrap_or(u32::MAX))?;
        if let Some((i, m)) = middles.iter().enumerate().find(|(_, m)| m.exponent() != p) {
            return Err(ProofError::MixedExponents { expected: p, which: format!("middle {i}"), got: m.exponent() });
        }
        Ok(Proof { b, middles })
    }

    pub fn p(&self) -> u32 {
        self.b.exponent()
    }

    pub fn power(&self) -> u32 {
        self.middles.len() as u32
    }

    /// The final residue B = 3^(2^p) mod M_p (type 3).
    pub fn b(&self) -> &Residue {
        &self.b
    }

    pub fn middles(&self) -> &[Residue] {
        &self.middles
    }

    /// The challenges of the hash chain.
    pub fn challenges(&self) -> Vec<u64> {
        pietrzak::challenges(&self.b, &self.middles)
    }

    /// What B says about M_p (not checked until [`Proof::verify`] succeeds).
    pub fn outcome(&self) -> PrpOutcome {
        prp_outcome(&self.b)
    }

    /// The GIMPS "PRP PROOF" VERSION=2 file bytes.
    pub fn to_gimps_bytes(&self) -> Vec<u8> {
        gimps::encode(self)
    }

    /// Parse GIMPS file bytes strictly (see [`gimps::decode`]).
    pub fn from_gimps_bytes(bytes: &[u8]) -> Result<Proof, ProofError> {
        gimps::decode(bytes)
    }

    /// Verify the proof for start value x0 (3 for every GIMPS proof; the report's `outcome`
    /// reads B as a base-3 result, so it means something only for x0 = 3): the screen, and the
    /// reduction with a private random exponent at the last level ([`pietrzak::verify`]).
    pub fn verify<A: ProofArith + ?Sized>(&self, arith: &mut A, x0: u64) -> Result<ProofReport, ProofError> {
        pietrzak::verify(self, arith, x0)
    }
}

/// Build the proof from a run's saved points, read ahead on background threads.
pub fn build_from_store<A: ProofArith + ?Sized>(store: &ProofStore, arith: &mut A) -> Result<Proof, ProofError> {
    prefetch::with_prefetch(store, |load| pietrzak::build(store.exponent(), store.power(), load, arith))
}

/// Build the proof from a run's saved points, then verify it locally before returning it, so
/// that a corrupted point or arithmetic fault never reaches a published certificate.
pub fn prove_from_store<A: ProofArith + ?Sized>(store: &ProofStore, arith: &mut A) -> Result<Proof, ProofError> {
    let proof = build_from_store(store, arith)?;
    pietrzak::self_check(&proof, arith).map_err(|e| ProofError::SelfCheck(Box::new(e)))?;
    Ok(proof)
}
