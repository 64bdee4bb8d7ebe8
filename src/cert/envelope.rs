//! The signed envelope around a body: a CBOR map `{format: "mersenne-cert", version: 1 or 2,
//! body: <exact body bytes>, public_key: <32 bytes>, signature: <64 bytes>}`. The Ed25519
//! signature covers exactly the `body` byte string, which is verified as stored (never
//! re-encoded) before the body is decoded. Version 2 adds the body key `arith`; a body without it
//! is sealed as version 1, byte for byte as before, so that readers of version 1 still read it.
//! Owns [`seal`], [`open`] and [`certificate_hash`].

use super::{check_canonical, decode_exact, encode, CertBody, CertError};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;

/// The envelope's format tag.
pub const FORMAT: &str = "mersenne-cert";
/// The newest envelope version this code writes and reads (it reads 1 as well).
pub const VERSION: u64 = 2;

/// The version a body is sealed as: 2 when it records an arithmetic, else 1.
fn version_of(body: &CertBody) -> u64 {
    if body.arith.is_some() {
        2
    } else {
        1
    }
}

/// The on-disk envelope. Unknown keys are not denied at decode time so that a newer version is
/// reported as such; the canonical-form check rejects them in versions 1 and 2.
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
    let version = version_of(body);
    let body = body.to_cbor();
    let signature = key.sign(&body);
    encode(&Envelope {
        format: FORMAT.into(),
        version,
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
    if !(1..=VERSION).contains(&env.version) {
        return Err(CertError::Version(env.version));
    }
    check_canonical(&env, bytes, "certificate envelope")?;
    let key: &[u8; 32] =
        env.public_key.as_slice().try_into().map_err(|_| CertError::KeyLength(env.public_key.len()))?;
    let signature: &[u8; 64] =
        env.signature.as_slice().try_into().map_err(|_| CertError::SignatureLength(env.signature.len()))?;
    let key = VerifyingKey::from_bytes(key).map_err(|_| CertError::BadPublicKey)?;
    key.verify_strict(&env.body, &Signature::from_bytes(signature)).map_err(|_| CertError::BadSignature)?;
    if let Some(trusted) = trust {
        if key.as_bytes() != trusted {
            return Err(CertError::Untrusted { found: hex::encode(key.as_bytes()), trusted: hex::encode(trusted) });
        }
    }
    let body = CertBody::from_cbor(&env.body)?;
    if version_of(&body) != env.version {
        return Err(CertError::Invalid {
            field: "arith".into(),
            why: format!(
                "a version-{} certificate {} the key (version 2 exactly when an arithmetic is recorded)",
                env.version,
                if body.arith.is_some() { "carries" } else { "lacks" }
            ),
        });
    }
    Ok((body, key))
}

/// blake3 of the whole certificate file, 64 lower-case hex digits (reported in the result line).
pub fn certificate_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cert::samples::sample;
    use crate::cert::{Check, CheckEvent, CheckLog, CheckOutcome, Checkpoint, Outcome, Program, Status};
    use crate::exponent::TestKind;
    use quickcheck::{quickcheck, Arbitrary, Gen};

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_bytes(&[seed; 32])
    }

    fn open_and_validate(bytes: &[u8], trust: Option<&[u8; 32]>) -> Result<CertBody, CertError> {
        let (body, _) = open(bytes, trust)?;
        body.validate()?;
        Ok(body)
    }

    /// Arbitrary bodies: every field arbitrary, not necessarily valid.
    #[derive(Debug, Clone)]
    struct AnyBody(CertBody);

    impl Arbitrary for AnyBody {
        fn arbitrary(g: &mut Gen) -> Self {
            let bytes = |g: &mut Gen| serde_bytes::ByteBuf::from(Vec::<u8>::arbitrary(g));
            let checkpoints = (0..usize::arbitrary(g) % 6)
                .map(|_| Checkpoint {
                    iteration: u64::arbitrary(g),
                    hash: std::array::from_fn(|_| u8::arbitrary(g)),
                    residue: bool::arbitrary(g).then(|| bytes(g)),
                })
                .collect();
            let events = (0..usize::arbitrary(g) % 4)
                .map(|_| CheckEvent {
                    iteration: u64::arbitrary(g),
                    check: *g
                        .choose(&[Check::Gerbicz, Check::Jacobi, Check::Spot, Check::Load, Check::Fault, Check::Double])
                        .unwrap(),
                    outcome: *g
                        .choose(&[CheckOutcome::Ok, CheckOutcome::Fail, CheckOutcome::Rollback, CheckOutcome::Injected])
                        .unwrap(),
                    detail: String::arbitrary(g),
                })
                .collect();
            AnyBody(CertBody {
                exponent: u32::arbitrary(g),
                kind: if bool::arbitrary(g) { TestKind::Ll } else { TestKind::Prp },
                shift: u32::arbitrary(g),
                iterations: u64::arbitrary(g),
                program: Program { name: String::arbitrary(g), version: String::arbitrary(g) },
                engine: String::arbitrary(g),
                fft_length: Option::<u64>::arbitrary(g),
                arith: Option::<String>::arbitrary(g),
                host: String::arbitrary(g),
                started: String::arbitrary(g),
                finished: String::arbitrary(g),
                checkpoints,
                result: Outcome {
                    status: *g.choose(&[Status::Prime, Status::Composite, Status::Partial]).unwrap(),
                    res64: String::arbitrary(g),
                    res2048: String::arbitrary(g),
                    residue_type: Option::<u8>::arbitrary(g),
                },
                checks: CheckLog { events, summary: std::collections::BTreeMap::<String, u64>::arbitrary(g) },
                proof: bool::arbitrary(g).then(|| bytes(g)),
            })
        }
    }

    quickcheck! {
        fn seal_open_round_trip(body: AnyBody, seed: u8) -> bool {
            let k = key(seed);
            let sealed = seal(&body.0, &k);
            matches!(open(&sealed, Some(k.verifying_key().as_bytes())),
                     Ok((b, vk)) if b == body.0 && vk == k.verifying_key())
                && CertBody::from_cbor(&body.0.to_cbor()).ok() == Some(body.0)
        }

        fn validate_never_panics(body: AnyBody, pick: u8, valid_times: bool, residues: bool) -> bool {
            let mut b = body.0;
            let p = [3u32, 5, 7, 13, 31, 61, 127][pick as usize % 7];
            b.exponent = p;
            b.shift %= p;
            b.iterations = 1 + b.iterations % b.kind.full_iterations(p).max(1);
            if valid_times {
                b.started = "2026-11-22T02:33:55Z".into();
                b.finished = "2026-11-22T02:33:56Z".into();
            }
            let n = b.checkpoints.len() as u64;
            for (i, c) in b.checkpoints.iter_mut().enumerate() {
                c.iteration = (b.iterations * (i as u64 + 1)).div_ceil(n);
                if residues {
                    if let Some(r) = c.residue.as_mut() {
                        r.resize(crate::residue::byte_count(p), 0);
                        c.hash = *blake3::hash(r).as_bytes();
                    }
                }
            }
            b.program.name.push('x');
            b.program.version.push('1');
            let _ = b.validate();
            true
        }

        fn garbage_is_rejected(bytes: Vec<u8>) -> bool {
            open(&bytes, None).is_err() && CertBody::from_cbor(&bytes).is_err()
        }

        fn random_edits_are_rejected(edits: Vec<(usize, u8)>) -> bool {
            let sealed = seal(&sample(TestKind::Ll, 61, 59, 20), &key(1));
            let mut bytes = sealed.clone();
            for (i, v) in edits {
                let n = bytes.len();
                bytes[i % n] = v;
            }
            bytes == sealed || open_and_validate(&bytes, None).is_err()
        }
    }

    #[test]
    fn every_byte_flip_and_truncation_is_rejected() {
        let body = sample(TestKind::Ll, 127, 125, 25);
        let sealed = seal(&body, &key(1));
        assert_eq!(open_and_validate(&sealed, Some(key(1).verifying_key().as_bytes())).unwrap(), body);
        let masks = [0x01u8, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF];
        for i in 0..sealed.len() {
            for m in masks {
                let mut t = sealed.clone();
                t[i] ^= m;
                assert!(open_and_validate(&t, None).is_err(), "byte {i} ^ {m:#04x} accepted");
            }
        }
        for n in 0..sealed.len() {
            assert!(open_and_validate(&sealed[..n], None).is_err(), "truncation to {n} accepted");
        }
        for extra in [&[0u8][..], b"\xF6", &sealed] {
            let t = [&sealed[..], extra].concat();
            assert!(matches!(open(&t, None), Err(CertError::Trailing { .. })));
        }
        assert!(open(&[], None).is_err());
        assert!(open(b"mersenne-cert", None).is_err());
        assert!(open(&[0xFF; 1000], None).is_err());
        // A CBOR tag in front (e.g. the self-describe tag) changes the bytes: not canonical.
        let tagged = [&[0xD9, 0xD9, 0xF7][..], &sealed].concat();
        assert!(matches!(open(&tagged, None), Err(CertError::NotCanonical { .. })));
    }

    #[test]
    fn resigned_certificate_needs_trust_to_be_caught() {
        let body = sample(TestKind::Prp, 127, 127, 30);
        let (original, other) = (key(1), key(2));
        let resigned = seal(&body, &other);
        let (b, vk) = open(&resigned, None).unwrap();
        assert_eq!((b, vk), (body.clone(), other.verifying_key()));
        let trusted = original.verifying_key().to_bytes();
        let e = open(&resigned, Some(&trusted)).unwrap_err();
        assert!(matches!(e, CertError::Untrusted { .. }), "{e}");
        assert!(e.to_string().contains(&hex::encode(trusted)));
        assert!(open(&seal(&body, &original), Some(&trusted)).is_ok());
        // A changed body re-signed by anyone verifies but fails the structure check.
        let mut lie = body;
        lie.result.status = Status::Composite;
        let (b, _) = open(&seal(&lie, &other), None).unwrap();
        assert!(b.validate().is_err());
    }

    fn envelope(f: impl FnOnce(&mut Envelope)) -> Vec<u8> {
        let body = sample(TestKind::Ll, 31, 29, 10).to_cbor();
        let k = key(3);
        let mut env = Envelope {
            format: FORMAT.into(),
            version: 1,
            public_key: ByteBuf::from(k.verifying_key().to_bytes().to_vec()),
            signature: ByteBuf::from(k.sign(&body).to_bytes().to_vec()),
            body: ByteBuf::from(body),
        };
        f(&mut env);
        encode(&env)
    }

    #[test]
    fn envelope_fields_are_checked() {
        assert!(open(&envelope(|_| ()), None).is_ok());
        assert!(
            matches!(open(&envelope(|e| e.format = "mersenne-kert".into()), None), Err(CertError::Format(f)) if f == "mersenne-kert")
        );
        assert!(matches!(open(&envelope(|e| e.version = 3), None), Err(CertError::Version(3))));
        assert!(matches!(open(&envelope(|e| e.version = 0), None), Err(CertError::Version(0))));
        // Version 2 is the version of a body with `arith`; this one has none.
        let e = open(&envelope(|e| e.version = 2), None).unwrap_err();
        assert!(e.to_string().contains("a version-2 certificate lacks the key"), "{e}");
        assert!(matches!(open(&envelope(|e| e.public_key.truncate(31)), None), Err(CertError::KeyLength(31))));
        assert!(matches!(open(&envelope(|e| e.signature.push(0)), None), Err(CertError::SignatureLength(65))));
        assert!(matches!(open(&envelope(|e| e.signature[63] ^= 0x80), None), Err(CertError::BadSignature)));
        assert!(matches!(open(&envelope(|e| e.body[5] ^= 1), None), Err(CertError::BadSignature)));
        // The signature is over the exact bytes: a re-encoding of the same body does not verify.
        let tagged = envelope(|e| {
            let mut b = vec![0xC0];
            b.extend_from_slice(&e.body);
            e.body = ByteBuf::from(b);
        });
        assert!(matches!(open(&tagged, None), Err(CertError::BadSignature)));
        // Signed but not canonical inside: rejected after the signature check.
        let signed_tagged = envelope(|e| {
            let mut b = vec![0xC0];
            b.extend_from_slice(&e.body);
            e.signature = ByteBuf::from(key(3).sign(&b).to_bytes().to_vec());
            e.body = ByteBuf::from(b);
        });
        assert!(matches!(open(&signed_tagged, None), Err(CertError::NotCanonical { what: "certificate body" })));
        // A signature by a small-order key is refused by verify_strict (here: the identity point).
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let weak = envelope(|e| {
            e.public_key = ByteBuf::from(identity.to_vec());
            e.signature = ByteBuf::from({
                let mut s = vec![0u8; 64];
                s[0] = 1;
                s
            });
        });
        assert!(matches!(open(&weak, None), Err(CertError::BadSignature)));
    }

    #[test]
    fn huge_declared_lengths_and_deep_nesting_are_harmless() {
        let max = [0xFFu8; 8];
        let text = |s: &str| [&[0x60 | s.len() as u8][..], s.as_bytes()].concat();
        let cases: Vec<Vec<u8>> = vec![
            // Envelope map declaring 2^64 − 1 entries.
            [&[0xBB][..], &max].concat(),
            // "body": byte string of 2^64 − 1 bytes.
            [
                &[0xA5][..],
                &text("format"),
                &text(FORMAT),
                &text("version"),
                &[0x01],
                &text("body"),
                &[0x5B],
                &max,
                &[0u8; 100],
            ]
            .concat(),
            // "body" as an array of 2^64 − 1 items (the sequence form of a byte string).
            [&[0xA5][..], &text("body"), &[0x9B], &max, &[0x01; 100]].concat(),
            // "format": text of 2^64 − 1 bytes.
            [&[0xA5][..], &text("format"), &[0x7B], &max, b"mersenne"].concat(),
            // Unknown key whose value is an array of 2^64 − 1 maps.
            [&[0xA5][..], &text("x"), &[0x9B], &max, &[0xA0; 100]].concat(),
            // 100 000 nested arrays.
            vec![0x81; 100_000],
            // 100 000 tags.
            [vec![0xC0; 100_000], vec![0x00]].concat(),
        ];
        for c in &cases {
            assert!(open(c, None).is_err());
            assert!(CertBody::from_cbor(c).is_err());
        }
        let body_cases: Vec<Vec<u8>> = vec![
            [&[0xA1][..], &text("checkpoints"), &[0x9B], &max, &[0xA0; 10]].concat(),
            [&[0xA1][..], &text("host"), &[0x7B], &max, b"gpu"].concat(),
            [&[0xA1][..], &text("proof"), &[0x5B], &max, &[0u8; 10]].concat(),
            [&[0xA1][..], &text("checks"), &[0xA2], &text("events"), &[0x80], &text("summary"), &[0xBB], &max].concat(),
        ];
        for c in &body_cases {
            assert!(matches!(CertBody::from_cbor(c), Err(CertError::Decode { .. })), "{c:02x?}");
        }
    }

    /// The files in fixtures/cert pin the byte format: Ed25519 signing is deterministic, so the
    /// same body and key must seal to the same bytes. A failure here means the format changed.
    #[test]
    fn golden_files_are_stable() {
        let k = key(1);
        let golden: [(&[u8], CertBody, &str); 2] = [
            (
                include_bytes!("../../fixtures/cert/ll-127.cert"),
                sample(TestKind::Ll, 127, 125, 25),
                "edc06f01e9a1be0332b91b305b16e38b2e13e236824e23ba330dba7de42956d3",
            ),
            (
                include_bytes!("../../fixtures/cert/prp-127.cert"),
                sample(TestKind::Prp, 127, 127, 32),
                "ad72612f748fe7337f55399ff55670c137585bea0fe6075edb6e81983d1eb9c8",
            ),
        ];
        for (file, body, hash) in golden {
            assert_eq!(seal(&body, &k), file);
            assert_eq!(certificate_hash(file), hash);
            let (opened, vk) = open(file, Some(k.verifying_key().as_bytes())).unwrap();
            opened.validate().unwrap();
            assert_eq!((opened, vk), (body, k.verifying_key()));
        }
    }

    #[test]
    fn the_arithmetic_is_signed_and_versioned() {
        let k = key(1);
        let mut body = sample(TestKind::Prp, 127, 127, 32);
        // Without the key the bytes are version 1's, as before it existed (the golden files).
        assert_eq!(seal(&body, &k), include_bytes!("../../fixtures/cert/prp-127.cert"));
        body.arith = Some("m61m31".into());
        let sealed = seal(&body, &k);
        let (opened, _) = open(&sealed, None).unwrap();
        opened.validate().unwrap();
        assert_eq!(opened.arithmetic().unwrap(), Some(crate::transform::plan::Arith::M61M31));
        // The field is under the signature: "m61m31" → "goldilocks" in the body is refused.
        let at = sealed.windows(6).position(|w| w == b"m61m31").unwrap();
        let mut tampered = sealed.clone();
        tampered[at..at + 6].copy_from_slice(b"m61m32");
        assert!(matches!(open(&tampered, None), Err(CertError::BadSignature)));
        // An unknown name, signed: a clear structure error, never a panic.
        body.arith = Some("fp32".into());
        let (opened, _) = open(&seal(&body, &k), None).unwrap();
        let e = opened.validate().unwrap_err().to_string();
        assert!(
            e.contains("arith") && e.contains("unknown arithmetic \"fp32\" (known: goldilocks, m61m31, fp64)"),
            "{e}"
        );
    }

    #[test]
    fn certificate_hash_is_blake3_hex() {
        let sealed = seal(&sample(TestKind::Ll, 31, 29, 10), &key(1));
        let h = certificate_hash(&sealed);
        assert_eq!(h.len(), 64);
        assert_eq!(h, hex::encode(blake3::hash(&sealed).as_bytes()));
        assert_eq!(certificate_hash(b""), "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
    }
}
