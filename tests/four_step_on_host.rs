//! kernels/common/four_step.cuh over a second field: its row transform (`fs_row_square`: DIF
//! stages, pointwise square or product, DIT stages in shared memory) compiled for the host with
//! the Goldilocks field (GlField, kernels/goldilocks/field.cuh; scripts/host-kernels/gl_row_io.cpp)
//! against the cyclic convolution computed directly, at every row length 2^0 … 2^13 (the
//! longest row, MAX_COLS_LOG2) with one thread a block and with a block's threads; and kernels/common/pipeline.cuh's
//! kernels over Goldilocks (kernels/goldilocks/four_step.cuh; scripts/host-kernels/pipeline_io.cpp
//! with FS_GOLDILOCKS): three LL iterations through fwd, rows, carry and inv, and a product,
//! against GMP at every length 2^2 … 2^17, compiled for each shape with the threads the FP64
//! engine's blocks have. The skeleton and the pipeline are not tied to the FP64 arithmetic (issue
//! 37). It needs `g++` (or `$CXX`).

use mersenne_cert::transform::fp64::shape::{block_threads, shape_defines, MAX_COLS_LOG2, MOST_THREADS};
use mersenne_cert::transform::goldilocks::four_step::GlFourStep;
use mersenne_cert::transform::goldilocks::{Gl, P};
use mersenne_cert::transform::plan::{Arith, Length, Plan};
use rug::ops::RemRounding;
use rug::Integer;
use std::path::Path;
use std::process::Command;

mod common;
use common::host_kernels::{self, Rng};

/// The twiddles of a 2^log_c-point transform's stages as the skeleton reads them, `tw[m + j]` =
/// ω_2m^j and the inverse table: the first 2^log_c of a Goldilocks plan's (they do not depend
/// on its length; this one is as long as the longest row).
fn stage_twiddles(log_c: u32) -> (Vec<u64>, Vec<u64>) {
    let len = Length { odd: 1, log2: MAX_COLS_LOG2 };
    let plan = Plan::with_length(Arith::Goldilocks.largest_exponent_at(len).unwrap(), Arith::Goldilocks, len).unwrap();
    let (tw, itw) = plan.twiddles();
    let c = 1 << log_c;
    (tw[..c].iter().map(|x| x.value()).collect(), itw[..c].iter().map(|x| x.value()).collect())
}

/// C·Σ_i x_i·y_(k−i mod C) mod P for every k, term by term in the field's own operations (Gl,
/// which src/transform/goldilocks/field.rs checks against u128 arithmetic).
fn scaled_convolution(x: &[u64], y: &[u64]) -> Vec<u64> {
    let c = x.len();
    (0..c)
        .map(|k| {
            let s = (0..c).fold(Gl::ZERO, |s, i| s.add(Gl::new(x[i]).mul(Gl::new(y[(k + c - i) % c]))));
            s.mul(Gl::new(c as u64)).value()
        })
        .collect()
}

/// The harness's square and product of random rows of 2^log_c values with `threads` a block
/// (one twiddle changed with `tamper`): whether each matches the convolution.
fn check(log_c: u32, threads: u32, rng: &mut Rng, tamper: bool) -> [bool; 2] {
    let c = 1usize << log_c;
    let row = |rng: &mut Rng| -> Vec<u64> { (0..c).map(|_| rng.next() % P).collect() };
    let (x, y) = (row(rng), row(rng));
    let (tw, itw) = stage_twiddles(log_c);
    let mut tw = tw;
    if tamper {
        tw[c - 1] = 1;
    }
    let mut input = log_c.to_le_bytes().to_vec();
    for v in [&tw, &itw, &x, &y] {
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
    for log_c in 0..=MAX_COLS_LOG2 {
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

/// The pipeline's IN for Goldilocks (scripts/host-kernels/pipeline_io.cpp) at `plan` (a
/// [`GlFourStep::plan`]): its tables, `digits`, `pending` carries, shift `s`.
fn pipeline_input(plan: &Plan, t: &GlFourStep, digits: &[i64], pending: &[i128], s: u32) -> Vec<u8> {
    let mut b = Vec::new();
    let head = [t.log_r, t.log_c, plan.seg_len() as u32, plan.exponent(), plan.fixup_depth() as u32, t.lo_bits];
    for v in head.into_iter().chain([plan.n() as u32]) {
        b.extend_from_slice(&v.to_le_bytes());
    }
    let words = |b: &mut Vec<u8>, v: &[u64]| v.iter().for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
    words(&mut b, &t.chain);
    words(&mut b, &[0]);
    for table in &t.tables {
        words(&mut b, &[table.len() as u64]);
        words(&mut b, table);
    }
    words(&mut b, &digits.iter().map(|&d| d as u64).collect::<Vec<_>>());
    words(&mut b, &pending.iter().flat_map(|&c| [c as u64, (c >> 64) as u64]).collect::<Vec<_>>());
    b.extend_from_slice(&s.to_le_bytes());
    words(&mut b, &vec![0; 2 * plan.n()]);
    b
}

/// Σ_j d_j·2^⌈pj/n⌉ + Σ_k c_k·2^⌈p·((k + 1)·seg mod n)/n⌉ mod 2^p − 1: digits with the pending
/// carry of each segment due at the next one's first digit.
fn value(p: u32, seg: usize, digits: &[i64], pending: &[i128]) -> Integer {
    let n = digits.len() as u64;
    let start = |j: usize| (u64::from(p) * j as u64).div_ceil(n) as u32;
    let mut v = Integer::new();
    digits.iter().enumerate().for_each(|(j, &d)| v += Integer::from(d) << start(j));
    pending.iter().enumerate().for_each(|(k, &c)| v += Integer::from(c) << start((k + 1) * seg % digits.len()));
    v.rem_euc((Integer::from(1) << p) - 1u32)
}

/// Three LL iterations at `plan` through the Goldilocks pipeline on the host (fwd, rows, carry,
/// rows, carry, rows, inv), then the product of their result with the input (fwd of each, rows
/// with the product, inv), against GMP: whether the residues and the shift count match.
fn pipeline_matches_gmp(plan: &Plan, rng: &mut Rng, extreme: bool) -> bool {
    let (p, n, seg) = (plan.exponent(), plan.n(), plan.seg_len());
    let t = GlFourStep::new(plan).unwrap();
    let [r, c, s, w] = shape_defines(plan);
    let [tile, row] = block_threads(plan, MOST_THREADS);
    let defines = [("FS_GOLDILOCKS", 1), r, c, s, w, tile, row];
    let exe = host_kernels::harness("pipeline_io.cpp", &defines);
    let digits = host_kernels::digits(plan, rng, extreme);
    let pending: Vec<i128> = (0..n / seg).map(|_| i128::from(rng.next() as i64 >> 44)).collect();
    let s0 = (rng.next() % u64::from(p)) as u32;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let name = format!("{p}-{n}-{extreme}");
    let (fin, fout) = (dir.join(format!("gs-in-{name}")), dir.join(format!("gs-out-{name}")));
    std::fs::write(&fin, pipeline_input(plan, &t, &digits, &pending, s0)).unwrap();
    let run = Command::new(exe).arg(&fin).arg(&fout).output().unwrap();
    assert!(run.status.success(), "pipeline_io: {}", String::from_utf8_lossy(&run.stderr));
    let got = std::fs::read(&fout).unwrap();
    let _ = std::fs::remove_file(fin);
    let _ = std::fs::remove_file(fout);
    // fwd, rows twice, inv: then the three iterations' digits, carries and shift.
    let words: Vec<u64> = got.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
    let at = 4 * n + 2 * (n / seg);
    let gd: Vec<i64> = words[at..at + n].iter().map(|&d| d as i64).collect();
    let gc: Vec<i128> = words[at + n..at + n + 2 * (n / seg)]
        .chunks_exact(2)
        .map(|w| (i128::from(w[1] as i64) << 64) | i128::from(w[0]))
        .collect();
    let end = 8 * (at + n + 2 * (n / seg));
    let gs = got[end..].first_chunk::<4>().map(|b| u32::from_le_bytes(*b));
    // Then the product of the last iteration's value with the input's.
    let words: Vec<u64> = got[end + 4..].chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
    let pd: Vec<i64> = words[..n].iter().map(|&d| d as i64).collect();
    let pc: Vec<i128> =
        words[n..].chunks_exact(2).map(|w| (i128::from(w[1] as i64) << 64) | i128::from(w[0])).collect();
    let m = (Integer::from(1) << p) - 1u32;
    let x0 = value(p, seg, &digits, &pending);
    let (mut want, mut s) = (x0.clone(), s0);
    for _ in 0..3 {
        s = ((2 * u64::from(s)) % u64::from(p)) as u32;
        want = (Integer::from(&want * &want) - (Integer::from(1) << (s + 1))).rem_euc(&m);
    }
    let product = (Integer::from(&want * &x0)).rem_euc(&m);
    value(p, seg, &gd, &gc) == want && gs == Some(s) && value(p, seg, &pd, &pc) == product
}

#[test]
fn goldilocks_on_the_pipeline_iterates_like_gmp() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut runs = 0;
    for log2 in 1..=17 {
        let len = Length { odd: 1, log2 };
        let Some(p) = Arith::Goldilocks.largest_exponent_at(len) else { continue };
        let Ok(plan) = GlFourStep::plan(&Plan::with_length(p, Arith::Goldilocks, len).unwrap()) else { continue };
        for extreme in [false, true] {
            assert!(pipeline_matches_gmp(&plan, &mut rng, extreme), "p={p} {len} extreme={extreme}");
            runs += 1;
        }
    }
    assert!(runs >= 28, "{runs} runs");
}
