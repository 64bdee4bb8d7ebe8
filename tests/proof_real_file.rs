//! The real GIMPS proof of M1257787 (power 8) written by PRPLL: parsing, the hash chain and the
//! middles' res64 against what PRPLL logged, full verification, and byte-level tampering.
//!
//! Verification at p = 1.26M costs ~4914 + ~1000 GMP squarings (20–40 s on 2 shared cores), so
//! the tests that verify are `#[ignore]`d; run them with `cargo test --release --test
//! proof_real_file -- --ignored`. Parsing, the hash chain and header tampering always run.

use mersenne_cert::proof::arith::CpuArith;
use mersenne_cert::proof::{Proof, ProofError};
use rayon::prelude::*;
use std::time::Instant;

const FILE: &[u8] = include_bytes!("../fixtures/proof/1257787-8.proof");
const HEADER: &[u8] = b"PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=8\nNUMBER=M1257787\n";
const RES_BYTES: usize = 157_224; // ceil(1257787 / 8)

/// What PRPLL logged for this proof: middles' res64 and challenges.
const MIDDLES: [u64; 8] = [
    0x2becc13dcb180508,
    0x1aea5443c6e7ceaa,
    0x7da4241ba6ebfcd2,
    0x36037b5e78733185,
    0x4003d68346949199,
    0xad26b90db44dab6f,
    0xe612ebb533cf8825,
    0x4cf2a84f99e08f2e,
];
const CHALLENGES: [u64; 8] = [
    0x6cc0c63f2f31bbf5,
    0xf137d3de0aa70818,
    0x69e7aeefd3fdc482,
    0xfda1c4ff7b91231f,
    0x4af2abe778df173c,
    0x855f8c8194ee7b7e,
    0x81b2b1f105c8e2bb,
    0x0cb3fee73b76e872,
];

#[test]
fn parses_and_reproduces_prpll_log() {
    let proof = Proof::from_gimps_bytes(FILE).unwrap();
    assert_eq!((proof.p(), proof.power()), (1_257_787, 8));
    assert!(FILE.starts_with(HEADER));
    assert_eq!(FILE.len(), HEADER.len() + 9 * RES_BYTES);
    let got: Vec<u64> = proof.middles().iter().map(|m| m.res64()).collect();
    assert_eq!(got, MIDDLES);
    assert_eq!(proof.challenges(), CHALLENGES);
    assert_eq!(proof.to_gimps_bytes(), FILE);
    let outcome = proof.outcome();
    assert!(outcome.probable_prime && !outcome.disguised_positive);
    assert_eq!(outcome.type3_res64, 9);
    assert_eq!(outcome.type1.res64_hex(), "0000000000000001");
}

#[test]
fn every_header_byte_change_is_refused_by_the_parser() {
    // No other exponent has the same residue size and is prime, and every other field change
    // breaks the header or the sizes, so each single-byte change fails before any arithmetic.
    for i in 0..HEADER.len() {
        for v in 0..=255u8 {
            if v == FILE[i] {
                continue;
            }
            let mut bytes = FILE.to_vec();
            bytes[i] = v;
            assert!(Proof::from_gimps_bytes(&bytes).is_err(), "byte {i} set to {v:#04x} still parses");
        }
    }
    // Truncation and extension.
    assert!(Proof::from_gimps_bytes(&FILE[..FILE.len() - 1]).is_err());
    let mut longer = FILE.to_vec();
    longer.push(0);
    assert!(Proof::from_gimps_bytes(&longer).is_err());
}

#[test]
fn changed_residue_bytes_change_the_challenges() {
    for r in 0..9 {
        let mut bytes = FILE.to_vec();
        bytes[HEADER.len() + r * RES_BYTES + 1000] ^= 0x04;
        let tampered = Proof::from_gimps_bytes(&bytes).unwrap();
        let hs = tampered.challenges();
        // B feeds every challenge; middle i feeds h_i and later ones.
        let first_changed = if r == 0 { 0 } else { r - 1 };
        assert_eq!(hs[..first_changed], CHALLENGES[..first_changed]);
        assert!(hs[first_changed..].iter().zip(&CHALLENGES[first_changed..]).all(|(a, b)| a != b));
    }
}

#[test]
#[ignore = "~4914 squarings at p=1.26M (20-40 s)"]
fn verifies_with_4914_squarings() {
    let proof = Proof::from_gimps_bytes(FILE).unwrap();
    let t = Instant::now();
    let report = proof.verify(&mut CpuArith, 3).unwrap();
    eprintln!("verify M1257787 power 8: {:.2} s", t.elapsed().as_secs_f64());
    assert_eq!(report.squarings, 4914);
    assert_eq!(report.challenges, CHALLENGES);
    assert!(report.outcome.probable_prime);
    assert_eq!(report.outcome.type1.res64(), 1);
}

#[test]
#[ignore = "nine full verifications at p=1.26M (several minutes)"]
fn tampered_residues_are_rejected() {
    (0..9).into_par_iter().for_each(|r| {
        let mut bytes = FILE.to_vec();
        bytes[HEADER.len() + r * RES_BYTES + 77_777] ^= 0x01;
        let proof = Proof::from_gimps_bytes(&bytes).unwrap();
        let err = proof.verify(&mut CpuArith, 3).unwrap_err();
        // A flipped bit: a non-square for the screen, or a mismatch after the 4914 squarings.
        assert!(
            matches!(err, ProofError::Rejected { squarings: 4914, .. } | ProofError::NotASquare { .. }),
            "residue {r}: {err}"
        );
    });
}
