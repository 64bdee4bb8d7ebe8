//! The signed envelope around a body: a CBOR map `{format: "mersenne-cert", version: 1, body:
//! <exact body bytes>, public_key: <32 bytes>, signature: <64 bytes>}`. The Ed25519 signature
//! covers exactly the `body` byte string, which is verified as stored (never re-encoded) before
//! the body is decoded. Owns [`seal`], [`open`] and [`certificate_hash`].

use super::{check_canonical, decode_exact, encode, CertBody, CertError};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;

/// The envelope's format tag.
pub const FORMAT: &str = "mersenne-cert";
/// The envelope version this code writes and reads.
pub const VERSION: u64 = 1;

/// The on-disk envelope. Unknown keys are not denied at decode time so that a newer version is
/// reported as such; the canonical-form check rejects them in version 1.
#[derive(Serialize, Deserialize)]
struct Envelope {
    format: String,
    version: u64,
    body: ByteBuf,
    public_key: ByteBuf,
    signature: ByteBuf,
}

/// Sign `body` with `key` and return the certificate file's bytes (CBOR of the envelope).
pub fn seal(body: &CertBody, key: &SigningKey) -> Vec<u8> {
    let body = body.to_cbor();
    let signature = key.sign(&body);
    encode(&Envelope {
        format: FORMAT.into(),
        version: VERSION,
        body: ByteBuf::from(body),
        public_key: ByteBuf::from(key.verifying_key().to_bytes().to_vec()),
        signature: ByteBuf::from(signature.to_bytes().to_vec()),
    })
}

/// Open a certificate: decode the envelope strictly (one canonical CBOR value, format tag,
/// version, key and signature lengths), verify the signature over the stored body bytes with
/// `verify_strict`, check the key against `trust` when given, and only then decode the body.
/// Does not run [`CertBody::validate`]; callers do (`open(..).and_then(|(b, k)| ...)`).
pub fn open(bytes: &[u8], trust: Option<&[u8; 32]>) -> Result<(CertBody, VerifyingKey), CertError> {
    let env: Envelope = decode_exact(bytes, "certificate envelope")?;
    if env.format != FORMAT {
        return Err(CertError::Format(env.format));
    }
    if env.version != VERSION {
        return Err(CertError::Version(env.version));
    }
    check_canonical(&env, bytes, "certificate envelope")?;
    let key: &[u8; 32] = env
        .public_key
        .as_slice()
        .try_into()
        .map_err(|_| CertError::KeyLength(env.public_key.len()))?;
    let signature: &[u8; 64] = env
        .signature
        .as_slice()
        .try_into()
        .map_err(|_| CertError::SignatureLength(env.signature.len()))?;
    let key = VerifyingKey::from_bytes(key).map_err(|_| CertError::BadPublicKey)?;
    key.verify_strict(&env.body, &Signature::from_bytes(signature))
        .map_err(|_| CertError::BadSignature)?;
    if let Some(trusted) = trust {
        if key.as_bytes() != trusted {
            return Err(CertError::Untrusted { found: hex::encode(key.as_bytes()), trusted: hex::encode(trusted) });
        }
    }
    let body = CertBody::from_cbor(&env.body)?;
    Ok((body, key))
}

/// blake3 of the whole certificate file, 64 lower-case hex digits (reported in the result line).
pub fn certificate_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}
