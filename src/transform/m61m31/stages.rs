//! The M61·M31 arithmetic's transform, as CPU twin stage functions the GPU kernels are to
//! mirror one by one: a right-angle IBDWT of real length n (2^k or 3·2^k) computed as a complex
//! transform of length N = n/2 in GF(M61²) and, independently, in GF(M31²); the convolution
//! outputs are recovered from both by CRT ([`super::crt`]) and carried as i128
//! ([`crate::transform::twin::carry`]). Layout, widths and the bound are the plan's ([`crate::transform::plan`]);
//! docs/arithmetic.md derives every step.
//!
//! Per field F = GF(M_q²), one squaring of digits d (n even, N = n/2 = odd·M, M = 2^(k−1)):
//! 1. weight + pack ([`weight_in`]): x_j = d_j·2^(s_j) with s_j = e_j·(n^(−1) mod q) mod q
//!    (e_j = [`Plan::weight_exp`]; 2^(1/n) = 2^(n^(−1) mod q) as 2 has order q): a rotation;
//!    z_j = x_{2j} + i·x_{2j+1}.
//! 2. forward ([`forward_radix3`] when odd = 3, then [`forward_stages`]): a length-N DFT with
//!    ω_N = [`Field::root_of_unity_odd`]. The radix-3 DIF step takes (u_0, u_1, u_2) =
//!    (z_i, z_{i+M}, z_{i+2M}) to y_r = Σ_t u_t·ω_3^(rt) (ω_3 = ω_N^M, in GF(M_q)), times ω_N^(ir),
//!    into block r; each block of M then gets radix-2 DIF stages with ω_M = ω_N^odd (natural →
//!    bit-reversed; a radix-4 pass is two of these stages and gives the same values). Position
//!    r·M + b holds frequency f = r + odd·bitrev(b).
//! 3. pair step ([`pair_step`]): with σ(f) = M_q·f mod N (σ² = id; conj(Z_σf) = Σ conj(z_j)·ω^(jf)),
//!    A_f = Z_f + conj Z_σf = 2E_f and B_f = −i(Z_f − conj Z_σf) = 2O_f, where E, O are the DFTs
//!    of the even and odd x. The length-n DFT is X_f = E_f + Ω^f·O_f, X_{f+N} = E_f − Ω^f·O_f
//!    (Ω² = ω_N), and the product's half-length transform is
//!    4·Z'_f = A_f·A'_f + ω_N^f·B_f·B'_f + i·(A_f·B'_f + B_f·A'_f) (A', B' of the other factor;
//!    Ω cancels). A_σf = conj A_f and B_σf = conj B_f, so a pair {f, σf} is read and written
//!    together (fixed points σf = f once).
//! 4. inverse ([`inverse_stages`], then [`inverse_radix3`] when odd = 3): the unscaled inverse,
//!    which leaves 4N = 2n times the cyclic convolution: y_{2j} = Re z'_j, y_{2j+1} = Im z'_j.
//! 5. unweight ([`unweight_out`]): y_j·2^(−s_j)·(2n)^(−1): one rotation by −(s_j + log2 n + 1),
//!    and for odd = 3 one product by 3^(−1).
//! 6. CRT ([`recombine`]) of the GF(M61) and GF(M31) outputs into i128, then the carry.

use crate::transform::bit_reverse;
use crate::transform::field::Field;
use crate::transform::m61m31::crt;
use crate::transform::m61m31::gfp2::Gfp2;
use crate::transform::m61m31::m31::M31;
use crate::transform::m61m31::m61::M61;
use crate::transform::m61m31::mersenne::Mersenne;
use crate::transform::plan::{Arith, Plan};
use crate::transform::twin::Convolution;
use crate::transform::PlanError;

/// One field's constants for one plan: the weight and unweight rotations and the twiddles.
#[derive(Debug, Clone)]
pub struct Tables<B: Mersenne> {
    /// N = odd·m: odd ∈ {1, 3}, m = 2^(log2 n − 1) the radix-2 block length.
    pub(crate) odd: usize,
    pub(crate) m: usize,
    /// n^(−1) mod q: the weight of digit j is 2^(e_j·inv_n mod q).
    pub(crate) inv_n: u64,
    /// log2 n + 1: the unweight divides by 2n = odd·2^unscale.
    pub(crate) unscale: u32,
    /// 1/odd (1 or 3^(−1)).
    pub(crate) inv_odd: B,
    /// tw[h + i] = ω_{2h}^i, itw[h + i] = ω_{2h}^(−i), for each stage half-size h < m.
    pub(crate) tw: Vec<Gfp2<B>>,
    pub(crate) itw: Vec<Gfp2<B>>,
    /// ω_3 = ω_N^m and its inverse (base field elements), for odd = 3.
    pub(crate) w3: B,
    pub(crate) iw3: B,
    /// root[f] = ω_N^f for f < N: the radix-3 twiddles ω_N^(ir) and the pair step's ω_N^f.
    pub(crate) root: Vec<Gfp2<B>>,
}

impl<B: Mersenne> Tables<B> {
    pub fn new(plan: &Plan) -> Result<Tables<B>, PlanError> {
        let (p, len) = (plan.exponent(), plan.length());
        let why = |s: &str| PlanError::NoPlan { p, why: format!("{}: {s} at length {len}", B::EXT_NAME) };
        if plan.arith() != Arith::M61M31 || len.log2 == 0 {
            return Err(why("not an M61·M31 plan"));
        }
        let (odd, m) = (len.odd as usize, 1usize << (len.log2 - 1));
        let q = u64::from(B::Q);
        let w_n = Gfp2::<B>::root_of_unity_odd(len.odd, len.log2 - 1).ok_or_else(|| why("no root of unity"))?;
        let w_m = w_n.pow(odd as u64);
        let mut tw = vec![Gfp2::ZERO; m];
        let mut itw = vec![Gfp2::ZERO; m];
        let mut h = 1;
        while h < m {
            let w = w_m.pow((m / (2 * h)) as u64);
            let wi = w.inverse().ok_or_else(|| why("zero root"))?;
            let powers = |base: Gfp2<B>| std::iter::successors(Some(Gfp2::ONE), move |x| Some(x.mul(base))).take(h);
            tw[h..2 * h].iter_mut().zip(powers(w)).for_each(|(t, v)| *t = v);
            itw[h..2 * h].iter_mut().zip(powers(wi)).for_each(|(t, v)| *t = v);
            h *= 2;
        }
        let root: Vec<Gfp2<B>> = std::iter::successors(Some(Gfp2::ONE), |x| Some(x.mul(w_n))).take(odd * m).collect();
        let w3 = w_n.pow(m as u64).re;
        let inv_n = (1..q).find(|&x| (len.n() as u64 % q) * x % q == 1).ok_or_else(|| why("q divides n"))?;
        Ok(Tables {
            odd,
            m,
            inv_n,
            unscale: len.log2 + 1,
            inv_odd: B::from_u64(odd as u64).inverse().ok_or_else(|| why("odd = 0"))?,
            tw,
            itw,
            w3,
            iw3: w3.square(),
            root,
        })
    }

    /// s_j: the weight of digit j is 2^(s_j).
    pub fn weight_shift(&self, plan: &Plan, j: usize) -> u32 {
        ((plan.weight_exp(j) as u64 % u64::from(B::Q)) * self.inv_n % u64::from(B::Q)) as u32
    }

    /// The storage position of frequency f after the forward transform.
    pub fn position(&self, f: usize) -> usize {
        (f % self.odd) * self.m + bit_reverse(f / self.odd, self.m)
    }

    /// The frequency held at storage position pos.
    pub fn frequency(&self, pos: usize) -> usize {
        pos / self.m + self.odd * bit_reverse(pos % self.m, self.m)
    }
}

/// Both fields' tables for one plan.
#[derive(Debug, Clone)]
pub struct M61M31Tables {
    pub t61: Tables<M61>,
    pub t31: Tables<M31>,
}

impl M61M31Tables {
    pub fn new(plan: &Plan) -> Result<M61M31Tables, PlanError> {
        Ok(M61M31Tables { t61: Tables::new(plan)?, t31: Tables::new(plan)? })
    }
}

/// Step 1: weighted digits packed in pairs, z_j = d_{2j}·2^(s_{2j}) + i·d_{2j+1}·2^(s_{2j+1}).
pub fn weight_in<B: Mersenne>(plan: &Plan, t: &Tables<B>, digits: &[i64]) -> Vec<Gfp2<B>> {
    let x = |j: usize| B::from_i64(digits[j]).mul_pow2(t.weight_shift(plan, j));
    (0..digits.len() / 2).map(|j| Gfp2::new(x(2 * j), x(2 * j + 1))).collect()
}

/// Step 2a (odd = 3): the radix-3 DIF step, (z_i, z_{i+M}, z_{i+2M}) → block r gets
/// (Σ_t z_{i+tM}·ω_3^(rt))·ω_N^(ir).
pub fn forward_radix3<B: Mersenne>(t: &Tables<B>, z: &mut [Gfp2<B>]) {
    let m = t.m;
    for i in 0..m {
        let (u0, u1, u2) = (z[i], z[i + m], z[i + 2 * m]);
        z[i] = u0.add(u1).add(u2);
        z[i + m] = u0.add(u1.scale(t.w3)).add(u2.scale(t.iw3)).mul(t.root[i]);
        z[i + 2 * m] = u0.add(u1.scale(t.iw3)).add(u2.scale(t.w3)).mul(t.root[2 * i]);
    }
}

/// Step 2a⁻¹ (odd = 3): v_r = y_{i+rM}·ω_N^(−ir), then (Σ_r v_r·ω_3^(−rt)) to position i + tM.
pub fn inverse_radix3<B: Mersenne>(t: &Tables<B>, z: &mut [Gfp2<B>]) {
    let (m, n) = (t.m, 3 * t.m);
    for i in 0..m {
        let v0 = z[i];
        let v1 = z[i + m].mul(t.root[(n - i) % n]);
        let v2 = z[i + 2 * m].mul(t.root[(n - 2 * i) % n]);
        z[i] = v0.add(v1).add(v2);
        z[i + m] = v0.add(v1.scale(t.iw3)).add(v2.scale(t.w3));
        z[i + 2 * m] = v0.add(v1.scale(t.w3)).add(v2.scale(t.iw3));
    }
}

/// Step 2b: forward radix-2 DIF stages with half-sizes h_hi, h_hi/2, …, h_lo within every block
/// of M: (u, v) → (u + v, (u − v)·ω_{2h}^i).
pub fn forward_stages<B: Mersenne>(t: &Tables<B>, z: &mut [Gfp2<B>], h_hi: usize, h_lo: usize) {
    let mut h = h_hi;
    while h >= h_lo.max(1) {
        for blk in z.chunks_exact_mut(2 * h) {
            let (a, b) = blk.split_at_mut(h);
            for i in 0..h {
                let (u, v) = (a[i], b[i]);
                a[i] = u.add(v);
                b[i] = u.sub(v).mul(t.tw[h + i]);
            }
        }
        h /= 2;
    }
}

/// Step 4: inverse radix-2 DIT stages with half-sizes h_lo, …, h_hi: (u, v) → (u + v·ω^−i, u − v·ω^−i).
pub fn inverse_stages<B: Mersenne>(t: &Tables<B>, z: &mut [Gfp2<B>], h_lo: usize, h_hi: usize) {
    let mut h = h_lo.max(1);
    while h <= h_hi {
        for blk in z.chunks_exact_mut(2 * h) {
            let (a, b) = blk.split_at_mut(h);
            for i in 0..h {
                let (u, v) = (a[i], b[i].mul(t.itw[h + i]));
                a[i] = u.add(v);
                b[i] = u.sub(v);
            }
        }
        h *= 2;
    }
}

/// (A, B) = (Z_f + conj Z_σf, −i·(Z_f − conj Z_σf)) = (2E_f, 2O_f).
fn even_odd<B: Mersenne>(zf: Gfp2<B>, zg: Gfp2<B>) -> (Gfp2<B>, Gfp2<B>) {
    (zf.add(zg.conj()), zf.sub(zg.conj()).mul_i().neg())
}

/// 4·Z'_f = A·A' + ω^f·B·B' + i·(A·B' + B·A').
fn pair_product<B: Mersenne>((a, b): (Gfp2<B>, Gfp2<B>), (a2, b2): (Gfp2<B>, Gfp2<B>), w: Gfp2<B>) -> Gfp2<B> {
    a.mul(a2).add(w.mul(b.mul(b2))).add(a.mul(b2).add(b.mul(a2)).mul_i())
}

/// Step 3: the pointwise product of two forward-transformed real inputs (x = y for a squaring),
/// in the storage order of [`forward_stages`], in place in `x`: 4 times the product's
/// half-length transform.
pub fn pair_step<B: Mersenne>(t: &Tables<B>, x: &mut [Gfp2<B>], y: &[Gfp2<B>]) {
    let big_n = x.len() as u64;
    let m_q = B::MODULUS % big_n; // σ(f) = M_q·f mod N; f < N ≤ 2^25 keeps the product in a u64
    for pos in 0..x.len() {
        let f = t.frequency(pos);
        let g = (m_q * f as u64 % big_n) as usize;
        let pg = t.position(g);
        if pg < pos {
            continue; // done with its pair
        }
        let (ex, ey) = (even_odd(x[pos], x[pg]), even_odd(y[pos], y[pg]));
        let conj = |(a, b): (Gfp2<B>, Gfp2<B>)| (a.conj(), b.conj());
        let zf = pair_product(ex, ey, t.root[f]);
        x[pg] = pair_product(conj(ex), conj(ey), t.root[g]);
        x[pos] = zf;
    }
}

/// Step 5: unpacked real outputs times 2^(−s_j)/(2n): y_j as an element of GF(M_q).
pub fn unweight_out<B: Mersenne>(plan: &Plan, t: &Tables<B>, z: &[Gfp2<B>]) -> Vec<B> {
    let q = B::Q;
    let y = |j: usize, v: B| {
        let back = (t.weight_shift(plan, j) + t.unscale) % q;
        let v = v.mul_pow2((q - back) % q);
        if t.odd == 1 {
            v
        } else {
            v.mul(t.inv_odd)
        }
    };
    z.iter().enumerate().flat_map(|(j, v)| [y(2 * j, v.re), y(2 * j + 1, v.im)]).collect()
}

/// Steps 1–2: weight and the forward transform.
pub fn forward<B: Mersenne>(plan: &Plan, t: &Tables<B>, digits: &[i64]) -> Vec<Gfp2<B>> {
    let mut z = weight_in(plan, t, digits);
    if t.odd == 3 {
        forward_radix3(t, &mut z);
    }
    forward_stages(t, &mut z, t.m / 2, 1);
    z
}

/// Steps 4–5: the inverse transform and unweighting.
pub fn inverse<B: Mersenne>(plan: &Plan, t: &Tables<B>, mut z: Vec<Gfp2<B>>) -> Vec<B> {
    inverse_stages(t, &mut z, 1, t.m / 2);
    if t.odd == 3 {
        inverse_radix3(t, &mut z);
    }
    unweight_out(plan, t, &z)
}

/// The cyclic convolution of a and b (b = None: a with itself) in one field, mod M_q.
fn convolve<B: Mersenne>(plan: &Plan, t: &Tables<B>, a: &[i64], b: Option<&[i64]>) -> Vec<B> {
    let mut x = forward(plan, t, a);
    match b {
        Some(b) => pair_step(t, &mut x, &forward(plan, t, b)),
        None => {
            let y = x.clone();
            pair_step(t, &mut x, &y)
        }
    }
    inverse(plan, t, x)
}

/// Step 6: the integer outputs from their residues mod M61 and mod M31.
pub fn recombine(y61: &[M61], y31: &[M31]) -> Vec<i128> {
    y61.iter().zip(y31).map(|(&a, &b)| crt::recombine(a, b)).collect()
}

impl Convolution for M61M31Tables {
    /// The convolution outputs of a·b (b = None: a²) as integers.
    /// The two fields' transforms are independent (as on the GPU): they run side by side.
    fn convolution(&self, plan: &Plan, a: &[i64], b: Option<&[i64]>) -> Vec<i128> {
        let (y61, y31) = rayon::join(|| convolve(plan, &self.t61, a, b), || convolve(plan, &self.t31, a, b));
        recombine(&y61, &y31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exponent::TestKind;
    use crate::residue::Shift;
    use crate::transform::plan::Length;
    use crate::transform::testing::{self, direct_convolution, extreme_digits, matches_rug, random_digits};
    use quickcheck::{quickcheck, TestResult};

    fn plan_at(p: u32, odd: u32, log2: u32) -> Plan {
        Plan::with_length(p, Arith::M61M31, Length { odd, log2 }).unwrap()
    }

    /// The squaring (or product) of digits mod M_p through the twin, against rug.
    fn product_matches_rug(plan: &Plan, t: &M61M31Tables, a: &[i64], b: Option<&[i64]>) -> bool {
        let got = match b {
            Some(b) => t.multiply_digits(plan, a, b),
            None => t.square_digits(plan, a, None),
        };
        matches_rug(plan, a, b, &got)
    }

    #[test]
    fn forward_is_the_dft_in_its_storage_order() {
        for (odd, log2) in [(3, 1), (1, 2), (3, 2), (1, 3), (1, 4), (3, 4), (1, 5), (3, 3)] {
            let plan = plan_at((20 << log2) * odd + 1, odd, log2);
            let t = M61M31Tables::new(&plan).unwrap();
            let d = random_digits(&plan, u64::from(log2 * 7 + odd));
            let z = weight_in(&plan, &t.t61, &d);
            let got = forward(&plan, &t.t61, &d);
            let big_n = z.len();
            let w = Gfp2::<M61>::root_of_unity_odd(odd, log2 - 1).unwrap();
            for (pos, &g) in got.iter().enumerate() {
                let f = t.t61.frequency(pos);
                assert_eq!(t.t61.position(f), pos);
                let want = z.iter().enumerate().fold(Gfp2::ZERO, |s, (j, &zj)| s.add(zj.mul(w.pow((j * f) as u64))));
                assert_eq!(g, want, "n={} pos={pos} f={f}", plan.n());
                // σ is an involution on frequencies.
                let sg = (u128::from(M61::MODULUS) * f as u128 % big_n as u128) as usize;
                assert_eq!((u128::from(M61::MODULUS) * sg as u128 % big_n as u128) as usize, f);
            }
            let mut back = got.clone();
            inverse_stages(&t.t61, &mut back, 1, t.t61.m / 2);
            if odd == 3 {
                inverse_radix3(&t.t61, &mut back);
            }
            let scale = M61::from_u64(big_n as u64);
            assert_eq!(back, z.iter().map(|v| v.scale(scale)).collect::<Vec<_>>(), "round trip n={}", plan.n());
        }
    }

    #[test]
    fn convolution_is_the_definition() {
        // Random and extreme digits, small lengths of both kinds, squares and products.
        for (odd, log2, p) in [(1, 2, 41), (3, 1, 61), (1, 3, 191), (3, 3, 700), (1, 6, 1000), (3, 5, 2003)] {
            let plan = plan_at(p, odd, log2);
            let t = M61M31Tables::new(&plan).unwrap();
            let a = random_digits(&plan, u64::from(p));
            let b = random_digits(&plan, u64::from(p) + 1);
            let ext: Vec<i64> = (0..plan.n()).map(|j| -(1i64 << (plan.width(j) - 1)) - plan.slack() as i64).collect();
            assert_eq!(t.convolution(&plan, &a, Some(&b)), direct_convolution(&plan, &a, &b), "p={p}");
            assert_eq!(t.convolution(&plan, &a, None), direct_convolution(&plan, &a, &a), "p={p}");
            assert_eq!(t.convolution(&plan, &ext, None), direct_convolution(&plan, &ext, &ext), "p={p}");
        }
    }

    #[test]
    fn worst_case_digits_at_every_bound() {
        // The largest odd exponent of each length, with every digit at the largest magnitude the
        // proof allows (2^(w−1) + slack), all of one sign, alternating, or in runs: the
        // convolution outputs come close to the bound (c_0 ≈ Σ 2^ε·m²) and must come back exact.
        for log2 in 1..=12 {
            for odd in [1, 3] {
                let len = Length { odd, log2 };
                let Some(p) = Arith::M61M31.largest_exponent_at(len) else { continue };
                let plan = Plan::with_length(p, Arith::M61M31, len).unwrap();
                let t = M61M31Tables::new(&plan).unwrap();
                for mode in 0..4 {
                    let d = extreme_digits(&plan, mode, 1);
                    assert!(product_matches_rug(&plan, &t, &d, None), "p={p} n={} mode={mode}", plan.n());
                    if plan.n() <= 256 {
                        assert_eq!(t.convolution(&plan, &d, None), direct_convolution(&plan, &d, &d), "p={p}");
                    }
                }
                // c_0 of the all-equal digits nears the bound: it is at least half of it.
                let d = extreme_digits(&plan, 0, 1);
                let c0 = t.convolution(&plan, &d, None)[0].unsigned_abs();
                assert!(c0 > crt::MAX_ABS / 4, "p={p} n={} c0={c0}", plan.n());
            }
        }
    }

    #[test]
    fn digits_beyond_the_bound_come_back_wrong() {
        // The rug comparison has teeth: digits 2^5 times larger than the proof allows overflow
        // the CRT range and the squaring is wrong.
        let len = Length { odd: 3, log2: 8 };
        let p = Arith::M61M31.largest_exponent_at(len).unwrap();
        let plan = Plan::with_length(p, Arith::M61M31, len).unwrap();
        let t = M61M31Tables::new(&plan).unwrap();
        let d: Vec<i64> = (0..plan.n()).map(|j| -(1i64 << (plan.width(j) + 4))).collect();
        assert!(!product_matches_rug(&plan, &t, &d, None));
    }

    quickcheck! {
        fn squaring_and_product_match_rug(seed: u64, pick: u32, odd3: bool, log2: u8) -> TestResult {
            // Any length up to 3·2^12, an exponent anywhere up to that length's largest.
            let len = Length { odd: if odd3 { 3 } else { 1 }, log2: 1 + u32::from(log2 % 12) };
            let Some(top) = Arith::M61M31.largest_exponent_at(len) else { return TestResult::discard() };
            let p = (len.n() as u32).max(13) + pick % (top - (len.n() as u32).max(13) + 1);
            // Short lengths refuse exponents whose digits are too narrow for the carry segments.
            let Ok(plan) = Plan::with_length(p, Arith::M61M31, len) else { return TestResult::discard() };
            let t = M61M31Tables::new(&plan).unwrap();
            let (a, b) = (random_digits(&plan, seed), random_digits(&plan, !seed));
            TestResult::from_bool(product_matches_rug(&plan, &t, &a, None) && product_matches_rug(&plan, &t, &a, Some(&b)))
        }

        fn ll_iterations_match_rug(seed: u64, pick: u32, s: u32, iters: u8) -> TestResult {
            let iterate = |plan: &Plan, d: Vec<i64>, sh: Shift, count: u64| {
                M61M31Tables::new(plan).unwrap().iterate_digits(plan, TestKind::Ll, d, sh, count)
            };
            testing::ll_iterations_match_rug(Arith::M61M31, &iterate, 30_000, (seed, pick, s, iters))
        }
    }

    /// Each length of 2^lo..=2^hi and 3·2^lo..=3·2^hi once, at its largest exponent, random
    /// balanced digits: the squared residue against rug (M61M31_ONLY=3·2^22 picks one length).
    fn lengths_match_rug(lo: u32, hi: u32) {
        let mut lens: Vec<Length> = (lo..=hi).flat_map(|log2| [1, 3].map(|odd| Length { odd, log2 })).collect();
        if let Some(only) = std::env::var_os("M61M31_ONLY") {
            lens.retain(|l| l.to_string() == only.to_string_lossy());
        }
        for len in lens {
            let t0 = std::time::Instant::now();
            let p = Arith::M61M31.largest_exponent_at(len).unwrap();
            let plan = Plan::with_length(p, Arith::M61M31, len).unwrap();
            let t = M61M31Tables::new(&plan).unwrap();
            let d = random_digits(&plan, u64::from(p));
            assert!(product_matches_rug(&plan, &t, &d, None), "p={p} {len}");
            eprintln!("{len}: p={p} {:.2} s", t0.elapsed().as_secs_f64());
        }
    }

    #[test]
    fn every_length_from_2_10_to_3_2_20_matches_rug() {
        lengths_match_rug(10, 20);
    }

    #[test]
    fn every_length_from_2_21_to_3_2_22_matches_rug() {
        lengths_match_rug(21, 22);
    }

    #[test]
    fn every_length_from_2_23_to_3_2_24_matches_rug() {
        lengths_match_rug(23, 24);
    }
}
