//! The arithmetics by name ([`Arith`], the key every layer passes), the transform lengths
//! ([`Length`]), and what each arithmetic's layouts are bounded by ([`Arith::bound`]): the facts
//! the plan and its bound are built from. Below `bound` and `plan`; imports only the fields.

use crate::transform::goldilocks::MAX_ROOT_OF_TWO_LOG;

/// The exact arithmetic a plan squares in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arith {
    /// GF(2^64 − 2^32 + 1), lengths 2^k.
    Goldilocks,
    /// GF(M61²) × GF(M31²) with the product recovered by CRT, lengths 2^k and 3·2^k.
    M61M31,
}

impl Arith {
    /// Every arithmetic, in the order the names list them.
    pub const ALL: [Arith; 2] = [Arith::Goldilocks, Arith::M61M31];

    /// The name in `--arith`, result lines and certificates.
    pub fn name(self) -> &'static str {
        match self {
            Arith::Goldilocks => "goldilocks",
            Arith::M61M31 => "m61m31",
        }
    }

    /// The arithmetic of a name ([`Arith::name`]), None for any other text.
    pub fn from_name(name: &str) -> Option<Arith> {
        Arith::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The lengths this arithmetic plans, shortest first (n ≤ 2^MAX_LOG2).
    pub fn lengths(self) -> Vec<Length> {
        let mut v: Vec<Length> = (1..=MAX_LOG2).map(|log2| Length { odd: 1, log2 }).collect();
        if self == Arith::M61M31 {
            v.extend((1..MAX_LOG2 - 1).map(|log2| Length { odd: 3, log2 }));
        }
        v.sort_by_key(|l| l.n());
        v
    }
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

impl Arith {
    /// The limit of this arithmetic's convolution outputs and of its digits' widths.
    pub fn bound(self) -> Bound {
        match self {
            // At most 31 bits: the GPU takes a balanced digit from the low word (kernels/goldilocks/carry.cuh).
            Arith::Goldilocks => Bound {
                limit: ((crate::transform::goldilocks::P - 1) / 2) as u128,
                max_bits: 31,
                limit_name: "(P-1)/2",
            },
            // Digits are i64 (balanced by i64 shifts up to 62 bits); the bound keeps them below 47.
            Arith::M61M31 => {
                Bound { limit: crate::transform::crt::MAX_ABS, max_bits: 62, limit_name: "(M61·M31-1)/2" }
            }
        }
    }
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
