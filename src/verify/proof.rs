//! The verifier's proof check. A PRP certificate may embed a Pietrzak proof (the GIMPS "PRP
//! PROOF" VERSION=2 bytes); verifying it costs about p/2^power squarings instead of the test's
//! p, and shows that the proof's B is 3^(2^p) mod M_p. The certificate's final residue and its
//! result (status, res64, res2048 in the residue type it names) must then follow from B. A GIMPS
//! proof file can be checked on its own the same way.
//!
//! The squarings run on the engine [`crate::decide`] takes for them ([`EngineArith`] on a fresh
//! PRP engine with a random shift: the GPU where it finishes first), else on the CPU.
//!
//! Below [`FULL_REPLAY_BELOW`] a proof is not relied on: a forgery ground against the hash
//! chain's challenges is cheapest there (docs/certificate.md, "Threat model"), and B is
//! recomputed by the test's own p squarings instead, at most about 4× the proof check's cost.
//!
//! [`EngineArith`]: crate::proof::engine_arith::EngineArith

use super::replay::{final_residue, random_u64, ReplayError};
use crate::cert::{CertBody, Outcome};
use crate::decide::{decide, Ask, Work};
use crate::engine::EngineError;
use crate::exponent::TestKind;
use crate::proof::arith::{CpuArith, ProofArith};
use crate::proof::engine_arith::{runs_on_engine, with_arith};
use crate::proof::pietrzak::final_span;
use crate::proof::{Proof, ProofError, ProofReport};
use crate::residue::Residue;
use crate::transform::plan::Arith;
use std::time::Instant;
use thiserror::Error;

/// Why a proof does not vouch for a result; each names the failing check.
#[derive(Debug, Error)]
pub enum ProofCheckError {
    #[error(
        "the certificate is {kind} for {iterations} of {full} iterations; a proof belongs only to a full PRP test"
    )]
    NotFullPrp { kind: &'static str, iterations: u64, full: u64 },
    #[error("the embedded proof is not a well-formed GIMPS proof: {0}")]
    Decode(ProofError),
    #[error("the proof is for M{proof}, the certificate for M{cert}")]
    WrongExponent { proof: u32, cert: u32 },
    #[error("the certificate's final residue (res64 {cert:016X}) is not the proof's B (res64 {b:016X})")]
    FinalResidue { cert: u64, b: u64 },
    #[error("result.{field} does not follow from the proof's B: the certificate says {stated}, B gives {derived}")]
    Result { field: &'static str, stated: String, derived: String },
    #[error("B is 9·ζ for a root of unity ζ of small order: a disguised probable-prime result, which must not be read as composite")]
    DisguisedPositive,
    #[error("proof verification failed: {0}")]
    Verify(ProofError),
    #[error("{0}")]
    Certificate(#[from] ReplayError),
    #[error("proof engine: {0}")]
    Engine(#[from] EngineError),
    #[error(
        "a full replay of the test gives res64 {replayed:016X}, not B's {b:016X}: the proof is forged (below p = {FULL_REPLAY_BELOW} the proof alone is never relied on)"
    )]
    Replay { replayed: u64, b: u64 },
}

/// Exponents below this are verified by a full replay (p squarings from 3, with GMP) whether or
/// not the proof verifies: a forged proof is cheapest to search for there, and the replay costs
/// at most about 4× the proof check (measured: 3× at 20,011; docs/certificate.md, "Threat model").
pub const FULL_REPLAY_BELOW: u32 = 25_000;

/// A verified proof: what it showed, on which arithmetic, how long it took.
#[derive(Debug, Clone)]
pub struct ProofCheck {
    pub report: ProofReport,
    pub arith: String,
    pub seconds: f64,
    /// B was recomputed by a full replay (p < [`FULL_REPLAY_BELOW`], or asked for) and matched.
    pub replayed: bool,
    /// The arithmetic of the transform engine that checked it (`None`: GMP).
    pub transform: Option<Arith>,
}

impl ProofCheck {
    /// Does the check establish the result on its own, within the 2^-40 bound of the threat
    /// model (docs/certificate.md)? A replayed B does; so does a "probable prime" (B = 9: a
    /// forger would need the composite's own residue to be 9 times an element of small order,
    /// which it cannot choose). A "composite" B taken from the proof alone does not: a forger
    /// who computed the true B can shift it by an element of order r ≥ 2^22 with about r/levels
    /// hash trials, far short of 2^40 — such a check is "proof-checked, not verified".
    pub fn verifies(&self) -> bool {
        self.replayed || self.report.outcome.probable_prime
    }
}

/// Verify a proof (start value 3) on the engine `ask` allows (decided for its squarings, the
/// line that says so on stderr); a B that is a disguised positive is refused. Below
/// [`FULL_REPLAY_BELOW`], or everywhere with `replay`, B must also equal 3^(2^p) mod M_p
/// recomputed in full (GMP below the threshold, else the engine `ask` allows for p squarings).
pub fn verify_proof(proof: &Proof, ask: &Ask, replay: bool) -> Result<ProofCheck, ProofCheckError> {
    let p = proof.p();
    let start = Instant::now();
    let mut decision = decide(ask, &Work::test(p, TestKind::Prp, final_span(p, proof.power()), false))?;
    if let Some(why) = &decision.why {
        eprintln!("{why}");
    }
    let (mut engine, fallback) = decision.open((random_u64() % p as u64) as u32)?;
    if let Some(why) = fallback {
        eprintln!("{why}");
    }
    let arith = match runs_on_engine(engine.as_ref()) {
        true => engine.describe(),
        false => format!("cpu: GMP (rug), {} threads", rayon::current_num_threads()),
    };
    let report = with_arith(engine.as_mut(), |a| proof.verify(a, 3)).map_err(|e| match e {
        ProofError::Engine(e) => ProofCheckError::Engine(e),
        e => ProofCheckError::Verify(e),
    })?;
    if report.outcome.disguised_positive {
        return Err(ProofCheckError::DisguisedPositive);
    }
    let replayed = p < FULL_REPLAY_BELOW || replay;
    if replayed {
        let x = match p < FULL_REPLAY_BELOW {
            true => CpuArith.square_n(&Residue::from_u64(p, 3), p as u64),
            false => full_test(p, ask)?,
        };
        if &x != proof.b() {
            return Err(ProofCheckError::Replay { replayed: x.res64(), b: proof.b().res64() });
        }
    }
    Ok(ProofCheck { report, arith, seconds: start.elapsed().as_secs_f64(), replayed, transform: decision.transform() })
}

/// 3^(2^p) mod M_p by the test's p squarings, on the engine `ask` allows for them.
fn full_test(p: u32, ask: &Ask) -> Result<Residue, ProofCheckError> {
    let mut decision = decide(ask, &Work::test(p, TestKind::Prp, u64::from(p), false))?;
    if let Some(why) = &decision.why {
        eprintln!("replay of B: {why}");
    }
    let (mut engine, fallback) = decision.open((random_u64() % p as u64) as u32)?;
    if let Some(why) = fallback {
        eprintln!("replay of B: {why}");
    }
    engine.load(&Residue::from_u64(p, 3))?;
    engine.iterate(u64::from(p))?;
    Ok(engine.read()?)
}

fn same(field: &'static str, stated: &str, derived: &str) -> Result<(), ProofCheckError> {
    if stated != derived {
        return Err(ProofCheckError::Result { field, stated: stated.into(), derived: derived.into() });
    }
    Ok(())
}

/// The checks of a certificate's embedded proof that need no squaring: the certificate must be a
/// full PRP test of the proof's exponent, its final residue x_p must be B, and its result must be
/// what B gives in the residue type it names (type 1: B/9, P iff 1; type 3: B, P iff 9). Every
/// path of `verify` (plain, `--shard`, `--merge`) runs them; [`check_certificate`] adds the proof
/// check. Assumes the body passed [`CertBody::validate`] and has a proof.
pub fn certificate_proof(body: &CertBody) -> Result<Proof, ProofCheckError> {
    let p = body.exponent;
    let full = body.kind.full_iterations(p);
    if body.kind != TestKind::Prp || body.iterations != full {
        return Err(ProofCheckError::NotFullPrp { kind: body.kind.worktype(), iterations: body.iterations, full });
    }
    let bytes: &[u8] = body.proof.as_deref().map_or(&[], |b| b.as_slice());
    let proof = Proof::from_gimps_bytes(bytes).map_err(ProofCheckError::Decode)?;
    if proof.p() != p {
        return Err(ProofCheckError::WrongExponent { proof: proof.p(), cert: p });
    }
    let last = final_residue(body)?;
    if &last != proof.b() {
        return Err(ProofCheckError::FinalResidue { cert: last.res64(), b: proof.b().res64() });
    }
    // The same rule as the structure check and the replay, applied to B (= the final residue).
    let expected =
        Outcome::in_residue_type(body.kind, body.iterations, proof.b(), body.result.residue_type).map_err(|e| {
            ProofCheckError::Result {
                field: "residue_type",
                stated: format!("{:?}", body.result.residue_type),
                derived: e.to_string(),
            }
        })?;
    let r = &body.result;
    same("status", r.status.as_str(), expected.status.as_str())?;
    same("res64", &r.res64, &expected.res64)?;
    same("res2048", &r.res2048, &expected.res2048)?;
    Ok(proof)
}

/// Check a certificate's embedded proof: [`certificate_proof`], the cheap checks first, then
/// [`verify_proof`].
pub fn check_certificate(body: &CertBody, ask: &Ask) -> Result<ProofCheck, ProofCheckError> {
    verify_proof(&certificate_proof(body)?, ask, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cert::samples::sample;
    use crate::cert::Status;
    use crate::proof::pietrzak;
    use serde_bytes::ByteBuf;

    /// A full PRP body of M_p with an honest proof of power `power`.
    fn body_with_proof(p: u32, power: u32) -> (CertBody, Proof) {
        let pts = pietrzak::proof_points(p, power).unwrap();
        let (mut x, mut at, mut saved) = (Residue::from_u64(p, 3), 0, Vec::new());
        for &k in &pts {
            x = CpuArith.square_n(&x, k - at);
            at = k;
            saved.push(x.clone());
        }
        let proof = pietrzak::build(p, power, |i| Ok(saved[i].clone()), &mut CpuArith).unwrap();
        let mut body = sample(TestKind::Prp, p, p as u64, 40);
        body.proof = Some(ByteBuf::from(proof.to_gimps_bytes()));
        body.validate().unwrap();
        assert_eq!(&final_residue(&body).unwrap(), proof.b());
        (body, proof)
    }

    #[test]
    fn honest_proof_passes_and_every_mismatch_is_named() {
        let (body, proof) = body_with_proof(607, 3);
        let ok = check_certificate(&body, &Ask::cpu()).unwrap();
        assert_eq!((ok.report.power, ok.report.squarings), (3, 76));
        assert!(ok.report.outcome.probable_prime);
        assert!(ok.replayed, "607 < FULL_REPLAY_BELOW: B is recomputed");

        // Residue type 3 (B itself, P iff 9): the rule of the structure check and the replay.
        let mut t3 = body.clone();
        t3.result.residue_type = Some(3);
        t3.result.res64 = "0000000000000009".into();
        t3.result.res2048 = format!("{:0>512}", "9");
        t3.validate().unwrap();
        check_certificate(&t3, &Ask::cpu()).unwrap();
        let mut b = t3.clone();
        b.result.res64 = "0000000000000001".into();
        assert!(matches!(check_certificate(&b, &Ask::cpu()), Err(ProofCheckError::Result { field: "res64", .. })));

        let mut b = body.clone();
        b.result.res64 = "0000000000000002".into();
        assert!(matches!(check_certificate(&b, &Ask::cpu()), Err(ProofCheckError::Result { field: "res64", .. })));
        let mut b = body.clone();
        b.result.status = Status::Composite;
        assert!(matches!(check_certificate(&b, &Ask::cpu()), Err(ProofCheckError::Result { field: "status", .. })));
        let mut b = body.clone();
        b.iterations -= 1;
        assert!(matches!(check_certificate(&b, &Ask::cpu()), Err(ProofCheckError::NotFullPrp { .. })));
        let mut b = body.clone();
        b.proof = Some(ByteBuf::from(b"PRP PROOF\nVERSION=9\n".to_vec()));
        assert!(matches!(check_certificate(&b, &Ask::cpu()), Err(ProofCheckError::Decode(_))));
        // Another B: the final residue no longer matches.
        let other = Proof::new(Residue::from_u64(607, 10), proof.middles().to_vec()).unwrap();
        let mut b = body.clone();
        b.proof = Some(ByteBuf::from(other.to_gimps_bytes()));
        assert!(matches!(check_certificate(&b, &Ask::cpu()), Err(ProofCheckError::FinalResidue { .. })));
        // Another exponent.
        let (other, _) = body_with_proof(521, 2);
        let mut b = body.clone();
        b.proof = other.proof;
        assert!(matches!(
            check_certificate(&b, &Ask::cpu()),
            Err(ProofCheckError::WrongExponent { proof: 521, cert: 607 })
        ));
    }

    #[test]
    fn tampered_middle_bytes_fail_verification() {
        let (body, _) = body_with_proof(607, 3);
        let bytes = body.proof.clone().unwrap().into_vec();
        let header = bytes.len() - 4 * 76;
        for pos in [header + 76, header + 2 * 76 + 40, bytes.len() - 1] {
            for mask in [0x01u8, 0x80] {
                let mut t = bytes.clone();
                t[pos] ^= mask;
                let mut b = body.clone();
                b.proof = Some(ByteBuf::from(t));
                let e = check_certificate(&b, &Ask::cpu()).unwrap_err();
                assert!(matches!(e, ProofCheckError::Verify(_) | ProofCheckError::Decode(_)), "pos {pos}: {e}");
            }
        }
    }
}
