//! Test data for the certificate modules: valid certificate bodies computed directly with GMP
//! (independently of the prover), which tests then tamper with.

use super::{CertBody, Check, CheckEvent, CheckLog, CheckOutcome, Checkpoint, Outcome, Program, Status};
use crate::exponent::TestKind;
use crate::residue::{reduce_mersenne, Residue};
use rug::Integer;
use serde_bytes::ByteBuf;

/// s_k (LL: s_0 = 4, s ← s² − 2) or x_k (PRP: x_0 = 3, x ← x²) mod M_p at each k in `at`
/// (increasing), computed directly with GMP.
pub(crate) fn states(kind: TestKind, p: u32, at: &[u64]) -> Vec<Residue> {
    let mut s = Integer::from(kind.start_value());
    let mut k = 0u64;
    let mut out = Vec::new();
    for &target in at {
        while k < target {
            s.square_mut();
            if kind == TestKind::Ll {
                s -= 2;
            }
            reduce_mersenne(&mut s, p);
            k += 1;
        }
        out.push(Residue::from_integer(p, &s));
    }
    out
}

/// A valid body for `iterations` squarings of M_p with a checkpoint every `every` iterations
/// and at the end; every other checkpoint and the last carry the full residue. The outcome
/// is computed here independently of [`Outcome::from_final`] (GMP modular inverse of 9).
pub(crate) fn sample(kind: TestKind, p: u32, iterations: u64, every: u64) -> CertBody {
    let mut at: Vec<u64> = (1..=iterations / every).map(|i| i * every).collect();
    if at.last() != Some(&iterations) {
        at.push(iterations);
    }
    let residues = states(kind, p, &at);
    let n = at.len();
    let checkpoints = at
        .iter()
        .zip(&residues)
        .enumerate()
        .map(|(i, (&iteration, r))| Checkpoint {
            iteration,
            hash: r.hash(),
            residue: (i % 2 == 1 || i + 1 == n).then(|| ByteBuf::from(r.to_bytes())),
        })
        .collect();
    let last = residues.last().expect("at least one checkpoint");
    let result = if iterations < kind.full_iterations(p) {
        Outcome { status: Status::Partial, res64: last.res64_hex(), res2048: last.res2048_hex(), residue_type: None }
    } else if kind == TestKind::Ll {
        let status = Status::from_prime(last.is_zero());
        Outcome { status, res64: last.res64_hex(), res2048: last.res2048_hex(), residue_type: None }
    } else {
        let r = last.divide_by_9().expect("9 is invertible mod M_p for odd p");
        let status = Status::from_prime(r.equals_u64(1));
        Outcome { status, res64: r.res64_hex(), res2048: r.res2048_hex(), residue_type: Some(1) }
    };
    CertBody {
        exponent: p,
        kind,
        shift: p / 3,
        iterations,
        program: Program { name: "mersenne-cert".into(), version: "0.1.0".into() },
        engine: "cpu-gmp".into(),
        fft_length: None,
        arith: None,
        host: "test host".into(),
        started: "2026-11-22T02:33:55Z".into(),
        finished: "2026-11-22T02:34:10.25Z".into(),
        checkpoints,
        result,
        checks: CheckLog {
            events: vec![
                CheckEvent { iteration: 0, check: Check::Load, outcome: CheckOutcome::Ok, detail: "start".into() },
                CheckEvent { iteration: every, check: Check::Spot, outcome: CheckOutcome::Ok, detail: String::new() },
            ],
            summary: [("spot_checks".to_string(), 1u64)].into_iter().collect(),
        },
        proof: None,
    }
}
