//! The arithmetics' key ([`Arith`], the value every layer passes; what each one is, by name,
//! lengths and bound, is its implementation's, found through [`super::registry`]), the transform
//! lengths ([`Length`]) and the shape of a bound ([`Bound`]): the facts the plan and its bound
//! are built from. Below `bound` and `plan`; imports only the Goldilocks field (its largest
//! root of 2 limits every length).

use crate::transform::goldilocks::field::MAX_ROOT_OF_TWO_LOG;

/// The exact arithmetic a plan squares in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arith {
    /// GF(2^64 − 2^32 + 1), lengths 2^k.
    Goldilocks,
    /// GF(M61²) × GF(M31²) with the product recovered by CRT, lengths 2^k and 3·2^k.
    M61M31,
    /// GF(P1) × GF(P2) (or the wide pairs Q1·Q2, Q3·Q4, primes < 2^51), on the FP64 units, with
    /// the product recovered by CRT, lengths 2^k up to 2^22.
    Fp64,
}

/// Largest supported transform length: 2^26 (the largest n with an n-th root of 2 in the field).
pub const MAX_LOG2: u32 = MAX_ROOT_OF_TWO_LOG;
/// The smallest exponent with a plan (p = 13: four digits of 3–4 bits).
pub const MIN_EXPONENT: u32 = 13;

/// What bounds an arithmetic's convolution outputs ([`super::bound`]): they are recovered
/// exactly while |c| ≤ `limit`; digits are at most `max_bits` wide.
pub struct Bound {
    pub limit: u128,
    pub max_bits: u32,
    /// The limit as the bound's error names it.
    pub limit_name: &'static str,
}

/// Transform length odd·2^log2. Goldilocks plans odd = 1; M61·M31 odd = 1 and 3 (the type
/// leaves room for 5·2^k on Goldilocks, whose P − 1 has the factors 3 and 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Length {
    pub odd: u32,
    pub log2: u32,
}

impl Length {
    pub const fn n(self) -> usize {
        (self.odd as usize) << self.log2
    }
}

impl std::fmt::Display for Length {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.odd {
            1 => write!(f, "2^{}", self.log2),
            odd => write!(f, "{odd}·2^{}", self.log2),
        }
    }
}
