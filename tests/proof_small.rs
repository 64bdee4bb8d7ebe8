//! Proofs for small exponents generated from a plain GMP PRP run that saves its proof points:
//! build, verify, GIMPS file round trip, tampering, composite exponents, corrupted saved points,
//! and a second arithmetic that only provides the trait's required methods.

use mersenne_cert::exponent::is_prime;
use mersenne_cert::proof::arith::{CpuArith, ProofArith};
use mersenne_cert::proof::pietrzak::{self, final_span};
use mersenne_cert::proof::points::{ProofStore, StoreError};
use mersenne_cert::proof::{gimps, prove_from_store, Proof, ProofError};
use mersenne_cert::residue::{reduce_mersenne, Residue};
use rug::Integer;
use std::time::Instant;

/// Mersenne prime exponents among those used here.
const MERSENNE_PRIMES: [u32; 9] = [31, 61, 89, 107, 127, 521, 9689, 21701, 44497];

/// Scratch space for saved points: tmpfs when there is one (each save fsyncs, which costs
/// milliseconds on a disk and nothing there).
fn scratch() -> tempfile::TempDir {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

/// A plain PRP-3 run (x ← x² mod M_p, p times) that saves every proof point into `store`.
fn prp_run(store: &ProofStore) -> Residue {
    let p = store.exponent();
    let mut x = Integer::from(3);
    let mut k = 0u64;
    while let Some(next) = store.next_point(k) {
        while k < next {
            x.square_mut();
            reduce_mersenne(&mut x, p);
            k += 1;
        }
        store.save(k, &Residue::from_integer(p, &x)).unwrap();
    }
    Residue::from_integer(p, &x)
}

/// Arithmetic through plain `pow_mod`, relying on the trait's default `exp_mul` and batch: an
/// independent implementation, and the shape a GPU engine would start from.
struct NaiveArith;

impl ProofArith for NaiveArith {
    fn mul(&mut self, a: &Residue, b: &Residue) -> Residue {
        Residue::from_integer(a.exponent(), &(a.to_integer() * b.to_integer()))
    }
    fn exp(&mut self, a: &Residue, e: u64) -> Residue {
        let m = (Integer::from(1) << a.exponent()) - 1u32;
        Residue::from_integer(a.exponent(), &a.to_integer().pow_mod(&Integer::from(e), &m).unwrap())
    }
    fn square_n(&mut self, a: &Residue, n: u64) -> Residue {
        let m = (Integer::from(1) << a.exponent()) - 1u32;
        let e = Integer::from(1) << n as u32;
        Residue::from_integer(a.exponent(), &a.to_integer().pow_mod(&e, &m).unwrap())
    }
}

fn tampered(r: &Residue, byte: usize) -> Residue {
    let mut b = r.to_bytes();
    let i = byte % (b.len() - 1); // stay below the top byte so the value stays canonical
    b[i] ^= 0x01;
    Residue::from_bytes(r.exponent(), &b).unwrap()
}

fn check_rejects_tampering(proof: &Proof) {
    let p = proof.p();
    for i in 0..proof.power() as usize {
        let mut middles = proof.middles().to_vec();
        middles[i] = tampered(&middles[i], 3 + i);
        let bad = Proof::new(proof.b().clone(), middles).unwrap();
        // A flipped bit is caught by the screen (a non-square) or by the final comparison.
        let refused =
            matches!(bad.verify(&mut CpuArith, 3), Err(ProofError::Rejected { .. } | ProofError::NotASquare { .. }));
        assert!(refused, "p={p} middle {i}");
    }
    let bad = Proof::new(tampered(proof.b(), 0), proof.middles().to_vec()).unwrap();
    let refused =
        matches!(bad.verify(&mut CpuArith, 3), Err(ProofError::Rejected { .. } | ProofError::NotASquare { .. }));
    assert!(refused, "p={p} B");
    // The right residues claimed for the wrong start value.
    assert!(proof.verify(&mut CpuArith, 5).is_err());
    // Flipping bits in the file: either it no longer parses or it no longer verifies.
    let bytes = proof.to_gimps_bytes();
    let header = bytes.len() - (proof.power() as usize + 1) * p.div_ceil(8) as usize;
    for r in 0..=proof.power() as usize {
        let mut b = bytes.clone();
        b[header + r * p.div_ceil(8) as usize] ^= 0x02;
        let outcome = Proof::from_gimps_bytes(&b).and_then(|pr| pr.verify(&mut CpuArith, 3));
        assert!(outcome.is_err(), "p={p} file residue {r}");
    }
}

#[test]
fn small_proofs_verify_round_trip_and_reject_tampering() {
    let dir = scratch();
    // (p, power): prime and composite M_p, powers 1..10, p multiple of 2^power or not.
    let cases = [
        (31u32, 2u32),
        (61, 1),
        (89, 3),
        (127, 4),
        (521, 5),
        (9689, 8),
        (9973, 2),
        (20011, 6),
        (30011, 1),
        (21701, 10),
        (44497, 8),
        (49999, 5),
    ];
    for (p, power) in cases {
        assert!(is_prime(p as u64));
        let store = ProofStore::new(&dir.path().join(format!("{p}")), p, power).unwrap();
        let t = Instant::now();
        let x_p = prp_run(&store);
        let run_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let proof = prove_from_store(&store, &mut CpuArith).unwrap();
        let prove_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let report = proof.verify(&mut CpuArith, 3).unwrap();
        let verify_s = t.elapsed().as_secs_f64();
        eprintln!(
            "p={p} power={power}: run {run_s:.3} s, build+self-check {prove_s:.3} s, verify {verify_s:.3} s ({} squarings)",
            report.squarings
        );
        assert_eq!(proof.b(), &x_p);
        assert_eq!(proof.power(), power);
        assert_eq!(report.squarings, final_span(p, power));
        assert_eq!(report.challenges, proof.challenges());
        assert_eq!(report.outcome.probable_prime, MERSENNE_PRIMES.contains(&p), "p={p}");
        assert!(!report.outcome.disguised_positive, "p={p}");
        let nine = Residue::from_integer(p, &(report.outcome.type1.to_integer() * 9u32));
        assert_eq!(nine, x_p);
        // The first middle is x at the first span.
        let first = store.points().iter().position(|&k| k == pietrzak::spans(p, power)[0]).unwrap();
        assert_eq!(proof.middles()[0], store.load(first).unwrap());
        // File round trip.
        let path = dir.path().join(gimps::file_name(&proof));
        gimps::write_file(&proof, &path).unwrap();
        assert_eq!(gimps::read_file(&path).unwrap(), proof);
        check_rejects_tampering(&proof);
        store.remove_all().unwrap();
    }
}

#[test]
fn trait_defaults_give_the_same_proof() {
    let dir = scratch();
    let (p, power) = (4253u32, 7u32);
    let store = ProofStore::new(dir.path(), p, power).unwrap();
    prp_run(&store);
    let fast = prove_from_store(&store, &mut CpuArith).unwrap();
    let naive = prove_from_store(&store, &mut NaiveArith).unwrap();
    assert_eq!(fast, naive);
    assert_eq!(naive.verify(&mut NaiveArith, 3).unwrap().squarings, final_span(p, power));
}

#[test]
fn corrupted_or_missing_point_is_caught_before_publishing() {
    let dir = scratch();
    let (p, power) = (3217u32, 5u32);
    let store = ProofStore::new(dir.path(), p, power).unwrap();
    prp_run(&store);
    assert!(prove_from_store(&store, &mut CpuArith).is_ok());
    for index in [0usize, 7, 31] {
        let iteration = store.points()[index];
        let path = dir.path().join(format!("{iteration}.point"));
        let good = std::fs::read(&path).unwrap();
        let mut bad = good.clone();
        bad[good.len() / 2] ^= 0x40;
        std::fs::write(&path, &bad).unwrap();
        match prove_from_store(&store, &mut CpuArith) {
            Err(ProofError::Store(StoreError::Corrupt { index: i, iteration: k, .. })) => {
                assert_eq!((i, k), (index, iteration));
            }
            other => panic!("point {index}: {other:?}"),
        }
        let msg = prove_from_store(&store, &mut CpuArith).unwrap_err().to_string();
        assert!(msg.contains(&format!("proof point {index} (iteration {iteration})")), "{msg}");
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(
            prove_from_store(&store, &mut CpuArith),
            Err(ProofError::Store(StoreError::Missing { index: i, .. })) if i == index
        ));
        std::fs::write(&path, &good).unwrap();
    }
    // A wrong but well-formed point (a bad run, not a bad disk) is caught by the self-check.
    store.save(store.points()[3], &Residue::from_u64(p, 12345)).unwrap();
    assert!(matches!(prove_from_store(&store, &mut CpuArith), Err(ProofError::SelfCheck(_))));
}

#[test]
fn zero_and_non_unit_middles_are_rejected() {
    // A zero middle makes A and B both zero, which would "verify" any B.
    let p = 9689;
    let zero = Residue::from_u64(p, 0);
    let proof = Proof::new(Residue::from_u64(p, 9), vec![zero.clone(), Residue::from_u64(p, 5)]).unwrap();
    assert!(matches!(proof.verify(&mut CpuArith, 3), Err(ProofError::NotAUnit { .. })));
    // M_11 = 23 · 89: a middle divisible by 23 is caught by the screen (Jacobi symbol 0).
    let p = 11;
    let m = Residue::from_u64(p, 23 * 5);
    let proof = Proof::new(Residue::from_u64(p, 9), vec![m]).unwrap();
    match proof.verify(&mut CpuArith, 3) {
        Err(ProofError::NotAUnit { which }) => assert_eq!(which, "middle 0"),
        other => panic!("{other:?}"),
    }
}
