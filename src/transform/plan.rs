//! The transform plan for one exponent, shared by the CPU twin (ntt.rs) and the GPU (gpu/):
//! the arithmetic ([`Arith`]), transform length n, digit layout (widths ⌈p(j+1)/n⌉ − ⌈pj/n⌉),
//! the segmented-carry parameters (their bounds from [`super::bound`]); for Goldilocks also the
//! IBDWT weights a_j = g^(⌈pj/n⌉·n − pj) with g^n = 2 (inverse weights carry 1/n), twiddle
//! tables and the GPU pass schedule. The M61·M31 arithmetic's tables (its weights are shifts)
//! are in [`super::m61m31`]; its algorithm and bound in docs/arithmetic.md.
//!
//! # The no-overflow bound
//! A layout is accepted only where the convolution outputs are recovered exactly: the proof, the
//! same for both arithmetics, and the carry parameters it gives are in [`super::bound`].
//!
//! # The carry scheme and its slack
//! The n convolution outputs are cut into segments of K = `seg_len` consecutive digits: the runs
//! of 2^c_log adjacent columns that one GPU block of the outermost column pass holds, or, at
//! small lengths (n ≤ 2^SMALL_MAX_LOG2, no column pass: one block holds the whole residue, see
//! "Small lengths" below), the smallest power of two above F, at least 4 and n/1024 (at most
//! 1024 segments, one per thread). Pass 1, the walk (one thread per segment, in parallel,
//! fused into the last inverse pass on the GPU) walks its K digits from a zero carry:
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

pub use crate::transform::arith::{Arith, Length, MAX_LOG2, MIN_EXPONENT};
use crate::transform::bound::carry_bounds;
use crate::transform::goldilocks::Gl;
use crate::transform::PlanError;

/// log2 of the largest chunk the row pass transforms (1024 words: 32 values per thread in
/// registers, with their twiddles).
pub const MAX_SHARED_LOG2: u32 = 10;
/// Stages per line by default, by log2 n: the fastest measured on an H200 (bench/RESULTS.md:
/// 5/6/7 stages at every length 2^16..2^23 on 2026-11-23; at 2^16, 2^18, 2^20, 2^22 and 2^23 after
/// each kernel change of 2026-11-25, which moved 2^20 from 7 to 6, 2^23 from 5 to 7 and, with
/// the power-of-2 twiddles, back to 6; and after the carry walk's change of 2026-11-26, 2^20 to
/// 8 by 0.8%, 2^19 from 6 to 7 by 10%, 2^17 from 5 to 6 by 3%, 2^11 from 5 to 6 by 14%, 2^24
/// from 5 to 8 by 14%, 2^25 from 5 to 7 by 11%; then 2^14 from 5 to 6 by 17%, 2^15 from 5 to 6 by
/// 6%, 2^26 from 5 to 8 by 21%). Short lines (few values per thread, more threads) win where a
/// pass is latency-bound (5 at 2^12 and 2^13); longer ones (fewer passes) at 2^19, 2^20 and from
/// 2^22 on.
fn default_line_stages(log2: u32) -> u32 {
    match log2 {
        0..=10 | 12 | 13 => 5,
        19 | 22 | 25 => 7,
        20 | 24 | 26.. => 8,
        _ => 6,
    }
}
/// log2 of the smallest chunk of the shared-memory kernel (when n is at least that long).
const MIN_SHARED_LOG2: u32 = 5;
/// Lengths up to 2^this are small: one thread block squares the whole residue in shared memory
/// (the kernel fits up to 2^13). One block wins up to 2^10 and loses above: on an H100 13.6
/// µs/iter at 2^11 against 10.9 on the multi-pass path (RESULTS.md, 2026-11-25 19:40).
pub const SMALL_MAX_LOG2: u32 = 10;
/// A small plan's carry segments hold at least 2^SMALL_SEG_MIN_LOG2 digits, and there are at
/// most 2^SMALL_SEGMENTS_LOG2 of them (one per thread of a block of 1024).
const SMALL_SEG_MIN_LOG2: u32 = 2;
const SMALL_SEGMENTS_LOG2: u32 = 10;
/// An M61·M31 plan's carry segments hold at least 2^MM_SEG_MIN_LOG2 digits.
const MM_SEG_MIN_LOG2: u32 = 4;
/// The shared kernel should run on at least 2^this many blocks (132 SMs), so small lengths use
/// smaller chunks and more global passes rather than leave most of the GPU idle; column passes
/// aim for the same.
pub(crate) const SHARED_BLOCKS_LOG2: u32 = 7;
/// log2 of the values one block of a column pass holds (32 KiB of shared memory, plus padding).
pub(crate) const BLOCK_WORDS_LOG2: u32 = 12;
/// At most 2^5 adjacent columns per block of a column pass; at least 2^2 (32-byte runs, one
/// memory sector).
const COLUMNS_LOG2: (u32, u32) = (2, 5);

/// One column pass: `stages` radix-2 stages down to half-size 2^s_log, over lines of values
/// base + c + k·2^s_log; a GPU block takes 2^c_log adjacent columns. In the outermost pass the
/// 2^c_log columns of one k are 2^c_log consecutive digits: that run is a carry segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnPass {
    pub stages: u32,
    pub s_log: u32,
    pub c_log: u32,
}

/// Everything both engines need to square modulo M_p with an IBDWT of length n.
#[derive(Debug, Clone)]
pub struct Plan {
    arith: Arith,
    p: u32,
    len: Length,
    seg_len: usize,
    fixup_depth: usize,
    slack: u64,
    min_width: u32,
    max_width: u32,
    /// Goldilocks weight tables (empty for M61·M31): a_j = g^e = hi[e >> lo_bits]·lo[e & (2^lo_bits − 1)],
    /// e = weight_exp(j).
    pub(crate) weight_hi: Vec<Gl>,
    pub(crate) weight_lo: Vec<Gl>,
    /// Inverse weights with 1/n folded into the hi table.
    pub(crate) inv_weight_hi: Vec<Gl>,
    pub(crate) inv_weight_lo: Vec<Gl>,
    lo_bits: u32,
    /// Most radix-2 stages one line of a GPU pass runs (row pass and column passes).
    line_stages: u32,
    /// twiddle[m + i] = ω_{2m}^i for each stage half-size m (power of two < n) and i < m.
    pub(crate) twiddle: Vec<Gl>,
    /// inv_twiddle[m + i] = ω_{2m}^(−i).
    pub(crate) inv_twiddle: Vec<Gl>,
}

/// ⌈p·j/n⌉ for a power-of-two n.
const fn ceil_div_pow2(pj: u64, log2: u32) -> u64 {
    (pj + (1u64 << log2) - 1) >> log2
}

fn no_plan(p: u32, why: String) -> PlanError {
    PlanError::NoPlan { p, why }
}

impl Plan {
    /// The plan of `arith` with length `len`, if it is safe (Goldilocks: lengths 2^k only).
    pub fn with_length(p: u32, arith: Arith, len: Length) -> Result<Plan, PlanError> {
        match (arith, len.odd) {
            (Arith::Goldilocks, 1) => Plan::with_log2(p, len.log2),
            _ => Plan::layout_of(p, arith, len),
        }
    }

    /// The layout part of a plan (widths and carry bounds) with empty Goldilocks tables.
    fn layout(p: u32, arith: Arith, len: Length) -> Result<Plan, PlanError> {
        let n = len.n();
        if (p as usize) < n {
            return Err(no_plan(p, format!("n={n} is more digits than bits")));
        }
        let (w_min, w_max) = ((p as usize / n) as u32, (p as usize).div_ceil(n) as u32);
        let bounds = carry_bounds(arith, p, n, w_min, w_max).map_err(|why| no_plan(p, why))?;
        Ok(Plan {
            arith,
            p,
            len,
            seg_len: 0,
            fixup_depth: bounds.fixup_depth,
            slack: bounds.slack,
            min_width: w_min,
            max_width: w_max,
            weight_hi: Vec::new(),
            weight_lo: Vec::new(),
            inv_weight_hi: Vec::new(),
            inv_weight_lo: Vec::new(),
            lo_bits: 0,
            line_stages: default_line_stages(len.log2),
            twiddle: Vec::new(),
            inv_twiddle: Vec::new(),
        })
    }

    /// The layout and carry segments of a plan of `arith` at `len`, without the Goldilocks
    /// tables: whether the plan exists, cheaply (for the length search, [`super::length`]).
    pub(super) fn layout_of(p: u32, arith: Arith, len: Length) -> Result<Plan, PlanError> {
        match (arith, len.odd) {
            (Arith::Goldilocks, 1) | (Arith::M61M31, 1 | 3) if len.log2 >= 1 && len.n() <= 1 << MAX_LOG2 => {
                Plan::layout(p, arith, len)?.with_segments()
            }
            _ => Err(no_plan(p, format!("no {} transform of length {len}", arith.name()))),
        }
    }

    /// The Goldilocks plan with length n = 2^log2, if it is safe.
    pub fn with_log2(p: u32, log2: u32) -> Result<Plan, PlanError> {
        if log2 == 0 || log2 > MAX_LOG2 {
            return Err(no_plan(p, format!("length 2^{log2} outside 2^1..2^{MAX_LOG2}")));
        }
        let n = 1usize << log2;
        let layout = Plan::layout(p, Arith::Goldilocks, Length { odd: 1, log2 })?;
        let g = Gl::root_of_two(log2).ok_or_else(|| no_plan(p, "no n-th root of 2".into()))?;
        let g_inv = g.inverse().ok_or_else(|| no_plan(p, "g = 0".into()))?;
        let n_inv = Gl::new(n as u64).inverse().ok_or_else(|| no_plan(p, "n = 0 mod P".into()))?;
        let lo_bits = log2.div_ceil(2);
        let (lo_len, hi_len) = (1usize << lo_bits, 1usize << (log2 - lo_bits));
        let powers = |base: Gl, len: usize, first: Gl| -> Vec<Gl> {
            std::iter::successors(Some(first), |x| Some(x.mul(base))).take(len).collect()
        };
        let weight_lo = powers(g, lo_len, Gl::ONE);
        let weight_hi = powers(g.pow(lo_len as u64), hi_len, Gl::ONE);
        let inv_weight_lo = powers(g_inv, lo_len, Gl::ONE);
        let inv_weight_hi = powers(g_inv.pow(lo_len as u64), hi_len, n_inv);
        let mut twiddle = vec![Gl::ZERO; n];
        let mut inv_twiddle = vec![Gl::ZERO; n];
        for s in 0..log2 {
            let m = 1usize << s;
            let w = Gl::root_of_unity(s + 1).ok_or_else(|| no_plan(p, "no root of unity".into()))?;
            let w_inv = w.inverse().ok_or_else(|| no_plan(p, "root = 0".into()))?;
            twiddle[m..2 * m].copy_from_slice(&powers(w, m, Gl::ONE));
            inv_twiddle[m..2 * m].copy_from_slice(&powers(w_inv, m, Gl::ONE));
        }
        Plan { weight_hi, weight_lo, inv_weight_hi, inv_weight_lo, lo_bits, twiddle, inv_twiddle, ..layout }
            .with_segments()
    }

    /// Fix the carry segments to the runs of the outermost column pass (at small lengths: the
    /// smallest power of two above the fix-up depth, at least 2^SMALL_SEG_MIN_LOG2 and
    /// n/2^SMALL_SEGMENTS_LOG2), or refuse the plan when the fix-up would not fit in one segment.
    /// M61·M31 takes the smallest power of two above the fix-up depth, at least
    /// 2^MM_SEG_MIN_LOG2 (the GPU walks each segment in one thread, kernels/m61m31/pipeline.cuh), or one
    /// segment where that does not divide n.
    fn with_segments(mut self) -> Result<Plan, PlanError> {
        let small = (self.fixup_depth + 1).next_power_of_two().max(1 << SMALL_SEG_MIN_LOG2);
        let small = small.max(self.n() >> SMALL_SEGMENTS_LOG2).min(self.n());
        let mm = (self.fixup_depth + 1).next_power_of_two().max(1 << MM_SEG_MIN_LOG2);
        self.seg_len = match self.arith {
            Arith::Goldilocks => self.column_passes().first().map_or(small, |c| 1 << c.c_log),
            Arith::M61M31 if self.n().is_multiple_of(mm) => mm,
            Arith::M61M31 => self.n(),
        };
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
    /// (smallest, largest) digit width in bits.
    pub fn widths(&self) -> (u32, u32) {
        (self.min_width, self.max_width)
    }
    /// Whether one thread block squares the whole residue (n ≤ 2^SMALL_MAX_LOG2, no global pass).
    pub fn is_small(&self) -> bool {
        self.len.odd == 1 && self.len.log2 <= SMALL_MAX_LOG2
    }
    /// log2 of the contiguous chunk transformed in shared memory (all of it at small lengths).
    pub fn shared_log2(&self) -> u32 {
        let log2 = self.len.log2;
        if self.is_small() {
            return log2;
        }
        log2.saturating_sub(SHARED_BLOCKS_LOG2).clamp(MIN_SHARED_LOG2, self.line_stages).min(log2)
    }
    /// The same plan with at most `k` stages per line of a GPU pass (5 ≤ k ≤ 10), for tuning.
    pub fn with_line_stages(mut self, k: u32) -> Result<Plan, PlanError> {
        if !(MIN_SHARED_LOG2..=MAX_SHARED_LOG2).contains(&k) {
            return Err(no_plan(
                self.p,
                format!("{k} stages per line is outside {MIN_SHARED_LOG2}..{MAX_SHARED_LOG2}"),
            ));
        }
        self.line_stages = k;
        self.with_segments()
    }
    /// Stage counts of the global-memory passes, outermost (largest stride) first; the forward
    /// transform runs them in this order, the inverse in reverse.
    pub fn global_passes(&self) -> Vec<u32> {
        let stages = self.len.log2 - self.shared_log2();
        let count = stages.div_ceil(self.line_stages);
        (0..count).map(|i| stages / count + u32::from(i < stages % count)).collect()
    }
    /// The shapes of the global passes, outermost first. Blocks take enough adjacent columns
    /// for about 2^SHARED_BLOCKS_LOG2 blocks, within COLUMNS_LOG2, and in the outermost pass at
    /// least fixup_depth + 1 (a carry segment must hold its fix-up).
    pub fn column_passes(&self) -> Vec<ColumnPass> {
        let log2 = self.len.log2;
        let mut top = log2; // log2 of the block-row the next pass splits
        let fix_log = usize::BITS - self.fixup_depth.leading_zeros();
        self.global_passes()
            .into_iter()
            .enumerate()
            .map(|(i, stages)| {
                top -= stages;
                let wanted = (log2 - stages).saturating_sub(SHARED_BLOCKS_LOG2).clamp(COLUMNS_LOG2.0, COLUMNS_LOG2.1);
                let wanted = if i == 0 { wanted.max(fix_log) } else { wanted };
                ColumnPass { stages, s_log: top, c_log: wanted.min(BLOCK_WORDS_LOG2 - stages).min(top) }
            })
            .collect()
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
        let e = self.weight_exp(j);
        self.weight_hi[e >> self.lo_bits].mul(self.weight_lo[e & ((1 << self.lo_bits) - 1)])
    }
    /// 1/(n·a_j).
    pub fn inv_weight(&self, j: usize) -> Gl {
        let e = self.weight_exp(j);
        self.inv_weight_hi[e >> self.lo_bits].mul(self.inv_weight_lo[e & ((1 << self.lo_bits) - 1)])
    }
    pub fn lo_bits(&self) -> u32 {
        self.lo_bits
    }
    pub fn weight_tables(&self) -> [&[Gl]; 4] {
        [&self.weight_hi, &self.weight_lo, &self.inv_weight_hi, &self.inv_weight_lo]
    }
    pub fn twiddles(&self) -> (&[Gl], &[Gl]) {
        (&self.twiddle, &self.inv_twiddle)
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

    #[test]
    fn segments_are_the_runs_of_the_outer_pass() {
        let plan = Plan::new(1_257_787).unwrap().with_line_stages(6).unwrap();
        let passes = plan.column_passes();
        assert_eq!(passes[0], ColumnPass { stages: 5, s_log: 11, c_log: 4 });
        assert_eq!(passes[1], ColumnPass { stages: 5, s_log: 6, c_log: 4 });
        assert_eq!(plan.seg_len(), 16);
        assert_eq!(Plan::new(82_589_933).unwrap().seg_len(), 32);
        // Small lengths: no column pass, segments of at least 4 digits, at most 1024 of them.
        let (tiny, p10) = (Plan::new(127).unwrap(), Plan::new(23_209).unwrap());
        assert!(tiny.is_small() && tiny.column_passes().is_empty() && tiny.global_passes().is_empty());
        assert_eq!((tiny.n(), tiny.seg_len(), p10.log2(), p10.seg_len(), p10.shared_log2()), (8, 4, 10, 4, 10));
        let top = crate::transform::length::largest_small_exponent();
        let (last, next) = (Plan::new(top).unwrap(), Plan::new(top + 1).unwrap());
        assert!(
            last.is_small() && last.log2() == SMALL_MAX_LOG2 && !next.is_small() && next.log2() == SMALL_MAX_LOG2 + 1
        );
        assert!(SMALL_MAX_LOG2 != 13 || (top, last.seg_len()) == (204_800, 8), "{top} {}", last.seg_len());
        // Tiny digits need a deep fix-up: the segments grow to hold it.
        let deep = Plan::with_log2(521, 9).unwrap();
        assert!(deep.fixup_depth() >= 8 && deep.seg_len() == 16, "F={} K={}", deep.fixup_depth(), deep.seg_len());
    }

    quickcheck! {
        fn segments_hold_their_fixup(p: u32, extra: u8, stages: u8) -> TestResult {
            let p = 13 + p % 3_000_000;
            if !crate::exponent::is_prime(p as u64) { return TestResult::discard(); }
            let Ok(plan) = Plan::new(p) else { return TestResult::discard() };
            // Longer lengths than the smallest (smaller digits, deeper fix-ups) and other line lengths.
            let longer = Plan::with_log2(p, plan.log2() + u32::from(extra % 4)).ok();
            let tuned = longer.and_then(|q| q.with_line_stages(5 + u32::from(stages % 6)).ok());
            let ok = |q: &Plan| {
                let passes = q.column_passes();
                let stages: u32 = passes.iter().map(|c| c.stages).sum();
                let small_segments = || {
                    let k = q.seg_len();
                    q.is_small() && k.is_power_of_two() && k >= 4.min(q.n()) && q.n() / k <= 1024
                        && (k == 4 || k == q.n() >> 10 || k / 2 <= q.fixup_depth())
                };
                q.fixup_depth() < q.seg_len()
                    && stages + q.shared_log2() == q.log2()
                    && q.is_small() == passes.is_empty()
                    && passes.first().map_or_else(small_segments, |c| q.seg_len() == 1 << c.c_log && c.s_log + c.stages == q.log2())
                    && passes.iter().all(|c| c.c_log <= c.s_log)
            };
            TestResult::from_bool(ok(&plan) && tuned.as_ref().is_none_or(ok))
        }
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
