//! Shared helpers for the integration tests: fixture tables, small runs on the CPU engine, and
//! running the `prove` and `verify` binaries.
#![allow(dead_code)]

pub mod host_kernels;

use mersenne_cert::proof::arith::{CpuArith, ProofArith};
use mersenne_cert::proof::pietrzak;
use mersenne_cert::residue::Residue;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// The residues a PRP test of M`p` saves for a proof of `power`: 3^(2^k) at each of its proof
/// points k, squared by GMP (the reference the proof tests compare with).
pub fn proof_points(p: u32, power: u32) -> Vec<Residue> {
    let (mut x, mut at) = (Residue::from_u64(p, 3), 0);
    pietrzak::proof_points(p, power)
        .unwrap()
        .into_iter()
        .map(|k| {
            x = CpuArith.square_n(&x, k - at);
            at = k;
            x.clone()
        })
        .collect()
}

// ---- The binaries.

pub fn bin(name: &str) -> Command {
    let mut c = Command::new(match name {
        "prove" => env!("CARGO_BIN_EXE_prove"),
        _ => env!("CARGO_BIN_EXE_verify"),
    });
    c.env("NO_COLOR", "1");
    c
}

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        Env { dir: tempfile::tempdir().unwrap() }
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    /// `prove` with a key file made for this test (never the user's default key).
    pub fn prove(&self, args: &[&str]) -> Output {
        let key = self.path("key");
        if !key.exists() {
            std::fs::write(&key, format!("{}\n", "11".repeat(32))).unwrap();
        }
        bin("prove")
            .args(args)
            .arg("--key")
            .arg(&key)
            .args(["--engine", "cpu", "--state-dir"])
            .arg(self.path("state"))
            .output()
            .unwrap()
    }
    pub fn verify(&self, cert: &Path, extra: &[&str]) -> Output {
        bin("verify").arg(cert).args(["--engine", "cpu"]).args(extra).output().unwrap()
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(o: &Output) -> serde_json::Value {
    let s = stdout(o);
    assert_eq!(s.lines().count(), 1, "exactly one result line: {s}");
    serde_json::from_str(s.trim()).unwrap()
}
