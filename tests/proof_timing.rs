//! Build and verify timings at larger exponents, on synthetic saved points (a real PRP run of
//! these sizes takes too long for a test; the cost of build and verify does not depend on the
//! values). Ignored; run with `cargo test --release --test proof_timing -- --ignored --nocapture`.

use mersenne_cert::proof::arith::CpuArith;
use mersenne_cert::proof::pietrzak;
use mersenne_cert::proof::ProofError;
use mersenne_cert::residue::Residue;
use mersenne_cert::rng::SeededRng;
use std::time::Instant;

/// A pseudo-random residue.
fn pseudo(p: u32, seed: u64) -> Residue {
    SeededRng::new(seed ^ u64::from(p)).residue(p)
}

#[test]
#[ignore = "timing run, minutes"]
fn build_and_verify_timings() {
    for (p, power) in [(216_091u32, 8u32), (216_091, 10), (1_257_787, 8)] {
        let pts: Vec<Residue> = (0..1u64 << power).map(|i| pseudo(p, i + 1)).collect();
        let t = Instant::now();
        let proof = pietrzak::build(p, power, |i| Ok(pts[i].clone()), &mut CpuArith).unwrap();
        let build_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let err = proof.verify(&mut CpuArith, 3).unwrap_err();
        let verify_s = t.elapsed().as_secs_f64();
        assert!(matches!(err, ProofError::Rejected { .. } | ProofError::NotASquare { .. }));
        eprintln!(
            "p={p} power={power}: build {build_s:.2} s, verify {verify_s:.2} s ({} final squarings)",
            pietrzak::final_span(p, power)
        );
    }
}
