//! A PRP run's proof from the prover's side: choosing the power within a disk budget, where the
//! run's points live (beside its saved states, so that a resumed run keeps them), and turning
//! the saved points into the published proof once the run is done.

use super::engine_arith::{runs_on_engine, with_arith};
use super::points::{choose_power, PowerChoice, ProofStore, StoreError};
use super::{prove_from_store, Proof, ProofError};
use crate::engine::Engine;
use crate::residue::Residue;
use md5::{Digest, Md5};
use std::path::Path;
use std::time::Instant;

/// The proof file version written (GIMPS "PRP PROOF" VERSION=2).
pub const FILE_VERSION: u32 = 2;
/// Challenge size in bits (GIMPS HASHSIZE).
pub const HASH_BITS: u32 = 64;

/// The proof store of a run and how its power was chosen.
#[derive(Debug, Clone)]
pub struct ProofSetup {
    pub store: ProofStore,
    pub choice: PowerChoice,
}

/// Choose the power for p (`requested` or the default, lowered to fit `budget_bytes`) and open
/// the point store under the test's state directory. Each power has its own directory, so a
/// run resumed with another power finds no points instead of wrong ones.
pub fn setup(state_dir: &Path, p: u32, requested: Option<u32>, budget_bytes: u64) -> Result<ProofSetup, StoreError> {
    let choice = choose_power(p, requested, budget_bytes)?;
    let store = ProofStore::new(&state_dir.join(format!("proof-power{}", choice.power)), p, choice.power)?;
    Ok(ProofSetup { store, choice })
}

/// A built, self-checked proof ready to publish.
#[derive(Debug, Clone)]
pub struct BuiltProof {
    pub proof: Proof,
    /// The GIMPS file bytes (what the certificate embeds).
    pub bytes: Vec<u8>,
    /// Wall time of building and checking it.
    pub seconds: f64,
    /// Whether the arithmetic ran on the engine (a GPU) rather than on the CPU.
    pub on_engine: bool,
}

impl BuiltProof {
    /// MD5 of the file bytes, lower-case hex, as GIMPS result lines report it.
    pub fn md5_hex(&self) -> String {
        hex::encode(Md5::digest(&self.bytes))
    }

    pub fn power(&self) -> u32 {
        self.proof.power()
    }
}

/// Why a finished run's proof is not published.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    #[error(transparent)]
    Proof(#[from] ProofError),
    #[error(transparent)]
    Points(#[from] StoreError),
    #[error("the proof's B (res64 {b:016X}) is not the run's final residue (res64 {last:016X})")]
    NotTheRunsResidue { b: u64, last: u64 },
    #[error("the final residue is 9·ζ for a root of unity ζ of small order (a disguised probable prime); such a result cannot be published as composite")]
    DisguisedPositive,
}

/// Build the proof from the run's saved points (on the engine when it is a GPU, else on the
/// CPU), verify it, and check that it speaks for this run: its B is the run's final residue
/// `last` = x_p, and not a disguised positive.
pub fn finish(store: &ProofStore, engine: &mut dyn Engine, last: &Residue) -> Result<BuiltProof, FinishError> {
    let built = build(store, engine)?;
    if built.proof.b() != last {
        return Err(FinishError::NotTheRunsResidue { b: built.proof.b().res64(), last: last.res64() });
    }
    not_disguised(built)
}

/// The proof of power `power` (default: the power they were saved for) from the points a
/// finished run kept in `dir` (`prove --keep-proof-points`), built on `engine` (or the CPU, as
/// [`finish`] does) and verified; with the power the points were saved for. One test's points
/// give the proof of its power and of every lower one.
pub fn from_kept_points(
    dir: &Path,
    p: u32,
    power: Option<u32>,
    engine: &mut dyn Engine,
) -> Result<(BuiltProof, u32), FinishError> {
    let saved = ProofStore::open_saved(dir, p)?;
    let store = saved.at_power(power.unwrap_or(saved.power()))?;
    Ok((not_disguised(build(&store, engine)?)?, saved.power()))
}

/// Build the proof from `store`'s points (on the engine when it is a GPU, else on the CPU) and
/// verify it.
fn build(store: &ProofStore, engine: &mut dyn Engine) -> Result<BuiltProof, FinishError> {
    let start = Instant::now();
    let on_engine = runs_on_engine(engine);
    let proof = with_arith(engine, |arith| prove_from_store(store, arith))?;
    let bytes = proof.to_gimps_bytes();
    Ok(BuiltProof { proof, bytes, seconds: start.elapsed().as_secs_f64(), on_engine })
}

/// A proof whose final residue is a disguised positive is not published.
fn not_disguised(built: BuiltProof) -> Result<BuiltProof, FinishError> {
    match built.proof.outcome().disguised_positive {
        true => Err(FinishError::DisguisedPositive),
        false => Ok(built),
    }
}
