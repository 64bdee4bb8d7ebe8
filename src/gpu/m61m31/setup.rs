//! The M61·M31 plan set up on the device, for [`super::MmPipeline`]: its tables
//! (src/transform/m61m31.rs `Tables`, uploaded, not recomputed) and the layout the kernels take
//! (with the tables' raw addresses, as the kernels' C struct holds them: see
//! [`crate::gpu::launch`]), and the launch geometry of a plan: the chunk of the shared-memory
//! stages, whether they run fused with the pair step, the global passes, the carry blocks.

use super::kernels::MM_PASS_MAX_STAGES;
use crate::engine::EngineError;
use crate::gpu::launch::{addr, by_value};
use crate::gpu::module::{cuda_err, Device};
use crate::transform::bit_reverse;
use crate::transform::m61m31::gfp2::Gfp2;
use crate::transform::m61m31::m31::M31;
use crate::transform::m61m31::m61::M61;
use crate::transform::m61m31::stages::{M61M31Tables, Tables};
use crate::transform::plan::{Arith, Plan};
use cudarc::driver::CudaSlice;

/// log2 of the largest chunk of complex values the shared-memory kernel transforms (2^10 values
/// of GF(M61²): 16 KiB, 256 threads of four values).
const BLOCK_LOG2: u32 = 10;
/// log2 of the largest chunk of the fused core (two chunks a block: 2^9 values of GF(M61²) make
/// 16 KiB). At 2^22 on an H100 the core took 236 µs with chunks of 2^10, 204 with 2^9 (one stage
/// more in the last global passes, +4 µs each) and 182 with 2^8 (a fifth pass each way, +36 µs
/// each) (bench/notes/gpu.md, 2026-11-26).
const CORE_LOG2: u32 = 9;
/// Threads per block of the element-wise kernels, and of the carry kernel (MM_CARRY_THREADS in
/// kernels/m61m31/pipeline.cuh).
pub(super) const THREADS: u64 = 256;
/// The most shared memory the carry kernel may take per block (the default limit).
const CARRY_SHARED_MAX: u32 = 48 << 10;

/// One field's tables and constants as the kernels see them (MmTab in kernels/m61m31/pipeline.cuh).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MmTab {
    tw: u64,
    itw: u64,
    root: u64,
    rootc: u64,
    w3: u64,
    iw3: u64,
    inv_odd: u64,
    inv_n: u32,
    pad: u32,
}

/// The plan as the kernels see it (MmLayout in kernels/m61m31/pipeline.cuh, field for field).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct MmLayout {
    t: [MmTab; 2],
    p: u32,
    n: u32,
    pub m: u32,
    pub odd: u32,
    log_m: u32,
    seg_len: u32,
    fixup_depth: u32,
    unscale: u32,
}

// Plain-old-data with the C layout the kernels declare, passed by value.
by_value!(MmLayout);

/// One global pass: R stages, the lowest of half-size 2^s_lo.
#[derive(Clone, Copy, Debug)]
pub(super) struct MmPass {
    pub stages: u32,
    pub s_lo: u32,
}

/// The plan on the device: its tables, the layout that points at them, and its launch geometry.
pub(super) struct Setup {
    pub layout: MmLayout,
    /// Both fields' twiddle and root tables (tw, itw, root, rootc), whose addresses the layout
    /// holds.
    _t61: [CudaSlice<u64>; 4],
    _t31: [CudaSlice<u32>; 4],
    pub passes: Vec<MmPass>,
    /// log2 of the chunk the shared-memory kernel transforms (0: no stage there).
    pub log_c: u32,
    /// Whether the shared-memory stages and the pair step run fused (mm_core: N = 2^k >= 2).
    pub fused: bool,
    /// Digits per block of the carry kernel: whole segments that tile n.
    pub carry_digits: u32,
}

fn m61_words(v: &[Gfp2<M61>]) -> Vec<u64> {
    v.iter().flat_map(|c| [c.re.value(), c.im.value()]).collect()
}

fn m31_words(v: &[Gfp2<M31>]) -> Vec<u32> {
    v.iter().flat_map(|c| [c.re.value(), c.im.value()]).collect()
}

/// rootc[a] = ω_N^(bitrev(a)·N/C) for a < C = 2^log_c (bitrev over log_c bits) from root[f] =
/// ω_N^f (N = 2^log_m): the roots of the high bits of the frequencies of a chunk, in its storage
/// order (mm_core).
fn chunk_roots<T: Copy>(root: &[T], log_m: u32, log_c: u32) -> Vec<T> {
    (0..1usize << log_c).map(|a| root[bit_reverse(a, 1 << log_c) << (log_m - log_c)]).collect()
}

/// The stage counts of the global passes from the top (half-size m/2) down to 2^log_c: as even as
/// MM_PASS_MAX_STAGES allows.
fn global_passes(log_m: u32, log_c: u32) -> Vec<MmPass> {
    let stages = log_m - log_c;
    let count = stages.div_ceil(MM_PASS_MAX_STAGES);
    let mut top = log_m;
    (0..count)
        .map(|i| {
            let r = stages / count + u32::from(i < stages % count);
            top -= r;
            MmPass { stages: r, s_lo: top }
        })
        .collect()
}

/// Digits per block of the carry kernel: whole segments that tile n, THREADS digits where that
/// is a multiple of the segment and divides n (n = odd·2^(log_m + 1)), else one segment.
fn carry_block_digits(plan: &Plan) -> usize {
    let seg = plan.seg_len();
    let pow2 = plan.n() / plan.length().odd as usize;
    if seg.is_power_of_two() {
        seg.max((THREADS as usize).min(pow2))
    } else {
        seg
    }
}

/// Shared memory of a carry block of `digits` digits in segments of `seg`: an i128 per digit and
/// a pad slot per segment.
pub(super) fn carry_shared_bytes(digits: usize, seg: usize) -> u32 {
    (16 * (digits + digits / seg)) as u32
}

impl Setup {
    /// `plan`'s tables uploaded to `dev` and its launch geometry.
    pub fn new(dev: &Device, plan: &Plan) -> Result<Setup, EngineError> {
        if plan.arith() != Arith::M61M31 {
            return Err(EngineError::Other(format!("{} is not an M61·M31 plan", plan.length())));
        }
        let t = M61M31Tables::new(plan)?;
        let log_m = plan.log2() - 1;
        // The fused core needs two chunks: N = 2^log_m >= 2 chunks of 2^log_c.
        let fused = t.t61.odd == 1 && log_m >= 1;
        // MERSENNE_CERT_MM_BLOCK_LOG2 (1 ..= 11) overrides BLOCK_LOG2 and CORE_LOG2, for measuring.
        let block_log2 = std::env::var("MERSENNE_CERT_MM_BLOCK_LOG2")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
            .map_or(if fused { CORE_LOG2 } else { BLOCK_LOG2 }, |v| v.clamp(1, 11));
        let log_c = if fused { (log_m - 1).min(block_log2) } else { log_m.min(block_log2) };
        let up61 = |v: &[u64]| dev.stream.clone_htod(v).map_err(cuda_err("upload tables"));
        let up31 = |v: &[u32]| dev.stream.clone_htod(v).map_err(cuda_err("upload tables"));
        let t61 = [
            up61(&m61_words(&t.t61.tw))?,
            up61(&m61_words(&t.t61.itw))?,
            up61(&m61_words(&t.t61.root))?,
            up61(&m61_words(&chunk_roots(&t.t61.root, log_m, log_c)))?,
        ];
        let t31 = [
            up31(&m31_words(&t.t31.tw))?,
            up31(&m31_words(&t.t31.itw))?,
            up31(&m31_words(&t.t31.root))?,
            up31(&m31_words(&chunk_roots(&t.t31.root, log_m, log_c)))?,
        ];
        let tab = |a: [u64; 4], w3: u64, iw3: u64, inv_odd: u64, inv_n: u64| MmTab {
            tw: a[0],
            itw: a[1],
            root: a[2],
            rootc: a[3],
            w3,
            iw3,
            inv_odd,
            inv_n: inv_n as u32,
            pad: 0,
        };
        let addrs61 = t61.each_ref().map(|b| addr(dev, b));
        let addrs31 = t31.each_ref().map(|b| addr(dev, b));
        let (a, b): (&Tables<M61>, &Tables<M31>) = (&t.t61, &t.t31);
        let layout = MmLayout {
            t: [
                tab(addrs61, a.w3.value(), a.iw3.value(), a.inv_odd.value(), a.inv_n),
                tab(addrs31, b.w3.value().into(), b.iw3.value().into(), b.inv_odd.value().into(), b.inv_n),
            ],
            p: plan.exponent(),
            n: plan.n() as u32,
            m: a.m as u32,
            odd: a.odd as u32,
            log_m,
            seg_len: plan.seg_len() as u32,
            fixup_depth: plan.fixup_depth() as u32,
            unscale: a.unscale,
        };
        let seg = plan.seg_len();
        let carry_digits = carry_block_digits(plan);
        if carry_shared_bytes(carry_digits, seg) > CARRY_SHARED_MAX {
            return Err(EngineError::NoPlan {
                p: plan.exponent(),
                why: format!("carry segments of {seg} digits are too long for the GPU's carry kernel"),
            });
        }
        Ok(Setup {
            layout,
            _t61: t61,
            _t31: t31,
            passes: global_passes(log_m, log_c),
            log_c,
            fused,
            carry_digits: carry_digits as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::length::largest_exponent;
    use crate::transform::plan::Length;

    /// The layout the kernels declare: two MmTab of 64 bytes, then eight u32.
    #[test]
    fn layout_matches_the_kernels() {
        assert_eq!(std::mem::size_of::<MmTab>(), 64);
        assert_eq!(std::mem::size_of::<MmLayout>(), 160);
    }

    /// The global passes cover the stages from m/2 down to 2^log_c, each once, top first, none
    /// longer than MM_PASS_MAX_STAGES and as even as that allows.
    #[test]
    fn global_passes_cover_every_stage() {
        for log_m in 0..=24 {
            for log_c in 0..=log_m.min(11) {
                let passes = global_passes(log_m, log_c);
                let mut top = log_m;
                for p in &passes {
                    assert!(p.stages >= 1 && p.stages <= MM_PASS_MAX_STAGES, "{log_m} {log_c} {passes:?}");
                    assert_eq!(p.s_lo + p.stages, top);
                    top = p.s_lo;
                }
                assert_eq!(top, log_c);
                let (lo, hi) = passes.iter().fold((u32::MAX, 0), |(lo, hi), p| (lo.min(p.stages), hi.max(p.stages)));
                assert!(passes.is_empty() || hi - lo <= 1);
            }
        }
    }

    /// chunk_roots holds the roots of the high log_c bits of bitrev(pos) for pos in a chunk: with
    /// the chunk's own root (of the low bits) their product is root[bitrev(pos)], as mm_core uses.
    #[test]
    fn chunk_roots_times_the_chunks_root_is_the_frequencys() {
        use crate::transform::field::Field;
        for (log_m, log_c) in [(1, 0), (3, 2), (6, 3), (9, 8), (12, 10)] {
            let plan = Plan::with_length(40 << log_m, Arith::M61M31, Length { odd: 1, log2: log_m + 1 }).unwrap();
            let root = M61M31Tables::new(&plan).unwrap().t61.root;
            let rc = chunk_roots(&root, log_m, log_c);
            for pos in 0..1usize << log_m {
                let f = bit_reverse(pos, 1 << log_m);
                let low = f & ((1 << (log_m - log_c)) - 1);
                assert_eq!(rc[pos & ((1 << log_c) - 1)].mul(root[low]), root[f], "{log_m} {log_c} {pos}");
            }
        }
    }

    /// The carry kernel's blocks take whole segments and tile n, at every M61·M31 length.
    #[test]
    fn carry_blocks_tile_the_residue() {
        for len in Arith::M61M31.lengths() {
            for p in [largest_exponent(Arith::M61M31, len), Some(len.n() as u32 * 3 + 1)].into_iter().flatten() {
                let Ok(plan) = Plan::with_length(p, Arith::M61M31, len) else { continue };
                let d = carry_block_digits(&plan);
                assert!(plan.n().is_multiple_of(d) && d.is_multiple_of(plan.seg_len()), "{len} p={p} d={d}");
                assert!(d <= (THREADS as usize).max(plan.seg_len()));
                assert!(carry_shared_bytes(d, plan.seg_len()) <= CARRY_SHARED_MAX || plan.seg_len() > 2048);
            }
        }
        let plan = Plan::with_length(136_279_841, Arith::M61M31, Length { odd: 1, log2: 22 }).unwrap();
        assert_eq!((plan.seg_len(), carry_block_digits(&plan)), (16, 256));
    }
}
