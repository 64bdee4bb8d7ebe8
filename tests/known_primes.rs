//! Regression against the known Mersenne primes on the CPU engine: every known exponent up to
//! 4423 proves prime (LL) and probable prime (PRP-3), and its certificate verifies; every other
//! prime exponent below 2000 gives a composite under both tests.

mod common;

use ed25519_dalek::SigningKey;
use mersenne_cert::cert::{self, Status};
use mersenne_cert::cpu_ref::GmpEngine;
use mersenne_cert::engine::{Engine, EngineChoice};
use mersenne_cert::exponent::{is_prime, TestKind};
use mersenne_cert::progress::Progress;
use mersenne_cert::run::checkpoints::{CheckpointLayout, DEFAULT_RESIDUE_BUDGET};
use mersenne_cert::run::report::{self, TestInfo};
use mersenne_cert::run::{self, RunEnd, RunOptions};
use mersenne_cert::verify::replay::{replay, ReplayOptions};
use rayon::prelude::*;

fn test(p: u32, kind: TestKind) -> (Status, Vec<u8>) {
    let shift = (p * 7 + 3) % p;
    let mut e = GmpEngine::new(p, kind, shift);
    let total = kind.full_iterations(p);
    let layout = CheckpointLayout::choose(p, total.max(1), None, DEFAULT_RESIDUE_BUDGET).unwrap();
    let RunEnd::Done(rec) =
        run::run(&mut e, RunOptions::simple(total, layout, shift), &mut Progress::hidden()).unwrap()
    else {
        panic!("not interrupted")
    };
    let outcome = cert::Outcome::from_final(kind, total, &rec.last).unwrap();
    let info = TestInfo {
        p,
        kind,
        shift,
        engine: e.describe(),
        fft_length: None,
        arith: None,
        host: "test".into(),
        started: report::now_rfc3339(),
        finished: report::now_rfc3339(),
        proof: None,
    };
    let key = SigningKey::from_bytes(&[7u8; 32]);
    let bytes = cert::seal(&report::cert_body(&info, &rec, &outcome), &key);
    (outcome.status, bytes)
}

fn verifies(bytes: &[u8]) -> bool {
    let Ok((body, _)) = cert::open(bytes, None) else { return false };
    body.validate().is_ok() && replay(&body, &ReplayOptions::new(EngineChoice::Cpu, 1)).is_ok()
}

#[test]
fn known_primes_up_to_4423_prove_prime_and_verify() {
    let known: Vec<u32> = common::known_exponents().into_iter().filter(|&p| p <= 4423).collect();
    assert_eq!(known.len(), 20);
    // M2 = 3: prime by inspection; LL reports it, no PRP and no certificate (refused by design).
    let mut e = GmpEngine::new(2, TestKind::Ll, 0);
    let RunEnd::Done(rec) = run::run(
        &mut e,
        RunOptions::simple(0, CheckpointLayout { every: 1, full_every: 1, point_every: 0 }, 0),
        &mut Progress::hidden(),
    )
    .unwrap() else {
        panic!("not interrupted")
    };
    assert_eq!(cert::Outcome::from_final(TestKind::Ll, 0, &rec.last).unwrap().status, Status::Prime);
    known[1..].par_iter().for_each(|&p| {
        for kind in [TestKind::Ll, TestKind::Prp] {
            let (status, bytes) = test(p, kind);
            assert_eq!(status, Status::Prime, "M{p} {kind:?}");
            assert!(verifies(&bytes), "certificate of M{p} {kind:?} does not verify");
        }
    });
}

#[test]
fn other_prime_exponents_below_2000_are_composite() {
    let known = common::known_exponents();
    let others: Vec<u32> = (2..2000u32).filter(|&p| is_prime(p as u64) && !known.contains(&p)).collect();
    assert!(others.len() > 280);
    others.par_iter().for_each(|&p| {
        for kind in [TestKind::Ll, TestKind::Prp] {
            assert_eq!(test(p, kind).0, Status::Composite, "M{p} {kind:?}");
        }
    });
    // And one composite certificate verifies end to end.
    assert!(verifies(&test(1999, TestKind::Ll).1));
}
