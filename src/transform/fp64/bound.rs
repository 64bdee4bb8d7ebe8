//! The FP64 arithmetic's bound: the proof of `transform::bound` (the convolution's largest term
//! times n) with the CRT's limit (P1·P2 − 1)/2, so that the recombined integer *is* c_m; from it
//! the largest exponent per length and the shortest length for an exponent. Each prime computes
//! c_m mod p exactly whatever its size (the ranges of `field` and `ntt`), so nothing else bounds
//! the digits. The lengths are those where both primes have their roots (n | p − 1 and 2 an n-th
//! power, `primes`).

use super::crt::MAX_ABS;
use super::primes::PRIMES;
use crate::transform::arith::Bound;
use crate::transform::bound::carry_bounds_within;
use crate::transform::length::largest_exponent_where;
use crate::transform::plan::{Length, MIN_EXPONENT};

/// The longest length the arithmetic plans: 2^24 words.
pub const MAX_N: usize = 1 << 24;

/// The lengths both primes support, shortest first (odd·2^k for odd ∈ {1, 3, 5}, up to MAX_N).
pub fn lengths() -> Vec<Length> {
    let mut v: Vec<Length> = [1u32, 3, 5]
        .into_iter()
        .flat_map(|odd| (1..=24).map(move |log2| Length { odd, log2 }))
        .filter(|l| l.n() <= MAX_N && PRIMES.iter().all(|pr| pr.supports(l.n() as u64)))
        .collect();
    v.sort_by_key(|l| l.n());
    v
}

/// Whether exponent p has a plan of length `len`: the bound holds for its balanced digits.
pub fn fits(p: u32, len: Length) -> bool {
    let n = len.n();
    if p < MIN_EXPONENT || (p as usize) < n {
        return false;
    }
    let widths = ((p as usize / n) as u32, (p as usize).div_ceil(n) as u32);
    carry_bounds_within(&Bound { limit: MAX_ABS, max_bits: 62, limit_name: "(P1·P2-1)/2" }, p, n, widths).is_ok()
}

/// The largest odd exponent with a plan of length `len`.
pub fn largest_exponent(len: Length) -> Option<u32> {
    largest_exponent_where(len.n() as u64, |p| fits(p, len))
}

/// The shortest length whose bound holds p.
pub fn smallest_length(p: u32) -> Option<Length> {
    lengths().into_iter().find(|&l| fits(p, l))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest odd exponent per length from 2^10 (docs/arithmetic.md has the same table).
    const TABLE: [(u32, u32); 13] = [
        (10, 41_983),
        (11, 82_943),
        (12, 163_839),
        (13, 323_583),
        (14, 638_975),
        (15, 1_261_567),
        (16, 2_490_367),
        (17, 4_915_199),
        (18, 9_699_327),
        (19, 19_136_511),
        (20, 37_748_735),
        (21, 74_448_895),
        (22, 146_800_639),
    ];

    #[test]
    fn largest_exponents() {
        let lens = lengths();
        assert_eq!(lens.len(), 22, "2^1 … 2^22: P2 has no 3·2^k, and P1 no 5·2^k");
        for (log2, top) in TABLE {
            let len = Length { odd: 1, log2 };
            assert_eq!(largest_exponent(len), Some(top), "{len}");
            println!("| {len} | {} | {top} | {} |", len.n(), (top as usize).div_ceil(len.n()));
            // The next odd exponent does not fit: the bound refuses it.
            assert!(!fits(top + 2, len), "{len}: {} fits", top + 2);
        }
        let shortest = [(1_257_787u32, 15), (3_021_377, 17), (20_996_011, 20), (82_589_933, 22), (136_279_841, 22)];
        for (p, log2) in shortest {
            assert_eq!(smallest_length(p), Some(Length { odd: 1, log2 }), "{p}");
        }
        assert_eq!(smallest_length(146_800_641), None);
    }
}
