//! Forged PRP proofs, made here as an attacker would, each passing the deterministic check of the
//! GIMPS programs (every challenge from the hash chain) and each refused by `verify`:
//!
//! * small composite M_p, by brute force over one middle value (issue 26): below
//!   `FULL_REPLAY_BELOW` the test is replayed in full, as a GIMPS proof file and inside a signed
//!   certificate;
//! * −B for a composite M_p with p ≥ 8192 (issue 35, item 2): refused by the screen (its Jacobi
//!   symbol is −1);
//! * B·ζ with ζ of order p, ground against the hash chain's last challenge (issue 35, item 1):
//!   refused because the last level's exponent is drawn privately at random by the verifier.
//!
//! And a certificate forged against `--sample` (issue 35, item 3): a spot check never says
//! "verified" and never exits 0.

mod common;

use common::{stderr, stdout, Env};
use ed25519_dalek::SigningKey;
use mersenne_cert::cert::{self, Outcome};
use mersenne_cert::decide::Ask;
use mersenne_cert::proof::arith::{CpuArith, ProofArith};
use mersenne_cert::proof::{pietrzak, Proof, ProofError};
use mersenne_cert::residue::Residue;
use mersenne_cert::verify::proof::{verify_proof, ProofCheckError, FULL_REPLAY_BELOW};
use rug::Integer;
use serde_bytes::ByteBuf;

/// A power-1 proof claiming B = 9 ("probable prime") for M_p, by trying middles until the
/// verification equation holds; None if `tries` do not suffice.
fn forge(p: u32, tries: u64) -> Option<(Proof, u64)> {
    let nine = Residue::from_u64(p, 9);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for t in 1..=tries {
        // splitmix64: middles spread over the whole group.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let m = Residue::from_u64(p, z ^ (z >> 31));
        if m.is_zero() {
            continue;
        }
        let proof = Proof::new(nine.clone(), vec![m]).ok()?;
        if pietrzak::verify_with(&proof, &mut CpuArith, 3, None).is_ok() {
            return Some((proof, t));
        }
    }
    None
}

#[test]
fn brute_forced_proofs_for_composite_mp_are_refused() {
    // M11 = 23·89, M23 = 47·178481, M29 = 233·1103·2089.
    for p in [11u32, 23, 29] {
        assert!(p < FULL_REPLAY_BELOW);
        let (proof, tries) = forge(p, 1 << 22).unwrap_or_else(|| panic!("no forgery for M{p}"));
        eprintln!("M{p}: forged a 'probable prime' proof in {tries} tries");
        assert!(proof.outcome().probable_prime, "the forgery claims P");
        // The private last exponent or the screen may refuse it before the replay does.
        match verify_proof(&proof, &Ask::cpu(), false) {
            Err(ProofCheckError::Replay { b, .. }) => assert_eq!(b, 9),
            Err(ProofCheckError::Verify(_)) => {}
            other => panic!("M{p}: forged proof not refused: {other:?}"),
        }
    }
}

#[test]
fn forged_proof_files_and_certificates_fail_verify() {
    let env = Env::new();
    let p = 23;
    let (proof, _) = forge(p, 1 << 22).expect("a forgery for M23");
    let file = env.path("forged.proof");
    std::fs::write(&file, proof.to_gimps_bytes()).unwrap();
    let o = common::bin("verify").arg("--gimps-proof").arg(&file).args(["--engine", "cpu"]).output().unwrap();
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stderr(&o).contains("full replay") || stderr(&o).contains("proof verification failed"), "{}", stderr(&o));

    // An honest certificate of the composite M23, then the attacker's: final residue 9, result
    // "P", the forged proof, signed with the attacker's own key.
    let honest = env.path("honest.cert");
    let o = env.prove(&["23", "--prp", "--cert", honest.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut body, _) = cert::open(&std::fs::read(&honest).unwrap(), None).unwrap();
    let nine = Residue::from_u64(p, 9);
    let last = body.checkpoints.last_mut().unwrap();
    last.hash = nine.hash();
    last.residue = Some(ByteBuf::from(nine.to_bytes()));
    body.result = Outcome::from_final(body.kind, body.iterations, &nine).unwrap();
    body.proof = Some(ByteBuf::from(proof.to_gimps_bytes()));
    body.validate().expect("the forgery passes the structure check");
    let forged = env.path("forged.cert");
    std::fs::write(&forged, cert::seal(&body, &SigningKey::from_bytes(&[0x22; 32]))).unwrap();
    let v = env.verify(&forged, &[]);
    assert!(!v.status.success(), "{}", stdout(&v));
    assert!(
        stderr(&v).contains("the proof is forged") || stderr(&v).contains("proof verification failed"),
        "{}",
        stderr(&v)
    );
    let v = env.verify(&honest, &[]);
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(stdout(&v).contains("M23 is composite"), "{}", stdout(&v));
}

#[test]
fn minus_b_is_refused_by_the_jacobi_screen() {
    // Issue 35, item 2: M10007 is composite; its proof rebuilt from the run's points with
    // B' = M_p − B passes the deterministic check (p is odd, so B is squared at the first level).
    let (p, power) = (10007u32, 3u32);
    let saved = common::proof_points(p, power);
    let honest = pietrzak::build(p, power, |i| Ok(saved[i].clone()), &mut CpuArith).unwrap();
    let m = (Integer::from(1) << p) - 1u32;
    let minus_b = Residue::from_integer(p, &(m - honest.b().to_integer()));
    let last = saved.len() - 1;
    let forged =
        pietrzak::build(p, power, |i| Ok(if i == last { minus_b.clone() } else { saved[i].clone() }), &mut CpuArith)
            .unwrap();
    assert_ne!(forged.outcome().type1.res64(), honest.outcome().type1.res64());
    pietrzak::verify_with(&forged, &mut CpuArith, 3, None).expect("the forgery passes the old, deterministic check");
    match forged.verify(&mut CpuArith, 3) {
        Err(ProofError::NotASquare { which }) => assert_eq!(which, "B"),
        other => panic!("-B not refused by the screen: {other:?}"),
    }
    honest.verify(&mut CpuArith, 3).unwrap();
}

fn pow_mod(b: u64, e: u64, m: u64) -> u64 {
    Integer::from(b).pow_mod(&Integer::from(e), &Integer::from(m)).unwrap().to_u64().unwrap()
}

/// The smallest prime p ≥ `from` whose M_p has a factor f = 2kp + 1 with k < 1000: (p, f).
fn composite_with_factor(from: u32) -> (u32, u64) {
    (from..)
        .filter(|&p| Integer::from(p).is_probably_prime(30) != rug::integer::IsPrime::No)
        .find_map(|p| {
            (1..1000u64).map(|k| 2 * k * p as u64 + 1).find(|&f| pow_mod(2, p as u64, f) == 1).map(|f| (p, f))
        })
        .unwrap()
}

#[test]
fn a_ground_last_level_is_refused_by_the_private_exponent() {
    // Issue 35, item 1, the mechanism: a prover who holds the true B of a composite M_p and a
    // factor f of it makes ζ of order p (mod f; 1 modulo the cofactor), a square and a unit, so
    // the screen passes it. B' = B·ζ^s and a power-1 proof with middle M·ζ^t: the claim after
    // the level is off by ζ^(2s + t(h − 2^⌈p/2⌉)), so trying (s, t) until the hash chain's h
    // makes that 1 takes about p tries.
    let (p, f) = composite_with_factor(FULL_REPLAY_BELOW);
    let mp = (Integer::from(1) << p) - 1u32;
    let cof = Integer::from(&mp / f);
    let z = (2u64..).map(|g| pow_mod(g, (f - 1) / p as u64, f)).find(|&z| z != 1).unwrap();
    // ζ ≡ z (mod f), ≡ 1 (mod the cofactor).
    let inv = Integer::from(&cof % f).invert(&Integer::from(f)).unwrap().to_u64().unwrap();
    let lift = (Integer::from(z + f - 1) * inv) % f;
    let zeta = Residue::from_integer(p, &((&cof * lift) + 1u32));
    assert_eq!(CpuArith.exp(&zeta, p as u64), Residue::from_u64(p, 1));
    let saved = common::proof_points(p, 1);
    let honest = pietrzak::build(p, 1, |i| Ok(saved[i].clone()), &mut CpuArith).unwrap();
    let (q, c) = (p as u64, pow_mod(2, (p as u64).div_ceil(2), p as u64));
    // B' = B·ζ^s, M' = M·ζ^t: off by ζ^(2s + t(h − c)) after the level. ζ^t repeats after p
    // values of t, so B's shift s changes too (a new hash chain).
    let mut b = honest.b().clone();
    let forged = (1..=20u64)
        .find_map(|s| {
            b = CpuArith.mul(&b, &zeta);
            let mut m = honest.middles()[0].clone();
            (1..q).find_map(|t| {
                m = CpuArith.mul(&m, &zeta);
                let h = pietrzak::challenges(&b, std::slice::from_ref(&m))[0] % q;
                let e = (2 * s + t * ((h + q - c) % q)) % q;
                (e == 0).then(|| Proof::new(b.clone(), vec![m.clone()]).unwrap())
            })
        })
        .expect("a forgery within 20p tries");
    eprintln!("M{p} (factor {f}): forged a power-1 proof with a wrong res64");
    pietrzak::verify_with(&forged, &mut CpuArith, 3, None).expect("the forgery passes the old, deterministic check");
    // With the verifier's own exponent r it passes only when 2 + t(r − c) ≡ 0 (mod p).
    let h = forged.challenges()[0];
    for r in [h.wrapping_add(1), h ^ (1 << 40), 0x9e37_79b9_7f4a_7c15] {
        assert!(matches!(pietrzak::verify_with(&forged, &mut CpuArith, 3, Some(r)), Err(ProofError::Rejected { .. })));
    }
    // The private draw: different on every check, so nothing in the file can fit it (this fails
    // by chance with probability about 1/p).
    assert!(matches!(forged.verify(&mut CpuArith, 3), Err(ProofError::Rejected { .. })));
    let (a, b2) = (honest.verify(&mut CpuArith, 3).unwrap(), honest.verify(&mut CpuArith, 3).unwrap());
    assert_ne!(a.last_exponent, b2.last_exponent);
}

#[test]
fn a_sample_never_verifies_a_forged_chain() {
    // Issue 35, item 3: an honest LL chain of the composite M10007, then a stored residue
    // 2^((p+1)/2) at iteration p − 3 and a final residue 0 ("prime"): the last segment replays
    // right, the one before it does not.
    let env = Env::new();
    let p = 10007u32;
    let honest = env.path("honest.cert");
    let o = env.prove(&[&p.to_string(), "--cert", honest.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut body, _) = cert::open(&std::fs::read(&honest).unwrap(), None).unwrap();
    let (n, zero) = (body.iterations, Residue::from_u64(p, 0));
    let root = Residue::from_integer(p, &(Integer::from(1) << p.div_ceil(2)));
    let mut last = body.checkpoints.pop().unwrap();
    assert_eq!(last.iteration, n);
    body.checkpoints.retain(|c| c.iteration < n - 1);
    let mut before = last.clone();
    before.iteration = n - 1;
    before.hash = root.hash();
    before.residue = Some(ByteBuf::from(root.to_bytes()));
    last.hash = zero.hash();
    last.residue = Some(ByteBuf::from(zero.to_bytes()));
    body.checkpoints.extend([before, last]);
    body.checks.events.retain(|e| e.iteration < n - 1);
    body.result = Outcome::from_final(body.kind, n, &zero).unwrap();
    body.validate().expect("the forgery passes the structure check");
    let forged = env.path("forged.cert");
    std::fs::write(&forged, cert::seal(&body, &SigningKey::from_bytes(&[0x22; 32]))).unwrap();
    for k in ["1", "5", "20"] {
        let v = env.verify(&forged, &["--sample", k]);
        // The sample may draw the forged segment (19 of the 155 others at K = 20): then it is
        // caught. Either way nothing is verified.
        if v.status.code() == Some(1) {
            assert!(stderr(&v).contains(&format!("replay mismatch at iteration {}", n - 1)), "{}", stderr(&v));
            continue;
        }
        assert_eq!(v.status.code(), Some(3), "--sample {k}: {}", stderr(&v));
        assert!(
            stdout(&v).starts_with("spot-checked, not verified: the certificate says M10007 is prime"),
            "{}",
            stdout(&v)
        );
        assert!(!stdout(&v).contains("verified: M"), "{}", stdout(&v));
    }
    let v = env.verify(&forged, &[]);
    assert_eq!(v.status.code(), Some(1));
    assert!(stderr(&v).contains(&format!("replay mismatch at iteration {}", n - 1)), "{}", stderr(&v));
}
