//! The Goldilocks carry segments, host side: a segment is the run of 2^c_log adjacent digits
//! that one GPU block of the outermost column pass holds, so its length follows the shape of
//! the passes: how many stages run in shared memory ([`shared_log2`]) and in global passes
//! ([`global_passes`]), by line length ([`default_line_stages`]); at small lengths (one block,
//! no column pass) the smallest power of two above the fix-up depth, at least 4 and n/1024.
//! The GPU's pass schedule (gpu/goldilocks/schedule.rs) builds its column passes from the same
//! constants and checks that its outermost runs are these segments.

/// log2 of the largest chunk the row pass transforms (1024 words: 32 values per thread in
/// registers, with their twiddles): the most stages per line.
pub const MAX_SHARED_LOG2: u32 = 10;
/// log2 of the smallest chunk of the shared-memory kernel (when n is at least that long): the
/// fewest stages per line.
pub const MIN_SHARED_LOG2: u32 = 5;
/// Lengths up to 2^this are small: one thread block squares the whole residue in shared memory
/// (the kernel fits up to 2^13). One block wins up to 2^10 and loses above: on an H100 13.6
/// µs/iter at 2^11 against 10.9 on the multi-pass path (RESULTS.md, 2026-11-25 19:40).
pub const SMALL_MAX_LOG2: u32 = 10;
/// A small plan's carry segments hold at least 2^SMALL_SEG_MIN_LOG2 digits, and there are at
/// most 2^SMALL_SEGMENTS_LOG2 of them (one per thread of a block of 1024).
const SMALL_SEG_MIN_LOG2: u32 = 2;
const SMALL_SEGMENTS_LOG2: u32 = 10;
/// The shared kernel should run on at least 2^this many blocks (132 SMs), so small lengths use
/// smaller chunks and more global passes rather than leave most of the GPU idle; column passes
/// aim for the same.
pub const SHARED_BLOCKS_LOG2: u32 = 7;
/// log2 of the values one block of a column pass holds (32 KiB of shared memory, plus padding).
pub const BLOCK_WORDS_LOG2: u32 = 12;
/// At most 2^5 adjacent columns per block of a column pass; at least 2^2 (32-byte runs, one
/// memory sector).
pub const COLUMNS_LOG2: (u32, u32) = (2, 5);

/// Stages per line by default, by log2 n: the fastest measured on an H200 (bench/RESULTS.md:
/// 5/6/7 stages at every length 2^16..2^23 on 2026-11-23; at 2^16, 2^18, 2^20, 2^22 and 2^23 after
/// each kernel change of 2026-11-25, which moved 2^20 from 7 to 6, 2^23 from 5 to 7 and, with
/// the power-of-2 twiddles, back to 6; and after the carry walk's change of 2026-11-26, 2^20 to
/// 8 by 0.8%, 2^19 from 6 to 7 by 10%, 2^17 from 5 to 6 by 3%, 2^11 from 5 to 6 by 14%, 2^24
/// from 5 to 8 by 14%, 2^25 from 5 to 7 by 11%; then 2^14 from 5 to 6 by 17%, 2^15 from 5 to 6 by
/// 6%, 2^26 from 5 to 8 by 21%). Short lines (few values per thread, more threads) win where a
/// pass is latency-bound (5 at 2^12 and 2^13); longer ones (fewer passes) at 2^19, 2^20 and from
/// 2^22 on.
pub fn default_line_stages(log2: u32) -> u32 {
    match log2 {
        0..=10 | 12 | 13 => 5,
        19 | 22 | 25 => 7,
        20 | 24 | 26.. => 8,
        _ => 6,
    }
}

/// log2 of the contiguous chunk transformed in shared memory at length 2^log2 with lines of at
/// most `line_stages` stages (all of it when `small`).
pub fn shared_log2(log2: u32, line_stages: u32, small: bool) -> u32 {
    if small {
        return log2;
    }
    log2.saturating_sub(SHARED_BLOCKS_LOG2).clamp(MIN_SHARED_LOG2, line_stages).min(log2)
}

/// Stage counts of the global-memory passes, outermost (largest stride) first, for the
/// `log2 − shared` stages outside shared memory: as even as lines of `line_stages` allow.
pub fn global_passes(log2: u32, shared: u32, line_stages: u32) -> Vec<u32> {
    let stages = log2 - shared;
    let count = stages.div_ceil(line_stages);
    (0..count).map(|i| stages / count + u32::from(i < stages % count)).collect()
}

/// log2 of the columns one block of a column pass of `stages` stages takes at length 2^log2
/// below a block-row of 2^top values: enough for about 2^SHARED_BLOCKS_LOG2 blocks, within
/// COLUMNS_LOG2, and in the outermost pass (`outermost`) at least the bits of `fixup_depth`
/// (a carry segment must hold its fix-up).
pub fn columns_log2(log2: u32, stages: u32, top: u32, fixup_depth: usize, outermost: bool) -> u32 {
    let wanted = (log2 - stages).saturating_sub(SHARED_BLOCKS_LOG2).clamp(COLUMNS_LOG2.0, COLUMNS_LOG2.1);
    let fix_log = usize::BITS - fixup_depth.leading_zeros();
    let wanted = if outermost { wanted.max(fix_log) } else { wanted };
    wanted.min(BLOCK_WORDS_LOG2 - stages).min(top)
}

/// Digits per carry segment at length 2^log2 (`small`: one block, no global pass) with a fix-up
/// of `fixup_depth` digits and lines of at most `line_stages` stages (module doc).
pub fn seg_len(log2: u32, fixup_depth: usize, line_stages: u32, small: bool) -> usize {
    let n = 1usize << log2;
    let passes = global_passes(log2, shared_log2(log2, line_stages, small), line_stages);
    match passes.first() {
        Some(&stages) => 1 << columns_log2(log2, stages, log2 - stages, fixup_depth, true),
        None => {
            let k = (fixup_depth + 1).next_power_of_two().max(1 << SMALL_SEG_MIN_LOG2);
            k.max(n >> SMALL_SEGMENTS_LOG2).min(n)
        }
    }
}
