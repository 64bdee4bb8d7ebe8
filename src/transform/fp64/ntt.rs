//! A radix-2 NTT over one FP64 prime with lazy reduction, the reference that the GPU passes will
//! be checked against: forward decimation in frequency (natural order in, bit-reversed out),
//! inverse decimation in time (bit-reversed in, natural out, unscaled: n times the inverse DFT),
//! and the pointwise square between them. Values are not reduced after every butterfly: a
//! [`Schedule`] tracks a bound on every value through the stages (docs/arithmetic.md, "FP64")
//! and reduces all values only before a stage or square whose inputs would leave the product's
//! precondition (|a|·|b| ≤ 2^50·p) or the exact range (|x| < 2^53).

use super::field::{Fp64, EXACT, MUL_SPAN};
use super::primes::{pow_mod, Fp64Prime};

/// Where a pass reduces: `before[s]` is true when every value is reduced before stage s (forward
/// stages first, then the square, then the inverse stages), and `bound[s]` bounds |x| after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub before: Vec<bool>,
    pub bound: Vec<u128>,
}

/// Stages of half-size m ≤ UNIT_HALF skip the product by the twiddle ω^0 = 1 of each block's
/// first butterfly: a DIF one gives (x + y, x − y) with the difference unreduced, a DIT one (x +
/// y, x − y) with y unreduced. On the GPU those stages are the register passes whose values are
/// adjacent (kernels/common/four_step.cuh fs_stages_of, m_lo = 1), where which butterflies
/// have ω^0 is known at compile time: 7 of the 12 products of those three stages.
pub const UNIT_HALF: usize = 4;

/// One step of a squaring as the lazy schedule sees it: a forward (DIF) or inverse (DIT)
/// radix-2 stage by twiddles of at most `w` (`unit`: some of its butterflies skip the product,
/// [`UNIT_HALF`]), a product of every value by factors of at most `w`, or the pointwise square
/// (or product of two values under the same bound).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    Dif { w: u128 },
    Dit { w: u128, unit: bool },
    Mul { w: u128 },
    Square,
}

impl Step {
    /// DIT stage s of a transform (half-size 2^s).
    pub fn dit(w: u128, s: usize) -> Step {
        Step::Dit { w, unit: 1 << s <= UNIT_HALF }
    }
}

/// Where a run of `steps` over values first bounded by `input` reduces, mod the prime `p`: every
/// value is reduced before a step only when that step's products would leave the precondition
/// |a|·|b| ≤ 2^50·p or its sums the exact range (field.rs); a product returns at most 3p/4 and a
/// reduction (p + 1)/2. A DIF butterfly that skips its product by ω^0 gives a difference
/// bounded as its sum (2b); a DIT one adds and subtracts y itself (b) where the others add a
/// product (3p/4).
pub fn reductions(p: u64, input: u128, steps: &[Step]) -> Schedule {
    let p = u128::from(p);
    let (span, exact) = (MUL_SPAN as u128 * p, EXACT as u128);
    let (product, reduced) = (3 * p / 4, p.div_ceil(2));
    let (mut before, mut bound, mut b) = (Vec::new(), Vec::new(), input);
    for &step in steps {
        let reduce = match step {
            // Sum 2b unreduced, difference 2b times a twiddle.
            Step::Dif { w } => 2 * b >= exact || 2 * b * w > span,
            // t = y·w (≤ 3p/4), or y where the product is skipped, then x ± t.
            Step::Dit { w, unit } => b * w > span || b + if unit { b.max(product) } else { product } >= exact,
            Step::Mul { w } => b * w > span,
            Step::Square => b * b > span,
        };
        b = if reduce { reduced } else { b };
        b = match step {
            Step::Dif { .. } => (2 * b).max(product),
            Step::Dit { unit, .. } => b + if unit { b.max(product) } else { product },
            Step::Mul { .. } | Step::Square => product,
        };
        before.push(reduce);
        bound.push(b);
    }
    Schedule { before, bound }
}

/// An NTT of length n = 2^k over one prime.
pub struct Ntt {
    pub f: Fp64,
    n: usize,
    /// twiddle[m + j] = ω_(2m)^j, centered (|w| ≤ (p − 1)/2), for m = 1, 2, …, n/2.
    twiddle: Vec<f64>,
    inv_twiddle: Vec<f64>,
}

impl Ntt {
    /// The NTT of length n = 2^k over `prime` (None where the prime has no n-th root of unity).
    pub fn new(prime: &Fp64Prime, n: usize) -> Option<Ntt> {
        if !n.is_power_of_two() || n < 2 {
            return None;
        }
        let w_n = prime.root_of_unity(n as u64)?;
        let f = Fp64::new(prime.p);
        let (mut twiddle, mut inv_twiddle) = (vec![0.0; n], vec![0.0; n]);
        let mut m = n / 2;
        while m >= 1 {
            let w = pow_mod(w_n, (n / (2 * m)) as u64, prime.p);
            let w_inv = pow_mod(w, prime.p - 2, prime.p);
            for j in 0..m {
                twiddle[m + j] = f.from_i64(pow_mod(w, j as u64, prime.p) as i64);
                inv_twiddle[m + j] = f.from_i64(pow_mod(w_inv, j as u64, prime.p) as i64);
            }
            m /= 2;
        }
        Some(Ntt { f, n, twiddle, inv_twiddle })
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// The reductions of a squaring (forward, square, inverse) whose inputs are bounded by
    /// `input`, with the bounds after every step ([`reductions`]).
    pub fn schedule(&self, input: u128) -> Schedule {
        let stages = self.n.trailing_zeros() as usize;
        let w = u128::from(self.f.modulus() - 1) / 2;
        let mut steps = vec![Step::Dif { w }; stages];
        steps.push(Step::Square);
        steps.extend((0..stages).map(|s| Step::dit(w, s)));
        reductions(self.f.modulus(), input, &steps)
    }

    /// The centered twiddles of the forward stages: `[m + j]` = ω_(2m)^j for m = 1, 2, …, n/2.
    pub fn twiddles(&self) -> &[f64] {
        &self.twiddle
    }

    /// The centered twiddles of the inverse stages: `[m + j]` = ω_(2m)^(−j).
    pub fn inv_twiddles(&self) -> &[f64] {
        &self.inv_twiddle
    }

    fn reduce_all(&self, a: &mut [f64]) {
        for x in a.iter_mut() {
            *x = self.f.reduce(*x);
        }
    }

    /// Forward stage s (half-length m = n/2^(s+1)) in place, reducing every value first if asked.
    pub fn forward_stage(&self, a: &mut [f64], stage: usize, reduce: bool) {
        if reduce {
            self.reduce_all(a);
        }
        let m = self.n >> (stage + 1);
        for block in a.chunks_exact_mut(2 * m) {
            let (lo, hi) = block.split_at_mut(m);
            for (j, ((x, y), &w)) in lo.iter_mut().zip(hi).zip(&self.twiddle[m..2 * m]).enumerate() {
                (*x, *y) = if j == 0 && m <= UNIT_HALF { self.f.sum_diff(*x, *y) } else { self.f.dif(*x, *y, w) };
            }
        }
    }

    /// Inverse stage s (half-length m = 2^s) in place, reducing every value first if asked.
    pub fn inverse_stage(&self, a: &mut [f64], stage: usize, reduce: bool) {
        if reduce {
            self.reduce_all(a);
        }
        let m = 1 << stage;
        for block in a.chunks_exact_mut(2 * m) {
            let (lo, hi) = block.split_at_mut(m);
            for (j, ((x, y), &w)) in lo.iter_mut().zip(hi).zip(&self.inv_twiddle[m..2 * m]).enumerate() {
                (*x, *y) = if j == 0 && m <= UNIT_HALF { self.f.sum_diff(*x, *y) } else { self.f.dit(*x, *y, w) };
            }
        }
    }

    /// The pointwise square in place (reducing first if asked).
    pub fn square_step(&self, a: &mut [f64], reduce: bool) {
        for x in a.iter_mut() {
            let y = if reduce { self.f.reduce(*x) } else { *x };
            *x = self.f.square(y);
        }
    }

    /// The forward transform in place: natural order in, bit-reversed out. `before[s]` reduces
    /// every value ahead of stage s.
    pub fn forward(&self, a: &mut [f64], before: &[bool]) {
        assert_eq!(a.len(), self.n);
        for (stage, &reduce) in before.iter().enumerate().take(self.n.trailing_zeros() as usize) {
            self.forward_stage(a, stage, reduce);
        }
    }

    /// The inverse transform in place, unscaled: bit-reversed in, n times the inverse DFT out.
    pub fn inverse(&self, a: &mut [f64], before: &[bool]) {
        assert_eq!(a.len(), self.n);
        for (stage, &reduce) in before.iter().enumerate().take(self.n.trailing_zeros() as usize) {
            self.inverse_stage(a, stage, reduce);
        }
    }

    /// The cyclic self-convolution times n, as the squaring computes it: forward, square,
    /// inverse, with the reductions of `schedule(input)`.
    pub fn square(&self, a: &mut [f64], input: u128) {
        let s = self.schedule(input);
        let k = self.n.trailing_zeros() as usize;
        self.forward(a, &s.before[..k]);
        self.square_step(a, s.before[k]);
        self.inverse(a, &s.before[k + 1..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;
    use crate::transform::bit_reverse;
    use crate::transform::fp64::crt::Crt;
    use crate::transform::fp64::primes::{PAIRS, PRIMES};

    fn naive_dft(x: &[i64], w: u64, p: u64) -> Vec<u64> {
        let n = x.len();
        (0..n)
            .map(|f| {
                let mut acc = 0u128;
                for (j, &v) in x.iter().enumerate() {
                    let wj = pow_mod(w, (j * f % n) as u64, p);
                    acc = (acc + v.rem_euclid(p as i64) as u128 * u128::from(wj)) % u128::from(p);
                }
                acc as u64
            })
            .collect()
    }

    fn random_vec(rng: &mut SeededRng, n: usize, half: u64) -> Vec<i64> {
        (0..n).map(|_| rng.below(2 * half + 1) as i64 - half as i64).collect()
    }

    #[test]
    fn forward_and_inverse_match_a_naive_dft() {
        let mut rng = SeededRng::new(37);
        for prime in PRIMES {
            for k in 1..=9 {
                let n = 1usize << k;
                let ntt = Ntt::new(&prime, n).unwrap();
                let p = prime.p;
                let x = random_vec(&mut rng, n, p / 2);
                let s = ntt.schedule(u128::from(p / 2));
                let mut a: Vec<f64> = x.iter().map(|&v| v as f64).collect();
                ntt.forward(&mut a, &s.before[..k]);
                let w = prime.root_of_unity(n as u64).unwrap();
                let want = naive_dft(&x, w, p);
                for (i, &v) in a.iter().enumerate() {
                    assert_eq!(ntt.f.canonical(v), want[bit_reverse(i, n)], "p={p} n={n} i={i}");
                }
                // The inverse of the forward is n times the input.
                ntt.inverse(&mut a, &s.before[k + 1..]);
                for (i, &v) in a.iter().enumerate() {
                    let want = (i128::from(x[i]) * n as i128).rem_euclid(i128::from(p)) as u64;
                    assert_eq!(ntt.f.canonical(v), want, "p={p} n={n} i={i}");
                }
            }
        }
    }

    /// A stage of half-size ≤ UNIT_HALF skips the product by ω^0: its blocks' first butterflies
    /// give x ± y unreduced (a product would have reduced the difference), a larger stage's do
    /// not; the schedule bounds a DIT stage that skips by 2b where b > 3p/4, else by b + 3p/4.
    #[test]
    fn unit_twiddle_butterflies_skip_the_product() {
        let prime = PRIMES[0];
        let p = prime.p;
        let ntt = Ntt::new(&prime, 16).unwrap();
        let big = (3 * p) as f64;
        let pair = |stage: usize, at: (usize, usize), inverse: bool| {
            let mut a = vec![0.0; 16];
            (a[at.0], a[at.1]) = (big, -big);
            if inverse {
                ntt.inverse_stage(&mut a, stage, false);
            } else {
                ntt.forward_stage(&mut a, stage, false);
            }
            (a[at.0], a[at.1])
        };
        // Forward stage 3 has m = 1, 2 has m = 2 (pairs 0 and 2), 0 has m = 8.
        assert_eq!(pair(3, (0, 1), false), (0.0, 2.0 * big));
        assert_eq!(pair(2, (0, 2), false), (0.0, 2.0 * big));
        assert!(pair(0, (0, 8), false).1.abs() <= (3 * p / 4) as f64);
        // Inverse stage 0 has m = 1, stage 3 m = 8.
        assert_eq!(pair(0, (0, 1), true), (0.0, 2.0 * big));
        let (x, y) = pair(3, (0, 8), true);
        assert!(x.abs() < 2.0 * big && y.abs() < 2.0 * big, "{x} {y}");
        let (w, q, b) = (u128::from(p - 1) / 2, 3 * u128::from(p) / 4, 2 * u128::from(p));
        assert_eq!(reductions(p, b, &[Step::dit(w, 2)]).bound, vec![2 * b]);
        assert_eq!(reductions(p, b, &[Step::dit(w, 3)]).bound, vec![b + q]);
        assert_eq!(Step::dit(w, 2), Step::Dit { w, unit: true });
    }

    /// Every value stays within the schedule's bound after every step (forward stages, square,
    /// inverse stages), on inputs that drive the sums up fastest (all at ±(p − 1)/2, one sign)
    /// and on random ones.
    #[test]
    fn values_stay_within_the_schedule() {
        let mut rng = SeededRng::new(38);
        for prime in PRIMES {
            let p = prime.p;
            let half = (p / 2) as i64;
            for k in [1usize, 4, 10] {
                let n = 1usize << k;
                let ntt = Ntt::new(&prime, n).unwrap();
                let s = ntt.schedule(u128::from(p / 2));
                let reduced: Vec<usize> = (0..s.before.len()).filter(|&i| s.before[i]).collect();
                println!("p={p} n=2^{k}: reductions before steps {reduced:?} (forward 0..{k}, square {k})");
                for x in [vec![half; n], vec![-half; n], random_vec(&mut rng, n, p / 2)] {
                    let mut a: Vec<f64> = x.iter().map(|&v| v as f64).collect();
                    for step in 0..2 * k + 1 {
                        match step {
                            _ if step < k => ntt.forward_stage(&mut a, step, s.before[step]),
                            _ if step == k => ntt.square_step(&mut a, s.before[step]),
                            _ => ntt.inverse_stage(&mut a, step - k - 1, s.before[step]),
                        }
                        let max = a.iter().fold(0f64, |m, v| m.max(v.abs()));
                        assert!(max as u128 <= s.bound[step], "p={p} n={n} step {step}: {max} > {}", s.bound[step]);
                    }
                }
            }
        }
    }

    /// Cyclic self-convolutions of digit vectors at the largest digits the CRT bound allows at
    /// each length come back exactly, through both primes of each pair and the CRT.
    #[test]
    fn cyclic_squares_come_back_exact_through_the_crt() {
        let mut rng = SeededRng::new(39);
        for pair in PAIRS {
            let (crt, max) = (Crt::new(&pair), pair.max_abs());
            for k in 1..=10usize {
                let n = 1usize << k;
                // The largest m = max |d| with n·m² ≤ (M − 1)/2.
                let m = ((max / n as u128) as f64).sqrt() as i64;
                let m = (m - 2..m + 3).rev().find(|&m| (n as u128) * (m as u128).pow(2) <= max).unwrap();
                let alternating: Vec<i64> = (0..n).map(|i| if i.is_multiple_of(2) { m } else { -m }).collect();
                for d in [vec![m; n], vec![-m; n], alternating, random_vec(&mut rng, n, m as u64)] {
                    let want: Vec<i128> = (0..n)
                        .map(|i| (0..n).map(|j| i128::from(d[j]) * i128::from(d[(i + n - j) % n])).sum())
                        .collect();
                    let mut out = Vec::new();
                    for prime in pair.primes {
                        let ntt = Ntt::new(&prime, n).unwrap();
                        let mut a: Vec<f64> = d.iter().map(|&v| ntt.f.from_i64(v)).collect();
                        ntt.square(&mut a, u128::from(prime.p / 2));
                        // Divide by n: multiply by n^(−1) mod p.
                        let n_inv = ntt.f.from_i64(pow_mod(n as u64, prime.p - 2, prime.p) as i64);
                        out.push(a.iter().map(|&v| ntt.f.mul(ntt.f.reduce(v), n_inv)).collect::<Vec<_>>());
                    }
                    for i in 0..n {
                        assert_eq!(
                            crt.recombine(out[0][i], out[1][i]),
                            want[i],
                            "{} n={n} i={i} m={m}",
                            pair.limit_name
                        );
                    }
                }
            }
        }
    }
}
