//! What the final residue B = 3^(2^p) mod M_p (type 3) says about M_p, hardened against the
//! root-of-unity attack (Atnashev and Fernando; prime95's verifier guards against it too).
//!
//! Z/M_p has elements ζ of small order r for every r dividing |group|, e.g. ζ = −1 (r = 2) and,
//! for a prime M_p, one for every r | M_p − 1 = 2·(2^(p−1) − 1). A prover can publish 9·ζ
//! instead of 9, adjust the middles, and pass verification with probability about 1/r per
//! attempt — cheap to grind for small r — so a probable prime could be passed off as composite.
//! The defence: raise the type-1 residue (B/9) to R = 2·Π q^v over the primes q < 2^22 with
//! q^v ∥ 2^(p−1) − 1; if that gives 1, B is a disguised positive and must not be read as
//! "composite". (A forged B = 9 for a composite needs the honest type-1 residue to be such a
//! root of unity itself, which the same test exposes on an honest run.)

use crate::residue::Residue;
use rug::Integer;

/// Orders of the roots of unity screened: prime factors q < 2^22 of 2^(p−1) − 1.
const ROOT_BOUND: u64 = 1 << 22;

/// What the final residue B = 3^(2^p) mod M_p says about M_p.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrpOutcome {
    /// B = 9: M_p is a base-3 probable prime; otherwise M_p is composite (unless
    /// `disguised_positive`).
    pub probable_prime: bool,
    /// res64 of B itself (type-3 residue).
    pub type3_res64: u64,
    /// The type-1 residue 3^(M_p − 1) = B/9 mod M_p (1 for a probable prime); GIMPS reports its res64.
    pub type1: Residue,
    /// B ≠ 9 but B = 9·ζ with ζ a root of unity of small order: a positive result hidden by the
    /// root-of-unity attack. A certificate must treat this as invalid, never as "composite".
    pub disguised_positive: bool,
}

fn pow_mod_u64(mut b: u64, mut e: u64, m: u64) -> u64 {
    let mut r = 1 % m;
    b %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = ((r as u128 * b as u128) % m as u128) as u64;
        }
        b = ((b as u128 * b as u128) % m as u128) as u64;
        e >>= 1;
    }
    r
}

/// R = 2·Π q^v over the primes q < [`ROOT_BOUND`] with q^v exactly dividing 2^(p−1) − 1 (v
/// capped where q^v leaves u64).
fn small_root_exponent(p: u32) -> Integer {
    let n = ROOT_BOUND as usize;
    let mut composite = vec![false; n];
    let mut r = Integer::from(2);
    for q in 3..n {
        if composite[q] {
            continue;
        }
        for m in (q * q..n).step_by(q) {
            composite[m] = true;
        }
        let q = q as u64;
        let mut qv = q;
        while pow_mod_u64(2, p as u64 - 1, qv) == 1 {
            r *= q;
            match qv.checked_mul(q) {
                Some(next) => qv = next,
                None => break,
            }
        }
    }
    r
}

/// What B = 3^(2^p) mod M_p implies (p odd, so 9 is invertible modulo M_p).
pub fn prp_outcome(b: &Residue) -> PrpOutcome {
    let p = b.exponent();
    let m = (Integer::from(1) << p) - 1u32;
    // p = 2 (3 | M_2) has no type-1 residue; it reports 0 and is never a probable prime here.
    let type1 = b.divide_by_9().unwrap_or_else(|| Residue::from_u64(p, 0));
    let probable_prime = b.equals_u64(9);
    let disguised_positive =
        !probable_prime && p > 2 && type1.to_integer().pow_mod(&small_root_exponent(p), &m).is_ok_and(|t| t == 1);
    PrpOutcome { probable_prime, type3_res64: b.res64(), type1, disguised_positive }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_exponent_has_the_small_factors() {
        // 2^126 − 1 = 3^3 · 7^2 · 19 · 43 · 73 · 127 · 337 · 5419 · 92737 · 649657 · 77158673929
        let r = small_root_exponent(127);
        assert_eq!(r, Integer::from(2u64 * 27 * 49 * 19 * 43 * 73 * 127 * 337 * 5419) * 92737u32 * 649657u32);
    }

    #[test]
    fn disguised_positives_are_flagged() {
        let p = 127; // M_127 is prime
        let m = (Integer::from(1) << p) - 1u32;
        let nine = Residue::from_u64(p, 9);
        let honest = prp_outcome(&nine);
        assert!(honest.probable_prime && !honest.disguised_positive);
        assert_eq!(honest.type1.res64(), 1);
        // −9: ζ = −1.
        let minus9 = Residue::from_integer(p, &(m.clone() - 9u32));
        let o = prp_outcome(&minus9);
        assert!(!o.probable_prime && o.disguised_positive);
        // 9·ζ with ζ of order 7 (7 | M_127 − 1).
        let e = Integer::from(&m - 1u32) / 7u32;
        let zeta = Integer::from(3).pow_mod(&e, &m).unwrap();
        assert_ne!(zeta, 1);
        let o = prp_outcome(&Residue::from_integer(p, &(zeta * 9u32)));
        assert!(!o.probable_prime && o.disguised_positive);
        // An ordinary composite result.
        let o = prp_outcome(&Residue::from_u64(p, 12345));
        assert!(!o.probable_prime && !o.disguised_positive);
    }
}
