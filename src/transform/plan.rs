//! The transform plan for one exponent, shared by the CPU twin (twin.rs) and the GPU (gpu/): the
//! arithmetic ([`Arith`]), transform length n, digit layout (widths ⌈p(j+1)/n⌉ − ⌈pj/n⌉), the
//! segmented-carry parameters (their bounds from [`super::bound`]), the line length of the GPU
//! passes the segments follow, and for Goldilocks the IBDWT's weight and twiddle tables
//! ([`super::goldilocks::tables`]). What differs per arithmetic (lengths, bound, segment rule,
//! tables) is its [`super::arithmetic::Arithmetic`]'s; [`super::length`] builds plans through it.
//! The M61·M31 arithmetic's tables (its weights are shifts) are in [`super::m61m31::stages`]; its
//! algorithm and bound in docs/arithmetic.md.
//!
//! # The no-overflow bound
//! A layout is accepted only where the convolution outputs are recovered exactly: the proof, the
//! same for both arithmetics, and the carry parameters it gives are in [`super::bound`].
//!
//! # The carry scheme and its slack
//! The n convolution outputs are cut into segments of K = `seg_len` consecutive digits, by the
//! arithmetic's rule: for Goldilocks the runs of 2^c_log adjacent columns that one GPU block of
//! the outermost column pass holds, or, at small lengths (n ≤ 2^SMALL_MAX_LOG2, no column pass:
//! one block holds the whole residue, see "Small lengths" below), the smallest power of two
//! above F, at least 4 and n/1024 (at most 1024 segments, one per thread)
//! ([`super::goldilocks::segments`]); for M61·M31 the smallest power of two above F, at least 16.
//! Pass 1, the walk (one thread per segment, in parallel, fused into the last inverse pass on
//! the GPU) walks its K digits from a zero carry:
//! c = q·2^w + r (q = c >> w, r ∈ [0, 2^w)), t = r + carry (+ the LL term), digit = t balanced,
//! carry = q + (t − digit)/2^w; no intermediate exceeds 2^63 because c is split before the carry
//! is added. Its carry out is bounded by B_walk, the fixed point of
//! B = ⌊c_max/2^w_min⌋ + 3 + ⌊B/2^w_min⌋. Pass 2, the fix-up (fused into the next first forward
//! pass on the GPU, or done by the host before a read) takes the carry out of the previous
//! segment (cyclically: the top segment's carry enters digit 0, since 2^p ≡ 1 mod M_p),
//! normalizes the first F = `fixup_depth` digits, where the bound of the carry falls as
//! b ← 1 + ⌊b/2^w_min⌋ until it stops falling at b_F, and adds the carry left (|·| ≤ b_F) to
//! digit F unnormalized. That digit is the only one outside the balanced range, by at most
//! `slack` = b_F (1 when w_min ≥ 2), which is why m above includes slack. The plan requires
//! F < K so that fix-ups of different segments never touch the same digit.
//!
//! # Small lengths
//! For n ≤ 2^SMALL_MAX_LOG2 there are no global passes: one GPU thread block holds all n values
//! in shared memory and runs whole iterations in one launch (kernels/goldilocks/small.cuh): weigh, every
//! forward stage, square, every inverse stage, unweigh, then both carry passes, the walk and the
//! fix-up, each by one thread per segment with a barrier between. The segments are the same as
//! above, so the CPU twin (src/transform/twin.rs) gives the same digits bit for bit.

use crate::transform::arith::Bound;
pub use crate::transform::arith::{Arith, Length, MAX_LOG2, MIN_EXPONENT};
use crate::transform::bound::carry_bounds_within;
use crate::transform::goldilocks::field::Gl;
use crate::transform::goldilocks::segments::{self, default_line_stages, MIN_SHARED_LOG2};
pub use crate::transform::goldilocks::segments::{MAX_SHARED_LOG2, SMALL_MAX_LOG2};
use crate::transform::goldilocks::tables::GlTables;
use crate::transform::PlanError;

/// Everything both engines need to square modulo M_p with an IBDWT of length n.
#[derive(Debug, Clone)]
pub struct Plan {
    arith: Arith,
    p: u32,
    len: Length,
    seg_len: usize,
    fixup_depth: usize,
    slack: u64,
    /// B_walk, the bound on every carry of the walk.
    carry_bound: u128,
    min_width: u32,
    max_width: u32,
    /// The Goldilocks weight and twiddle tables (empty for M61·M31).
    pub(crate) gl: GlTables,
    /// Most radix-2 stages one line of a GPU pass runs (row pass and column passes).
    line_stages: u32,
}

/// ⌈p·j/n⌉ for a power-of-two n.
const fn ceil_div_pow2(pj: u64, log2: u32) -> u64 {
    (pj + (1u64 << log2) - 1) >> log2
}

fn no_plan(p: u32, why: String) -> PlanError {
    PlanError::NoPlan { p, why }
}

impl Plan {
    /// The layout of a plan of `arith` at `len` under its bound (widths and carry bounds), with
    /// no carry segments ([`Plan::with_seg_len`]) and no tables yet: [`super::length`] builds
    /// plans from it through the arithmetic's implementation.
    pub(crate) fn layout(p: u32, arith: Arith, bound: &Bound, len: Length) -> Result<Plan, PlanError> {
        let n = len.n();
        if (p as usize) < n {
            return Err(no_plan(p, format!("n={n} is more digits than bits")));
        }
        let (w_min, w_max) = ((p as usize / n) as u32, (p as usize).div_ceil(n) as u32);
        let bounds = carry_bounds_within(bound, p, n, (w_min, w_max)).map_err(|why| no_plan(p, why))?;
        Ok(Plan {
            arith,
            p,
            len,
            seg_len: 0,
            fixup_depth: bounds.fixup_depth,
            slack: bounds.slack,
            carry_bound: bounds.b_walk,
            min_width: w_min,
            max_width: w_max,
            gl: GlTables::default(),
            line_stages: default_line_stages(len.log2),
        })
    }

    /// The plan with carry segments of `seg_len` digits (the arithmetic's rule), or refused when
    /// the fix-up would not fit in one segment.
    pub(crate) fn with_seg_len(mut self, seg_len: usize) -> Result<Plan, PlanError> {
        self.seg_len = seg_len;
        if self.fixup_depth >= self.seg_len {
            let why = format!(
                "n={}: carry fix-up needs {} digits but segments hold {}",
                self.n(),
                self.fixup_depth,
                self.seg_len
            );
            return Err(no_plan(self.p, why));
        }
        Ok(self)
    }

    /// The plan with these Goldilocks tables.
    pub(crate) fn with_goldilocks_tables(self, gl: GlTables) -> Plan {
        Plan { gl, ..self }
    }

    /// The same layout with at most `k` stages per line of a GPU pass (5 ≤ k ≤ 10), its carry
    /// segments still to be redone for them: the GPU's schedule does both
    /// (gpu/goldilocks/schedule.rs, `with_line_stages`).
    pub(crate) fn lined(mut self, k: u32) -> Result<Plan, PlanError> {
        if !(MIN_SHARED_LOG2..=MAX_SHARED_LOG2).contains(&k) {
            return Err(no_plan(
                self.p,
                format!("{k} stages per line is outside {MIN_SHARED_LOG2}..{MAX_SHARED_LOG2}"),
            ));
        }
        self.line_stages = k;
        Ok(self)
    }

    pub fn exponent(&self) -> u32 {
        self.p
    }
    pub fn arith(&self) -> Arith {
        self.arith
    }
    pub fn length(&self) -> Length {
        self.len
    }
    pub fn n(&self) -> usize {
        self.len.n()
    }
    pub fn log2(&self) -> u32 {
        self.len.log2
    }
    /// Digits per carry segment (K): the run of consecutive digits that one block of the
    /// outermost column pass holds (at small lengths: see the module doc).
    pub fn seg_len(&self) -> usize {
        self.seg_len
    }
    /// Digits each carry fix-up normalizes (F).
    pub fn fixup_depth(&self) -> usize {
        self.fixup_depth
    }
    /// How far a digit may stand outside the balanced range after the fix-up.
    pub fn slack(&self) -> u64 {
        self.slack
    }

    /// B_walk: no carry of the walk or the fix-up exceeds it (module doc).
    pub fn carry_bound(&self) -> u128 {
        self.carry_bound
    }
    /// (smallest, largest) digit width in bits.
    pub fn widths(&self) -> (u32, u32) {
        (self.min_width, self.max_width)
    }
    /// Whether one thread block squares the whole residue (n ≤ 2^SMALL_MAX_LOG2, no global pass).
    pub fn is_small(&self) -> bool {
        self.len.odd == 1 && self.len.log2 <= SMALL_MAX_LOG2
    }
    /// Most radix-2 stages one line of a GPU pass runs (row pass and column passes).
    pub fn line_stages(&self) -> u32 {
        self.line_stages
    }
    /// log2 of the contiguous chunk transformed in shared memory (all of it at small lengths).
    pub fn shared_log2(&self) -> u32 {
        segments::shared_log2(self.len.log2, self.line_stages, self.is_small())
    }
    /// Stage counts of the global-memory passes, outermost (largest stride) first; the forward
    /// transform runs them in this order, the inverse in reverse.
    pub fn global_passes(&self) -> Vec<u32> {
        segments::global_passes(self.len.log2, self.shared_log2(), self.line_stages)
    }
    /// Lowest bit of digit j: ⌈p·j/n⌉.
    pub fn start(&self, j: usize) -> u64 {
        let pj = self.p as u64 * j as u64;
        if self.len.odd == 1 {
            ceil_div_pow2(pj, self.len.log2)
        } else {
            pj.div_ceil(self.n() as u64)
        }
    }
    /// Width of digit j in bits.
    pub fn width(&self, j: usize) -> u32 {
        (self.start(j + 1) - self.start(j)) as u32
    }
    /// Widths of digits j, j + 1, … (cyclically past n − 1) without a product per digit, as the
    /// GPU's carry passes take them (kernels/goldilocks/carry.cuh Widths): with p = q·n + f and
    /// e = weight_exp, digit j is q + 1 bits wide iff e_j < f, and e_{j+1} = e_j − f mod n.
    pub fn widths_from(&self, j: usize) -> impl Iterator<Item = u32> {
        let (n, p) = (self.n(), self.p as usize);
        let (q, f) = ((p / n) as u32, p % n);
        let mut e = self.weight_exp(j);
        std::iter::from_fn(move || {
            let wide = e < f;
            e = if wide { e + n - f } else { e - f };
            Some(q + u32::from(wide))
        })
    }
    /// e_j = ⌈pj/n⌉·n − pj ∈ [0, n): a_j = g^e_j = 2^(e_j/n).
    pub fn weight_exp(&self, j: usize) -> usize {
        let n = self.n();
        (n - (self.p as usize * j) % n) % n
    }
    pub fn weight(&self, j: usize) -> Gl {
        self.gl.weight(self.weight_exp(j))
    }
    /// 1/(n·a_j).
    pub fn inv_weight(&self, j: usize) -> Gl {
        self.gl.inv_weight(self.weight_exp(j))
    }
    pub fn lo_bits(&self) -> u32 {
        self.gl.lo_bits
    }
    pub fn weight_tables(&self) -> [&[Gl]; 4] {
        [&self.gl.weight_hi, &self.gl.weight_lo, &self.gl.inv_weight_hi, &self.gl.inv_weight_lo]
    }
    pub fn twiddles(&self) -> (&[Gl], &[Gl]) {
        (&self.gl.twiddle, &self.gl.inv_twiddle)
    }

    /// The digit and value of −2·2^s (the LL subtraction in the shifted domain) as one term
    /// −2^(b − start_j) in digit j, b = (s + 1) mod p.
    pub fn minus_two_at(&self, s: u32) -> (usize, i64) {
        let b = (s as u64 + 1) % self.p as u64;
        // start is increasing; find the last j with start(j) ≤ b.
        let (mut lo, mut hi) = (0usize, self.n());
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.start(mid) <= b {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo, -(1i64 << (b - self.start(lo))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::residue::Residue;
    use quickcheck::{quickcheck, TestResult};
    use rug::Integer;

    #[test]
    fn known_lengths() {
        // The benchmark exponents and the lengths the bound admits for them.
        for (p, log2) in [(1_257_787u32, 16u32), (3_021_377, 18), (20_996_011, 20), (82_589_933, 22), (136_279_841, 23)]
        {
            let plan = Plan::new(p).unwrap();
            assert_eq!(plan.log2(), log2, "p={p}");
            assert!(plan.fixup_depth() < plan.seg_len());
            assert_eq!(plan.slack(), 1);
        }
        assert!(matches!(Plan::with_log2(82_589_933, 21), Err(PlanError::NoPlan { .. })));
        assert!(matches!(Plan::with_log2(1000, 27), Err(PlanError::NoPlan { .. })));
        assert!(matches!(Plan::with_log2(3, 2), Err(PlanError::NoPlan { .. })));
    }

    #[test]
    fn m61m31_known_lengths() {
        // The sizes of the issue: 136,279,841 on 2^22, 82,589,933 on 3·2^20, 20,996,011 on 3·2^18.
        for (p, odd, log2, w_max) in
            [(136_279_841u32, 1u32, 22u32, 33u32), (82_589_933, 3, 20, 27), (20_996_011, 3, 18, 27)]
        {
            let plan = Plan::for_arith(p, Arith::M61M31).unwrap();
            assert_eq!((plan.length(), plan.widths().1, plan.arith()), (Length { odd, log2 }, w_max, Arith::M61M31));
            assert!(plan.fixup_depth() < plan.seg_len() && plan.n().is_multiple_of(plan.seg_len()), "p={p}");
            let total: u64 = (0..plan.n()).map(|j| u64::from(plan.width(j))).sum();
            assert_eq!(total, u64::from(p));
        }
        // Lengths: 2^k and 3·2^k, shortest first; Goldilocks only 2^k.
        let lens = Arith::M61M31.lengths();
        assert!(lens.windows(2).all(|w| w[0].n() < w[1].n()) && lens.iter().any(|l| l.odd == 3));
        assert!(Arith::Goldilocks.lengths().iter().all(|l| l.odd == 1));
        assert!(Plan::with_length(100_003, Arith::Goldilocks, Length { odd: 3, log2: 12 }).is_err());
        assert!(Plan::with_length(100_003, Arith::M61M31, Length { odd: 5, log2: 12 }).is_err());
        assert!(Plan::with_length(100_003, Arith::M61M31, Length { odd: 3, log2: 0 }).is_err());
        assert!(Plan::for_arith(11, Arith::M61M31).is_err());
        // Goldilocks through for_arith is Plan::new.
        assert_eq!(Plan::for_arith(1_257_787, Arith::Goldilocks).unwrap().n(), Plan::new(1_257_787).unwrap().n());
        // Starts of a 3·2^k layout: ⌈pj/n⌉ by division.
        let plan = Plan::with_length(1001, Arith::M61M31, Length { odd: 3, log2: 3 }).unwrap();
        assert!((0..=24).all(|j| plan.start(j) == (1001 * j as u64).div_ceil(24)));
    }

    #[test]
    fn largest_length_refused_above() {
        // 2^26 holds digits of at most 19 bits (~1.24e9 bits in all); beyond that no plan exists.
        assert!(matches!(Plan::new(2_000_000_011), Err(PlanError::NoPlan { .. })));
    }

    #[test]
    fn widths_weights_twiddles() {
        let plan = Plan::with_log2(1_257_787, 16).unwrap();
        let n = plan.n();
        let g = Gl::root_of_two(16).unwrap();
        let n_inv = Gl::new(n as u64).inverse().unwrap();
        let mut total = 0u64;
        for j in 0..n {
            let w = plan.width(j);
            assert!(w == 19 || w == 20);
            total += w as u64;
            let e = plan.weight_exp(j);
            assert_eq!((plan.start(j) * n as u64 - 1_257_787 * j as u64) as usize, e);
            assert_eq!(plan.weight(j), g.pow(e as u64));
            assert_eq!(plan.weight(j).mul(plan.inv_weight(j)), n_inv);
        }
        assert_eq!(total, 1_257_787);
        let (tw, itw) = plan.twiddles();
        for m in [2usize, 1024, n / 2] {
            assert_eq!(tw[m + 1].pow(2 * m as u64), Gl::ONE);
            assert_eq!(tw[m + 1].pow(m as u64), Gl::ONE.neg());
            assert_eq!(tw[m + 1].mul(itw[m + 1]), Gl::ONE);
        }
        assert_eq!(plan.shared_log2(), 6);
        assert_eq!(plan.global_passes(), vec![5, 5]);
        assert_eq!(Plan::new(82_589_933).unwrap().global_passes(), vec![5, 5, 5]);
    }

    quickcheck! {
        fn widths_by_recurrence_match_the_starts(p: u32, extra: u8, j: u32) -> TestResult {
            let p = 13 + p % 3_000_000;
            let Ok(plan) = Plan::new(p) else { return TestResult::discard() };
            // Longer lengths too: narrower digits, and q = 0 where n > p.
            let Ok(plan) = Plan::with_log2(p, plan.log2() + u32::from(extra % 4)) else { return TestResult::discard() };
            let (n, j) = (plan.n(), j as usize % plan.n());
            let by_start = (j..j + 70).map(|i| plan.width(i % n));
            TestResult::from_bool(plan.widths_from(j).take(70).eq(by_start))
        }
    }

    quickcheck! {
        fn minus_two_lands_on_its_bit(p: u32, s: u32) -> TestResult {
            let p = 100 + p % 50_000;
            if !crate::exponent::is_prime(p as u64) { return TestResult::discard(); }
            let plan = Plan::new(p).unwrap();
            let s = s % p;
            let (j, v) = plan.minus_two_at(s);
            let mut d = vec![0i64; plan.n()];
            d[j] = v;
            // Σ d·2^start = −2·2^s ⇒ unshifted by s it is −2.
            let want = Residue::from_integer(p, &Integer::from(-2));
            TestResult::from_bool(plan.digits_to_residue(&d, s).unwrap() == want)
        }
    }
}
