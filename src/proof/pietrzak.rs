//! The mathematics of GIMPS PRP proofs (Pietrzak's halving protocol as gpuowl/PRPLL and prime95
//! implement it for "PRP PROOF" VERSION=2).
//!
//! The claim is A^(2^T) = B with A = x_0 = 3, T = p and B = 3^(2^p) mod M_p. One level halves T:
//! the prover publishes the middle M = A^(2^⌈T/2⌉); with a challenge h the verifier sets
//! A' = A^h·M and B' = M^h·B (B squared first when T is odd), and the new claim is
//! A'^(2^⌈T/2⌉) = B'. After `power` levels the verifier checks the claim by ⌈p/2^power⌉ plain
//! squarings.
//!
//! * B is x_p itself: VERSION=2 ends at iteration p for every p (VERSION=1 files ended at p
//!   rounded up to a multiple of 2^power and are refused by the parser).
//! * Spans: span_l = ⌈p/2^(l+1)⌉ for levels l = 0..power (gpuowl starts at (p+1)/2 and repeats
//!   `(s+1)/2`); the final span, the verifier's squaring count, is ⌈p/2^power⌉ (4914 for
//!   p = 1257787, power 8).
//! * Points: the prover saves x_k at the 2^power iterations k = Σ b_l·span_l (for the binary
//!   digits b_0…b_{power−1} of an index j in 1..2^power, b_0 the most significant), plus k = p.
//!   Point index i (0-based, increasing iteration) is j = i + 1.
//! * Hash chain: H_B = SHA3-256(bytes(B)); H_0 = SHA3-256(H_B ‖ bytes(M_0)); H_l =
//!   SHA3-256(H_{l−1} ‖ bytes(M_l)); bytes() is the ⌈p/8⌉-byte little-endian form. The challenge
//!   h_l is the first 8 bytes of H_l read little-endian. The prover uses every challenge; the
//!   last level's exponent is the verifier's free choice (an honest proof passes with any:
//!   prime95's verifier uses 1), and [`verify`] draws it privately at random.
//! * Middles: M_l = Π_{i<2^l} x_{k(s·(2i+1))}^{e_i}, s = 2^(power−l−1), where e_i is the product
//!   of h_{l−1−t} over the bits t of i that are 0; computed by combining neighbours pairwise,
//!   left^h · right, level by level (gpuowl's ProofSet::computeProof).

use super::arith::{checked_batch, ExpMul, ProofArith};
use super::{prp_outcome, Proof, ProofError, ProofReport};
use crate::exponent::{validate_exponent, ExponentError};
use crate::residue::Residue;
use rug::Integer;
use sha3::{Digest, Sha3_256};
use thiserror::Error;

/// The largest proof power accepted (gpuowl allows up to 12; prime95 writes up to 12).
pub const MAX_POWER: u32 = 12;

/// Why (p, power) does not describe a proof.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ScheduleError {
    #[error(transparent)]
    Exponent(#[from] ExponentError),
    #[error("PRP proofs need an odd prime exponent (got p={0})")]
    EvenExponent(u32),
    #[error("proof power {power} is out of range for p={p} (allowed 1..={max})")]
    PowerOutOfRange { p: u32, power: u32, max: u32 },
}

/// Check that p is an odd prime (within the supported range) and power is usable for it.
pub fn check_params(p: u32, power: u32) -> Result<(), ScheduleError> {
    validate_exponent(p as u64)?;
    if p == 2 {
        return Err(ScheduleError::EvenExponent(p));
    }
    let max = max_power(p);
    if power == 0 || power > max {
        return Err(ScheduleError::PowerOutOfRange { p, power, max });
    }
    Ok(())
}

/// ⌈p/2^k⌉ for any k.
fn ceil_shift(p: u32, k: u32) -> u64 {
    (p as u64).div_ceil(1u64.checked_shl(k).unwrap_or(u64::MAX))
}

/// The spans span_l = ⌈p/2^(l+1)⌉, l = 0..power.
pub fn spans(p: u32, power: u32) -> Vec<u64> {
    (1..=power).map(|l| ceil_shift(p, l)).collect()
}

/// Squarings left to the verifier after the reduction: ⌈p/2^power⌉.
pub fn final_span(p: u32, power: u32) -> u64 {
    ceil_shift(p, power)
}

/// The 2^power iterations, increasing, whose residues the prover saves (the last one is p).
/// Call only with parameters accepted by [`check_params`] (the points are then increasing).
fn points_unchecked(p: u32, power: u32) -> Vec<u64> {
    let sp = spans(p, power);
    let count = 1usize << power;
    let mut out: Vec<u64> = (1..count)
        .map(|j| (0..power as usize).filter(|&l| (j >> (power as usize - 1 - l)) & 1 == 1).map(|l| sp[l]).sum())
        .collect();
    out.push(p as u64);
    out
}

/// The largest power (≤ [`MAX_POWER`]) whose proof points are strictly increasing and below p,
/// i.e. distinct iterations of one run; at least 1 for every odd p ≥ 3.
pub fn max_power(p: u32) -> u32 {
    let mut best = 0;
    for power in 1..=MAX_POWER {
        let pts = points_unchecked(p, power);
        if pts.windows(2).all(|w| w[0] < w[1]) && pts[0] > 0 {
            best = power;
        } else {
            break;
        }
    }
    best
}

/// The iterations at which a run must save x_k for a proof of this power (2^power of them,
/// increasing, the last being p), exactly as gpuowl/PRPLL and prime95 choose them.
pub fn proof_points(p: u32, power: u32) -> Result<Vec<u64>, ScheduleError> {
    check_params(p, power)?;
    Ok(points_unchecked(p, power))
}

/// SHA3-256 of B's canonical bytes: the root of the hash chain.
pub fn root_hash(b: &Residue) -> [u8; 32] {
    Sha3_256::digest(b.to_bytes()).into()
}

fn next_hash(prev: &[u8; 32], middle: &Residue) -> [u8; 32] {
    let mut h = Sha3_256::new();
    h.update(prev);
    h.update(middle.to_bytes());
    h.finalize().into()
}

fn challenge(hash: &[u8; 32]) -> u64 {
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    u64::from_le_bytes(first)
}

/// The 64-bit challenges h_0.. of the hash chain over B and the given middles (one per middle).
pub fn challenges(b: &Residue, middles: &[Residue]) -> Vec<u64> {
    let mut hash = root_hash(b);
    middles
        .iter()
        .map(|m| {
            hash = next_hash(&hash, m);
            challenge(&hash)
        })
        .collect()
}

/// Honest residues are units modulo M_p (powers of 3); a zero B or middle is rejected up front.
fn require_nonzero(r: &Residue, which: impl FnOnce() -> String) -> Result<(), ProofError> {
    if r.is_zero() {
        return Err(ProofError::NotAUnit { which: which() });
    }
    Ok(())
}

/// The screen of the published values, before any is relied on: every honest one is a unit and
/// a square modulo M_p (B and each middle are products of powers x_k = 3^(2^k), k ≥ 1), so its
/// Jacobi symbol (· | M_p) is +1. A symbol of 0 is a value sharing a prime factor q with M_p,
/// which would let a prover fake the claim modulo q (a zero middle makes every B "verify"); −1
/// is no square, e.g. −B (B times −1, an element of order 2 that the squaring of B at an odd
/// span would cancel). The K+1 symbols (GMP's subquadratic algorithm) run in parallel.
fn screen(proof: &Proof) -> Result<(), ProofError> {
    use rayon::prelude::*;
    let m = (Integer::from(1) << proof.p()) - 1u32;
    let values: Vec<&Residue> = std::iter::once(proof.b()).chain(proof.middles()).collect();
    let symbols: Vec<i32> = values.par_iter().map(|r| r.to_integer().jacobi(&m)).collect();
    let name = |i: usize| if i == 0 { "B".to_string() } else { format!("middle {}", i - 1) };
    match symbols.iter().position(|&j| j != 1) {
        None => Ok(()),
        Some(i) if symbols[i] == 0 => Err(ProofError::NotAUnit { which: name(i) }),
        Some(i) => Err(ProofError::NotASquare { which: name(i) }),
    }
}

/// A private random 64-bit exponent from the operating system: never derived from the proof, so
/// nobody can choose the proof to fit it.
fn private_exponent() -> Result<u64, ProofError> {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).map_err(|e| ProofError::NoRandomness(e.to_string()))?;
    Ok(u64::from_le_bytes(b))
}

/// The order in which [`build`] asks for the proof points (0-based indices, see
/// [`proof_points`]): B first, then level by level the leaves of each middle's tree.
pub fn load_order(power: u32) -> Vec<usize> {
    let count = 1usize << power;
    let leaves = (0..power).flat_map(|level| {
        let stride = 1usize << (power - level - 1);
        (0..1usize << level).map(move |i| stride * (2 * i + 1) - 1)
    });
    std::iter::once(count - 1).chain(leaves).collect()
}

/// Build a proof from the saved residues. `load(i)` returns the residue at proof point i
/// (0-based, see [`proof_points`]); each point is loaded exactly once, B (the last) first.
pub fn build<A, L>(p: u32, power: u32, mut load: L, arith: &mut A) -> Result<Proof, ProofError>
where
    A: ProofArith + ?Sized,
    L: FnMut(usize) -> Result<Residue, ProofError>,
{
    check_params(p, power)?;
    let count = 1usize << power;
    let mut get = |i: usize| -> Result<Residue, ProofError> {
        let r = load(i)?;
        if r.exponent() != p {
            return Err(ProofError::MixedExponents {
                expected: p,
                which: format!("proof point {i}"),
                got: r.exponent(),
            });
        }
        Ok(r)
    };
    let b = get(count - 1)?;
    require_nonzero(&b, || "B".to_string())?;
    let mut hash = root_hash(&b);
    let mut hs: Vec<u64> = Vec::with_capacity(power as usize);
    let mut middles = Vec::with_capacity(power as usize);
    for level in 0..power {
        let stride = 1usize << (power - level - 1);
        // The node at height t combines with the challenge of level − 1 − t.
        let heights: Vec<u64> = hs.iter().rev().copied().collect();
        let m = arith.fold(1 << level, &heights, &mut |i| get(stride * (2 * i + 1) - 1))?;
        require_nonzero(&m, || format!("middle {level}"))?;
        hash = next_hash(&hash, &m);
        hs.push(challenge(&hash));
        middles.push(m);
    }
    Proof::new(b, middles)
}

/// Verify `proof` for the start value x0 (3 for GIMPS): the screen (`screen`), the reduction,
/// then the final squarings. Levels 0..K−2 use the hash chain's challenges, as they must: the
/// middle of level l+1 is a product of the run's points with exponents made of those challenges,
/// so no other exponent at level l gives a claim that the published middles halve. The last
/// level's exponent is free (an honest proof passes with any; prime95 uses 1), and this verifier
/// draws it privately at random after the file is read, so the file cannot be fitted to it
/// (docs/certificate.md, "Threat model").
pub fn verify<A: ProofArith + ?Sized>(proof: &Proof, arith: &mut A, x0: u64) -> Result<ProofReport, ProofError> {
    check(proof, arith, x0, Some(private_exponent()?), true)
}

/// The check without the screen, with the last level's exponent given (`None`: the hash chain's
/// challenge): the deterministic check of the GIMPS programs, which anyone holding the file can
/// predict, for tests and comparisons. [`verify`] is the verifier's check.
pub fn verify_with<A: ProofArith + ?Sized>(
    proof: &Proof,
    arith: &mut A,
    x0: u64,
    last: Option<u64>,
) -> Result<ProofReport, ProofError> {
    check(proof, arith, x0, last, false)
}

/// The prover's check of a proof it just built from its own points: [`verify`] without the
/// screen. The screen guards a verifier against a crafted proof; the prover's check is there to
/// catch a corrupted point or an arithmetic fault, which the final comparison does, and the gcd
/// and Jacobi symbols would cost it seconds at large p (a gcd: 2.95 s at 21M, 16.5 s at 82.6M
/// on one core).
pub fn self_check<A: ProofArith + ?Sized>(proof: &Proof, arith: &mut A) -> Result<ProofReport, ProofError> {
    check(proof, arith, 3, Some(private_exponent()?), false)
}

fn check<A: ProofArith + ?Sized>(
    proof: &Proof,
    arith: &mut A,
    x0: u64,
    last: Option<u64>,
    screened: bool,
) -> Result<ProofReport, ProofError> {
    let p = proof.p();
    require_nonzero(proof.b(), || "B".to_string())?;
    for (i, m) in proof.middles().iter().enumerate() {
        require_nonzero(m, || format!("middle {i}"))?;
    }
    let hs = challenges(proof.b(), proof.middles());
    let mut used = hs.clone();
    if let (Some(r), Some(h)) = (last, used.last_mut()) {
        *h = r;
    }
    // The screen (K+1 Jacobi symbols with GMP, seconds at p = 82.6M) runs on its own threads
    // while the engine does the reduction and the final squarings.
    let (screen_result, checked) = std::thread::scope(|s| {
        let screen = screened.then(|| s.spawn(|| screen(proof)));
        let checked = reduce(proof, arith, x0, &used).map(|(a, b, span)| (arith.square_n(&a, span), b, span));
        (screen.map_or(Ok(()), |t| t.join().expect("the screen thread does not panic")), checked)
    });
    screen_result?;
    let (end, b, span) = checked?;
    if end != b {
        return Err(ProofError::Rejected { squarings: span, a_res64: end.res64(), b_res64: b.res64() });
    }
    Ok(ProofReport {
        p,
        power: proof.power(),
        squarings: span,
        challenges: hs,
        last_exponent: *used.last().expect("power >= 1"),
        outcome: prp_outcome(proof.b()),
    })
}

/// The reduction with the exponents `hs` (one per level): the final claim (A, B, span), to be
/// checked as A^(2^span) = B.
fn reduce<A: ProofArith + ?Sized>(
    proof: &Proof,
    arith: &mut A,
    x0: u64,
    hs: &[u64],
) -> Result<(Residue, Residue, u64), ProofError> {
    let mut a = Residue::from_u64(proof.p(), x0);
    let mut b = proof.b().clone();
    let mut span = proof.p() as u64;
    for (m, &h) in proof.middles().iter().zip(hs) {
        if span % 2 == 1 {
            b = arith.square_n(&b, 1);
        }
        let mut next =
            checked_batch(arith, &[ExpMul { base: m, exp: h, factor: &b }, ExpMul { base: &a, exp: h, factor: m }])?;
        a = next.pop().expect("batch checked two results");
        b = next.pop().expect("batch checked two results");
        span = span.div_ceil(2);
    }
    Ok((a, b, span))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proof::arith::CpuArith;

    #[test]
    fn spans_and_points_of_the_real_exponent() {
        let p = 1_257_787;
        assert_eq!(spans(p, 8), [628_894, 314_447, 157_224, 78_612, 39_306, 19_653, 9_827, 4_914]);
        assert_eq!(final_span(p, 8), 4914);
        let pts = proof_points(p, 8).unwrap();
        assert_eq!(pts.len(), 256);
        assert_eq!(pts[127], 628_894); // j = 128: the first middle's point
        assert_eq!(pts[0], 4_914);
        assert_eq!(pts[254], spans(p, 8).iter().sum::<u64>());
        assert_eq!(*pts.last().unwrap(), p as u64);
    }

    #[test]
    fn points_match_gpuowl_construction() {
        // gpuowl: start from {0}, for each span add span to every existing point, sort,
        // drop 0, append p.
        for (p, power) in [(1_257_787u32, 8u32), (44_497, 5), (9_689, 8), (31, 2), (107, 3)] {
            let mut pts = vec![0u64];
            for s in spans(p, power) {
                let more: Vec<u64> = pts.iter().map(|x| x + s).collect();
                pts.extend(more);
            }
            pts.sort_unstable();
            pts.remove(0);
            pts.push(p as u64);
            assert_eq!(proof_points(p, power).unwrap(), pts, "p={p} power={power}");
        }
    }

    #[test]
    fn build_asks_for_the_points_in_load_order() {
        let p = 4423;
        for power in 1..=6 {
            let mut asked = Vec::new();
            let x = Residue::from_u64(p, 5);
            build(
                p,
                power,
                |i| {
                    asked.push(i);
                    Ok(x.clone())
                },
                &mut CpuArith,
            )
            .unwrap();
            assert_eq!(asked, load_order(power), "power {power}");
        }
    }

    #[test]
    fn parameter_checks() {
        assert_eq!(check_params(2, 1), Err(ScheduleError::EvenExponent(2)));
        assert!(matches!(check_params(9, 1), Err(ScheduleError::Exponent(ExponentError::NotPrime(9)))));
        assert!(matches!(check_params(1_257_787, 0), Err(ScheduleError::PowerOutOfRange { .. })));
        assert!(matches!(check_params(1_257_787, 13), Err(ScheduleError::PowerOutOfRange { max: 12, .. })));
        assert_eq!(max_power(3), 1);
        assert!(max_power(31) >= 2);
        for p in [3u32, 5, 7, 13, 31, 61, 89, 127, 521, 9689] {
            let k = max_power(p);
            assert!(check_params(p, k).is_ok());
            assert!(k == MAX_POWER || check_params(p, k + 1).is_err());
        }
    }
}
