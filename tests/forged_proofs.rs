//! Forged PRP proofs for small composite M_p, made here by brute force over one middle value as
//! an attacker would (issue 26): they pass the proof check on its own, and `verify` still refuses
//! them, as a GIMPS proof file and inside a signed certificate, because below
//! `FULL_REPLAY_BELOW` it replays the test in full.

mod common;

use common::{stderr, stdout, Env};
use ed25519_dalek::SigningKey;
use mersenne_cert::cert::{self, Outcome};
use mersenne_cert::decide::Ask;
use mersenne_cert::proof::arith::CpuArith;
use mersenne_cert::proof::Proof;
use mersenne_cert::residue::Residue;
use mersenne_cert::verify::proof::{verify_proof, ProofCheckError, FULL_REPLAY_BELOW};
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
        if proof.verify(&mut CpuArith, 3).is_ok() {
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
        match verify_proof(&proof, &Ask::cpu()) {
            Err(ProofCheckError::Replay { b, .. }) => assert_eq!(b, 9),
            other => panic!("M{p}: forged proof not refused by the replay: {other:?}"),
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
    assert!(stderr(&o).contains("full replay"), "{}", stderr(&o));

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
    assert!(stderr(&v).contains("the proof is forged"), "{}", stderr(&v));
    let v = env.verify(&honest, &[]);
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(stdout(&v).contains("M23 is composite"), "{}", stdout(&v));
}
