//! The floor under one squaring of the FP64 arithmetic (issue 37's gate), from the measured
//! register-only rates (fp64.rs) and copy bandwidth: no kernel built from these operations, in
//! the planned shape, squares faster. Per squaring of n = 2^k words, in both primes:
//! - butterflies: a forward and an inverse radix-2 transform, (n/2)·k each, at the measured rate
//!   of butterflies with lazy reduction;
//! - products: the weights, the pointwise square and the unweights (n^(−1) folded in), n each,
//!   and the twiddles between the passes of a transform, n per pass boundary and direction;
//! - the CRT of every output, once (both primes together);
//! - memory: the planned global round trips of the residue (both primes: 16 B a word), each
//!   reading and writing it once at the copy bandwidth: one where a block holds the whole
//!   transform (n ≤ 2^11), two up to 2^22 (a 2^11 × 2^11 row and column pass, the square and
//!   the carry fused in), three above.
//!
//! The arithmetic and the memory traffic can overlap, so the floor is the larger of the two.
//!
//! Per launch ([`launches`], `gpu-selftest profile`): the FP64 instructions of the field
//! operations each kernel of a plan performs, counted from the plan's stages and its reduction
//! schedule, and the bytes it moves through global memory; its floor is the larger of those
//! instructions at the register-only rate of products (6 instructions each) and those bytes at
//! the copy bandwidth.

use super::fp64::Fp64Rates;
use crate::transform::fp64::ntt::UNIT_HALF;
use crate::transform::fp64::stages::{Fp64Tables, PrimeTables};
use crate::transform::plan::Plan;
use crate::transform::PlanError;

/// Bytes per word of a residue held in both primes (two doubles).
const WORD_BYTES: f64 = 16.0;

/// The floor of one squaring of 2^k words, each term in µs.
#[derive(Clone, Copy, Debug)]
pub struct Fp64Floor {
    pub log2: u32,
    pub round_trips: u32,
    pub butterflies_us: f64,
    pub products_us: f64,
    pub crt_us: f64,
    pub memory_us: f64,
}

impl Fp64Floor {
    pub fn arith_us(&self) -> f64 {
        self.butterflies_us + self.products_us + self.crt_us
    }

    /// The larger of the arithmetic and the memory traffic.
    pub fn floor_us(&self) -> f64 {
        self.arith_us().max(self.memory_us)
    }
}

/// The global round trips of the residue a squaring of 2^k words makes in the planned shape.
pub fn round_trips(log2: u32) -> u32 {
    match log2 {
        0..=11 => 1,
        12..=22 => 2,
        _ => 3,
    }
}

/// The floor at 2^k words from the rates and the bandwidth (bytes/s).
pub fn floor(rates: &Fp64Rates, bandwidth: f64, log2: u32) -> Fp64Floor {
    let n = (1u64 << log2) as f64;
    let trips = round_trips(log2);
    let primes = 2.0;
    let butterflies = primes * 2.0 * (n / 2.0) * f64::from(log2);
    let products = primes * n * (3.0 + 2.0 * f64::from(trips - 1));
    Fp64Floor {
        log2,
        round_trips: trips,
        butterflies_us: butterflies / rates.bfly * 1e6,
        products_us: products / rates.mul * 1e6,
        crt_us: n / rates.crt * 1e6,
        memory_us: f64::from(trips) * 2.0 * WORD_BYTES * n / bandwidth * 1e6,
    }
}

/// FP64 instructions of the field operations as kernels/fp64/field.cuh issues them: a sum, a
/// product (fp_mul), a reduction (fp_reduce), a centering (fp_center: a reduction and two
/// compares; its corrections are rare branches).
const ADD: f64 = 1.0;
const MUL: f64 = 6.0;
const REDUCE: f64 = 3.0;
const CENTER: f64 = REDUCE + 2.0;

/// One kernel's work in one squaring of a plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaunchWork {
    pub kernel: &'static str,
    /// FP64 instructions (thread instructions, all threads).
    pub fp64: f64,
    /// Bytes read and written in global memory (the residue, digits and carries; twiddle and
    /// weight tables are left out: they are read from the caches).
    pub bytes: f64,
}

impl LaunchWork {
    /// Its floor in µs: the FP64 instructions at the rate of register-only products (`rates.mul`
    /// products of 6 instructions a second), or the bytes at `bandwidth`, whichever is longer.
    pub fn floor_us(&self, rates: &Fp64Rates, bandwidth: f64) -> f64 {
        (self.fp64 / (MUL * rates.mul)).max(self.bytes / bandwidth) * 1e6
    }
}

/// The work of each kernel of `plan`'s squaring (kernels/fp64/pipeline.cuh): fp_rows, fp_fwd,
/// fp_inv and fp_carry (fp_inv's work then fp_fwd's). Per value of a prime: a radix-2 stage is
/// a sum or difference and half a product, less the products by ω^0 that a stage of half-size
/// m ≤ [`UNIT_HALF`] skips (1/(2m) a value), a pass boundary's twiddles two products (the
/// value's, and the next column's twiddle along the chain), the weights and unweights two
/// products each (the unweights after a reduction), every step the schedule reduces before a
/// reduction; per word, once, the CRT (two centerings, a reduction, a difference, a product).
/// The few products a row segment (its first weight and twiddle from two table entries) are not
/// counted, so the kernels execute a few percent more (ncu, bench/RESULTS.md 2026-11-28).
pub fn launches(plan: &Plan) -> Result<[LaunchWork; 4], PlanError> {
    let t = Fp64Tables::new(plan)?;
    let ix = t.index();
    let (lr, lc) = (t.log_r as usize, t.log_c as usize);
    let (n, segs) = (plan.n() as f64, (plan.n() / plan.seg_len()) as f64);
    let reduced = |q: &PrimeTables, steps: &mut dyn Iterator<Item = usize>| {
        REDUCE * steps.filter(|&s| q.schedule.before[s]).count() as f64
    };
    let stages = |k: usize| {
        let skipped: f64 = (0..k).map(|s| 1usize << s).filter(|&m| m <= UNIT_HALF).map(|m| 0.5 / m as f64).sum();
        k as f64 * (ADD + MUL / 2.0) - MUL * skipped
    };
    let twiddles = if lr > 0 { 2.0 * MUL } else { 0.0 };
    let per_prime = |f: &dyn Fn(&PrimeTables) -> f64| n * t.primes.iter().map(f).sum::<f64>();
    let rows = per_prime(&|q| {
        2.0 * stages(lc)
            + MUL
            + reduced(q, &mut (0..lc).map(|s| ix.row_fwd(s)).chain([ix.square()]))
            + reduced(q, &mut (0..lc).map(|s| ix.row_inv(s)))
    });
    let fwd = per_prime(&|q| {
        let tw = if lr > 0 { reduced(q, &mut [ix.tw_fwd()].into_iter()) } else { 0.0 };
        2.0 * MUL + stages(lr) + reduced(q, &mut (0..lr).map(|s| ix.col_fwd(s))) + twiddles + tw
    });
    let inv = per_prime(&|q| {
        let tw = if lr > 0 { reduced(q, &mut [ix.tw_inv()].into_iter()) } else { 0.0 };
        twiddles + tw + stages(lr) + reduced(q, &mut (0..lr).map(|s| ix.col_inv(s))) + REDUCE + 2.0 * MUL
    }) + n * (2.0 * CENTER + REDUCE + ADD + MUL);
    // Global memory: both primes' values (16 bytes a word), the digits (8), a carry a segment (16).
    let (z, x, c) = (16.0 * n, 8.0 * n, 16.0 * segs);
    Ok([
        LaunchWork { kernel: "fp_rows", fp64: rows, bytes: 2.0 * z },
        LaunchWork { kernel: "fp_fwd", fp64: fwd, bytes: x + c + z },
        LaunchWork { kernel: "fp_inv", fp64: inv, bytes: z + x + c },
        LaunchWork { kernel: "fp_carry", fp64: inv + fwd, bytes: 2.0 * z + 2.0 * c },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::plan::Arith;

    /// Against the FP64 instructions ncu counted in one launch of each kernel (H200, e4666ee's
    /// kernels, bench/RESULTS.md 2026-11-28), less the products by ω^0 that the kernels have
    /// skipped since (`skipped`: 6 instructions each, 7/8 of a product a value in each direction
    /// of each transform, in each prime) plus the reductions the schedules gained (at 2^22 the
    /// second prime's reduces twice more in fp_carry, before the inverse twiddles and column DIT
    /// stage 5, as the unreduced ω^0 sums grow its bound faster; the wide pair's is unchanged):
    /// within a few percent below them (the products a row segment and a thread's constants are
    /// left out), never above (a floor). Warp instructions × 32 = thread instructions. (That call
    /// also counted fp_carry at 2^19, the wide pair, then 2^7 rows; since the H200's split takes
    /// 2^8 there, 2^22 is the shape both the count and the model have.)
    #[test]
    fn launches_count_what_the_kernels_execute() {
        let skipped = |log2: u32, transforms: f64| 6.0 * 2.0 * (1u64 << log2) as f64 * transforms * 7.0 / 8.0;
        let close = |model: f64, warp_instructions: f64, skipped: f64, what: &str| {
            let ratio = model / (32.0 * warp_instructions - skipped);
            assert!((0.95..=1.0).contains(&ratio), "{what}: {ratio}");
        };
        let [rows, fwd, inv, carry] = launches(&Plan::for_arith(136_279_841, Arith::Fp64).unwrap()).unwrap();
        close(rows.fp64, 31_588_352.0, skipped(22, 2.0), "fp_rows at 2^22");
        let gained = 2.0 * REDUCE * (1u64 << 22) as f64;
        close(carry.fp64, 36_489_696.0, skipped(22, 2.0) - gained, "fp_carry at 2^22");
        assert_eq!(carry.fp64, fwd.fp64 + inv.fp64);
        let n = 4_194_304.0;
        assert_eq!((rows.bytes, carry.bytes), (32.0 * n, 32.0 * n + 2.0 * 16.0 * n / 8.0));
        // At the H200's rates (products 2.78e12/s, 4.0 TB/s) fp_rows is bound by its FP64 work.
        let rates = Fp64Rates { mul: 2.78e12, bfly: 1.5e12, crt: 1e12 };
        assert!(rows.floor_us(&rates, 4.0e12) > rows.bytes / 4.0e12 * 1e6);
    }

    /// Counted by hand at the H100 figures (2596 G products/s, 1425 G butterflies/s,
    /// ~3.0 TB/s): 2^22 words, two round trips.
    #[test]
    fn floor_at_2_22_by_hand() {
        let rates = Fp64Rates { mul: 2596e9, bfly: 1425e9, crt: 1000e9 };
        let f = floor(&rates, 3.0e12, 22);
        let n = 4_194_304.0;
        assert_eq!(f.round_trips, 2);
        assert!((f.butterflies_us - 2.0 * n * 22.0 / 1425e9 * 1e6).abs() < 1e-9);
        assert!((f.products_us - 2.0 * n * 5.0 / 2596e9 * 1e6).abs() < 1e-9);
        assert!((f.memory_us - 2.0 * 2.0 * 16.0 * n / 3.0e12 * 1e6).abs() < 1e-9);
        assert!((f.floor_us() - f.arith_us().max(f.memory_us)).abs() < 1e-12);
        // ~130 µs of butterflies: the estimate for 136,279,841.
        assert!((125.0..135.0).contains(&f.butterflies_us), "{}", f.butterflies_us);
        assert_eq!((round_trips(11), round_trips(12), round_trips(23)), (1, 2, 3));
    }
}
