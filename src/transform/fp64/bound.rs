//! The FP64 arithmetic's bound: the proof of `transform::bound` (the convolution's largest term
//! times n) with a pair's CRT limit (P1·P2 − 1)/2, so that the recombined integer *is* c_m; from
//! it the pair a plan takes (the first of [`PAIRS`] whose bound holds); the plan search
//! (`transform::length`) finds from it the largest exponent per length and the shortest length
//! for an exponent. Each prime computes c_m mod p exactly whatever its size (the ranges of
//! `field` and `ntt`), so nothing else bounds the digits. The lengths are those where a pair's
//! primes have their roots (n | p − 1 and 2 an n-th power, `primes`).

use super::primes::{Pair, PAIRS};
use crate::transform::arith::{Arith, Bound};
use crate::transform::bound::carry_bounds_within;
use crate::transform::length::largest_exponent_with;
use crate::transform::plan::{Length, MIN_EXPONENT};

/// The longest length the arithmetic plans: 2^24 words.
pub const MAX_N: usize = 1 << 24;

/// The pairs with the roots of length `len`.
fn pairs_at(len: Length) -> impl Iterator<Item = &'static Pair> {
    PAIRS.iter().filter(move |pair| len.n() <= MAX_N && pair.supports(len.n() as u64))
}

/// The bound of `pair`'s CRT limit (digits are i64; the limit keeps them below 42 bits, under
/// the 51 that the GPU's carry walk takes: kernels/fp64/field.cuh fp_crt_split).
fn bound_of(pair: &Pair) -> Bound {
    Bound { limit: pair.max_abs(), max_bits: 62, limit_name: pair.limit_name }
}

/// The lengths some pair supports, shortest first (odd·2^k for odd ∈ {1, 3, 5}, up to MAX_N).
pub fn lengths() -> Vec<Length> {
    let mut v: Vec<Length> = [1u32, 3, 5]
        .into_iter()
        .flat_map(|odd| (1..=24).map(move |log2| Length { odd, log2 }))
        .filter(|&l| pairs_at(l).next().is_some())
        .collect();
    v.sort_by_key(|l| l.n());
    v
}

/// The bound of the pair with the largest modulus at `len`: the plan's (its carry analysis
/// depends on the digits only; the limit decides whether any pair holds them).
pub fn loosest(len: Length) -> Bound {
    let pair = pairs_at(len).max_by_key(|pair| pair.modulus()).unwrap_or(&PAIRS[0]);
    bound_of(pair)
}

/// The pair a plan of exponent p at `len` takes: the first whose bound holds its balanced
/// digits (None: none does).
pub fn pair_for(p: u32, len: Length) -> Option<&'static Pair> {
    let n = len.n();
    if p < MIN_EXPONENT || (p as usize) < n {
        return None;
    }
    let widths = ((p as usize / n) as u32, (p as usize).div_ceil(n) as u32);
    pairs_at(len).find(|pair| carry_bounds_within(&bound_of(pair), p, n, widths).is_ok())
}

/// For each pair at `len` (in [`PAIRS`]' order), the largest odd exponent whose plan takes it:
/// what a check of every pair's kernels at a length runs.
pub fn largest_exponent_per_pair(len: Length) -> Vec<u32> {
    let takes = |pair: &Pair| largest_exponent_with(Arith::Fp64, len, |p| pair_for(p, len) == Some(pair));
    pairs_at(len).filter_map(takes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::fp64::primes::{NARROW, WIDE, WIDER};
    use crate::transform::length::{largest_exponent, smallest_length};

    /// Per length from 2^10: the largest odd exponent, and the largest the narrow pair holds
    /// (above it the wide pair to 2^21, the wider one at 2^22; docs/arithmetic.md has the same
    /// table).
    const TABLE: [(u32, u32, u32); 13] = [
        (10, 46_079, 41_983),
        (11, 91_135, 82_943),
        (12, 180_223, 163_839),
        (13, 356_351, 323_583),
        (14, 704_511, 638_975),
        (15, 1_392_639, 1_261_567),
        (16, 2_752_511, 2_490_367),
        (17, 5_439_487, 4_915_199),
        (18, 10_747_903, 9_699_327),
        (19, 21_233_663, 19_136_511),
        (20, 41_943_039, 37_748_735),
        (21, 82_837_503, 74_448_895),
        (22, 163_577_855, 146_800_639),
    ];

    #[test]
    fn largest_exponents() {
        let lens = lengths();
        assert_eq!(lens.len(), 22, "2^1 … 2^22: no pair has 3·2^k or 5·2^k");
        for (log2, top, narrow) in TABLE {
            let len = Length { odd: 1, log2 };
            assert_eq!(largest_exponent(Arith::Fp64, len), Some(top), "{len}");
            println!("| {len} | {} | {top} | {} | {narrow} |", len.n(), (top as usize).div_ceil(len.n()));
            // The next odd exponent does not fit: the bound refuses it.
            assert_eq!(pair_for(top + 2, len), None, "{len}: {} fits", top + 2);
            // The narrow pair up to its own largest exponent, the wide one above it (to 2^21:
            // the wider pair holds no exponent more there), the wider one at 2^22.
            let above = if log2 <= 21 { &WIDE } else { &WIDER };
            assert_eq!(pair_for(narrow, len), Some(&NARROW), "{len}");
            assert_eq!(pair_for(narrow + 2, len), Some(above), "{len}");
            assert_eq!(pair_for(top, len), Some(above), "{len}");
            assert_eq!(largest_exponent_per_pair(len), vec![narrow, top], "{len}");
            assert_eq!(loosest(len).limit, WIDER.max_abs());
        }
        let shortest = [
            (1_257_787u32, 15, NARROW),
            (3_021_377, 17, NARROW),
            (20_996_011, 19, WIDE),
            (82_589_933, 21, WIDE),
            (136_279_841, 22, NARROW),
        ];
        for (p, log2, pair) in shortest {
            let len = Length { odd: 1, log2 };
            assert_eq!(smallest_length(p, Arith::Fp64).ok(), Some(len), "{p}");
            assert_eq!(pair_for(p, len), Some(&pair), "{p}");
        }
        assert!(smallest_length(163_577_857, Arith::Fp64).is_err());
        assert_eq!(pair_for(150_000_001, Length { odd: 1, log2: 22 }), Some(&WIDER));
        // At every length each exponent the kernel checks take has a plan with its pair.
        for len in lengths() {
            for p in largest_exponent_per_pair(len) {
                let plan = crate::transform::plan::Plan::with_length(p, Arith::Fp64, len);
                assert!(plan.is_ok(), "{len} p={p}: {:?}", plan.err());
            }
        }
    }
}
