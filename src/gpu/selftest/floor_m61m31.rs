//! The floor model of the second arithmetic (an IBDWT over GF(M61²) × GF(M31²), issue 24) for
//! `gpu-selftest field-rate`: the operations one squaring of a planned length needs in each field,
//! and from the rates measured by rate.rs its arithmetic floor, its memory-traffic floor and the
//! predicted µs/iter.
//!
//! # Lengths
//! n = odd·2^k real words (odd = 1 or 3) in N = n/2 complex values per field, N = odd·2^m, m = k − 1.
//! [`length_for`] takes the shortest n whose worst-case cyclic convolution of balanced digits
//! (w = ⌈p/n⌉ bits, |digit| ≤ 2^(w−1)) stays within the CRT's centered range:
//! n·2^(2w−2) < M61·M31/2. This is the gate's working bound; the proven one is the CPU twin's.
//!
//! # The counts, per field and per squaring (forward and inverse transform, pair step, weights)
//! - Radix-2 butterflies (complex add+sub pairs): N/2 per stage, m stages, 2 directions: N·m.
//! - The 2^m part keeps the pass count of today's Goldilocks plan of 2^m values (its global
//!   passes and its row pass; [`goldilocks_passes`]) and its most stages per pass, the stages
//!   dealt to the passes so that they make the fewest groups ([`radix8_passes`]). A pass of s
//!   stages splits into ⌈s/3⌉ groups of at most 3 stages (as even as possible, larger first),
//!   whose twiddles are powers of w8 = (1 + i)/√2: i costs nothing (a swap and a sign inside the
//!   additions), w8 and w8³ cost a w8 product (two shifts), 2 per DFT of 8: N/4 per group of 3
//!   stages and direction.
//! - General twiddle products (complex) at every boundary between consecutive groups, inside a
//!   pass or between passes: after a group of g stages with r stages still to come, the twiddle
//!   of (j, k) in each sub-transform of 2^g × 2^r values is w^(jk), 1 where j = 0 or k = 0:
//!   N·(1 − 2^−g)(1 − 2^−r) products per direction (the few that are powers of w8 are counted as
//!   general).
//! - odd = 3: a radix-3 step (first forward, last inverse): per direction N/3 DFTs of 3, each 3
//!   complex add+sub pairs, a halving (2 shifts) and a product of a complex by √−3/2 ∈ GF(p)
//!   (2 real products); its twiddles, N·(2/3)(1 − 2^−m) general products per direction; and the
//!   1/3 of 1/n, a real product per real word (n).
//! - The pair step (the real input of length n squared through the complex one of N): per pair
//!   of values (k, N − k) X, Y from Z_k and conj Z_{N−k}, t = Ω^k·Y, F = X ± t, the two squares,
//!   back through conj Ω^k, and Z'_k, Z'_{N−k}: 2 general products, 2 complex squares (2 real
//!   products each) and ~5 complex add+sub pairs; per value 1 general product, 2 real products,
//!   2.5 pairs. Its halvings and the 2^−m of 1/n go into the unweighting shifts.
//! - Weights and unweights: a power of 2 per real word each way, 2n real shifts.
//! - The CRT, once for both fields: n words.
//!
//! Left out, as in the Goldilocks floor: the carry walk, loads and stores, index arithmetic.
//!
//! # Time
//! Each field's count at its own rates: pairs at the radix-4 kernel's rate (per radix-2
//! butterfly), general products at the faster of the products by 3 and by 4, w8 products,
//! real products and shifts at theirs. The two fields together take (t61 + t31)/s, where s ≥ 1 is
//! what running both fields' butterflies interleaved gains over running them apart (the paired
//! kernel against the two alone); plus the CRT. Memory: every pass reads and writes every word
//! once (12 B per real word: 8 for M61, 4 for M31; Goldilocks 8), 2G + 1 passes for G global
//! passes (forward, inverse, and the row pass that does both inner halves and the pair step),
//! tables left out, at the measured copy bandwidth. The prediction is max(arithmetic, memory)
//! scaled by how far today's Goldilocks engine runs above its own max(arithmetic, memory) at the
//! same exponent: the new kernels are assumed to reach their floor as well as today's reach theirs.

use crate::engine::EngineError;
use crate::transform::plan::Plan;

/// n = odd·2^log2 real words (odd = 1 or 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MLength {
    pub odd: u32,
    pub log2: u32,
}

impl MLength {
    pub fn n(self) -> u64 {
        u64::from(self.odd) << self.log2
    }
}

impl std::fmt::Display for MLength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.odd == 1 {
            write!(f, "2^{}", self.log2)
        } else {
            write!(f, "{}*2^{}", self.odd, self.log2)
        }
    }
}

/// M61·M31 = 2^92 − 2^61 − 2^31 + 1.
const M: u128 = ((1u128 << 61) - 1) * ((1u128 << 31) - 1);
/// The longest complex length considered (2^26 values per field: today's longest plan).
const MAX_LOG2: u32 = 27;

/// The shortest length n = 2^k or 3·2^k (n ≥ 4) whose worst-case output fits: n·2^(2w−1) < M61·M31.
pub fn length_for(p: u32) -> Option<MLength> {
    let mut lengths: Vec<MLength> =
        (2..=MAX_LOG2).flat_map(|log2| [MLength { odd: 1, log2 }, MLength { odd: 3, log2: log2 - 1 }]).collect();
    lengths.sort_by_key(|l| l.n());
    lengths.into_iter().find(|l| {
        let w = u64::from(p).div_ceil(l.n());
        let shift = 2 * w - 1;
        shift < 92 && u128::from(l.n()) << shift < M
    })
}

/// Stage counts of today's Goldilocks plan of 2^log2 values (its global passes, outermost first,
/// then its row pass), with its default stages per line.
pub fn goldilocks_passes(log2: u32) -> Result<Vec<u32>, EngineError> {
    // Any exponent of ~16-bit digits gives the plan of this length; the passes depend on it only
    // through the carry segments, not through their stage counts.
    let plan = Plan::with_log2(16 << log2, log2).map_err(|e| EngineError::Other(e.to_string()))?;
    let mut passes = plan.global_passes();
    passes.push(plan.shared_log2());
    Ok(passes)
}

/// The passes of a plan with as many passes as `goldilocks`, as many stages in all, none longer
/// than its longest, that split into the fewest groups of at most 3 stages (ties: the shortest
/// longest pass, then the first in ascending order). Today's passes are shaped for lines of
/// power-of-2 twiddles (up to 64 values), which this arithmetic does not have beyond 8.
pub fn radix8_passes(goldilocks: &[u32]) -> Vec<u32> {
    fn walk(left: u32, parts: usize, cap: u32, cur: &mut Vec<u32>, best: &mut Option<((u32, u32), Vec<u32>)>) {
        if parts == 0 {
            let key = (cur.iter().map(|s| s.div_ceil(3)).sum(), cur.iter().copied().max().unwrap_or(0));
            if left == 0 && best.as_ref().is_none_or(|(k, _)| key < *k) {
                *best = Some((key, cur.clone()));
            }
            return;
        }
        for s in 1..=cap.min(left) {
            cur.push(s);
            walk(left - s, parts - 1, cap, cur, best);
            cur.pop();
        }
    }
    let cap = goldilocks.iter().copied().max().unwrap_or(0);
    let mut best = None;
    walk(goldilocks.iter().sum(), goldilocks.len(), cap, &mut Vec::new(), &mut best);
    best.map_or_else(|| goldilocks.to_vec(), |(_, passes)| passes)
}

/// The groups of at most 3 stages of each pass, outermost first: ⌈s/3⌉ per pass of s stages,
/// as even as possible, larger first.
pub fn groups(passes: &[u32]) -> Vec<u32> {
    passes
        .iter()
        .flat_map(|&s| {
            let count = s.div_ceil(3);
            (0..count).map(move |i| s / count + u32::from(i < s % count))
        })
        .collect()
}

/// Operations of one squaring in one field (see the module's comment).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Complex add+sub pairs (radix-2 butterflies without their twiddle).
    pub pairs: f64,
    /// Complex products by w8 or w8³ (two shifts).
    pub w8: f64,
    /// General complex products.
    pub cx_products: f64,
    /// Real products.
    pub products: f64,
    /// Real products by powers of 2.
    pub shifts: f64,
}

/// One squaring's operations in one field at length `len`, its 2^m part in passes of `passes`
/// stages (outermost first, Σ = m).
pub fn counts(len: MLength, passes: &[u32]) -> Counts {
    let m = len.log2 - 1;
    debug_assert_eq!(passes.iter().sum::<u32>(), m);
    let n = len.n() as f64;
    let big_n = n / 2.0;
    let gs = groups(passes);
    let mut rest = m;
    let mut twiddles = 0.0;
    for &g in &gs {
        rest -= g;
        twiddles += big_n * (1.0 - 0.5f64.powi(g as i32)) * (1.0 - 0.5f64.powi(rest as i32));
    }
    let eights = gs.iter().filter(|&&g| g == 3).count() as f64;
    let mut c = Counts {
        pairs: big_n * f64::from(m) + 2.5 * big_n,
        w8: 2.0 * eights * big_n / 4.0,
        cx_products: 2.0 * twiddles + big_n,
        products: 2.0 * big_n,
        shifts: 2.0 * n,
    };
    if len.odd == 3 {
        let dfts = 2.0 * big_n / 3.0;
        c.pairs += 3.0 * dfts;
        c.shifts += 2.0 * dfts;
        c.products += 2.0 * dfts + n;
        c.cx_products += 2.0 * big_n * (2.0 / 3.0) * (1.0 - 0.5f64.powi(m as i32));
    }
    c
}

/// Operations per second of one field's operations (kernels/m61m31/field_rate.cuh).
#[derive(Clone, Copy, Debug)]
pub struct FqRates {
    /// Real add+sub pairs.
    pub addsub: f64,
    /// Real products.
    pub mul: f64,
    /// Real products by run-time powers of 2.
    pub shl: f64,
    /// Complex radix-2 butterflies with a general twiddle (an add, a subtract, a product by 3).
    pub cx_bfly: f64,
    /// Complex products by 3 and by 4 base products.
    pub cx_mul3: f64,
    pub cx_mul4: f64,
    /// Complex radix-2 butterflies inside radix-4 DFTs (twiddle i): add+sub pairs, lazy.
    pub cx_radix4: f64,
    /// Complex products by w8.
    pub cx_w8: f64,
}

impl FqRates {
    /// Each rate with its name, for a table.
    pub fn named(&self) -> [(&'static str, f64); 8] {
        [
            ("add+sub pairs (folded)", self.addsub),
            ("products", self.mul),
            ("products by 2^e (run-time e)", self.shl),
            ("GF(p^2) butterflies, general twiddle", self.cx_bfly),
            ("GF(p^2) products by 3", self.cx_mul3),
            ("GF(p^2) products by 4", self.cx_mul4),
            ("GF(p^2) butterflies in radix-4 DFTs", self.cx_radix4),
            ("GF(p^2) products by w8 (shifts)", self.cx_w8),
        ]
    }

    /// Seconds of one field's counts at these rates.
    pub fn seconds(&self, c: &Counts) -> f64 {
        c.pairs / self.cx_radix4
            + c.w8 / self.cx_w8
            + c.cx_products / self.cx_mul3.max(self.cx_mul4)
            + c.products / self.mul
            + c.shifts / self.shl
    }
}

/// The second arithmetic's rates: each field's, the paired butterfly's and the CRT's.
#[derive(Clone, Copy, Debug)]
pub struct MersenneRates {
    pub m61: FqRates,
    pub m31: FqRates,
    /// Pairs of butterflies (one in each field, interleaved) per second.
    pub pair_bfly: f64,
    /// CRTs (words) per second.
    pub crt: f64,
}

impl MersenneRates {
    /// What interleaving the two fields' butterflies gains over running them apart: the time of
    /// one butterfly in each field apart over that of the paired one.
    pub fn pairing(&self) -> f64 {
        (1.0 / self.m61.cx_bfly + 1.0 / self.m31.cx_bfly) * self.pair_bfly
    }
}

/// The floor of one squaring of the second arithmetic, in µs.
#[derive(Clone, Copy, Debug)]
pub struct MersenneFloor {
    pub len: MLength,
    /// Global passes plus the row pass.
    pub passes: usize,
    /// Each field's operations at its rates, apart.
    pub m61_us: f64,
    pub m31_us: f64,
    pub crt_us: f64,
    /// (m61 + m31) / max(pairing, 1) + crt (a transform that would lose by interleaving the
    /// fields runs them apart).
    pub arith_us: f64,
    pub memory_us: f64,
}

/// Bytes one squaring moves on a plan of `passes` passes (the last the row pass): every pass
/// reads and writes every word once.
pub fn memory_bytes(n: f64, passes: usize, bytes_per_word: f64) -> f64 {
    (2 * passes - 1) as f64 * 2.0 * bytes_per_word * n
}

/// Bytes per real word of the two fields together (8 for M61, 4 for M31).
pub const BYTES_PER_WORD: f64 = 12.0;

/// The floor at `len` with its 2^m part in passes of `passes` stages, at `rates` and `bandwidth`
/// bytes per second.
pub fn floor(rates: &MersenneRates, bandwidth: f64, len: MLength, passes: &[u32]) -> MersenneFloor {
    let c = counts(len, passes);
    let n = len.n() as f64;
    let (m61_us, m31_us) = (rates.m61.seconds(&c) * 1e6, rates.m31.seconds(&c) * 1e6);
    let crt_us = n / rates.crt * 1e6;
    MersenneFloor {
        len,
        passes: passes.len(),
        m61_us,
        m31_us,
        crt_us,
        arith_us: (m61_us + m31_us) / rates.pairing().max(1.0) + crt_us,
        memory_us: memory_bytes(n, passes.len(), BYTES_PER_WORD) / bandwidth * 1e6,
    }
}

/// The predicted µs/iter: max(arithmetic, memory) scaled by today's engine's measured µs/iter
/// over its own max(arithmetic, memory) floor at the same exponent.
pub fn predicted(floor: &MersenneFloor, goldilocks_floor_us: f64, goldilocks_measured_us: f64) -> f64 {
    floor.arith_us.max(floor.memory_us) * goldilocks_measured_us / goldilocks_floor_us
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_of_the_gate_exponents() {
        assert_eq!(length_for(136_279_841), Some(MLength { odd: 1, log2: 22 }));
        assert_eq!(length_for(82_589_933), Some(MLength { odd: 3, log2: 20 }));
        assert_eq!(length_for(20_996_011), Some(MLength { odd: 3, log2: 18 }));
    }

    #[test]
    fn length_bound_by_hand() {
        // n = 2^22 holds w = 35 (2^22·2^69 = 2^91 < M) but not w = 36 (2^93 > M): p = 35·2^22
        // fits, p = 35·2^22 + 1 (w = 36) needs the next length, 3·2^21 (w = 24).
        assert_eq!(length_for(35 << 22), Some(MLength { odd: 1, log2: 22 }));
        assert_eq!(length_for((35 << 22) + 1), Some(MLength { odd: 3, log2: 21 }));
        // The shortest: n = 4 holds w ≤ 45 (4·2^89 = 2^91 < M; w = 46: 2^93 > M), so p = 4·45
        // = 180 fits n = 4 and p = 181 takes 3·2^1 = 6 (w = 31).
        assert_eq!(length_for(180), Some(MLength { odd: 1, log2: 2 }));
        assert_eq!(length_for(181), Some(MLength { odd: 3, log2: 1 }));
        assert_eq!(MLength { odd: 3, log2: 20 }.to_string(), "3*2^20");
    }

    #[test]
    fn radix8_passes_by_hand() {
        // 2^21 today: 5 + 5 + 5 + 6 stages, 8 groups; 3 + 6 + 6 + 6 makes 7.
        assert_eq!(radix8_passes(&[5, 5, 5, 6]), [3, 6, 6, 6]);
        // 2^17: 6 + 5 + 6 already makes the fewest (6); 5 + 6 + 6 comes first.
        assert_eq!(radix8_passes(&[6, 5, 6]), [5, 6, 6]);
        // 2^19: 19 stages in 3 passes of at most 7: 7 groups, only as 6 + 6 + 7 (in some order).
        assert_eq!(radix8_passes(&[6, 6, 7]), [6, 6, 7]);
        assert_eq!(radix8_passes(&[5]), [5]);
        for log2 in 5..=22 {
            let today = goldilocks_passes(log2).unwrap();
            let passes = radix8_passes(&today);
            assert_eq!((passes.len(), passes.iter().sum::<u32>()), (today.len(), log2));
            assert!(passes.iter().max() <= today.iter().max());
            assert!(groups(&passes).len() <= groups(&today).len());
        }
    }

    #[test]
    fn groups_split_passes_evenly() {
        assert_eq!(groups(&[7, 7, 7]), [3, 2, 2, 3, 2, 2, 3, 2, 2]);
        assert_eq!(groups(&[10, 4, 3, 1]), [3, 3, 2, 2, 2, 2, 3, 1]);
    }

    #[test]
    fn counts_by_hand() {
        // n = 16: N = 8, m = 3, one pass of 3 stages (one group of 3, no boundary).
        // pairs: 8·3 + 2.5·8 = 44; w8: 2 directions × 8/4 = 4; general products: the pair
        // step's 8; real products: the pair step's 16; shifts: 2·16 = 32.
        let c = counts(MLength { odd: 1, log2: 4 }, &[3]);
        assert_eq!(c, Counts { pairs: 44.0, w8: 4.0, cx_products: 8.0, products: 16.0, shifts: 32.0 });
        // n = 128: N = 64, m = 6, passes [3, 3]: one boundary, 64·(7/8)(7/8) = 49 products per
        // direction, + 64 in the pair step = 162; w8: 2 groups × 64/4 × 2 directions = 64;
        // pairs: 64·6 + 160 = 544.
        let c = counts(MLength { odd: 1, log2: 7 }, &[3, 3]);
        assert_eq!(c, Counts { pairs: 544.0, w8: 64.0, cx_products: 162.0, products: 128.0, shifts: 256.0 });
        // n = 48: N = 24, m = 3, one pass of 3, and the radix-3 step: 8 DFTs per direction.
        // pairs: 24·3 + 60 + 2·8·3 = 180; w8: 2·24/4 = 12; general products: 2·24·(2/3)(7/8)
        // = 28, + 24 = 52; real products: 48 + 2·8·2 + 48 = 128; shifts: 96 + 2·8·2 = 128.
        let c = counts(MLength { odd: 3, log2: 4 }, &[3]);
        assert_eq!(c, Counts { pairs: 180.0, w8: 12.0, cx_products: 52.0, products: 128.0, shifts: 128.0 });
    }

    #[test]
    fn memory_by_hand() {
        // 2 global passes and the row pass: 5 passes over n words, each a read and a write.
        assert_eq!(memory_bytes(1024.0, 3, 12.0), 5.0 * 2.0 * 12.0 * 1024.0);
        assert_eq!(memory_bytes(1024.0, 1, 8.0), 2.0 * 8.0 * 1024.0);
    }

    #[test]
    fn goldilocks_passes_cover_the_stages() {
        for log2 in [5, 10, 11, 17, 19, 21, 22] {
            assert_eq!(goldilocks_passes(log2).unwrap().iter().sum::<u32>(), log2);
        }
    }

    fn rates(x: f64) -> FqRates {
        FqRates { addsub: x, mul: x, shl: x, cx_bfly: x, cx_mul3: x, cx_mul4: x / 2.0, cx_radix4: x, cx_w8: x }
    }

    #[test]
    fn floor_by_hand() {
        // Every rate 1 G/s in M61, 2 G/s in M31, products by 4 slower (the faster counts):
        // n = 16 above is 44 + 4 + 8 + 16 + 32 = 104 operations per field: 0.104 µs and 0.052 µs;
        // the paired butterfly at 1 G/s gains (1 + 1/2)·1 = 1.5; the CRT of 16 words at 16 G/s
        // 0.001 µs; 1 pass of 2·12·16 bytes at 384 MB/s: 1 µs.
        let r = MersenneRates { m61: rates(1e9), m31: rates(2e9), pair_bfly: 1e9, crt: 16e9 };
        let f = floor(&r, 384e6, MLength { odd: 1, log2: 4 }, &[3]);
        assert!((f.m61_us - 0.104).abs() < 1e-12 && (f.m31_us - 0.052).abs() < 1e-12);
        assert!((f.arith_us - (0.156 / 1.5 + 0.001)).abs() < 1e-12);
        assert!((f.memory_us - 1.0).abs() < 1e-12);
        // Today's engine at 3x its own floor puts the prediction at 3x this one's.
        assert!((predicted(&f, 10.0, 30.0) - 3.0).abs() < 1e-12);
        // A paired kernel slower than the two apart gains nothing.
        let slow = MersenneRates { pair_bfly: 0.1e9, ..r };
        assert!((slow.pairing() - 0.15).abs() < 1e-12);
        let f = floor(&slow, 384e6, MLength { odd: 1, log2: 4 }, &[3]);
        assert!((f.arith_us - (0.156 + 0.001)).abs() < 1e-12);
    }
}
