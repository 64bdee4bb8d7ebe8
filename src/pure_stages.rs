//! The CPU twin of the GPU's row passes (kernels/ntt_block.cu `dif_upper` … `dit_lower`), which
//! compute the same stages as [`crate::ntt::forward_stages`] / [`crate::ntt::inverse_stages`]
//! on a line of 2^R contiguous values with fewer multiplications:
//!
//! * the stages of a stride-S line in column i of a block of M = S·2^Q values equal a *pure*
//!   2^Q-point DIF of the line (twiddles w_{2^(q+1)}^j, those of S = 1, i = 0) followed by the
//!   twist w_M^(i·rev(k)) of its k-th value (rev: Q-bit reversal); the inverse untwists, then
//!   runs the pure DIT;
//! * a line of 2^R = 2^R1·2^R2 is R1 upper stages on the 2^R2 sub-lines of stride 2^R2 (column
//!   g), then R2 lower stages on its groups of 2^R2 values (column 0: no twist);
//! * a pure stage of at most 64 points multiplies by powers of two: the generator 7 makes
//!   w_64 = 8^13 = 2^39, so w_{2^(q+1)} = 2^(39·2^(5−q)) and a "multiplication" is shifts and a
//!   reduction ([`mul_pow2`]).
//!
//! So a value pays one general multiplication per direction (its twist) instead of R/2. The
//! tests hold the factorization against the reference stages for every R the kernels use.

use crate::field::Gl;

/// The exponent t with w_{2^(q+1)}^j = 2^t (w^−j when `inverse`), q ≤ 5: what a pure stage
/// multiplies by.
pub const fn pow2_twiddle_exponent(q: u32, j: u32, inverse: bool) -> u32 {
    assert!(q <= 5, "roots of more than 64th order are not powers of two");
    let t = (j * (39 << (5 - q))) % 192;
    if inverse {
        (192 - t) % 192
    } else {
        t
    }
}

/// x·2^t for t < 192 the way the kernels do it (`gl_mul_pow2`): 2^96 = −1 takes t ≥ 96, a
/// first shift by 48 takes t ≥ 64, then one shift and a 128-bit reduction.
pub fn mul_pow2(x: Gl, t: u32) -> Gl {
    assert!(t < 192);
    let (neg, mut t) = if t >= 96 { (true, t - 96) } else { (false, t) };
    let mut x = x;
    if t >= 64 {
        x = Gl::reduce128((x.value() as u128) << 48);
        t -= 48;
    }
    let x = Gl::reduce128((x.value() as u128) << t);
    if neg {
        x.neg()
    } else {
        x
    }
}

fn reverse_bits(h: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        h.reverse_bits() >> (usize::BITS - bits)
    }
}

/// w_{2^R}^(±e) from the twiddle table (`table[m + e]` = w_{2m}^(±e), e < m), w^(2^(R−1)) = −1.
fn twist(table: &[Gl], r: u32, e: usize) -> Gl {
    let m = 1usize << (r - 1);
    let e = e & (2 * m - 1);
    let t = table[m + (e & (m - 1))];
    if e & m != 0 {
        t.neg()
    } else {
        t
    }
}

fn pure_dif(v: &mut [Gl]) {
    let mut q = v.len().trailing_zeros();
    while q > 0 {
        q -= 1;
        let half = 1usize << q;
        for i in (0..v.len()).filter(|i| i & half == 0) {
            let (a, b) = (v[i], v[i + half]);
            v[i] = a.add(b);
            v[i + half] = mul_pow2(a.sub(b), pow2_twiddle_exponent(q, (i & (half - 1)) as u32, false));
        }
    }
}

fn pure_dit(v: &mut [Gl]) {
    for q in 0..v.len().trailing_zeros() {
        let half = 1usize << q;
        for i in (0..v.len()).filter(|i| i & half == 0) {
            let (a, b) = (v[i], mul_pow2(v[i + half], pow2_twiddle_exponent(q, (i & (half - 1)) as u32, true)));
            v[i] = a.add(b);
            v[i + half] = a.sub(b);
        }
    }
}

/// The R = r1 + r2 forward stages of one row line (2^R contiguous values), as the row pass
/// runs them; `tw` is the plan's forward twiddle table.
pub fn row_line_forward(line: &mut [Gl], r1: u32, r2: u32, tw: &[Gl]) {
    assert_eq!(line.len(), 1 << (r1 + r2));
    let h2 = 1usize << r2;
    for g in 0..h2 {
        let mut v: Vec<Gl> = (0..1usize << r1).map(|h| line[g + h * h2]).collect();
        pure_dif(&mut v);
        for (h, x) in v.into_iter().enumerate() {
            line[g + h * h2] = x.mul(twist(tw, r1 + r2, g * reverse_bits(h, r1)));
        }
    }
    line.chunks_exact_mut(h2).for_each(pure_dif);
}

/// The inverse of [`row_line_forward`] up to the factor 2^R, as the row pass runs it: the
/// lower stages, then the untwist and the upper stages; `itw` is the inverse twiddle table.
pub fn row_line_inverse(line: &mut [Gl], r1: u32, r2: u32, itw: &[Gl]) {
    assert_eq!(line.len(), 1 << (r1 + r2));
    let h2 = 1usize << r2;
    line.chunks_exact_mut(h2).for_each(pure_dit);
    for g in 0..h2 {
        let mut v: Vec<Gl> =
            (0..1usize << r1).map(|h| line[g + h * h2].mul(twist(itw, r1 + r2, g * reverse_bits(h, r1)))).collect();
        pure_dit(&mut v);
        for (h, x) in v.into_iter().enumerate() {
            line[g + h * h2] = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::P;
    use crate::ntt::{forward_stages, inverse_stages};
    use crate::plan::Plan;
    use quickcheck::quickcheck;

    #[test]
    fn pure_twiddles_are_the_roots() {
        for q in 0..=5 {
            let w = Gl::root_of_unity(q + 1).unwrap();
            for j in 0..1u32 << q {
                let two = Gl::new(2);
                assert_eq!(two.pow(pow2_twiddle_exponent(q, j, false) as u64), w.pow(j as u64), "q={q} j={j}");
                assert_eq!(two.pow(pow2_twiddle_exponent(q, j, true) as u64), w.inverse().unwrap().pow(j as u64));
            }
        }
    }

    #[test]
    fn mul_pow2_edges() {
        for x in [0, 1, 2, P - 1, P - 2, 1 << 32, (1 << 32) - 1, 1 << 63] {
            for t in 0..192 {
                assert_eq!(mul_pow2(Gl::new(x), t), Gl::new(x).mul(Gl::new(2).pow(t as u64)), "x={x} t={t}");
            }
        }
    }

    quickcheck! {
        fn mul_pow2_matches_mul(x: u64, t: u8) -> bool {
            let t = t as u32 % 192;
            mul_pow2(Gl::new(x % P), t) == Gl::new(x % P).mul(Gl::new(2).pow(t as u64))
        }

        fn row_lines_match_the_reference_stages(seed: u64) -> bool {
            let plan = Plan::new(86_243).unwrap(); // n = 2^12: tables for lines up to 2^11
            let (tw, itw) = plan.twiddles();
            let mut s = seed | 1;
            let mut next = move || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                Gl::new(s % P)
            };
            (1..=10u32).all(|r| {
                let (r1, r2) = (r.div_ceil(2), r / 2);
                let x: Vec<Gl> = (0..1 << r).map(|_| next()).collect();
                let (mut want, mut got) = (x.clone(), x.clone());
                forward_stages(&plan, &mut want, 1 << (r - 1), 1);
                row_line_forward(&mut got, r1, r2, tw);
                let forward_ok = want == got;
                inverse_stages(&plan, &mut want, 1, 1 << (r - 1));
                row_line_inverse(&mut got, r1, r2, itw);
                forward_ok && want == got
            })
        }
    }
}
