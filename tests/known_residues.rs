//! Regression against external residues: the LL res64 after 10000 iterations from CUDALucas's
//! self-test tables (reproduced on an H200 by three programs). CI runs the rows that GMP on a
//! CPU core handles in seconds to a minute (exponents up to ~3M); the GPU script runs them all.

mod common;

use mersenne_cert::cpu_ref::GmpEngine;
use mersenne_cert::engine::Engine;
use mersenne_cert::exponent::TestKind;
use mersenne_cert::residue::Residue;
use rayon::prelude::*;

const CPU_LIMIT: u32 = 3_100_000;

fn ll_res64(p: u32, iterations: u64, shift: u32) -> u64 {
    let mut e = GmpEngine::new(p, TestKind::Ll, shift);
    e.load(&Residue::from_u64(p, 4)).unwrap();
    e.iterate(iterations).unwrap();
    e.read().unwrap().res64()
}

#[test]
fn ll_res64_after_10000_iterations_match_the_external_tables() {
    let mut rows = common::res64_table("ll_res64_10000.txt");
    rows.extend(common::res64_table("ll_res64_10000_more.txt"));
    let rows: Vec<_> = rows.into_iter().filter(|r| r.0 <= CPU_LIMIT).collect();
    assert!(rows.len() >= 30, "fixture tables lost rows: {}", rows.len());
    let bad: Vec<String> = rows
        .par_iter()
        .filter_map(|&(p, it, want, _)| {
            // A shift that depends on p: the table is reproduced from rotated data too.
            let got = ll_res64(p, it, (p / 3) % p);
            (got != want).then(|| format!("p={p}: got {got:016x}, want {want:016x}"))
        })
        .collect();
    assert!(bad.is_empty(), "mismatches: {bad:?}");
}

#[test]
fn a_wrong_table_entry_would_be_caught() {
    // The comparison above is not vacuous: a neighbouring iteration count gives another res64.
    let (p, it, want, _) = common::res64_table("ll_res64_10000.txt")[0];
    assert_ne!(ll_res64(p, it - 1, 0), want);
}
