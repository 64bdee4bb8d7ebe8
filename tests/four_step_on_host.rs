//! kernels/common/four_step.cuh over a second field: its row transform (`fs_row_square`: DIF
//! stages, pointwise square or product, DIT stages in shared memory) compiled for the host with
//! the Goldilocks field (GlField, kernels/goldilocks/field.cuh; scripts/host-kernels/gl_row_io.cpp)
//! against the cyclic convolution computed directly in 128-bit integers, at every row length
//! 2^0 … 2^13 with one thread a block and with a block's threads: the skeleton is not tied to the
//! FP64 arithmetic (issue 37). It needs `g++` (or `$CXX`).

use mersenne_cert::transform::goldilocks::{Gl, P};
use std::path::Path;
use std::process::Command;

mod common;
use common::host_kernels::{self, Rng};

/// tw[m + j] = w_2m^j (or w_2m^−j) for m = 1 … C/2, j < m, as the skeleton's stages read them.
fn twiddles(log_c: u32, inverse: bool) -> Vec<u64> {
    let mut t = vec![0u64; 1 << log_c];
    for k in 1..=log_c {
        let w = Gl::root_of_unity(k).unwrap();
        let w = if inverse { w.inverse().unwrap() } else { w };
        let m = 1usize << (k - 1);
        (0..m).for_each(|j| t[m + j] = w.pow(j as u64).value());
    }
    t
}

/// C·Σ_i x_i·y_(k−i mod C) mod P for every k, in u128 integers.
fn scaled_convolution(x: &[u64], y: &[u64]) -> Vec<u64> {
    let (c, p) = (x.len(), u128::from(P));
    (0..c)
        .map(|k| {
            let s = (0..c).fold(0u128, |s, i| (s + u128::from(x[i]) * u128::from(y[(k + c - i) % c]) % p) % p);
            (s * c as u128 % p) as u64
        })
        .collect()
}

/// The harness's square and product of random rows of 2^log_c values with `threads` a block
/// (one twiddle changed with `tamper`): whether each matches the convolution.
fn check(log_c: u32, threads: u32, rng: &mut Rng, tamper: bool) -> [bool; 2] {
    let c = 1usize << log_c;
    let row = |rng: &mut Rng| -> Vec<u64> { (0..c).map(|_| rng.next() % P).collect() };
    let (x, y) = (row(rng), row(rng));
    let mut tw = twiddles(log_c, false);
    if tamper {
        tw[c - 1] = 1;
    }
    let mut input = log_c.to_le_bytes().to_vec();
    for v in [&tw, &twiddles(log_c, true), &x, &y] {
        v.iter().for_each(|w| input.extend_from_slice(&w.to_le_bytes()));
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let name = format!("{log_c}-{threads}-{tamper}");
    let (fin, fout) = (dir.join(format!("gl-row-in-{name}")), dir.join(format!("gl-row-out-{name}")));
    std::fs::write(&fin, input).unwrap();
    let exe = host_kernels::harness("gl_row_io.cpp", &[]);
    let run = Command::new(exe).arg(threads.to_string()).arg(&fin).arg(&fout).output().unwrap();
    assert!(run.status.success(), "gl_row_io: {}", String::from_utf8_lossy(&run.stderr));
    let got: Vec<u64> =
        std::fs::read(&fout).unwrap().chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
    let _ = std::fs::remove_file(fin);
    let _ = std::fs::remove_file(fout);
    assert_eq!(got.len(), 2 * c);
    [got[..c] == scaled_convolution(&x, &x), got[c..] == scaled_convolution(&x, &y)]
}

#[test]
fn goldilocks_rows_through_the_skeleton_are_convolutions() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for log_c in 0..=13 {
        // One thread, and a group of 8 values a thread as fp_rows launches (at most 256).
        for threads in [1, ((1u32 << log_c) / 8).clamp(1, 256)] {
            assert_eq!(check(log_c, threads, &mut rng, false), [true, true], "2^{log_c}, {threads} threads");
        }
    }
}

#[test]
fn a_wrong_twiddle_shows() {
    // The comparison has teeth: the last twiddle of the largest stage changed.
    let mut rng = Rng(3);
    assert_eq!(check(10, 128, &mut rng, true), [false, false]);
}
