//! Exponent validation and the test kinds (LL, PRP-3): what a test of M_p = 2^p − 1 is.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The largest exponent any engine here accepts. The GPU plans stop at transform length 2^26,
/// and 2^26 words of ~16 bits hold about 1.07e9 bits; the GMP engine is limited the same way so
/// that an absurd request is refused up front instead of exhausting memory.
pub const MAX_EXPONENT: u64 = 1_000_000_000;

/// Why an exponent was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExponentError {
    #[error("exponent must be at least 2 (got {0})")]
    TooSmall(u64),
    #[error("exponent {0} is larger than the largest supported exponent {MAX_EXPONENT}")]
    TooLarge(u64),
    #[error(
        "exponent {0} is not prime (2^{0}-1 is composite for a composite exponent; only prime exponents are tested)"
    )]
    NotPrime(u64),
    #[error("exponent '{0}' is not a number")]
    NotNumeric(String),
}

/// Parse and validate an exponent given as text (as typed on the command line).
pub fn parse_exponent(text: &str) -> Result<u32, ExponentError> {
    let t = text.trim().replace('_', "");
    let v: u64 = t.parse().map_err(|_| ExponentError::NotNumeric(text.to_string()))?;
    validate_exponent(v)
}

/// Check that p is a prime in [2, MAX_EXPONENT].
pub fn validate_exponent(p: u64) -> Result<u32, ExponentError> {
    if p < 2 {
        return Err(ExponentError::TooSmall(p));
    }
    if p > MAX_EXPONENT {
        return Err(ExponentError::TooLarge(p));
    }
    if !is_prime(p) {
        return Err(ExponentError::NotPrime(p));
    }
    Ok(p as u32)
}

/// Trial division; exponents are at most 1e9, so at most ~16k divisions.
pub const fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    if n.is_multiple_of(2) {
        return n == 2;
    }
    let mut d = 3;
    while d * d <= n {
        if n.is_multiple_of(d) {
            return false;
        }
        d += 2;
    }
    true
}

/// Which test is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TestKind {
    /// Lucas–Lehmer: s_0 = 4, s_{k+1} = s_k^2 − 2; p − 2 iterations; prime iff s_{p−2} = 0.
    Ll,
    /// Base-3 Fermat PRP: x_0 = 3, x_{k+1} = x_k^2; p iterations; probable prime iff x_p = 9.
    Prp,
}

impl TestKind {
    /// GIMPS worktype name ("LL" or "PRP-3").
    pub fn worktype(self) -> &'static str {
        match self {
            TestKind::Ll => "LL",
            TestKind::Prp => "PRP-3",
        }
    }

    /// The starting value s_0 / x_0.
    pub fn start_value(self) -> u64 {
        match self {
            TestKind::Ll => 4,
            TestKind::Prp => 3,
        }
    }

    /// Number of squarings in a full test of M_p.
    pub fn full_iterations(self, p: u32) -> u64 {
        match self {
            TestKind::Ll => (p as u64).saturating_sub(2),
            TestKind::Prp => p as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_and_composites() {
        let small: Vec<u64> = (0..60).filter(|&n| is_prime(n)).collect();
        assert_eq!(small, [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59]);
        assert!(is_prime(82_589_933));
        assert!(is_prime(136_279_841));
        assert!(!is_prime(82_589_931));
        assert!(!is_prime(999_999_999));
    }

    #[test]
    fn parse_errors() {
        assert_eq!(parse_exponent("9689"), Ok(9689));
        assert_eq!(parse_exponent("1"), Err(ExponentError::TooSmall(1)));
        assert_eq!(parse_exponent("9"), Err(ExponentError::NotPrime(9)));
        assert!(matches!(parse_exponent("abc"), Err(ExponentError::NotNumeric(_))));
        assert!(matches!(parse_exponent("-5"), Err(ExponentError::NotNumeric(_))));
        assert_eq!(parse_exponent("1000000007"), Err(ExponentError::TooLarge(1_000_000_007)));
        assert!(matches!(parse_exponent("99999999999999999999999"), Err(ExponentError::NotNumeric(_))));
    }
}
