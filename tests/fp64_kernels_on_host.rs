//! The FP64 GPU kernels (kernels/fp64/pipeline.cuh) compiled for the host with a C++ compiler
//! (scripts/host-kernels/: blocks one after another, a block's threads as fibers) against the
//! CPU twin's stages, bit for bit, at lengths 2^1 … 2^17 for each pair of primes and at 2^20 and
//! 2^21 (tiles of 2^9 rows, 256 and 512 threads a block): what
//! `gpu-selftest fp64` checks on a GPU, here in CI without one (fp_fwd, fp_rows squaring and
//! product, fp_inv with the LL term, and a batch of three LL squarings through fp_carry), each
//! length with the kernels compiled for its shape as the engine compiles them (FP_LOG_R,
//! FP_LOG_C, FP_SEG: shape::shape_defines, and its blocks' threads, shape::block_threads). It
//! needs `g++` (or `$CXX`).

use mersenne_cert::exponent::TestKind;
use mersenne_cert::residue::Shift;
use mersenne_cert::transform::fp64::bound::largest_exponent_per_pair;
use mersenne_cert::transform::fp64::shape;
use mersenne_cert::transform::fp64::stages::{self as fs, Fp64Tables, TilePowers};
use mersenne_cert::transform::plan::{Arith, Length, Plan};
use mersenne_cert::transform::twin::{self, Convolution};
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::host_kernels::{self, Rng};

/// The harness for `plan`'s shape: compiled with its shape and block threads as the engine
/// compiles the kernels.
fn harness(plan: &Plan) -> PathBuf {
    let [a, b, c, w] = shape::shape_defines(plan);
    let [d, e] = shape::block_threads(plan, shape::MOST_THREADS);
    host_kernels::harness("pipeline_io.cpp", &[a, b, c, w, d, e])
}

fn words(out: &mut Vec<u8>, v: impl IntoIterator<Item = u64>) {
    v.into_iter().for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
}

fn floats(out: &mut Vec<u8>, v: &[f64]) {
    words(out, v.iter().map(|x| x.to_bits()));
}

/// A run's input values: digits, pending carries, shift count, and two vectors of both primes'
/// field values.
struct Values {
    digits: Vec<i64>,
    pending: Vec<i128>,
    s: u32,
    r: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
}

/// The harness's input (scripts/host-kernels/pipeline_io.cpp, IN); with `tamper`, one twiddle of
/// the first prime's rows is not the twin's.
fn input(plan: &Plan, t: &Fp64Tables, v: &Values, tamper: bool) -> Vec<u8> {
    let mut b = Vec::new();
    let head = [t.log_r, t.log_c, plan.seg_len() as u32, plan.exponent(), plan.fixup_depth() as u32];
    for v in head.into_iter().chain([t.primes[0].twiddle.lo_bits, plan.n() as u32]) {
        b.extend_from_slice(&v.to_le_bytes());
    }
    floats(&mut b, &[t.crt.inv]);
    for q in &t.primes {
        let steps = [q.weight_step.narrow, q.weight_step.wide, q.inv_weight_step.narrow, q.inv_weight_step.wide];
        floats(&mut b, &[q.f.p(), q.f.pinv()]);
        floats(&mut b, &steps);
        words(&mut b, [q.reduce_mask()]);
        let none: &[f64] = &[];
        let col = q.col.as_ref().map_or([none, none], |c| [c.twiddles(), c.inv_twiddles()]);
        let pows = |p: &TilePowers| [p.hi.clone(), p.lo.clone()];
        let mut all: Vec<Vec<f64>> = vec![q.row.twiddles().to_vec(), q.row.inv_twiddles().to_vec()];
        if tamper && std::ptr::eq(q, &t.primes[0]) {
            let last = all[0].len() - 1;
            all[0][last] = 1.0;
        }
        all.extend(col.iter().map(|c| c.to_vec()));
        for w in [&q.weight, &q.inv_weight] {
            all.extend([w.row.clone(), w.tile.clone()]);
        }
        for p in [&q.twiddle, &q.inv_twiddle] {
            all.extend(pows(p));
        }
        all.extend([q.twiddle_step.clone(), q.inv_twiddle_step.clone()]);
        for table in all {
            words(&mut b, [table.len() as u64]);
            floats(&mut b, &table);
        }
    }
    words(&mut b, v.digits.iter().map(|&d| d as u64));
    words(&mut b, v.pending.iter().flat_map(|&c| [c as u64, (c >> 64) as u64]));
    b.extend_from_slice(&v.s.to_le_bytes());
    floats(&mut b, &v.r.concat());
    floats(&mut b, &v.y.concat());
    b
}

/// Reads the harness's output in order.
struct Out<'a>(&'a [u8]);

impl Out<'_> {
    fn u64s(&mut self, count: usize) -> Vec<u64> {
        let (head, rest) = self.0.split_at(8 * count);
        self.0 = rest;
        head.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
    }
    fn i128s(&mut self, count: usize) -> Vec<i128> {
        self.u64s(2 * count).chunks_exact(2).map(|w| (i128::from(w[1] as i64) << 64) | i128::from(w[0])).collect()
    }
}

fn bits(v: &[Vec<f64>]) -> Vec<u64> {
    v.iter().flatten().map(|x| x.to_bits()).collect()
}

/// Every kernel at `plan` against the twin; the names of those that differ.
fn check(plan: &Plan, rng: &mut Rng, extreme: bool, tamper: bool) -> Vec<&'static str> {
    let t = Fp64Tables::new(plan).unwrap();
    let (p, n) = (plan.exponent(), plan.n());
    let digits = host_kernels::digits(plan, rng, extreme);
    let pending: Vec<i128> = (0..n / plan.seg_len()).map(|_| i128::from(rng.next() as i64 >> 3)).collect();
    let s = (rng.next() % u64::from(p)) as u32;
    let values = |rng: &mut Rng| -> Vec<Vec<f64>> {
        t.primes.iter().map(|q| (0..n).map(|_| q.f.from_i64((rng.next() >> 1) as i64)).collect()).collect()
    };
    let (r, y) = (values(rng), values(rng));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let name = format!("{p}-{n}-{extreme}-{tamper}");
    let (fin, fout) = (dir.join(format!("fp64-in-{name}")), dir.join(format!("fp64-out-{name}")));
    let v = Values { digits, pending, s, r, y };
    std::fs::write(&fin, input(plan, &t, &v, tamper)).unwrap();
    let run = Command::new(harness(plan)).arg(&fin).arg(&fout).output().unwrap();
    assert!(run.status.success(), "pipeline_io: {}", String::from_utf8_lossy(&run.stderr));
    let got = std::fs::read(&fout).unwrap();
    let mut out = Out(&got);
    let mut differ = Vec::new();

    let Values { digits, pending, s, r, y } = v;
    let mut fixed = digits;
    twin::carry_fixup(plan, &mut fixed, &pending);
    let forward: Vec<Vec<f64>> = t.primes.iter().map(|q| fs::columns_in(plan, &t, q, &fixed)).collect();
    if out.u64s(2 * n) != bits(&forward) {
        differ.push("fp_fwd");
    }
    for (name, other) in [("fp_rows (square)", None), ("fp_rows (product)", Some(&y))] {
        let mut want = r.clone();
        for (h, q) in t.primes.iter().enumerate() {
            fs::rows(&t, q, &mut want[h], other.map(|y| y[h].as_slice()));
        }
        if out.u64s(2 * n) != bits(&want) {
            differ.push(name);
        }
    }
    let [y1, y2] = [0, 1].map(|h| fs::columns_out(plan, &t, &t.primes[h], r[h].clone()));
    let (wd, wc) = twin::carry_walk(plan, &t.recombine(&y1, &y2), Some(plan.minus_two_at(s)));
    let gd: Vec<i64> = out.u64s(n).into_iter().map(|d| d as i64).collect();
    if gd != wd || out.i128s(n / plan.seg_len()) != wc {
        differ.push("fp_inv");
    }
    let (want, sh) = t.iterate_digits(plan, TestKind::Ll, fixed, Shift::new(p, s), 3);
    let mut gd: Vec<i64> = out.u64s(n).into_iter().map(|d| d as i64).collect();
    twin::carry_fixup(plan, &mut gd, &out.i128s(n / plan.seg_len()));
    let gs = out.0.first_chunk::<4>().map(|b| u32::from_le_bytes(*b));
    if gd != want || gs != Some(sh.get()) {
        differ.push("3 LL squarings (fp_fwd, fp_rows, fp_carry, fp_inv)");
    }
    let _ = std::fs::remove_file(fin);
    let _ = std::fs::remove_file(fout);
    differ
}

#[test]
fn the_kernels_on_the_host_equal_the_twin_at_every_length_and_pair() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut runs = 0;
    // The harnesses of the 17 shapes first (~3 s each), a build a core at a time.
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let lengths: Vec<u32> = (1..=17).collect();
    std::thread::scope(|scope| {
        for part in lengths.chunks(lengths.len().div_ceil(cores)) {
            scope.spawn(move || {
                for &log2 in part {
                    let len = Length { odd: 1, log2 };
                    if let Some(&p) = largest_exponent_per_pair(len).first() {
                        harness(&Plan::with_length(p, Arith::Fp64, len).unwrap());
                    }
                }
            });
        }
    });
    for log2 in 1..=17 {
        let len = Length { odd: 1, log2 };
        for p in largest_exponent_per_pair(len) {
            let plan = Plan::with_length(p, Arith::Fp64, len).unwrap();
            for extreme in [false, true] {
                let differ = check(&plan, &mut rng, extreme, false);
                assert!(differ.is_empty(), "p={p} {len} extreme={extreme}: {differ:?} differ from the twin");
                runs += 1;
            }
        }
    }
    assert!(runs >= 34, "{runs} runs");
}

#[test]
fn the_kernels_on_the_host_equal_the_twin_with_tiles_of_512_rows() {
    // The column kernels' tiles of 2^9 rows (2^20 … 2^22): two rows a thread at 2^20's 256
    // threads, one at 2^21's 512 (shape::WIDE_TILE_LOG2), once each, random digits at the
    // largest exponent of the length.
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for (log2, threads) in [(20, 256), (21, 512)] {
        let len = Length { odd: 1, log2 };
        let plan = Plan::with_length(Arith::Fp64.largest_exponent_at(len).unwrap(), Arith::Fp64, len).unwrap();
        assert_eq!(shape::split(log2).0, 9);
        assert_eq!(shape::block_threads(&plan, shape::MOST_THREADS)[0], ("FP_TILE_THREADS", threads));
        let differ = check(&plan, &mut rng, false, false);
        assert!(differ.is_empty(), "2^{log2}: {differ:?} differ from the twin");
    }
}

#[test]
fn a_wrong_twiddle_shows() {
    // The comparison has teeth: one row twiddle of one prime changed, and every kernel that
    // takes the row transform differs from the twin.
    let len = Length { odd: 1, log2: 14 };
    let plan = Plan::with_length(Arith::Fp64.largest_exponent_at(len).unwrap(), Arith::Fp64, len).unwrap();
    assert!(check(&plan, &mut Rng(7), false, false).is_empty());
    let differ = check(&plan, &mut Rng(7), false, true);
    assert!(differ.contains(&"fp_rows (square)") && differ.len() >= 3, "{differ:?}");
}
