//! Build and verify timings at larger exponents, on synthetic saved points (a real PRP run of
//! these sizes takes too long for a test; the cost of build and verify does not depend on the
//! values). Ignored; run with `cargo test --release --test proof_timing -- --ignored --nocapture`.

use mersenne_cert::proof::arith::CpuArith;
use mersenne_cert::proof::pietrzak;
use mersenne_cert::proof::ProofError;
use mersenne_cert::residue::Residue;
use rug::integer::Order;
use rug::Integer;
use std::time::Instant;

/// A pseudo-random residue (splitmix64 words).
fn pseudo(p: u32, seed: u64) -> Residue {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ p as u64;
    let words: Vec<u64> = (0..(p as usize).div_ceil(64))
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect();
    Residue::from_integer(p, &Integer::from_digits(&words, Order::Lsf))
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
        assert!(matches!(err, ProofError::Rejected { .. }));
        eprintln!(
            "p={p} power={power}: build {build_s:.2} s, verify {verify_s:.2} s ({} final squarings)",
            pietrzak::final_span(p, power)
        );
    }
}
