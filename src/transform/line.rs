//! How the GPU passes factor their stages (kernels/goldilocks/ntt_block.cuh, kernels/goldilocks/stages.cuh), and the
//! twiddle tables they read. r radix-2 stages over a block-row of M = 2^(t+r) values, taken as
//! 2^t columns i of lines of 2^r values k (value i + k·2^t), are, per column, a DFT of length
//! 2^r followed by the twiddle ω_M^(i·rev_r(k)) at position k (rev_r: r-bit reversal). The DFT's
//! own twiddles are 2^r-th roots of unity, and for r ≤ 6 those are powers of 2 (ω_64 = 2^39 for
//! the plan's roots; 2 has order 192), which the GPU applies without general products
//! (gl_shl); the second factor comes from [`twiddle_table`]. This is the CPU twin of that
//! factorization: the passes computed here the same way are tested against src/transform/twin.rs's radix-2
//! stages, which the twin engine runs.

use crate::transform::bit_reverse;
use crate::transform::goldilocks::field::Gl;
use crate::transform::plan::Plan;

/// ω_64 = 2^W64_LOG2 (kernels/goldilocks/field.cuh's GL_W64_LOG2).
pub const W64_LOG2: u64 = 39;
/// The longest line whose DFT twiddles are powers of 2.
pub const MAX_POW2_LOG2: u32 = 6;

/// The twiddle of the DFT's stage of half-size 2^q (q < 6) for the pairs with index j mod 2^q:
/// ω_{2^(q+1)}^j = 2^e, e = 39·2^(5−q)·j mod 192 (the kernels' pow2_exp).
pub fn pow2_exp(q: u32, j: u64) -> u64 {
    (W64_LOG2 << (5 - q)) * j % 192
}

fn pow2(e: u64) -> Gl {
    Gl::new(2).pow(e)
}

/// The table of a pass over 2^t columns and lines of 2^r values: 2·M words (M = 2^(t+r)), first
/// ω_M^(i·rev_r(k)) at k·2^t + i (coalesced: adjacent columns read adjacent words), then the
/// inverse twiddles ω_M^−(i·rev_r(k)) at M + k·2^t + i. Gathered from the plan's tables
/// (tw[M/2 + e] = ω_M^e for e < M/2, and ω_M^(e+M/2) = −ω_M^e).
pub fn twiddle_table(plan: &Plan, t: u32, r: u32) -> Vec<Gl> {
    let (m, cols) = (1usize << (t + r), 1usize << t);
    let (tw, itw) = plan.twiddles();
    let mut out = Vec::with_capacity(2 * m);
    for table in [tw, itw] {
        out.extend((0..m).map(|at| {
            let (k, i) = (at >> t, at & (cols - 1));
            root_pow(table, m, i * bit_reverse(k, 1 << r))
        }));
    }
    out
}

/// ω_M^e (or ω_M^−e from the inverse table) for any e.
fn root_pow(table: &[Gl], m: usize, e: usize) -> Gl {
    let e = e % m;
    if e < m / 2 {
        table[m / 2 + e]
    } else {
        table[e].neg()
    }
}

/// The DFT of a line (r ≤ 6) by radix-2 DIF stages with the power-of-2 twiddles: natural in,
/// bit-reversed out.
fn dif_pow2(v: &mut [Gl]) {
    let mut half = v.len() / 2;
    while half > 0 {
        let q = half.trailing_zeros();
        for blk in v.chunks_exact_mut(2 * half) {
            let (a, b) = blk.split_at_mut(half);
            for j in 0..half {
                let (x, y) = (a[j], b[j]);
                a[j] = x.add(y);
                b[j] = x.sub(y).mul(pow2(pow2_exp(q, j as u64)));
            }
        }
        half /= 2;
    }
}

/// The inverse of [`dif_pow2`] times the length (DIT stages with the inverse twiddles).
fn dit_pow2(v: &mut [Gl]) {
    let mut half = 1;
    while half < v.len() {
        let q = half.trailing_zeros();
        for blk in v.chunks_exact_mut(2 * half) {
            let (a, b) = blk.split_at_mut(half);
            for j in 0..half {
                let t = b[j].mul(pow2((192 - pow2_exp(q, j as u64)) % 192));
                let x = a[j];
                a[j] = x.add(t);
                b[j] = x.sub(t);
            }
        }
        half *= 2;
    }
}

/// Each column's line of every block-row of x, through `f` (which gets the line and the column).
fn per_line(x: &mut [Gl], t: u32, r: u32, mut f: impl FnMut(&mut [Gl], usize)) {
    let cols = 1usize << t;
    let mut line = vec![Gl::new(0); 1 << r];
    for row in x.chunks_exact_mut(cols << r) {
        for i in 0..cols {
            for (k, v) in line.iter_mut().enumerate() {
                *v = row[i + k * cols];
            }
            f(&mut line, i);
            for (k, v) in line.iter().enumerate() {
                row[i + k * cols] = *v;
            }
        }
    }
}

/// The forward stages of half-sizes M/2 … 2^t of x as a pass computes them (r ≤ 6).
pub fn forward_pass(x: &mut [Gl], t: u32, r: u32, table: &[Gl]) {
    assert!(r <= MAX_POW2_LOG2);
    per_line(x, t, r, |line, i| {
        dif_pow2(line);
        for (k, v) in line.iter_mut().enumerate() {
            *v = v.mul(table[(k << t) + i]);
        }
    });
}

/// The inverse stages of half-sizes 2^t … M/2 of x as a pass computes them (r ≤ 6).
pub fn inverse_pass(x: &mut [Gl], t: u32, r: u32, table: &[Gl]) {
    assert!(r <= MAX_POW2_LOG2);
    let m = 1usize << (t + r);
    per_line(x, t, r, |line, i| {
        for (k, v) in line.iter_mut().enumerate() {
            *v = v.mul(table[m + (k << t) + i]);
        }
        dit_pow2(line);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::goldilocks::field::P;
    use crate::transform::twin;
    use quickcheck::{quickcheck, TestResult};

    #[test]
    fn pow2_twiddles_are_the_plans_roots() {
        assert_eq!(Some(pow2(W64_LOG2)), Gl::root_of_unity(6));
        for q in 0..6 {
            let w = Gl::root_of_unity(q + 1).unwrap();
            for j in 0..(1u64 << q) {
                assert_eq!(pow2(pow2_exp(q, j)), w.pow(j), "q={q} j={j}");
            }
        }
        let cuh = include_str!("../../kernels/goldilocks/field.cuh");
        assert!(cuh.contains(&format!("#define GL_W64_LOG2 {W64_LOG2}\n")), "goldilocks/field.cuh disagrees on ω_64");
    }

    #[test]
    fn a_wrong_table_entry_is_seen() {
        let plan = Plan::with_log2(4099, 8).unwrap();
        let x: Vec<Gl> = (0..256u64).map(|v| Gl::new(v * 7919 + 1)).collect();
        let mut table = twiddle_table(&plan, 3, 5);
        table[5 * 8 + 3] = table[5 * 8 + 3].add(Gl::new(1));
        let (mut a, mut b) = (x.clone(), x);
        forward_pass(&mut a, 3, 5, &table);
        twin::forward_stages(&plan, &mut b, 128, 8);
        assert_ne!(a, b);
    }

    quickcheck! {
        fn passes_equal_the_radix2_stages(seed: Vec<u64>, t: u8, r: u8, extra: u8) -> TestResult {
            let (t, r) = (u32::from(t % 7), u32::from(r % 6) + 1);
            let log2 = (t + r + u32::from(extra % 3)).max(2);
            let p = (16u64 << log2..).find(|&q| crate::exponent::is_prime(q)).unwrap() as u32;
            let plan = Plan::with_log2(p, log2).unwrap();
            let n = plan.n();
            let word = |j: usize| seed.get(j % seed.len().max(1)).copied().unwrap_or(3).wrapping_mul(j as u64 + 1);
            let x: Vec<Gl> = (0..n).map(|j| Gl::new(word(j) % P)).collect();
            let table = twiddle_table(&plan, t, r);
            let (m_hi, m_lo) = (1usize << (t + r - 1), 1usize << t);
            let (mut got, mut want) = (x.clone(), x.clone());
            forward_pass(&mut got, t, r, &table);
            twin::forward_stages(&plan, &mut want, m_hi, m_lo);
            if got != want {
                return TestResult::failed();
            }
            let (mut got, mut want) = (x.clone(), x);
            inverse_pass(&mut got, t, r, &table);
            twin::inverse_stages(&plan, &mut want, m_lo, m_hi);
            TestResult::from_bool(got == want)
        }
    }
}
