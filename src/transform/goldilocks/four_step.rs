//! Goldilocks on the four-step pipeline (kernels/goldilocks/four_step.cuh over
//! kernels/common/pipeline.cuh, issue 37): the plan it takes (the Goldilocks plan with carry
//! segments of [`SEG_LEN`] digits, a GPU thread's walk) and the tables it reads, in the layout the
//! FP64 arithmetic's are (src/transform/fp64/stages.rs): the C-point and R-point twiddles of the
//! skeleton's stages and the weights and unweights, all the plan's own ([`super::tables`]), and
//! the twiddles between the passes (powers of ω_n and ω_n^(−1)) as a product of two entries a
//! row and tile ([`tile_twiddle_exponents`]). Values are canonical, so nothing is reduced
//! lazily (every reduce mask is 0). The shape n = R·C is the FP64 arithmetic's ([`split`]).

use super::field::Gl;
use crate::transform::fp64::shape::{first_power_exponents, split, tile_twiddle_exponents, SEG_LEN};
use crate::transform::plan::{Arith, Plan};
use crate::transform::{bit_reverse, PlanError};

/// One plan's tables for the Goldilocks four-step kernels.
pub struct GlFourStep {
    pub log_r: u32,
    pub log_c: u32,
    /// log2 of the twiddles' low tables' entries a tile ([`tile_twiddle_exponents`]).
    pub lo_bits: u32,
    /// The weight chains' factors: ρ^(−f), 2ρ^(−f) (from digit j to j + 1 where j is narrow,
    /// wide; f = p mod n) and their inverses for the unweights.
    pub chain: [u64; 4],
    /// row_tw, row_itw, col_tw, col_itw, then the rows and tiles of the weights and the
    /// unweights, hi and lo of the twiddles and the inverse twiddles, then ω_n^(±bitrev_R(r)) a
    /// row (the twiddle steps' factors): the order of FsPrime's tables
    /// (kernels/common/pipeline.cuh).
    pub tables: [Vec<u64>; 14],
}

impl GlFourStep {
    /// The plan the kernels take: `plan` (a Goldilocks plan of n = 2^k) with segments of
    /// [`SEG_LEN`] digits (n where shorter).
    pub fn plan(plan: &Plan) -> Result<Plan, PlanError> {
        let why = |s: &str| PlanError::NoPlan { p: plan.exponent(), why: format!("goldilocks four-step: {s}") };
        if plan.arith() != Arith::Goldilocks || plan.length().odd != 1 {
            return Err(why("not a Goldilocks plan of 2^k digits"));
        }
        plan.clone().with_seg_len(SEG_LEN.min(plan.n()))
    }

    /// The tables of `plan` (one [`GlFourStep::plan`] gave): the plan's own weights and stage
    /// twiddles (src/transform/goldilocks/tables.rs: `twiddle[m + i]` = ω_2m^i, whatever the
    /// length, so a C-point transform's are the first C), and the powers of ω_n.
    pub fn new(plan: &Plan) -> Result<GlFourStep, PlanError> {
        let (p, log2) = (plan.exponent(), plan.log2());
        let no = |what: &str| PlanError::NoPlan { p, why: format!("goldilocks four-step: no {what} at 2^{log2}") };
        let rho = Gl::root_of_two(log2).ok_or_else(|| no("2^(1/n)"))?;
        let w_n = Gl::root_of_unity(log2).ok_or_else(|| no("n-th root of unity"))?;
        let inv = |x: Gl| x.inverse().expect("nonzero");
        let (log_r, log_c) = split(log2);
        let down = inv(rho).pow(u64::from(p) % (1u64 << log2));
        let wide = Gl::new(2).mul(down);
        let words = |v: &[Gl]| v.iter().map(|x| x.value()).collect::<Vec<u64>>();
        let (tw, itw) = plan.twiddles();
        let (lo_bits, hi_exps, lo_exps) = tile_twiddle_exponents(plan);
        let powers = |g: Gl, e: &[usize]| e.iter().map(|&e| g.pow(e as u64).value()).collect::<Vec<u64>>();
        let [t_hi, t_lo, it_hi, it_lo] =
            [(w_n, &hi_exps), (w_n, &lo_exps), (inv(w_n), &hi_exps), (inv(w_n), &lo_exps)].map(|(g, e)| powers(g, e));
        let (r, c) = (1 << log_r, 1 << log_c);
        // A segment's first weight g^(e_j0)·scale as a row's entry times a tile's (the second of
        // its pair times g^(−n)): shape::first_power_exponents.
        let ((rows, tiles), n) = (first_power_exponents(plan), 1u64 << log2);
        let row_tile = |g: Gl, scale: Gl| -> [Vec<u64>; 2] {
            let row = rows.iter().map(|&a| g.pow(a as u64).mul(scale).value()).collect();
            let down = inv(g.pow(n));
            let tile = tiles
                .iter()
                .flat_map(|&b| {
                    let gb = g.pow(b as u64);
                    [gb.value(), gb.mul(down).value()]
                })
                .collect();
            [row, tile]
        };
        let [w_row, w_tile] = row_tile(rho, Gl::ONE);
        let [iw_row, iw_tile] = row_tile(inv(rho), inv(Gl::new(n)));
        // ω_n^(±bitrev_R(row)) a row: the twiddle steps' factor (canonical, as hi·lo gives it).
        let steps = |w: Gl| (0..r).map(|i| w.pow(bit_reverse(i, r) as u64).value()).collect::<Vec<u64>>();
        Ok(GlFourStep {
            log_r,
            log_c,
            lo_bits,
            chain: [down, wide, inv(down), inv(wide)].map(Gl::value),
            tables: [
                words(&tw[..c]),
                words(&itw[..c]),
                words(&tw[..r]),
                words(&itw[..r]),
                w_row,
                w_tile,
                iw_row,
                iw_tile,
                t_hi,
                t_lo,
                it_hi,
                it_lo,
                steps(w_n),
                steps(inv(w_n)),
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::fp64::shape::first_power_entries;
    use crate::transform::plan::Length;

    #[test]
    fn tables_are_the_powers_they_name() {
        let len = Length { odd: 1, log2: 13 };
        let plan = GlFourStep::plan(&Plan::with_length(200_003, Arith::Goldilocks, len).unwrap()).unwrap();
        assert_eq!(plan.seg_len(), SEG_LEN);
        let t = GlFourStep::new(&plan).unwrap();
        let (rho, w) = (Gl::root_of_two(13).unwrap(), Gl::root_of_unity(13).unwrap());
        let n_inv = Gl::new(1 << 13).inverse().unwrap();
        // Each segment's first weight and unweight from a row's entry and a tile's.
        for j0 in (0..8192).step_by(SEG_LEN) {
            let e = plan.weight_exp(j0);
            let ((r, tile), g) = (first_power_entries(&plan, j0), |i: usize, k: usize| Gl::new(t.tables[i][k]));
            assert_eq!(g(4, r).mul(g(5, tile)), rho.pow(e as u64), "j0={j0}");
            assert_eq!(g(6, r).mul(g(7, tile)), rho.inverse().unwrap().pow(e as u64).mul(n_inv), "j0={j0}");
        }
        // Row r's twiddle at tile t's first column c0: ω_n^(±bitrev_R(r)·c0) from a hi and a lo
        // entry of the tile (2^6 rows: 2 hi and 32 lo entries a tile).
        let (rows, lanes) = (1usize << t.log_r, 1usize << t.lo_bits);
        assert_eq!((t.lo_bits, t.tables[8].len(), t.tables[9].len()), (5, 2 * 16, 32 * 16));
        for (tile, r) in (0..16).flat_map(|tile| (0..rows).map(move |r| (tile, r))) {
            let at = |hi: usize, lo: usize| {
                Gl::new(t.tables[hi][tile * rows / lanes + r / lanes])
                    .mul(Gl::new(t.tables[lo][tile * lanes + r % lanes]))
            };
            let e = (bit_reverse(r, rows) * tile * SEG_LEN) as u64;
            assert_eq!((at(8, 9), at(10, 11).mul(w.pow(e))), (w.pow(e), Gl::ONE), "tile {tile} row {r}");
        }
        // The twiddle steps' factors: ω_n^(±bitrev_R(r)) for each row r.
        assert_eq!((t.tables[12].len(), t.tables[13].len()), (rows, rows));
        for r in 0..rows {
            let k = bit_reverse(r, rows) as u64;
            assert_eq!((Gl::new(t.tables[12][r]), Gl::new(t.tables[13][r]).mul(w.pow(k))), (w.pow(k), Gl::ONE));
        }
        // ρ^n = 2: a wide digit's step is twice a narrow one's; the unweights' are the inverses.
        let [narrow, wide, inarrow, iwide] = t.chain.map(Gl::new);
        assert_eq!(narrow.mul(rho.pow(200_003 % 8192)), Gl::ONE);
        assert_eq!((wide, narrow.mul(inarrow), wide.mul(iwide)), (narrow.mul(Gl::new(2)), Gl::ONE, Gl::ONE));
        // The stages' twiddles: w_2m^j at m + j, the inverse table its inverses.
        let (row, irow) = (&t.tables[0], &t.tables[1]);
        assert_eq!(row.len(), 1 << t.log_c);
        let m = row.len() / 2;
        assert_eq!(Gl::new(row[m + 1]), Gl::root_of_unity(t.log_c).unwrap());
        assert!((1..row.len()).all(|i| Gl::new(row[i]).mul(Gl::new(irow[i])) == Gl::ONE));
        assert!(GlFourStep::plan(&Plan::with_length(200_003, Arith::Fp64, len).unwrap()).is_err());
    }
}
