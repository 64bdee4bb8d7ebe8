//! Certificates: what a finished (or partial) test of M_p claims, sealed with an Ed25519
//! signature so that anyone can check who issued it and then replay its checkpoints.
//!
//! - [`body`]: the certified content ([`CertBody`]), its CBOR form and the structure check
//!   [`CertBody::validate`].
//! - [`envelope`]: the signed, versioned wrapper: [`seal`], [`open`], [`certificate_hash`].
//! - [`outcome`]: the stated result ([`Outcome`]) derived from the final residue.
//! - [`points`]: the replay-points sidecar bound to a certificate by its hash.
//! - [`keys`]: the signing-key file: [`load_or_create`], [`default_key_path`],
//!   [`parse_public_key_hex`].
//!
//! All decoding is strict: bytes are accepted only if they are exactly the encoding this module
//! would write for the decoded value (`decode_exact` + `check_canonical`), so one certificate has
//! one byte form and its hash names it. The format is described in `docs/certificate.md`.

pub mod body;
pub mod envelope;
pub mod keys;
pub mod outcome;
pub mod points;
#[cfg(test)]
pub(crate) mod samples;
mod time;

/// The most full residues (replay segments) a prover embeds in a certificate, besides the final
/// one: what bounds the size of a certificate `verify` reads.
pub const MAX_FULL_RESIDUES: u64 = 1024;

pub use body::{CertBody, Check, CheckEvent, CheckLog, CheckOutcome, Checkpoint, Program};
pub use envelope::{certificate_hash, open, seal, FORMAT, VERSION};
pub use keys::{default_key_path, load_or_create, parse_public_key_hex};
pub use outcome::{Outcome, Status};
pub use time::{gimps_utc, rfc3339_utc};

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::PathBuf;
use thiserror::Error;

/// Why a certificate, a key file or a public key was refused.
#[derive(Debug, Error)]
pub enum CertError {
    #[error("{what} is not valid: {why}")]
    Decode { what: &'static str, why: String },
    #[error("{what} has {count} trailing byte(s) after its CBOR value")]
    Trailing { what: &'static str, count: usize },
    #[error("{what} is not in canonical form (re-encoding the decoded value gives different bytes)")]
    NotCanonical { what: &'static str },
    #[error("not a mersenne-cert certificate (format tag {0:?})")]
    Format(String),
    #[error("unsupported certificate version {0} (this program reads versions 1 to {VERSION})")]
    Version(u64),
    #[error("envelope public key must be 32 bytes, got {0}")]
    KeyLength(usize),
    #[error("envelope signature must be 64 bytes, got {0}")]
    SignatureLength(usize),
    #[error("envelope public key is not a valid Ed25519 public key")]
    BadPublicKey,
    #[error(
        "signature does not verify: the certificate body was altered or was not signed by the key in the envelope"
    )]
    BadSignature,
    #[error("certificate is signed by key {found}, not by the trusted key {trusted}")]
    Untrusted { found: String, trusted: String },
    /// A structure check failed; `field` names the first failing field (and checkpoint).
    #[error("{field}: {why}")]
    Invalid { field: String, why: String },
    #[error("no configuration directory on this system; give the key file path explicitly")]
    NoConfigDir,
    #[error("key file {}: {why}", .path.display())]
    KeyFile { path: PathBuf, why: String },
    #[error("key file {}: {source}", .path.display())]
    KeyIo {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("public key: {0}")]
    PublicKeyHex(String),
}

impl CertError {
    fn invalid(field: impl Into<String>, why: impl Into<String>) -> Self {
        CertError::Invalid { field: field.into(), why: why.into() }
    }
}

/// Encode a value as CBOR. Writing into a `Vec` cannot fail for the plain structs of this module
/// (no maps with non-string keys, no floats, no custom serializers that error).
fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out).expect("CBOR encoding into a Vec cannot fail");
    out
}

/// Decode `bytes` as exactly one CBOR value of type T with no trailing bytes. ciborium reads
/// definite-length strings in 4 KiB chunks and serde caps pre-allocation for sequences, so a
/// huge declared length costs nothing before the input runs out; nesting is limited to 256
/// levels.
fn decode_exact<T: DeserializeOwned>(bytes: &[u8], what: &'static str) -> Result<T, CertError> {
    let mut rest = bytes;
    let value: T = ciborium::from_reader(&mut rest).map_err(|e| CertError::Decode { what, why: describe(e) })?;
    if !rest.is_empty() {
        return Err(CertError::Trailing { what, count: rest.len() });
    }
    Ok(value)
}

/// One readable line for a CBOR decoding error.
fn describe(e: ciborium::de::Error<std::io::Error>) -> String {
    use ciborium::de::Error as E;
    match e {
        E::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => "truncated (input ends inside a value)".into(),
        E::Io(e) => e.to_string(),
        E::Syntax(offset) => format!("malformed CBOR at byte {offset}"),
        E::Semantic(Some(offset), why) => format!("{why} (at byte {offset})"),
        E::Semantic(None, why) => why,
        E::RecursionLimitExceeded => "nested too deeply".into(),
    }
}

/// Accept a decoded value only if re-encoding it gives exactly the bytes it came from. This
/// rejects CBOR tags, non-minimal integers and lengths, indefinite lengths, text/byte-string
/// swaps, reordered, duplicate or unknown keys: one value, one byte form.
fn check_canonical<T: Serialize>(value: &T, bytes: &[u8], what: &'static str) -> Result<(), CertError> {
    if encode(value) != bytes {
        return Err(CertError::NotCanonical { what });
    }
    Ok(())
}
