//! The FP64 pair's CRT as the GPU's 64-bit carry walk takes it (kernels/fp64/field.cuh
//! `fp_crt_split`: an output's residues as q·2^w + z), compiled for the host
//! (scripts/host-kernels/crt_split_io.cpp), against `Crt::recombine` (src/transform/fp64/crt.rs,
//! itself checked against rug): for every pair, at the edges of the CRT range and at random, with
//! residues centered and unreduced (up to 3P/4, as the unweighting leaves them), at every width
//! w ≤ 51 for which q fits the walk (|c| < 2^(61 + w): the plans' B_walk < 2^61). It needs `g++`
//! (or `$CXX`).

use mersenne_cert::transform::fp64::crt::Crt;
use mersenne_cert::transform::fp64::primes::PAIRS;
use std::path::Path;
use std::process::Command;

mod common;
use common::host_kernels::{self, Rng};

/// The residues of c the kernel may see: centered, or one modulus off where that stays within
/// 3P/4 (`shift` picks which).
fn residues(crt: &Crt, c: i128, shift: u64) -> (f64, f64) {
    let (x1, x2) = crt.split(c);
    let off = |x: f64, p: u64, s: u64| {
        let p = p as f64;
        let y = match s % 3 {
            0 => x,
            1 => x + p,
            _ => x - p,
        };
        if y.abs() <= 0.75 * p {
            y
        } else {
            x
        }
    };
    (off(x1, crt.f1.modulus(), shift), off(x2, crt.f2.modulus(), shift / 3))
}

#[test]
fn the_split_is_the_recombination() {
    let exe = host_kernels::harness("crt_split_io.cpp", &[]);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let mut rng = Rng(0xC2B2_AE3D_27D4_EB4F);
    for (i, pair) in PAIRS.iter().enumerate() {
        let crt = Crt::new(pair);
        let m = pair.max_abs() as i128;
        let (p1, p2) = (crt.f1.modulus() as i128, crt.f2.modulus() as i128);
        let mut cases: Vec<(i128, u32)> = Vec::new();
        for w in 1..=51u32 {
            let top = m.min((1i128 << (61 + w)) - 1);
            let edges =
                [0, 1, -1, top, -top, top - 1, 1 - top, p1, -p1, p2, -p2, 1i128 << (w - 1), -(1i128 << (w - 1))];
            cases.extend(edges.into_iter().filter(|c| c.abs() <= top).map(|c| (c, w)));
            for _ in 0..400 {
                let r = (i128::from(rng.next()) << 64 | i128::from(rng.next())).rem_euclid(2 * top + 1) - top;
                cases.push((r, w));
            }
        }
        let mut input: Vec<u8> = Vec::new();
        let mut word = |b: [u8; 8]| input.extend_from_slice(&b);
        for v in [crt.f1.p(), crt.f1.pinv(), crt.f2.p(), crt.f2.pinv(), crt.inv] {
            word(v.to_le_bytes());
        }
        word((cases.len() as u64).to_le_bytes());
        let xs: Vec<(f64, f64)> = cases.iter().map(|&(c, _)| residues(&crt, c, rng.next())).collect();
        for (&(_, w), &(x1, x2)) in cases.iter().zip(&xs) {
            word(x1.to_le_bytes());
            word(x2.to_le_bytes());
            word(u64::from(w).to_le_bytes());
        }
        let (inp, outp) = (dir.join(format!("crt-split-{i}.in")), dir.join(format!("crt-split-{i}.out")));
        std::fs::write(&inp, &input).unwrap();
        let status = Command::new(&exe).arg(&inp).arg(&outp).status().unwrap();
        assert!(status.success(), "crt_split_io failed");
        let out = std::fs::read(&outp).unwrap();
        assert_eq!(out.len(), cases.len() * 16);
        for (k, (&(c, w), &(x1, x2))) in cases.iter().zip(&xs).enumerate() {
            let q = i64::from_le_bytes(out[16 * k..16 * k + 8].try_into().unwrap());
            let z = i64::from_le_bytes(out[16 * k + 8..16 * k + 16].try_into().unwrap());
            assert_eq!(crt.recombine(x1, x2), c, "pair {i}: the residues of {c}");
            assert_eq!(i128::from(q) * (1i128 << w) + i128::from(z), c, "pair {i}: c={c} w={w} (q={q}, z={z})");
            assert!(z.unsigned_abs() < 1 << 53, "pair {i}: c={c} w={w}: z={z}");
        }
    }
}
