//! Shared helpers for the integration tests: fixture tables and small runs on the CPU engine.
#![allow(dead_code)]

use std::path::PathBuf;

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// The known Mersenne prime exponents.
pub fn known_exponents() -> Vec<u32> {
    std::fs::read_to_string(fixture("known_mersenne_exponents.txt"))
        .expect("fixture present")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.split_whitespace().map(|w| w.parse::<u32>().expect("number")).collect::<Vec<_>>())
        .collect()
}

/// Rows (exponent, iterations, res64, gmp_verified) of a res64 table.
pub fn res64_table(name: &str) -> Vec<(u32, u64, u64, bool)> {
    std::fs::read_to_string(fixture(name))
        .expect("fixture present")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap(), u64::from_str_radix(f[2], 16).unwrap(), f[3] == "yes")
        })
        .collect()
}
