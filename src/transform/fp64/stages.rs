//! The FP64 arithmetic's squaring as CPU twin stages that the GPU kernels (kernels/fp64/) mirror
//! one by one, value for value: a weighted (IBDWT) cyclic convolution of length n = 2^k = R·C
//! computed as a four-step NTT in each prime, the outputs recovered by CRT and carried as i128
//! ([`crate::transform::twin::carry`]). docs/arithmetic.md ("FP64", "One squaring") derives it.
//!
//! Storage: element j = r·C + c is row r, column c. Per prime, a squaring is
//! 1. [`weigh`]: x_j = d_j·a_j, a_j = ρ^(e_j) (ρ = 2^(1/n) in GF(p), e_j = [`Plan::weight_exp`]),
//!    a row's and a tile's table entry ([`RowTile`]) at a carry segment's first digit, then a chain of products
//!    ([`Chain`]) along it;
//! 2. [`columns_forward`]: per column, R-point radix-2 DIF stages (natural in, bit-reversed out),
//!    then element (r, c) times ω_n^(bitrev_R(r)·c) (when R > 1);
//! 3. [`rows`]: per row, C-point DIF stages, the pointwise square (or product), C-point DIT stages;
//! 4. [`columns_inverse`]: element (r, c) times ω_n^(−bitrev_R(r)·c), then per column R-point DIT
//!    stages: n times the cyclic convolution of the weighted inputs;
//! 5. [`unweigh`]: y_j reduced, times a_j^(−1)·n^(−1).
//!
//! Values are reduced lazily: each prime's `schedule` (over [`Fp64Tables::steps`]) reduces every
//! value before a step whose precondition would fail ([`super::ntt::reductions`]); the GPU takes
//! the same flags.

use super::bound::pair_for;
use super::crt::Crt;
use super::field::Fp64;
use super::ntt::{reductions, Ntt, Schedule, Step};
use super::primes::{pow_mod, Fp64Prime, Pair};
use super::shape::{self, split, SEG_LEN};
use crate::transform::arith::Arith;
use crate::transform::bit_reverse;
use crate::transform::plan::Plan;
use crate::transform::twin::Convolution;
use crate::transform::PlanError;

/// Row r's twiddle ω^(bitrev_R(r)·c0) at tile t's first column c0 as the product of a `hi` and
/// a `lo` entry of the tile ([`shape::tile_twiddle_exponents`]: centered values), |·| ≤ 3p/4.
#[derive(Clone, Debug)]
pub struct TilePowers {
    pub lo_bits: u32,
    pub hi: Vec<f64>,
    pub lo: Vec<f64>,
}

impl TilePowers {
    /// `exps`: [`shape::tile_twiddle_exponents`] of the plan.
    fn new(f: &Fp64, g: u64, (lo_bits, hi, lo): &(u32, Vec<usize>, Vec<usize>)) -> TilePowers {
        let table = |e: &[usize]| e.iter().map(|&e| f.from_i64(pow_mod(g, e as u64, f.modulus()) as i64)).collect();
        TilePowers { lo_bits: *lo_bits, hi: table(hi), lo: table(lo) }
    }

    /// Row r's twiddle at tile t (R rows).
    pub fn at(&self, f: &Fp64, r: usize, t: usize, rows: usize) -> f64 {
        let lanes = 1 << self.lo_bits;
        f.mul(self.hi[t * (rows / lanes) + r / lanes], self.lo[t * lanes + r % lanes])
    }
}

/// The weights' first powers g^(e_j0)·scale at each carry segment's first digit j0 = r·C + c0
/// as a product of a row's entry and a tile's: e_j0 = (a_r + b_c0) mod n with a_r = −p·r·C mod
/// n and b_c0 = −p·c0 mod n, so g^(e_j0) = g^(a_r)·g^(b_c0), times g^(−n) where a_r + b_c0 ≥ n
/// (ρ^n = 2). `row[r]` = g^(a_r)·scale, `tile[2t]` = g^(b_c0) and `tile[2t + 1]` = g^(b_c0 − n)
/// for tile t = c0/SEG (centered): one coalesced load a row and one a block on the GPU, in place
/// of two scattered table entries.
#[derive(Clone, Debug)]
pub struct RowTile {
    pub row: Vec<f64>,
    pub tile: Vec<f64>,
}

impl RowTile {
    /// The tables of g (times `scale` in the rows) at the exponents of
    /// [`shape::first_power_exponents`] (`rows`, `tiles`), n = 2^log2.
    fn new(f: &Fp64, g: u64, scale: u64, (rows, tiles): &(Vec<usize>, Vec<usize>), log2: u32) -> RowTile {
        let p = f.modulus();
        let at = |x: u64| f.from_i64(x as i64);
        let times = |a: u64, b: u64| (u128::from(a) * u128::from(b) % u128::from(p)) as u64;
        let down = pow_mod(pow_mod(g, 1 << log2, p), p - 2, p); // g^(−n)
        let row = rows.iter().map(|&a| at(times(pow_mod(g, a as u64, p), scale % p))).collect();
        let tile = tiles
            .iter()
            .flat_map(|&b| {
                let gb = pow_mod(g, b as u64, p);
                [at(gb), at(times(gb, down))]
            })
            .collect();
        RowTile { row, tile }
    }

    /// g^(e_j0)·scale at the first digit j0 of a segment of `plan`.
    pub fn at(&self, f: &Fp64, plan: &Plan, j0: usize) -> f64 {
        let (r, t) = shape::first_power_entries(plan, j0);
        f.mul(self.row[r], self.tile[t])
    }
}

/// The two factors of a weight chain: ρ^(−f) and 2·ρ^(−f) (weights) or their inverses
/// (unweights), centered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chain {
    pub narrow: f64,
    pub wide: f64,
}

/// One prime's tables for one plan.
pub struct PrimeTables {
    pub f: Fp64,
    /// The C-point transform of the rows and the R-point one of the columns (None: R = 1).
    pub row: Ntt,
    pub col: Option<Ntt>,
    /// ρ^e and ρ^(−e)·n^(−1) (ρ = 2^(1/n)); ω_n^e and ω_n^(−e).
    pub weight: RowTile,
    pub inv_weight: RowTile,
    /// A segment's first twiddle ω_n^(bitrev_R(r)·c0) and ω_n^(−bitrev_R(r)·c0).
    pub twiddle: TilePowers,
    pub inv_twiddle: TilePowers,
    /// ω_n^(bitrev_R(r)) and ω_n^(−bitrev_R(r)) for each row r (centered): the twiddle steps'
    /// factor a column, one coalesced load a row.
    pub twiddle_step: Vec<f64>,
    pub inv_twiddle_step: Vec<f64>,
    /// The steps of the weights along a segment ([`Chain`]): from digit j to j + 1 the weight
    /// ρ^(e_j) is multiplied by `narrow` where digit j is narrow (e_(j+1) = e_j − f), by `wide`
    /// where it is wide (e_(j+1) = e_j + n − f; ρ^n = 2), f = p mod n; the unweights by their
    /// inverses.
    pub weight_step: Chain,
    pub inv_weight_step: Chain,
    /// Where the squaring reduces ([`Fp64Tables::steps`]).
    pub schedule: Schedule,
}

/// Both primes' tables for one plan (the pair [`pair_for`] gives it), and its shape.
pub struct Fp64Tables {
    pub log_r: u32,
    pub log_c: u32,
    pub pair: &'static Pair,
    pub primes: [PrimeTables; 2],
    pub crt: Crt,
}

/// Indices of the steps of [`Fp64Tables::steps`]: a squaring's schedule flags, by step.
#[derive(Clone, Copy, Debug)]
pub struct StepIndex {
    log_r: usize,
    log_c: usize,
}

impl StepIndex {
    /// Whether the inter-pass twiddles are a step (R > 1).
    fn tw(self) -> usize {
        usize::from(self.log_r > 0)
    }
    pub fn col_fwd(self, s: usize) -> usize {
        s
    }
    pub fn tw_fwd(self) -> usize {
        self.log_r
    }
    pub fn row_fwd(self, s: usize) -> usize {
        self.log_r + self.tw() + s
    }
    pub fn square(self) -> usize {
        self.row_fwd(self.log_c)
    }
    pub fn row_inv(self, s: usize) -> usize {
        self.square() + 1 + s
    }
    pub fn tw_inv(self) -> usize {
        self.row_inv(self.log_c)
    }
    pub fn col_inv(self, s: usize) -> usize {
        self.tw_inv() + self.tw() + s
    }
    /// Steps in all.
    pub fn count(self) -> usize {
        self.col_inv(self.log_r)
    }
}

impl PrimeTables {
    /// `first`, `tw`: [`shape::first_power_exponents`] and [`shape::tile_twiddle_exponents`] of
    /// the plan.
    fn new(
        prime: &Fp64Prime,
        p_exp: u32,
        log2: u32,
        log_r: u32,
        first: &(Vec<usize>, Vec<usize>),
        tw: &(u32, Vec<usize>, Vec<usize>),
    ) -> Option<PrimeTables> {
        let n = 1u64 << log2;
        let (f, p) = (Fp64::new(prime.p), prime.p);
        let (w_n, rho) = (prime.root_of_unity(n)?, prime.root_of_two(n)?);
        let inv = |x: u64| pow_mod(x, p - 2, p);
        let row = Ntt::new(prime, 1 << (log2 - log_r))?;
        let col = if log_r == 0 { None } else { Some(Ntt::new(prime, 1 << log_r)?) };
        let steps = Fp64Tables::steps(p, log_r, log2 - log_r);
        // ρ^(−f) and 2ρ^(−f), f = p_exp mod n; their inverses ρ^f and ρ^f/2.
        let f_exp = u64::from(p_exp) % n;
        let down = pow_mod(inv(rho), f_exp, p);
        let chain = |narrow: u64, wide: u64| Chain { narrow: f.from_i64(narrow as i64), wide: f.from_i64(wide as i64) };
        let weight_step = chain(down, (2 * u128::from(down) % u128::from(p)) as u64);
        let up = inv(down);
        let inv_weight_step = chain(up, (u128::from(up) * u128::from(inv(2)) % u128::from(p)) as u64);
        let rows = 1usize << log_r;
        let row_steps = |g: u64| -> Vec<f64> {
            (0..rows).map(|r| f.from_i64(pow_mod(g, bit_reverse(r, rows) as u64, p) as i64)).collect()
        };
        Some(PrimeTables {
            weight_step,
            inv_weight_step,
            weight: RowTile::new(&f, rho, 1, first, log2),
            inv_weight: RowTile::new(&f, inv(rho), inv(n % p), first, log2),
            twiddle_step: row_steps(w_n),
            inv_twiddle_step: row_steps(inv(w_n)),
            twiddle: TilePowers::new(&f, w_n, tw),
            inv_twiddle: TilePowers::new(&f, inv(w_n), tw),
            // A weighted digit is a product: at most 3p/4.
            schedule: reductions(p, u128::from(3 * p / 4), &steps),
            f,
            row,
            col,
        })
    }

    /// The schedule's flags as a bit mask (bit s: reduce before step s), as the kernels take it.
    pub fn reduce_mask(&self) -> u64 {
        self.schedule.before.iter().enumerate().fold(0, |m, (s, &r)| m | (u64::from(r) << s))
    }
}

impl Fp64Tables {
    pub fn new(plan: &Plan) -> Result<Fp64Tables, PlanError> {
        let (p, len) = (plan.exponent(), plan.length());
        let why = |s: &str| PlanError::NoPlan { p, why: format!("fp64: {s} at length {len}") };
        if plan.arith() != Arith::Fp64 || len.odd != 1 {
            return Err(why("not an FP64 plan"));
        }
        let (log_r, log_c) = split(len.log2);
        let pair = pair_for(p, len).ok_or_else(|| why("no pair of primes holds the digits"))?;
        let (first, tw) = (shape::first_power_exponents(plan), shape::tile_twiddle_exponents(plan));
        let t = |prime| PrimeTables::new(prime, p, len.log2, log_r, &first, &tw).ok_or_else(|| why("no roots"));
        let primes = [t(&pair.primes[0])?, t(&pair.primes[1])?];
        Ok(Fp64Tables { log_r, log_c, pair, primes, crt: Crt::new(pair) })
    }

    /// The steps of a squaring as the schedule sees them, in order ([`StepIndex`]): R-point DIF
    /// stages, the twiddles (R > 1; products of two entries, ≤ 3p/4), C-point DIF stages, the
    /// square, C-point DIT stages, the inverse twiddles, R-point DIT stages.
    pub fn steps(p: u64, log_r: u32, log_c: u32) -> Vec<Step> {
        let (w, tw) = (u128::from(p - 1) / 2, u128::from(3 * p / 4));
        let stages = |k: u32, s: Step| vec![s; k as usize];
        let twiddles = if log_r > 0 { vec![Step::Mul { w: tw }] } else { vec![] };
        let mut v = stages(log_r, Step::Dif { w });
        v.extend(twiddles.iter().copied());
        v.extend(stages(log_c, Step::Dif { w }));
        v.push(Step::Square);
        v.extend((0..log_c as usize).map(|s| Step::dit(w, s)));
        v.extend(twiddles);
        v.extend((0..log_r as usize).map(|s| Step::dit(w, s)));
        v
    }

    pub fn index(&self) -> StepIndex {
        StepIndex { log_r: self.log_r as usize, log_c: self.log_c as usize }
    }

    pub fn rows(&self) -> usize {
        1 << self.log_r
    }

    pub fn cols(&self) -> usize {
        1 << self.log_c
    }
}

/// ρ^(e_j) (`table` and `step` of the weights) or ρ^(−e_j)·n^(−1) (of the unweights) for every
/// digit j: at the first digit of each carry segment a row's entry times a tile's ([`RowTile::at`]), then
/// along the segment one product by the chain's factor a digit (|·| ≤ 3p/4 throughout), as a
/// GPU thread walks its segment.
fn weights(plan: &Plan, t: &PrimeTables, table: &RowTile, step: Chain) -> Vec<f64> {
    let (n, f) = (plan.n(), plan.exponent() as usize % plan.n());
    let mut out = Vec::with_capacity(n);
    for j0 in (0..n).step_by(plan.seg_len()) {
        let mut e = plan.weight_exp(j0);
        let mut w = table.at(&t.f, plan, j0);
        for k in 0..plan.seg_len() {
            if k > 0 {
                // Digit j − 1 was wide iff its e was below f (Plan::widths_from).
                let wide = e < f;
                e = if wide { e + n - f } else { e - f };
                w = t.f.mul(w, if wide { step.wide } else { step.narrow });
            }
            out.push(w);
        }
    }
    out
}

/// Step 1: x_j = d_j·ρ^(e_j) in prime `t` (|d_j| ≤ 2^50·p/(3p/4): every digit the bound allows).
pub fn weigh(plan: &Plan, t: &PrimeTables, digits: &[i64]) -> Vec<f64> {
    let w = weights(plan, t, &t.weight, t.weight_step);
    digits.iter().zip(w).map(|(&d, w)| t.f.mul(d as f64, w)).collect()
}

/// Each column's values gathered, `op` applied, scattered back.
fn per_column(x: &mut [f64], cols: usize, mut op: impl FnMut(&mut [f64])) {
    let rows = x.len() / cols;
    let mut line = vec![0.0; rows];
    for c in 0..cols {
        line.iter_mut().enumerate().for_each(|(r, v)| *v = x[r * cols + c]);
        op(&mut line);
        line.iter().enumerate().for_each(|(r, &v)| x[r * cols + c] = v);
    }
}

/// Element (r, c) times g^(k·c), k = bitrev_R(r), g the element `powers` tabulates, reducing
/// first where the schedule says: along each segment of a row from its first column c0 the
/// twiddle is g^(k·c0) (two table entries), then one product by g^k (`steps[r]`) a column.
fn twiddle(
    all: &Fp64Tables,
    t: &PrimeTables,
    x: &mut [f64],
    powers: &TilePowers,
    steps: &[f64],
    reduce: bool,
    seg: usize,
) {
    let (rows, cols) = (all.rows(), all.cols());
    for (r, row) in x.chunks_exact_mut(cols).enumerate() {
        let step = steps[r];
        for (tile, part) in row.chunks_exact_mut(seg).enumerate() {
            let mut w = powers.at(&t.f, r, tile, rows);
            for (i, v) in part.iter_mut().enumerate() {
                if i > 0 {
                    w = t.f.mul(w, step);
                }
                let y = if reduce { t.f.reduce(*v) } else { *v };
                *v = t.f.mul(y, w);
            }
        }
    }
}

/// Step 2: the column DIF stages and the twiddles (nothing at R = 1).
pub fn columns_forward(all: &Fp64Tables, t: &PrimeTables, x: &mut [f64]) {
    let Some(col) = &t.col else { return };
    let (ix, before) = (all.index(), &t.schedule.before);
    per_column(x, all.cols(), |line| {
        (0..all.log_r as usize).for_each(|s| col.forward_stage(line, s, before[ix.col_fwd(s)]));
    });
    twiddle(all, t, x, &t.twiddle, &t.twiddle_step, before[ix.tw_fwd()], SEG_LEN.min(x.len()));
}

/// Step 3: per row the DIF stages, the pointwise square (y = None) or product with the same
/// row of y (y's columns forwarded, its row transformed here as x's), and the DIT stages.
pub fn rows(all: &Fp64Tables, t: &PrimeTables, x: &mut [f64], y: Option<&[f64]>) {
    let (ix, before, log_c) = (all.index(), &t.schedule.before, all.log_c as usize);
    let forward = |line: &mut [f64]| (0..log_c).for_each(|s| t.row.forward_stage(line, s, before[ix.row_fwd(s)]));
    let reduce_sq = before[ix.square()];
    let red = |v: f64| if reduce_sq { t.f.reduce(v) } else { v };
    for (r, row) in x.chunks_exact_mut(all.cols()).enumerate() {
        forward(row);
        match y {
            None => row.iter_mut().for_each(|v| *v = t.f.square(red(*v))),
            Some(y) => {
                let mut other = y[r * all.cols()..(r + 1) * all.cols()].to_vec();
                forward(&mut other);
                row.iter_mut().zip(other).for_each(|(v, o)| *v = t.f.mul(red(*v), red(o)));
            }
        }
        (0..log_c).for_each(|s| t.row.inverse_stage(row, s, before[ix.row_inv(s)]));
    }
}

/// Step 4: the inverse twiddles and the column DIT stages (nothing at R = 1).
pub fn columns_inverse(all: &Fp64Tables, t: &PrimeTables, x: &mut [f64]) {
    let Some(col) = &t.col else { return };
    let (ix, before) = (all.index(), &t.schedule.before);
    twiddle(all, t, x, &t.inv_twiddle, &t.inv_twiddle_step, before[ix.tw_inv()], SEG_LEN.min(x.len()));
    per_column(x, all.cols(), |line| {
        (0..all.log_r as usize).for_each(|s| col.inverse_stage(line, s, before[ix.col_inv(s)]));
    });
}

/// Step 5: y_j reduced, times ρ^(−e_j)·n^(−1): |·| ≤ 3p/4.
pub fn unweigh(plan: &Plan, t: &PrimeTables, x: &[f64]) -> Vec<f64> {
    let w = weights(plan, t, &t.inv_weight, t.inv_weight_step);
    x.iter().zip(w).map(|(&v, w)| t.f.mul(t.f.reduce(v), w)).collect()
}

/// Steps 1–2 in one prime (the GPU's fp_fwd): digits weighted, their columns transformed.
pub fn columns_in(plan: &Plan, all: &Fp64Tables, t: &PrimeTables, digits: &[i64]) -> Vec<f64> {
    let mut x = weigh(plan, t, digits);
    columns_forward(all, t, &mut x);
    x
}

/// Steps 4–5 in one prime (the GPU's fp_inv before the CRT): columns transformed back, unweighted.
pub fn columns_out(plan: &Plan, all: &Fp64Tables, t: &PrimeTables, mut x: Vec<f64>) -> Vec<f64> {
    columns_inverse(all, t, &mut x);
    unweigh(plan, t, &x)
}

/// Steps 1–5 in one prime: a's weighted convolution with b (None: with itself), unweighted.
fn convolve(plan: &Plan, all: &Fp64Tables, t: &PrimeTables, a: &[i64], b: Option<&[i64]>) -> Vec<f64> {
    let mut x = columns_in(plan, all, t, a);
    let y = b.map(|b| columns_in(plan, all, t, b));
    rows(all, t, &mut x, y.as_deref());
    columns_out(plan, all, t, x)
}

impl Fp64Tables {
    /// Both primes' unweighted outputs recombined by the CRT into the convolution's integers.
    pub fn recombine(&self, y1: &[f64], y2: &[f64]) -> Vec<i128> {
        y1.iter().zip(y2).map(|(&u, &v)| self.crt.recombine(u, v)).collect()
    }
}

impl Convolution for Fp64Tables {
    /// The convolution outputs of a·b (b = None: a²) as integers: both primes (side by side, as
    /// on the GPU) and the CRT.
    fn convolution(&self, plan: &Plan, a: &[i64], b: Option<&[i64]>) -> Vec<i128> {
        let [t1, t2] = &self.primes;
        let (y1, y2) = rayon::join(|| convolve(plan, self, t1, a, b), || convolve(plan, self, t2, a, b));
        self.recombine(&y1, &y2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exponent::TestKind;
    use crate::residue::Shift;
    use crate::transform::plan::Length;
    use crate::transform::testing::{self, direct_convolution, extreme_digits, matches_rug, random_digits};
    use quickcheck::{quickcheck, TestResult};

    fn plan_at(p: u32, log2: u32) -> Plan {
        Plan::with_length(p, Arith::Fp64, Length { odd: 1, log2 }).unwrap()
    }

    fn product_matches_rug(plan: &Plan, t: &Fp64Tables, a: &[i64], b: Option<&[i64]>) -> bool {
        let got = match b {
            Some(b) => t.multiply_digits(plan, a, b),
            None => t.square_digits(plan, a, None),
        };
        matches_rug(plan, a, b, &got)
    }

    #[test]
    fn steps_of_a_split() {
        // Steps: R-stages, twiddle, C-stages, square, C-stages, twiddle, R-stages.
        for log2 in [4, 13, 22] {
            let (log_r, log_c) = split(log2);
            let ix = StepIndex { log_r: log_r as usize, log_c: log_c as usize };
            let steps = Fp64Tables::steps(super::super::primes::P1.p, log_r, log_c);
            assert_eq!(steps.len(), ix.count());
            assert_eq!(steps[ix.square()], Step::Square);
            if log_r > 0 {
                assert!(
                    matches!(steps[ix.tw_fwd()], Step::Mul { .. }) && matches!(steps[ix.tw_inv()], Step::Mul { .. })
                );
                assert!(matches!(steps[ix.col_inv(log_r as usize - 1)], Step::Dit { .. }));
            }
            assert!(ix.count() <= 64, "the kernels take the flags as one 64-bit mask");
        }
    }

    #[test]
    fn convolution_is_the_definition() {
        // One row (2^2 … 2^12) and four steps (2^13): squares, products, extreme digits.
        for (log2, p) in [(2, 13), (2, 41), (3, 191), (6, 1000), (10, 20_000), (13, 100_003)] {
            let plan = plan_at(p, log2);
            let t = Fp64Tables::new(&plan).unwrap();
            let (a, b) = (random_digits(&plan, u64::from(p)), random_digits(&plan, u64::from(p) + 1));
            let ext = extreme_digits(&plan, 0, 1);
            assert_eq!(t.convolution(&plan, &a, Some(&b)), direct_convolution(&plan, &a, &b), "p={p}");
            assert_eq!(t.convolution(&plan, &a, None), direct_convolution(&plan, &a, &a), "p={p}");
            assert_eq!(t.convolution(&plan, &ext, None), direct_convolution(&plan, &ext, &ext), "p={p}");
        }
    }

    #[test]
    fn worst_case_digits_at_every_bound() {
        // The largest exponent of each length to 2^14, every digit at the largest magnitude the
        // proof allows: the outputs come close to the CRT's bound and must come back exact.
        for log2 in 1..=14 {
            let len = Length { odd: 1, log2 };
            let Some(p) = Arith::Fp64.largest_exponent_at(len) else { continue };
            let plan = Plan::with_length(p, Arith::Fp64, len).unwrap();
            let t = Fp64Tables::new(&plan).unwrap();
            for mode in 0..4 {
                let d = extreme_digits(&plan, mode, 1);
                assert!(product_matches_rug(&plan, &t, &d, None), "p={p} n={} mode={mode}", plan.n());
            }
            let c0 = t.convolution(&plan, &extreme_digits(&plan, 0, 1), None)[0].unsigned_abs();
            assert!(c0 > t.pair.max_abs() / 4, "p={p} n={} c0={c0}", plan.n());
        }
    }

    #[test]
    fn digits_beyond_the_bound_come_back_wrong() {
        // The comparison has teeth: digits 2^5 times larger than the proof allows overflow the
        // CRT range and the squaring is wrong.
        let len = Length { odd: 1, log2: 13 };
        let p = Arith::Fp64.largest_exponent_at(len).unwrap();
        let plan = Plan::with_length(p, Arith::Fp64, len).unwrap();
        let t = Fp64Tables::new(&plan).unwrap();
        let d: Vec<i64> = (0..plan.n()).map(|j| -(1i64 << (plan.width(j) + 4))).collect();
        assert!(!product_matches_rug(&plan, &t, &d, None));
    }

    quickcheck! {
        fn squaring_and_product_match_rug(seed: u64, pick: u32, log2: u8) -> TestResult {
            let len = Length { odd: 1, log2: 1 + u32::from(log2 % 14) };
            let Some(top) = Arith::Fp64.largest_exponent_at(len) else { return TestResult::discard() };
            let low = (len.n() as u32).max(13);
            let p = low + pick % (top - low + 1);
            let Ok(plan) = Plan::with_length(p, Arith::Fp64, len) else { return TestResult::discard() };
            let t = Fp64Tables::new(&plan).unwrap();
            let (a, b) = (random_digits(&plan, seed), random_digits(&plan, !seed));
            TestResult::from_bool(product_matches_rug(&plan, &t, &a, None) && product_matches_rug(&plan, &t, &a, Some(&b)))
        }

        fn ll_iterations_match_rug(seed: u64, pick: u32, s: u32, iters: u8) -> TestResult {
            let iterate = |plan: &Plan, d: Vec<i64>, sh: Shift, count: u64| {
                Fp64Tables::new(plan).unwrap().iterate_digits(plan, TestKind::Ll, d, sh, count)
            };
            testing::ll_iterations_match_rug(Arith::Fp64, &iterate, 400_000, (seed, pick, s, iters))
        }
    }

    /// Each length of 2^lo..=2^hi at its largest exponent, random and extreme digits: the
    /// squared residue against rug (FP64_ONLY=2^22 picks one length).
    fn lengths_match_rug(lo: u32, hi: u32) {
        for log2 in lo..=hi {
            let len = Length { odd: 1, log2 };
            if std::env::var_os("FP64_ONLY").is_some_and(|only| only.to_string_lossy() != len.to_string()) {
                continue;
            }
            let t0 = std::time::Instant::now();
            let p = Arith::Fp64.largest_exponent_at(len).unwrap();
            let plan = Plan::with_length(p, Arith::Fp64, len).unwrap();
            let t = Fp64Tables::new(&plan).unwrap();
            assert!(product_matches_rug(&plan, &t, &random_digits(&plan, u64::from(p)), None), "p={p} {len}");
            assert!(product_matches_rug(&plan, &t, &extreme_digits(&plan, 2, 1), None), "p={p} {len}");
            eprintln!("{len}: p={p} {:.2} s", t0.elapsed().as_secs_f64());
        }
    }

    #[test]
    fn every_length_from_2_15_to_2_20_matches_rug() {
        lengths_match_rug(15, 20);
    }

    #[test]
    fn every_length_from_2_21_to_2_22_matches_rug() {
        lengths_match_rug(21, 22);
    }
}
