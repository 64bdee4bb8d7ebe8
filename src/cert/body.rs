//! What a certificate certifies: the test (exponent, kind, shift, iterations), who ran it how
//! (program, engine, host, times), the checkpoint hashes and residues a verifier replays, the
//! result, the error-check log and an optional proof. Owns the CBOR form of the body and the
//! structure check [`CertBody::validate`]; the arithmetic itself is checked by the replay.

use super::outcome::{Outcome, Status};
use super::time::parse_rfc3339_utc;
use super::{check_canonical, decode_exact, encode, CertError};
use crate::exponent::{validate_exponent, TestKind};
use crate::residue::{byte_count, Residue};
use crate::transform::plan::Arith;
use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;
use std::collections::BTreeMap;

/// Which error check a [`CheckEvent`] is about (written in lower case in the certificate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    Gerbicz,
    Jacobi,
    Spot,
    /// A saved state read back on resume.
    Load,
    /// A fault injected on purpose (`--inject-fault`).
    Fault,
    /// LL: a second engine recomputed a segment (`--ll-check double`).
    Double,
}

/// What happened at a [`CheckEvent`] (written in lower case in the certificate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckOutcome {
    Ok,
    Fail,
    Rollback,
    Injected,
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Check::Gerbicz => "gerbicz",
            Check::Jacobi => "jacobi",
            Check::Spot => "spot",
            Check::Load => "load",
            Check::Fault => "fault",
            Check::Double => "double",
        })
    }
}

/// The certified content. Field meanings are documented in `docs/certificate.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CertBody {
    pub exponent: u32,
    /// Written as the GIMPS worktype, "LL" or "PRP-3".
    #[serde(with = "kind_name")]
    pub kind: TestKind,
    /// Starting shift count, in [0, p).
    pub shift: u32,
    /// Iterations performed; `kind.full_iterations(p)` for a full test.
    pub iterations: u64,
    pub program: Program,
    /// Engine and plan description (`Engine::describe`).
    pub engine: String,
    /// Transform length (GIMPS "fft-length"); absent for engines without one.
    pub fft_length: Option<u64>,
    /// The exact arithmetic the transform squared in ([`Arith::name`]: "goldilocks", "m61m31", "fp64");
    /// absent for engines without one (GMP) and in version-1 certificates, which predate the key
    /// (the envelope writes version 2 exactly when it is present). Validated by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arith: Option<String>,
    /// Host and GPU description.
    pub host: String,
    /// RFC 3339 UTC, e.g. "2026-11-22T02:33:55Z" (see [`super::rfc3339_utc`]).
    pub started: String,
    pub finished: String,
    pub checkpoints: Vec<Checkpoint>,
    pub result: Outcome,
    pub checks: CheckLog,
    /// A Pietrzak proof, filled in by the proof module; opaque here.
    pub proof: Option<ByteBuf>,
}

/// Program name and version, as in the GIMPS result line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    pub name: String,
    pub version: String,
}

/// The state after `iteration` squarings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub iteration: u64,
    /// blake3 of the canonical (unshifted) residue bytes, [`Residue::hash`].
    #[serde(with = "serde_bytes")]
    pub hash: [u8; 32],
    /// The full canonical residue ([`Residue::to_bytes`]), for a subset of checkpoints
    /// (always for the last).
    pub residue: Option<ByteBuf>,
}

/// The error checks done during the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckLog {
    /// In the order they happened.
    pub events: Vec<CheckEvent>,
    /// Counters, e.g. "gerbicz_checks", "jacobi_checks", "spot_checks", "rollbacks".
    pub summary: BTreeMap<String, u64>,
}

/// One error check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckEvent {
    pub iteration: u64,
    pub check: Check,
    pub outcome: CheckOutcome,
    pub detail: String,
}

impl CheckLog {
    /// Record an event.
    pub fn log(&mut self, iteration: u64, check: Check, outcome: CheckOutcome, detail: String) {
        self.events.push(CheckEvent { iteration, check, outcome, detail });
    }

    /// Add `by` to the counter `key`.
    pub fn bump(&mut self, key: &str, by: u64) {
        *self.summary.entry(key.into()).or_insert(0) += by;
    }
}

/// Serde for [`TestKind`] as its worktype name.
mod kind_name {
    use crate::exponent::TestKind;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(kind: &TestKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.worktype())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TestKind, D::Error> {
        let name = String::deserialize(d)?;
        match name.as_str() {
            "LL" => Ok(TestKind::Ll),
            "PRP-3" => Ok(TestKind::Prp),
            _ => Err(D::Error::custom(format!("unknown test kind {name:?} (expected \"LL\" or \"PRP-3\")"))),
        }
    }
}

fn is_upper_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
}

impl CertBody {
    /// The canonical CBOR encoding (what the envelope signs).
    pub fn to_cbor(&self) -> Vec<u8> {
        encode(self)
    }

    /// Decode a body; only the canonical encoding (as [`CertBody::to_cbor`] writes it) with no
    /// trailing bytes is accepted. Does not run [`CertBody::validate`].
    pub fn from_cbor(bytes: &[u8]) -> Result<CertBody, CertError> {
        let body: CertBody = decode_exact(bytes, "certificate body")?;
        check_canonical(&body, bytes, "certificate body")?;
        Ok(body)
    }

    /// The prover's arithmetic: None where none is recorded (GMP, or a version-1 certificate),
    /// an error for a name this program does not know.
    pub fn arithmetic(&self) -> Result<Option<Arith>, CertError> {
        match &self.arith {
            None => Ok(None),
            Some(name) => Arith::from_name(name).map(Some).ok_or_else(|| {
                let known: Vec<&str> = Arith::ALL.iter().map(|a| a.name()).collect();
                CertError::invalid("arith", format!("unknown arithmetic {name:?} (known: {})", known.join(", ")))
            }),
        }
    }

    /// The structure check: everything about the certificate that can be checked without
    /// squaring. Returns the first failure, naming the field (and checkpoint).
    pub fn validate(&self) -> Result<(), CertError> {
        use CertError as E;
        let p = validate_exponent(u64::from(self.exponent)).map_err(|e| E::invalid("exponent", e.to_string()))?;
        if p == 2 {
            return Err(E::invalid("exponent", "M_2 = 3 is prime by inspection; certificates start at p = 3"));
        }
        if self.shift >= p {
            return Err(E::invalid("shift", format!("shift count {} is not below p = {p}", self.shift)));
        }
        let full = self.kind.full_iterations(p);
        if self.iterations == 0 || self.iterations > full {
            return Err(E::invalid(
                "iterations",
                format!("{} is not in 1..={full} (a full {} test of M_{p})", self.iterations, self.kind.worktype()),
            ));
        }
        self.arithmetic()?;
        if self.program.name.is_empty() || self.program.version.is_empty() {
            return Err(E::invalid("program", "name and version must not be empty"));
        }
        let started = parse_rfc3339_utc(&self.started).map_err(|e| E::invalid("started", e))?;
        let finished = parse_rfc3339_utc(&self.finished).map_err(|e| E::invalid("finished", e))?;
        if finished < started {
            return Err(E::invalid("finished", "is before started"));
        }
        let last = self.validate_checkpoints(p)?;
        self.validate_result(&last)?;
        self.validate_checks()
    }

    /// Checkpoints: strictly increasing in 1..=iterations, residues canonical and matching their
    /// hashes, the last at `iterations` with its residue. Returns the last residue.
    fn validate_checkpoints(&self, p: u32) -> Result<Residue, CertError> {
        let mut last: Option<Residue> = None;
        let mut previous = 0u64;
        for (i, c) in self.checkpoints.iter().enumerate() {
            let field = || format!("checkpoint {} (iteration {})", i + 1, c.iteration);
            if c.iteration == 0 || c.iteration > self.iterations {
                return Err(CertError::invalid(field(), format!("iteration is not in 1..={}", self.iterations)));
            }
            if c.iteration <= previous {
                return Err(CertError::invalid(
                    field(),
                    format!("iterations must increase strictly (previous checkpoint at {previous})"),
                ));
            }
            previous = c.iteration;
            last = match &c.residue {
                Some(bytes) => {
                    if bytes.len() != byte_count(p) {
                        return Err(CertError::invalid(
                            field(),
                            format!("residue is {} bytes, expected {} for p = {p}", bytes.len(), byte_count(p)),
                        ));
                    }
                    let r = Residue::from_bytes(p, bytes).map_err(|e| CertError::invalid(field(), e.to_string()))?;
                    if r.hash() != c.hash {
                        return Err(CertError::invalid(field(), "residue hash does not match"));
                    }
                    Some(r)
                }
                None => None,
            };
        }
        let Some(c) = self.checkpoints.last() else {
            return Err(CertError::invalid("checkpoints", "none recorded (the last must be at the final iteration)"));
        };
        if c.iteration != self.iterations {
            return Err(CertError::invalid(
                format!("checkpoint {} (iteration {})", self.checkpoints.len(), c.iteration),
                format!("the last checkpoint must be at the final iteration {}", self.iterations),
            ));
        }
        last.ok_or_else(|| {
            CertError::invalid(
                format!("checkpoint {} (iteration {})", self.checkpoints.len(), c.iteration),
                "the last checkpoint must carry the full residue",
            )
        })
    }

    /// The result fields: well-formed, and what the final residue gives.
    fn validate_result(&self, last: &Residue) -> Result<(), CertError> {
        let r = &self.result;
        if !is_upper_hex(&r.res64, 16) {
            return Err(CertError::invalid("result.res64", "must be 16 upper-case hex digits"));
        }
        if !is_upper_hex(&r.res2048, 512) {
            return Err(CertError::invalid("result.res2048", "must be 512 upper-case hex digits"));
        }
        let partial = self.iterations < self.kind.full_iterations(self.exponent);
        if partial != (r.status == Status::Partial) {
            return Err(CertError::invalid(
                "result.status",
                format!(
                    "\"{}\" does not fit {} of {} iterations",
                    r.status,
                    self.iterations,
                    self.kind.full_iterations(self.exponent)
                ),
            ));
        }
        // What the final residue reports, in the residue type the certificate names.
        let expected = Outcome::in_residue_type(self.kind, self.iterations, last, r.residue_type)?;
        if r.status != expected.status {
            return Err(CertError::invalid(
                "result.status",
                format!("says {} but the final residue gives {}", r.status, expected.status),
            ));
        }
        if r.res64 != expected.res64 {
            return Err(CertError::invalid(
                "result.res64",
                format!("does not match the final residue ({})", expected.res64),
            ));
        }
        if r.res2048 != expected.res2048 {
            return Err(CertError::invalid("result.res2048", "does not match the final residue"));
        }
        Ok(())
    }

    /// The check log: events at iterations within the run (their names and outcomes are
    /// checked when the body is decoded). A PRP run goes on to the end of its last Gerbicz block, so its events may lie beyond
    /// `iterations`. An LL `jacobi` or `double` check that passed lies at a checkpoint: the
    /// residue it vouches for is the one whose hash the chain holds there.
    fn validate_checks(&self) -> Result<(), CertError> {
        for (i, e) in self.checks.events.iter().enumerate() {
            let field = || format!("checks.events[{i}] (iteration {})", e.iteration);
            if self.kind == TestKind::Ll && e.iteration > self.iterations {
                return Err(CertError::invalid(field(), format!("iteration is beyond the run's {}", self.iterations)));
            }
            let chained = matches!(e.check, Check::Jacobi | Check::Double) && e.outcome == CheckOutcome::Ok;
            if self.kind == TestKind::Ll
                && chained
                && self.checkpoints.binary_search_by_key(&e.iteration, |c| c.iteration).is_err()
            {
                return Err(CertError::invalid(
                    field(),
                    format!("a passed {} check off the checkpoint chain", e.check),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cert::samples::{sample, states};

    fn error_of(body: &CertBody) -> String {
        match body.validate() {
            Ok(()) => panic!("accepted an invalid body: {body:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn assert_rejects(body: &CertBody, expected: &str) {
        let e = error_of(body);
        assert!(e.contains(expected), "error {e:?} does not contain {expected:?}");
    }

    /// Names outside the enums (a check, an outcome, a status) are refused when decoding.
    #[test]
    fn unknown_names_are_refused_on_decode() {
        let bytes = sample(TestKind::Ll, 127, 125, 25).to_cbor();
        CertBody::from_cbor(&bytes).unwrap();
        let replace = |from: &[u8], to: &[u8]| {
            let at = bytes.windows(from.len()).position(|w| w == from).expect("name present");
            let mut b = bytes.clone();
            b[at..at + from.len()].copy_from_slice(to);
            b
        };
        for (from, to) in [(&b"spot"[..], &b"spit"[..]), (b"load", b"lead"), (b"\x61P", b"\x61Q")] {
            assert!(CertBody::from_cbor(&replace(from, to)).is_err(), "{:?}", String::from_utf8_lossy(to));
        }
    }

    #[test]
    fn valid_samples_and_their_results() {
        let ll127 = sample(TestKind::Ll, 127, 125, 25);
        ll127.validate().unwrap();
        assert_eq!((ll127.result.status, ll127.result.res64.as_str()), (Status::Prime, "0000000000000000"));
        let prp127 = sample(TestKind::Prp, 127, 127, 20);
        prp127.validate().unwrap();
        assert_eq!((prp127.result.status, prp127.result.res64.as_str()), (Status::Prime, "0000000000000001"));
        // M_11 = 23·89 and M_67 are composite.
        for (kind, p) in [(TestKind::Ll, 11), (TestKind::Prp, 11), (TestKind::Ll, 67), (TestKind::Prp, 67)] {
            let b = sample(kind, p, kind.full_iterations(p), 4);
            b.validate().unwrap();
            assert_eq!(b.result.status, Status::Composite, "{kind:?} {p}");
        }
        let partial = sample(TestKind::Prp, 521, 300, 100);
        partial.validate().unwrap();
        assert_eq!(partial.result.status, Status::Partial);
        assert_eq!(
            partial.result,
            Outcome::from_final(TestKind::Prp, 300, &states(TestKind::Prp, 521, &[300])[0]).unwrap()
        );
        // from_final agrees with the independent computation for full tests.
        for b in [&ll127, &prp127] {
            let last = Residue::from_bytes(127, b.checkpoints.last().unwrap().residue.as_ref().unwrap()).unwrap();
            assert_eq!(Outcome::from_final(b.kind, b.iterations, &last).unwrap(), b.result);
        }
        // PRP residue type 3 reports x_p itself (9 for a prime).
        let mut t3 = prp127.clone();
        t3.result.residue_type = Some(3);
        t3.result.res64 = "0000000000000009".into();
        t3.result.res2048 = format!("{:0>512}", "9");
        t3.validate().unwrap();
    }

    #[test]
    fn kind_is_written_as_worktype() {
        let b = sample(TestKind::Prp, 31, 31, 10);
        let cbor = b.to_cbor();
        assert!(cbor.windows(5).any(|w| w == b"PRP-3"));
        assert_eq!(CertBody::from_cbor(&cbor).unwrap(), b);
        let bad = sample(TestKind::Ll, 31, 29, 10).to_cbor();
        let i = bad.windows(9).position(|w| w == b"\x62LL\x65shift").unwrap(); // "LL", next key
        let mut bad2 = bad.clone();
        bad2[i + 1] = b'X';
        assert!(CertBody::from_cbor(&bad2).unwrap_err().to_string().contains("unknown test kind"));
        let mut trailing = cbor.clone();
        trailing.push(0);
        assert!(matches!(CertBody::from_cbor(&trailing), Err(CertError::Trailing { count: 1, .. })));
    }

    #[test]
    fn validate_catches_structure_errors() {
        let good = sample(TestKind::Ll, 127, 125, 25);
        let edit = |f: &dyn Fn(&mut CertBody)| {
            let mut b = good.clone();
            f(&mut b);
            b
        };
        assert_rejects(&edit(&|b| b.exponent = 129), "exponent: exponent 129 is not prime");
        assert_rejects(&edit(&|b| b.exponent = 2), "exponent: M_2");
        assert_rejects(&edit(&|b| b.shift = 127), "shift");
        assert_rejects(&edit(&|b| b.iterations = 0), "iterations: 0 is not in 1..=125");
        assert_rejects(&edit(&|b| b.iterations = 126), "iterations: 126 is not in 1..=125");
        assert_rejects(&edit(&|b| b.program.version.clear()), "program");
        assert_rejects(&edit(&|b| b.started = "2026-11-22 02:33:55".into()), "started");
        assert_rejects(&edit(&|b| b.finished = "2026-11-22T02:33:54Z".into()), "finished: is before started");
        // Checkpoints.
        assert_rejects(&edit(&|b| b.checkpoints.clear()), "checkpoints: none recorded");
        assert_rejects(
            &edit(&|b| b.checkpoints[1].iteration = 25),
            "checkpoint 2 (iteration 25): iterations must increase strictly",
        );
        assert_rejects(
            &edit(&|b| b.checkpoints.swap(1, 2)),
            "checkpoint 3 (iteration 50): iterations must increase strictly",
        );
        assert_rejects(
            &edit(&|b| b.checkpoints[0].iteration = 0),
            "checkpoint 1 (iteration 0): iteration is not in 1..=125",
        );
        assert_rejects(
            &edit(&|b| b.checkpoints.last_mut().unwrap().iteration = 200),
            "checkpoint 5 (iteration 200): iteration is not in",
        );
        assert_rejects(
            &edit(&|b| {
                b.checkpoints.pop();
            }),
            "checkpoint 4 (iteration 100): the last checkpoint must be at the final iteration 125",
        );
        assert_rejects(
            &edit(&|b| b.checkpoints[4].residue = None),
            "checkpoint 5 (iteration 125): the last checkpoint must carry the full residue",
        );
        assert_rejects(
            &edit(&|b| b.checkpoints[1].residue.as_mut().unwrap().push(0)),
            "checkpoint 2 (iteration 50): residue is 17 bytes, expected 16 for p = 127",
        );
        assert_rejects(
            &edit(&|b| {
                b.checkpoints[3].residue.as_mut().unwrap().pop();
            }),
            "checkpoint 4 (iteration 100): residue is 15 bytes",
        );
        assert_rejects(
            &edit(&|b| b.checkpoints[3].residue.as_mut().unwrap()[0] ^= 1),
            "checkpoint 4 (iteration 100): residue hash does not match",
        );
        assert_rejects(
            &edit(&|b| b.checkpoints[0].residue = b.checkpoints[1].residue.clone()),
            "checkpoint 1 (iteration 25): residue hash does not match",
        );
        assert_rejects(
            &edit(&|b| b.checkpoints[1].residue = Some(ByteBuf::from(vec![0xFF; 16]))),
            "checkpoint 2 (iteration 50): residue for p=127 is not canonical",
        );
        // Result.
        assert_rejects(
            &edit(&|b| b.result.status = Status::Composite),
            "result.status: says C but the final residue gives P",
        );
        assert_rejects(
            &edit(&|b| b.result.status = Status::Partial),
            "result.status: \"partial\" does not fit 125 of 125",
        );
        assert_rejects(&edit(&|b| b.result.res64 = "0".into()), "result.res64: must be 16 upper-case hex digits");
        assert_rejects(&edit(&|b| b.result.res64 = "000000000000000a".into()), "result.res64: must be 16");
        assert_rejects(
            &edit(&|b| b.result.res64 = "0000000000000001".into()),
            "result.res64: does not match the final residue",
        );
        assert_rejects(
            &edit(&|b| {
                b.result.res2048.pop();
            }),
            "result.res2048: must be 512",
        );
        assert_rejects(&edit(&|b| b.result.res2048.replace_range(0..1, "1")), "result.res2048: does not match");
        assert_rejects(&edit(&|b| b.result.residue_type = Some(1)), "result.residue_type: Some(1): must be absent");
        // Check log.
        assert_rejects(
            &edit(&|b| b.checks.events[0].iteration = 126),
            "checks.events[0] (iteration 126): iteration is beyond",
        );
        assert_rejects(
            &edit(&|b| {
                b.checks.events[0] =
                    CheckEvent { iteration: 3, check: Check::Jacobi, outcome: CheckOutcome::Ok, detail: String::new() }
            }),
            "checks.events[0] (iteration 3): a passed jacobi check off the checkpoint chain",
        );

        // A composite claimed prime, a partial run claimed complete, a PRP with a bad type.
        let mut c = sample(TestKind::Ll, 67, 65, 10);
        c.result.status = Status::Prime;
        assert_rejects(&c, "result.status: says P but the final residue gives C");
        let mut partial = sample(TestKind::Ll, 127, 100, 25);
        partial.result.status = Status::Prime;
        assert_rejects(&partial, "result.status: \"P\" does not fit 100 of 125");
        let mut prp = sample(TestKind::Prp, 127, 127, 25);
        prp.result.residue_type = Some(4);
        assert_rejects(&prp, "result.residue_type: Some(4): must be 1 or 3");
        prp.result.residue_type = None;
        assert_rejects(&prp, "result.residue_type: None: must be 1 or 3");
        prp.result.residue_type = Some(3);
        assert_rejects(&prp, "result.res64: does not match the final residue (0000000000000009)");
    }
}
