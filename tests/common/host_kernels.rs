//! The kernels compiled for the host (scripts/host-kernels/: a block's threads as fibers, blocks
//! one after another): a harness built once per source and defines, and the tests' random words
//! and digits.

use mersenne_cert::transform::plan::Plan;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// xorshift64: the tests' random words.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `plan`'s digits: random within each width, or (`extreme`) each ±(2^(w−1) + the plan's slack),
/// the largest the bound allows.
pub fn digits(plan: &Plan, rng: &mut Rng, extreme: bool) -> Vec<i64> {
    (0..plan.n())
        .map(|j| {
            let w = plan.width(j);
            let top = (1i64 << (w - 1)) + plan.slack() as i64;
            match (extreme, rng.next() & 1) {
                (true, 0) => top,
                (true, _) => -top,
                (false, _) => (rng.next() % (1 << w)) as i64 - (1 << (w - 1)),
            }
        })
        .collect()
}

type Key = (&'static str, Vec<(&'static str, u32)>);

/// scripts/host-kernels/`source` compiled with `defines` (`-DNAME=VALUE`), built once per
/// source and defines in cargo's folder for integration tests' files (a second caller waits for
/// the first's build; different ones build side by side). It needs `g++` (or `$CXX`).
pub fn harness(source: &'static str, defines: &[(&'static str, u32)]) -> PathBuf {
    static EXES: OnceLock<Mutex<HashMap<Key, Arc<OnceLock<PathBuf>>>>> = OnceLock::new();
    let once =
        EXES.get_or_init(Default::default).lock().unwrap().entry((source, defines.to_vec())).or_default().clone();
    once.get_or_init(|| build(source, defines)).clone()
}

fn build(source: &str, defines: &[(&str, u32)]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stem = source.trim_end_matches(".cpp");
    let name: String = defines.iter().map(|(_, v)| format!("-{v}")).collect();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{stem}{name}"));
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-O2", "-ffp-contract=off", "-w"])
        .args(defines.iter().map(|(d, v)| format!("-D{d}={v}")))
        .arg("-I")
        .arg(root.join("scripts/host-kernels"))
        .arg("-I")
        .arg(root.join("kernels"))
        .arg(root.join("scripts/host-kernels").join(source))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{cxx} (a C++17 compiler, for the kernels on the host): {e}"));
    assert!(out.status.success(), "{cxx}: {}", String::from_utf8_lossy(&out.stderr));
    exe
}
