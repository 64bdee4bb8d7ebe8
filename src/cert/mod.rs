// TEMPORARY STUB (not committed): the real module comes from branch `cert`.
use std::collections::BTreeMap;
use crate::exponent::TestKind;
use serde_bytes::ByteBuf;
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Program { pub name: String, pub version: String }
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CertBody {
    pub exponent: u32, pub kind: TestKind, pub shift: u32, pub iterations: u64, pub program: Program,
    pub engine: String, pub fft_length: Option<u64>, pub host: String, pub started: String, pub finished: String,
    pub checkpoints: Vec<Checkpoint>, pub result: Outcome, pub checks: CheckLog, pub proof: Option<ByteBuf>,
}
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint { pub iteration: u64, pub hash: [u8; 32], pub residue: Option<ByteBuf> }
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome { pub status: String, pub res64: String, pub res2048: String, pub residue_type: Option<u8> }
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CheckLog { pub events: Vec<CheckEvent>, pub summary: BTreeMap<String, u64> }
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckEvent { pub iteration: u64, pub check: String, pub outcome: String, pub detail: String }
#[derive(Debug, thiserror::Error)]
pub enum CertError { #[error("x {0}")] X(String) }
impl CertBody { pub fn validate(&self) -> Result<(), CertError> { Ok(()) } }
pub fn seal(_b: &CertBody, _k: &ed25519_dalek::SigningKey) -> Vec<u8> { vec![] }
pub fn open(_b: &[u8], _t: Option<&[u8; 32]>) -> Result<(CertBody, ed25519_dalek::VerifyingKey), CertError> { Err(CertError::X(String::new())) }
pub fn certificate_hash(b: &[u8]) -> String { blake3::hash(b).to_hex().to_string() }
pub fn load_or_create(_p: Option<&std::path::Path>) -> Result<(ed25519_dalek::SigningKey, std::path::PathBuf, bool), CertError> { Err(CertError::X(String::new())) }
pub fn parse_public_key_hex(_s: &str) -> Result<[u8; 32], CertError> { Err(CertError::X(String::new())) }
