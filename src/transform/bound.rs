//! Which layouts are safe: the no-overflow bound of a digit layout, the same proof for both
//! arithmetics, and the carry parameters it gives (plan.rs's module doc, "The carry scheme",
//! explains the walk and the fix-up they bound); [`super::length`] finds from them the largest
//! exponent per length and the smallest length for an exponent.
//!
//! Digits are balanced: after a carry pass every digit satisfies |d| ≤ 2^(w−1) + slack, where w is
//! the digit's width. A squaring's cyclic convolution output is
//! c_m = Σ_{j+l ≡ m} d_j·d_l·2^ε(j,l) where, with u_j = e_j/n = ⌈pj/n⌉ − pj/n ∈ \[0, 1)
//! (e_j = `Plan::weight_exp`), ε = u_j + u_l − u_m ∈ {0, 1} (the weights give
//! a_j·a_l/a_m = 2^ε: the digit products' bits that fall one above digit m's start; e.g.
//! c_0 = d_0² + 2·Σ_{j>0} d_j·d_{n−j}). Digit j is wide (w_max bits) iff e_j < f = p mod n. So
//! each term is at most the largest of m_w² (ε = 0), 2·m_w·m_n and 2·m_n² (ε = 1 with a narrow
//! digit), and 2·m_w² only if two wide digits can have ε = 1: e_j + e_l ≥ n with e_j, e_l ≤ f − 1,
//! i.e. 2(f − 1) ≥ n; m_w = 2^(w_max−1) + slack, m_n = 2^(w_min−1) + slack; with f = 0 all
//! digits are alike and ε = 0. So |c_m| ≤ n·T, T the largest admissible term
//! (`largest_term`), and the plan is accepted only if n·T ≤ L: for Goldilocks L = (P−1)/2, so
//! the field element (centered in (−P/2, P/2]) *is* the integer c_m; for M61·M31
//! L = (M61·M31 − 1)/2, so the Garner recombination ([`super::m61m31::crt`]) of c mod M61 and c mod M31,
//! centered, *is* c_m. A product of two carried digit vectors (acc_mul) obeys the same bound.
//! (Until 2026-11-26 the Goldilocks bound took every term as m_w², which the 2·m_w² case exceeds
//! by up to 2× where 2(f − 1) ≥ n: the top of every even-log2 band, e.g. 2^22 from 85,983,232 to
//! 88,080,383, was not covered; those exponents now take the next length. docs/arithmetic.md
//! has the table.)
//!

use crate::transform::arith::Bound;

/// What the carry analysis of a candidate layout gives, when it is safe.
pub(super) struct CarryBounds {
    pub(super) fixup_depth: usize,
    pub(super) slack: u64,
    /// B_walk: every carry of a walk is at most this (plan.rs, "The carry scheme").
    pub(super) b_walk: u128,
}

/// The largest term |d_j·d_l·2^ε| of a convolution output (module doc), by the digits' widths
/// and ε; the same for both arithmetics.
fn largest_term(p: u32, n: usize, (w_min, w_max): (u32, u32), slack: u64) -> u128 {
    let (m_w, m_n) = ((1u128 << (w_max - 1)) + slack as u128, (1u128 << (w_min - 1)) + slack as u128);
    let f = p as usize % n;
    if f == 0 {
        return m_w * m_w;
    }
    // Saturating: widths up to 62 bits would overflow u128, and saturated terms fail the bound.
    let prod = |a: u128, b: u128, e: u32| a.saturating_mul(b).saturating_mul(1 << e);
    let wide_pair = prod(m_w, m_w, u32::from(2 * (f - 1) >= n));
    wide_pair.max(prod(m_w, m_n, 1)).max(prod(m_n, m_n, 1))
}

/// The bound `bound` (the limit on the recovered |c_m| and on the digits' widths) for widths in
/// [w_min, w_max] at length n, and the carry parameters it gives: the same proof for every
/// arithmetic (module doc), also for one not yet in the registry (the FP64 pair).
pub(super) fn carry_bounds_within(
    bound: &Bound,
    p: u32,
    n: usize,
    (w_min, w_max): (u32, u32),
) -> Result<CarryBounds, String> {
    let (limit, max_bits) = (bound.limit, bound.max_bits);
    if w_max > max_bits || w_min == 0 {
        return Err(format!("n={n}: digits of {w_min}..{w_max} bits cannot fit"));
    }
    for slack in 1u64..=2 {
        let c_max = (n as u128).saturating_mul(largest_term(p, n, (w_min, w_max), slack));
        if c_max > limit {
            return Err(format!(
                "n={n}: the convolution bound {c_max} exceeds {} with widths up to {w_max} bits",
                bound.limit_name
            ));
        }
        let mut b_walk = 0u128;
        for _ in 0..64 {
            b_walk = (c_max >> w_min) + 3 + (b_walk >> w_min);
        }
        let (mut b, mut depth) = (b_walk, 0usize);
        loop {
            let next = 1 + (b >> w_min);
            if next >= b {
                break;
            }
            b = next;
            depth += 1;
        }
        if b > slack as u128 {
            continue; // assumed too little slack: redo the bound with more
        }
        return Ok(CarryBounds { fixup_depth: depth, slack, b_walk });
    }
    Err(format!("p={p}, n={n}: digits of {w_min} bits leave the carry slack unbounded"))
}
