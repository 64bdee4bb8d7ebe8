//! The four-step split of the FP64 arithmetic's lengths and the shape the GPU kernels are
//! compiled for: n = R·C ([`split`]: how many rows, measured per length), the carry segments
//! ([`SEG_LEN`]), the `#define`s of one plan's unit ([`shape_defines`], with the carry walk's
//! integer width, [`carries_fit_i64`]) and the threads of its blocks ([`block_threads`]). The
//! twin's stages (`stages.rs`) and Goldilocks on the same kernels take the same split.

use crate::transform::bit_reverse;
use crate::transform::plan::Plan;

/// The longest row (log2 C): a row of 2^13 values and a product's second row beside it fill 145
/// KiB of a GPU block's shared memory (kernels/common/pipeline.cuh rows); rows of 2^14 would need
/// 290 KiB, more than a Hopper block has (227 KiB).
pub const MAX_COLS_LOG2: u32 = 13;
/// Lengths up to 2^SINGLE_ROW_LOG2 are one row (R = 1): the row pass does every stage.
pub const SINGLE_ROW_LOG2: u32 = 12;
/// Digits per carry segment, and columns per tile of the column passes (fewer when n is).
pub const SEG_LEN: usize = 8;
/// log2 R of the lengths 2^13 … 2^22 (longer ones take rows of 2^MAX_COLS_LOG2), the fastest on an H100
/// (bench/RESULTS.md, 2026-11-28: every R from 2^3 to 2^9 at the largest exponent of each length
/// 2^15 … 2^22; 2^13 and 2^14 keep ⌊k/2⌋), re-timed on an H200 at 2^17 … 2^21 (2026-11-29 23:40,
/// call AC), where only 2^19 moved: 2^8 ran 38.7 µs an iteration against 38.9 for 2^7 (with
/// fp_rows at 512 threads then), 42.2 for 2^6 and 44.7 for 2^9. The column passes take a block a
/// tile of SEG_LEN columns and the row pass a block a row (in each prime), so R trades the one's
/// blocks against the other's: on the H200 at 2^20 2^9 runs 71.3 against 78.3 for 2^8, at 2^17
/// 2^6 21.5 against 23.0 for 2^7.
const ROWS_LOG2: [u32; 10] = [6, 7, 6, 6, 6, 7, 8, 9, 9, 9];

/// log2 R, log2 C of length 2^k: one row up to 2^SINGLE_ROW_LOG2, R = 2^ROWS_LOG2[k − 13] up to
/// 2^22 (a tile of 2^9 rows of SEG_LEN columns in both FP64 primes fills 73 KiB: three blocks an
/// H100 SM), and rows of 2^MAX_COLS_LOG2 beyond (the FP64 pair ends at 2^22; Goldilocks, one
/// prime, runs 2^23 and 2^24 on these kernels: tiles of 2^10 and 2^11 rows, 73 and 145 KiB).
pub fn split(log2: u32) -> (u32, u32) {
    let log_r = match log2.checked_sub(SINGLE_ROW_LOG2 + 1) {
        None => 0,
        Some(i) => ROWS_LOG2.get(i as usize).copied().unwrap_or(log2 - MAX_COLS_LOG2),
    };
    (log_r, log2 - log_r)
}

/// The exponents of the tables that give a carry segment's first weight (or unweight)
/// g^(e_j0)·scale as a row's entry times a tile's (kernels/common/pipeline.cuh fs_first_power),
/// for each arithmetic on the four-step kernels: for j0 = r·C + c0, e_j0 = (a + b) mod n with
/// a = e_(r·C) and b = e_(c0) ([`Plan::weight_exp`]); row r's entry is g^a·scale, tile t's pair
/// g^b and g^(b − n) (ρ^n = 2) with b = e_(t·SEG). The exponents a of every row and b of every
/// tile.
pub fn first_power_exponents(plan: &Plan) -> (Vec<usize>, Vec<usize>) {
    let (log_r, log_c) = split(plan.log2());
    let (cols, seg) = (1usize << log_c, plan.seg_len());
    let rows = (0..1usize << log_r).map(|r| plan.weight_exp(r * cols)).collect();
    let tiles = (0..(cols / seg).max(1)).map(|t| plan.weight_exp(t * seg)).collect();
    (rows, tiles)
}

/// Where the first power of the segment at digit j0 lies in those tables: its row's entry and
/// its tile's (the second of the pair where a + b ≥ n).
pub fn first_power_entries(plan: &Plan, j0: usize) -> (usize, usize) {
    let cols = 1usize << split(plan.log2()).1;
    let (r, c0) = (j0 / cols, j0 % cols);
    let wrap = usize::from(plan.weight_exp(r * cols) + plan.weight_exp(c0) >= plan.n());
    (r, 2 * (c0 / plan.seg_len()) + wrap)
}

/// The tables that give row r's twiddle ω^(k·c0) (k = bitrev_R(r)) at a tile's first column c0
/// = t·SEG as a product of two entries, for each arithmetic on the four-step kernels
/// (kernels/common/pipeline.cuh fs_tile_power): with r = a + h·L (L = 2^lo_bits = min(R, 32):
/// the rows of a warp), bitrev_R(r) = bitrev_R(a) + bitrev_R(h·L), so ω^(k·c0) =
/// `hi[t·R/L + h]`·`lo[t·L + a]` with hi's entry ω^(bitrev_R(h·L)·c0) and lo's ω^(bitrev_R(a)·c0):
/// a warp's loads of them are one broadcast and one coalesced run (a split of k·c0's bits put
/// them in 32 lines: bench/RESULTS.md, 2026-11-30, calls AG and AI). 2^lo_bits + R/2^lo_bits entries a
/// tile: n/87 at 2^22. lo_bits and the exponents of hi and lo.
pub fn tile_twiddle_exponents(plan: &Plan) -> (u32, Vec<usize>, Vec<usize>) {
    let (log_r, log_c) = split(plan.log2());
    let (rows, seg) = (1usize << log_r, plan.seg_len());
    let lo_bits = log_r.min(5);
    let tiles = ((1usize << log_c) / seg).max(1);
    let exp = move |r: usize, t: usize| bit_reverse(r, rows) * t * seg;
    let hi = (0..tiles).flat_map(|t| (0..rows >> lo_bits).map(move |h| exp(h << lo_bits, t))).collect();
    let lo = (0..tiles).flat_map(|t| (0..1 << lo_bits).map(move |a| exp(a, t))).collect();
    (lo_bits, hi, lo)
}

/// Where the four-step kernels keep the pending carry of carry segment `seg` (digits seg·SEG ..,
/// row r, tile t of the split): at slot t·R + r, tile-major, so that a tile's carries are
/// consecutive and a warp's accesses of them coalesce (kernels/common/pipeline.cuh
/// fs_carry_slot).
pub fn carry_slot(plan: &Plan, seg: usize) -> usize {
    let (log_r, log_c) = split(plan.log2());
    let tiles = (1usize << log_c) / plan.seg_len();
    ((seg % tiles) << log_r) + seg / tiles
}

/// The shape of `plan` as the FP64 kernels are compiled for it (kernels/common/pipeline.cuh,
/// FsLayout): log2 R, log2 C and the segment length as compile-time constants, so that every
/// stage index, loop bound and shared-memory offset derived from them folds (on an H100 this took
/// 358.7 → 314.6 µs an iteration at 2^22, 53.0 → 46.9 at 2^19: bench/RESULTS.md, 2026-11-28);
/// and FP_CARRY64 = 1 where the plan's carries fit the 64-bit walk ([`carries_fit_i64`]).
pub fn shape_defines(plan: &Plan) -> [(&'static str, u32); 4] {
    let (log_r, log_c) = split(plan.log2());
    let carry64 = u32::from(carries_fit_i64(plan));
    [("FP_LOG_R", log_r), ("FP_LOG_C", log_c), ("FP_SEG", plan.seg_len() as u32), ("FP_CARRY64", carry64)]
}

/// Whether the kernels walk `plan`'s carries in 64-bit integers (kernels/common/pipeline.cuh, an
/// output split as q·2^w + z: docs/arithmetic.md): every carry below B_walk < 2^61, so that a
/// carry plus z (< 2^53) or a digit stays below 2^62. Else (the widest pair at the top of 2^22,
/// where B_walk reaches 2^61) they walk in 128-bit integers.
pub fn carries_fit_i64(plan: &Plan) -> bool {
    plan.carry_bound() < 1 << 61
}

/// The most threads a block of the FP64 kernels takes (their `__launch_bounds__`), but for the
/// column kernels at [`WIDE_TILE_LOG2`].
pub const MOST_THREADS: u32 = 256;

/// Lengths (log2) whose column kernels take twice the threads (a row of the tile each, R = 2^9;
/// their bounds then 512, 2: 64 registers, no spill). At 2^21 fp_carry's grid of 513 blocks then
/// runs in 1.9 waves of two blocks an SM, against 1.3 of three: on an H200 an iteration took
/// 148.4 µs against 152.9 for 256 threads with fp_inv and fp_fwd apart (155.8 with fp_carry);
/// at 2^20 and 2^22 the wide blocks lose (76.5 against 73.3 µs, 270.7 against 262.9:
/// bench/RESULTS.md, 2026-11-29, call N).
pub const WIDE_TILE_LOG2: [u32; 1] = [21];

/// The threads of `plan`'s blocks, at most `most` (≤ [`MOST_THREADS`]; the column kernels twice
/// that at [`WIDE_TILE_LOG2`]), as the kernels are compiled for them and launched with
/// (src/gpu/four_step/pipeline.rs): a column kernel's block (fp_fwd, fp_inv, fp_carry: a row of
/// the tile at a time) and an fp_rows block (a group of 8 values of a pass at a time).
pub fn block_threads(plan: &Plan, most: u32) -> [(&'static str, u32); 2] {
    let (log_r, log_c) = split(plan.log2());
    let tile_most = if WIDE_TILE_LOG2.contains(&plan.log2()) { 2 * most } else { most };
    [("FP_TILE_THREADS", (1u32 << log_r).min(tile_most)), ("FP_ROW_THREADS", ((1u32 << log_c) / 8).clamp(1, most))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::arith::Arith;
    use crate::transform::plan::{Length, MAX_LOG2};

    #[test]
    fn split_fits_the_kernels() {
        // Every split fits the kernels: a row of at most 2^13 values; to 2^22 (the FP64 pair's
        // longest) a tile of at most 2^9 rows, beyond it (Goldilocks) rows of 2^13.
        for log2 in 13..=MAX_LOG2 {
            let (log_r, log_c) = split(log2);
            assert_eq!(log_r + log_c, log2);
            assert!(log_c <= MAX_COLS_LOG2 && (log2 > 22 || log_r <= 9), "2^{log2}");
        }
        assert_eq!(split(23), (10, 13));
        assert_eq!((1..=22).map(split).collect::<Vec<_>>()[9..].to_vec(), {
            let mut v: Vec<(u32, u32)> = (10..=12).map(|k| (0, k)).collect();
            v.extend([(6, 7), (7, 7), (6, 9), (6, 10), (6, 11), (7, 11), (8, 11), (9, 11), (9, 12), (9, 13)]);
            v
        });
    }

    #[test]
    fn carry_slots_are_tile_major() {
        // Every segment has its own slot, a tile's segments (one a row) are consecutive, and a
        // single row (R = 1) keeps the segments' order.
        for p in [86_243, 1_257_787, 20_996_011, 136_279_841] {
            let plan = Plan::for_arith(p, Arith::Fp64).unwrap();
            let (log_r, log_c) = split(plan.log2());
            let (segs, tiles) = (plan.n() / plan.seg_len(), (1usize << log_c) / plan.seg_len());
            let mut seen = vec![false; segs];
            for seg in 0..segs {
                let slot = carry_slot(&plan, seg);
                assert!(!std::mem::replace(&mut seen[slot], true), "p={p}: slot {slot} twice");
                let (r, t) = (seg / tiles, seg % tiles);
                assert_eq!(slot, t * (1 << log_r) + r, "p={p}");
                if log_r == 0 {
                    assert_eq!(slot, seg);
                }
            }
        }
    }

    #[test]
    fn carries_fit_i64_but_at_the_top_of_2_22() {
        // The kernels walk carries in i64 wherever B_walk < 2^61: at the largest exponent of
        // every length to 2^21 and at the GIMPS wavefront's 2^22, not at the top of 2^22 (the
        // widest pair, B_walk ≥ 2^61), which keeps the i128 walk.
        for log2 in 1..=22 {
            let len = Length { odd: 1, log2 };
            let Some(p) = Arith::Fp64.largest_exponent_at(len) else { continue };
            let plan = Plan::with_length(p, Arith::Fp64, len).unwrap();
            assert_eq!(carries_fit_i64(&plan), log2 < 22, "2^{log2}");
            assert_eq!(shape_defines(&plan)[3], ("FP_CARRY64", u32::from(log2 < 22)));
        }
        assert!(carries_fit_i64(&Plan::with_length(136_279_841, Arith::Fp64, Length { odd: 1, log2: 22 }).unwrap()));
    }

    #[test]
    fn block_threads_by_length() {
        // A block takes at most `most` threads (a row of the tile, or a group of 8 of a row, each),
        // but the column kernels twice that at 2^21.
        let threads = |p: u32, most: u32| {
            let plan = Plan::for_arith(p, Arith::Fp64).unwrap();
            (plan.log2(), block_threads(&plan, most).map(|(_, t)| t))
        };
        assert_eq!(threads(20_996_011, MOST_THREADS), (19, [256, 256]));
        assert_eq!(threads(20_996_011, 128), (19, [128, 128]));
        assert_eq!(threads(82_589_933, MOST_THREADS), (21, [512, 256]));
        assert_eq!(threads(82_589_933, 128), (21, [256, 128]));
        assert_eq!(threads(41_943_039, MOST_THREADS), (20, [256, 256]));
        assert_eq!(threads(136_279_841, MOST_THREADS), (22, [256, 256]));
        assert_eq!(threads(3_021_377, MOST_THREADS), (17, [64, 256]));
        assert_eq!(threads(86_243, MOST_THREADS), (11, [1, 256]));
    }
}
