//! CPU engine benchmark (not a test): µs per LL iteration of `GmpEngine` against bare GMP loops
//! at the same exponent, on one core. Run: `cargo bench --bench cpu_engine [-- P ...]`.
//!
//! "bare square+fold" is the least a GMP loop can do (mpz square, then x = hi + lo once or
//! twice, −2); "bare square+%" is the naive loop with a division. The engine must stay within
//! 1.2× of the first.
//!
//! A second table prices the Gerbicz check of a full PRP test from the PRP engine's measured
//! squaring and accumulator-multiplication times: one multiplication per block of L squarings,
//! plus L squarings per check (every L² iterations, after the start, and at the end).

use mersenne_cert::cpu_ref::GmpEngine;
use mersenne_cert::engine::Engine;
use mersenne_cert::exponent::TestKind;
use mersenne_cert::residue::Residue;
use rug::Integer;
use std::time::Instant;

fn iters_for(p: u32) -> u64 {
    // About 2 s per measurement at the GMP rate measured in ANCHORS.md.
    (8e10 / (p as f64).powf(1.6)).clamp(20.0, 200_000.0) as u64
}

fn time_us(iters: u64, f: &mut dyn FnMut()) -> f64 {
    f(); // warm-up
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_secs_f64() * 1e6 / iters as f64
}

/// The best of `ROUNDS` interleaved rounds of each loop (interleaving spreads any load from
/// other processes over all of them alike).
const ROUNDS: usize = 5;
fn best_of(iters: u64, loops: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; loops.len()];
    for _ in 0..ROUNDS {
        for (b, f) in best.iter_mut().zip(loops.iter_mut()) {
            *b = b.min(time_us(iters, *f));
        }
    }
    best
}

fn main() {
    let ps: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let ps = if ps.is_empty() { vec![9689, 86243, 1257787] } else { ps };
    println!("| p | iterations | bare square+fold µs | bare square+% µs | GmpEngine µs | engine / bare |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut gerbicz = Vec::new();
    for p in ps {
        let n = iters_for(p);
        let m = (Integer::from(1) << p) - 1u32;
        // A random full-size start: the LL sequence of a prime reaches 2 and stays there.
        let start = Residue::from_integer(p, &Integer::from(Integer::u_pow_u(3, p)));
        let mut x = start.to_integer();
        let mut hi = Integer::new();
        let mut fold = || {
            x.square_mut();
            while x.significant_bits() > p {
                rug::Assign::assign(&mut hi, &x >> p);
                x.keep_bits_mut(p);
                x += &hi;
            }
            x -= 2;
        };
        let mut y = start.to_integer();
        let mut rem = || {
            y.square_mut();
            y -= 2;
            y %= &m;
        };
        let mut e = GmpEngine::new(p, TestKind::Ll, p / 3);
        e.load(&start).unwrap();
        let mut eng = || e.iterate(1).unwrap();
        let t = best_of(n, &mut [&mut fold, &mut rem, &mut eng]);
        let (fold, rem, eng) = (t[0], t[1], t[2]);
        println!("| {p} | {n} | {fold:.2} | {rem:.2} | {eng:.2} | {:.3} |", eng / fold);
        gerbicz.push((p, n, start));
    }
    println!();
    println!("| p | PRP squaring µs | acc_mul µs | Gerbicz overhead of a full PRP test, L = {L} |");
    println!("|---:|---:|---:|---:|");
    for (p, n, start) in gerbicz {
        let mut e = GmpEngine::new(p, TestKind::Prp, p / 3);
        e.load(&start).unwrap();
        e.acc_reset().unwrap();
        let (sq, mul) = {
            let mut square = || e.iterate(1).unwrap();
            let t_sq = best_of(n, &mut [&mut square])[0];
            let mut acc = || e.acc_mul().unwrap();
            (t_sq, best_of(n, &mut [&mut acc])[0])
        };
        let p64 = p as u64;
        let checks = p64 / (L * L) + 2;
        let extra_us = p64.div_ceil(L) as f64 * mul + (checks * L) as f64 * sq;
        println!("| {p} | {sq:.2} | {mul:.2} | {:.2}% |", 100.0 * extra_us / (p64 as f64 * sq));
    }
}

/// The Gerbicz block length priced (the default).
const L: u64 = mersenne_cert::run::gerbicz::DEFAULT_BLOCK;
