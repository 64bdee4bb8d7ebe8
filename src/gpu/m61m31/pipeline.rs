//! The M61·M31 arithmetic on the device ([`MmPipeline`]): its tables (src/transform/m61m31.rs
//! `Tables`, uploaded, not recomputed), its work vectors and the launch sequence of one squaring
//! or multiplication with kernels/m61m31/pipeline.cuh, the second arithmetic of the same engine as
//! [`crate::gpu::goldilocks::Passes`] (same device, module, launches, graphs and residue buffers; a
//! residue is its digits plus one pending carry per segment, here an i128 of two words).
//!
//! A squaring: weigh (fix-up, weights, pack) → radix-3 step (3·2^k) → global passes of up to
//! MM_PASS_MAX_STAGES radix-2 stages → the last BLOCK_LOG2 stages in shared memory → pair step →
//! the same backwards → unweight, CRT and the carry walk. At 2^k lengths the shared-memory stages,
//! the pair step and the inverse shared-memory stages are one launch (mm_core: a block holds two
//! mirrored chunks, whose values pair with each other). Both fields run in the same launches.
//! Nothing is copied to the host.

use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::graphs::Graphs;
use crate::gpu::launch::{launch_grid, time_steps, Arg, Res, Shape, Step, ADVANCE, LL};
use crate::gpu::module::{cuda_err, Device, MM_PASS_MAX_STAGES};
use crate::transform::bit_reverse;
use crate::transform::m61m31::gfp2::Gfp2;
use crate::transform::m61m31::m31::M31;
use crate::transform::m61m31::m61::M61;
use crate::transform::m61m31::stages::{M61M31Tables, Tables};
use crate::transform::plan::{Arith, Plan};
use cudarc::driver::{CudaSlice, DeviceRepr};

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
const THREADS: u64 = 256;
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
    m: u32,
    odd: u32,
    log_m: u32,
    seg_len: u32,
    fixup_depth: u32,
    unscale: u32,
}

// SAFETY: plain-old-data with the C layout the kernels declare.
unsafe impl DeviceRepr for MmLayout {}

/// Both fields' complex vectors of N values (device addresses): GF(M61²) as (u64, u64) pairs,
/// GF(M31²) as (u32, u32).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Zs {
    pub z61: u64,
    pub z31: u64,
}

/// One global pass: R stages, the lowest of half-size 2^s_lo.
#[derive(Clone, Copy, Debug)]
struct MmPass {
    stages: u32,
    s_lo: u32,
}

/// The M61·M31 plan on the device and the launches of its squarings and products.
pub(crate) struct MmPipeline {
    pub plan: Plan,
    layout: MmLayout,
    /// Both fields' twiddle and root tables (tw, itw, root, rootc), whose addresses the layout
    /// holds.
    _t61: [CudaSlice<u64>; 4],
    _t31: [CudaSlice<u32>; 4],
    /// Work vectors: the value being squared (or multiplied), and a product's other factor.
    work: [(CudaSlice<u64>, CudaSlice<u32>); 2],
    passes: Vec<MmPass>,
    /// log2 of the chunk the shared-memory kernel transforms (0: no stage there).
    log_c: u32,
    /// Whether the shared-memory stages and the pair step run fused (mm_core: N = 2^k >= 2).
    fused: bool,
    /// Digits per block of the carry kernel: whole segments that tile n.
    carry_digits: u32,
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

/// i128 pending carries as the device stores them (kernels/m61m31/pipeline.cuh): two words each, low first.
pub(crate) fn carries_to_words(c: &[i128]) -> Vec<i64> {
    c.iter().flat_map(|&v| [v as i64, (v >> 64) as i64]).collect()
}

/// The i128 pending carries in the device's words ([`carries_to_words`] undone).
pub(crate) fn carries_from_words(w: &[i64]) -> Vec<i128> {
    w.chunks_exact(2).map(|c| (i128::from(c[1]) << 64) | i128::from(c[0] as u64)).collect()
}

/// Shared memory of a carry block of `digits` digits in segments of `seg`: an i128 per digit and
/// a pad slot per segment.
fn carry_shared_bytes(digits: usize, seg: usize) -> u32 {
    (16 * (digits + digits / seg)) as u32
}

/// A grid of `items` threads in blocks of up to THREADS.
fn elementwise(items: u64) -> Shape {
    Shape { blocks: items.div_ceil(THREADS) as u32, threads: THREADS.min(items).max(1) as u32, shared_bytes: 0 }
}

impl MmPipeline {
    pub fn new(dev: &Device, plan: Plan) -> Result<MmPipeline, EngineError> {
        if plan.arith() != Arith::M61M31 {
            return Err(EngineError::Other(format!("{} is not an M61·M31 plan", plan.length())));
        }
        let t = M61M31Tables::new(&plan)?;
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
        let addrs61 = t61.each_ref().map(|b| crate::gpu::launch::addr(dev, b));
        let addrs31 = t31.each_ref().map(|b| crate::gpu::launch::addr(dev, b));
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
        let big_n = plan.n() / 2;
        let work = || -> Result<(CudaSlice<u64>, CudaSlice<u32>), EngineError> {
            let z61 = dev.stream.alloc_zeros::<u64>(2 * big_n).map_err(cuda_err("alloc"))?;
            Ok((z61, dev.stream.alloc_zeros::<u32>(2 * big_n).map_err(cuda_err("alloc"))?))
        };
        let seg = plan.seg_len();
        let carry_digits = carry_block_digits(&plan);
        if carry_shared_bytes(carry_digits, seg) > CARRY_SHARED_MAX {
            return Err(EngineError::NoPlan {
                p: plan.exponent(),
                why: format!("carry segments of {seg} digits are too long for the GPU's carry kernel"),
            });
        }
        Ok(MmPipeline {
            layout,
            _t61: t61,
            _t31: t31,
            work: [work()?, work()?],
            passes: global_passes(log_m, log_c),
            log_c,
            fused,
            carry_digits: carry_digits as u32,
            plan,
        })
    }

    /// Pending carries per residue.
    pub fn segments(&self) -> usize {
        self.plan.n() / self.plan.seg_len()
    }

    /// 64-bit words of a residue's pending carries (an i128 each).
    pub fn carry_words(&self) -> usize {
        2 * self.segments()
    }

    /// log2 of the chunk the shared-memory kernel transforms.
    pub fn log_c(&self) -> u32 {
        self.log_c
    }

    /// Whether the shared-memory stages and the pair step run as one launch ([`MmPipeline::core`]).
    pub fn fused(&self) -> bool {
        self.fused
    }

    /// Complex values per field.
    fn big_n(&self) -> u64 {
        self.plan.n() as u64 / 2
    }

    /// Work vector k (0: the value transformed, 1: a product's other factor).
    pub fn zs(&self, dev: &Device, k: usize) -> Zs {
        let (z61, z31) = &self.work[k];
        Zs { z61: crate::gpu::launch::addr(dev, z61), z31: crate::gpu::launch::addr(dev, z31) }
    }

    /// # Safety
    /// `args` must match the kernel's parameters (kernels/m61m31/pipeline.cuh), every address among them a
    /// live buffer of this device sized for this plan.
    unsafe fn go(
        dev: &Device,
        f: &cudarc::driver::CudaFunction,
        shape: Shape,
        both: bool,
        args: &[&dyn Arg],
    ) -> Launched {
        // SAFETY: the caller's, under this function's contract.
        unsafe { launch_grid(dev, f, shape, if both { 2 } else { 1 }, args) }
    }

    /// Digits x (with their pending carries) weighted and packed into z; ADVANCE in `flags`
    /// doubles the shift count.
    ///
    /// # Safety
    /// Every device address passed (in a [`Res`], [`Zs`] or as a `u64`) must point at a live
    /// buffer of `dev` sized for this plan: a residue of n words, its carries, the shift word,
    /// complex vectors of N values.
    pub unsafe fn weigh(&self, dev: &Device, x: Res, z: Zs, shift: u64, flags: u32) -> Launched {
        let args: [&dyn Arg; 7] = [&x.x, &x.carries, &z.z61, &z.z31, &shift, &self.layout, &flags];
        // SAFETY: mm_weigh's parameters in order; the addresses are the caller's.
        unsafe { Self::go(dev, &dev.kernels.mm.weigh, elementwise(self.big_n()), false, &args) }
    }

    /// The radix-3 step (forward or inverse) of a 3·2^k plan; nothing at 2^k.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn radix3(&self, dev: &Device, z: Zs, inverse: bool) -> Launched {
        if self.layout.odd == 1 {
            return Ok(());
        }
        let inv = u32::from(inverse);
        let args: [&dyn Arg; 4] = [&z.z61, &z.z31, &self.layout, &inv];
        // SAFETY: mm_radix3's parameters in order; the addresses are the caller's.
        unsafe { Self::go(dev, &dev.kernels.mm.radix3, elementwise(u64::from(self.layout.m)), true, &args) }
    }

    /// The global passes: forward from the top, or inverse from the bottom.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn global(&self, dev: &Device, z: Zs, inverse: bool) -> Launched {
        let order: Vec<&MmPass> =
            if inverse { self.passes.iter().rev().collect() } else { self.passes.iter().collect() };
        for pass in order {
            // SAFETY: the addresses are the caller's, under this function's contract.
            unsafe { self.pass(dev, z, pass, inverse) }?;
        }
        Ok(())
    }

    /// One global pass.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    unsafe fn pass(&self, dev: &Device, z: Zs, pass: &MmPass, inverse: bool) -> Launched {
        let inv = u32::from(inverse);
        let args: [&dyn Arg; 5] = [&z.z61, &z.z31, &self.layout, &pass.s_lo, &inv];
        let f = &dev.kernels.mm.passes[pass.stages as usize - 1];
        // SAFETY: mm_pass_r<R>'s parameters in order; the addresses are the caller's.
        unsafe { Self::go(dev, f, elementwise(self.big_n() >> pass.stages), true, &args) }
    }

    /// The stages of half-size below 2^log_c, on chunks in shared memory.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn block(&self, dev: &Device, z: Zs, inverse: bool) -> Launched {
        if self.log_c == 0 {
            return Ok(());
        }
        let (inv, log_c) = (u32::from(inverse), self.log_c);
        let shape = Shape {
            blocks: (self.big_n() >> log_c) as u32,
            threads: 1 << log_c.saturating_sub(2),
            shared_bytes: 16 << log_c,
        };
        let args: [&dyn Arg; 5] = [&z.z61, &z.z31, &self.layout, &log_c, &inv];
        // SAFETY: mm_block's parameters in order; the addresses are the caller's.
        unsafe { Self::go(dev, &dev.kernels.mm.block, shape, true, &args) }
    }

    /// z := the pair step of z and y (y = z: a squaring).
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn pair(&self, dev: &Device, z: Zs, y: Zs) -> Launched {
        let args: [&dyn Arg; 5] = [&z.z61, &z.z31, &y.z61, &y.z31, &self.layout];
        // Threads: half of N at 2^k (every thread a pair), N at 3·2^k (kernels/m61m31/pipeline.cuh).
        let threads = if self.layout.odd == 1 { self.big_n().div_ceil(2) } else { self.big_n() };
        // SAFETY: mm_pair's parameters in order; the addresses are the caller's.
        unsafe { Self::go(dev, &dev.kernels.mm.pair, elementwise(threads), true, &args) }
    }

    /// z := forward shared-memory stages, pair step with y (y = z: a squaring; else y fully
    /// transformed) and inverse shared-memory stages, in one launch (fused plans only).
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn core(&self, dev: &Device, z: Zs, y: Zs) -> Launched {
        let log_c = self.log_c;
        let shape = Shape {
            blocks: (self.big_n() >> (log_c + 1)) as u32,
            threads: 2 << log_c.saturating_sub(2),
            shared_bytes: 32 << log_c,
        };
        let args: [&dyn Arg; 6] = [&z.z61, &z.z31, &y.z61, &y.z31, &self.layout, &log_c];
        // SAFETY: mm_core's parameters in order; the addresses are the caller's.
        unsafe { Self::go(dev, &dev.kernels.mm.core, shape, true, &args) }
    }

    /// z unweighted, recombined and carried into the digits and pending carries of x; LL in
    /// `flags` subtracts 2·2^s.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn carry(&self, dev: &Device, z: Zs, x: Res, shift: u64, flags: u32) -> Launched {
        let digits = self.carry_digits;
        let args: [&dyn Arg; 8] = [&z.z61, &z.z31, &x.x, &x.carries, &shift, &self.layout, &flags, &digits];
        let shape = Shape {
            blocks: (self.plan.n() as u32) / digits,
            threads: digits.min(THREADS as u32),
            shared_bytes: carry_shared_bytes(digits as usize, self.plan.seg_len()),
        };
        // SAFETY: mm_carry's parameters in order; the addresses are the caller's.
        unsafe { Self::go(dev, &dev.kernels.mm.carry, shape, false, &args) }
    }

    /// Step 1 and the global forward passes: x weighed into z and transformed down to the chunks.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn head(&self, dev: &Device, x: Res, z: Zs, shift: u64, flags: u32) -> Launched {
        // SAFETY: the addresses are the caller's, under this function's contract.
        unsafe {
            self.weigh(dev, x, z, shift, flags)?;
            self.radix3(dev, z, false)?;
            self.global(dev, z, false)
        }
    }

    /// Steps 1–2: x weighed into z and transformed.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    pub unsafe fn forward(&self, dev: &Device, x: Res, z: Zs, shift: u64, flags: u32) -> Launched {
        // SAFETY: the addresses are the caller's, under this function's contract.
        unsafe {
            self.head(dev, x, z, shift, flags)?;
            self.block(dev, z, false)
        }
    }

    /// From the chunks back: the shared-memory stages, the pair step with y (y = z: a squaring;
    /// else y fully transformed) and the inverse shared-memory stages, fused or in three launches.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    unsafe fn middle(&self, dev: &Device, z: Zs, y: Zs) -> Launched {
        // SAFETY: the addresses are the caller's, under this function's contract.
        unsafe {
            if self.fused {
                return self.core(dev, z, y);
            }
            self.block(dev, z, false)?;
            self.pair(dev, z, y)?;
            self.block(dev, z, true)
        }
    }

    /// The global inverse passes and steps 5–6: z transformed back and carried into x.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    unsafe fn tail(&self, dev: &Device, z: Zs, x: Res, shift: u64, flags: u32) -> Launched {
        // SAFETY: the addresses are the caller's, under this function's contract.
        unsafe {
            self.global(dev, z, true)?;
            self.radix3(dev, z, true)?;
            self.carry(dev, z, x, shift, flags)
        }
    }

    /// One squaring of x, all on the device; the shift count at `shift` doubles first, and
    /// with `ll` the walk subtracts 2·2^s.
    ///
    /// # Safety
    /// Every device address passed must point at a live buffer of `dev` sized for this plan: a
    /// residue of n words and its carries (carry_words), the shift word.
    pub unsafe fn square(&self, dev: &Device, x: Res, shift: u64, ll: bool) -> Launched {
        let z = self.zs(dev, 0);
        // SAFETY: the addresses are the caller's, under this function's contract.
        unsafe {
            self.head(dev, x, z, shift, ADVANCE)?;
            self.middle(dev, z, z)?;
            self.tail(dev, z, x, shift, if ll { LL } else { 0 })
        }
    }

    /// acc := acc·x (x is left as it was).
    ///
    /// # Safety
    /// As [`MmPipeline::square`].
    pub unsafe fn multiply(&self, dev: &Device, acc: Res, x: Res, shift: u64) -> Launched {
        let (z, y) = (self.zs(dev, 0), self.zs(dev, 1));
        // SAFETY: the addresses are the caller's, under this function's contract.
        unsafe {
            self.forward(dev, x, y, shift, 0)?;
            self.head(dev, acc, z, shift, 0)?;
            self.middle(dev, z, y)?;
            self.tail(dev, z, acc, shift, 0)
        }
    }
}

/// What a launch sequence returns.
impl Pipeline for MmPipeline {
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn carry_words(&self) -> usize {
        self.carry_words()
    }
    fn apply_carries(&self, digits: &mut [i64], words: &[i64]) {
        crate::transform::twin::carry_fixup(&self.plan, digits, &carries_from_words(words));
    }
    fn transform_name(&self) -> String {
        format!("m61m31 n={}", self.plan.length())
    }
    unsafe fn queue_squarings(
        &self,
        dev: &Device,
        graphs: &mut Graphs,
        x: Res,
        shift: u64,
        ll: bool,
        count: u64,
    ) -> Result<(), EngineError> {
        // SAFETY: the addresses are the caller's, under the trait's contract.
        graphs.squarings(dev, count, || unsafe { self.square(dev, x, shift, ll) })
    }
    /// `tmp` is not used: the product's transforms stay in the pipeline's work vectors.
    unsafe fn queue_multiply(
        &self,
        dev: &Device,
        graphs: &mut Graphs,
        acc: Res,
        x: Res,
        _tmp: u64,
        shift: u64,
    ) -> Result<(), EngineError> {
        // SAFETY: the addresses are the caller's, under the trait's contract.
        graphs.product(dev, || unsafe { self.multiply(dev, acc, x, shift) })
    }

    /// Microseconds per launch of each kernel of a squaring, each timed alone over `reps`
    /// launches replayed from a CUDA graph (the data is whatever x holds).
    unsafe fn profile(&self, dev: &Device, x: Res, shift: u64, reps: usize) -> Result<Vec<(String, f64)>, EngineError> {
        let z = self.zs(dev, 0);
        // SAFETY (every step): the addresses are the caller's, under this function's contract.
        let mut steps: Vec<Step> = vec![(
            "weigh (fix-up, weights, pack)".into(),
            Box::new(move || unsafe { self.weigh(dev, x, z, shift, 0) }),
        )];
        if self.layout.odd == 3 {
            steps.push(("radix-3 forward".into(), Box::new(move || unsafe { self.radix3(dev, z, false) })));
        }
        for (k, pass) in self.passes.iter().enumerate() {
            let name = format!("fwd global pass {k} ({} stages, s_lo {})", pass.stages, pass.s_lo);
            steps.push((name, Box::new(move || unsafe { self.pass(dev, z, pass, false) })));
        }
        if self.fused {
            steps.push((
                format!("core: fwd block, pair (square), inv block (2 x 2^{} values)", self.log_c),
                Box::new(move || unsafe { self.core(dev, z, z) }),
            ));
        } else {
            steps.push((
                format!("fwd shared block (2^{} values)", self.log_c),
                Box::new(move || unsafe { self.block(dev, z, false) }),
            ));
            steps.push(("pair step (square)".into(), Box::new(move || unsafe { self.pair(dev, z, z) })));
            steps.push((
                format!("inv shared block (2^{} values)", self.log_c),
                Box::new(move || unsafe { self.block(dev, z, true) }),
            ));
        }
        for (k, pass) in self.passes.iter().enumerate().rev() {
            let name = format!("inv global pass {k} ({} stages, s_lo {})", pass.stages, pass.s_lo);
            steps.push((name, Box::new(move || unsafe { self.pass(dev, z, pass, true) })));
        }
        if self.layout.odd == 3 {
            steps.push(("radix-3 inverse".into(), Box::new(move || unsafe { self.radix3(dev, z, true) })));
        }
        steps.push(("unweight, CRT, carry walk".into(), Box::new(move || unsafe { self.carry(dev, z, x, shift, 0) })));
        time_steps(dev, reps, &steps)
    }
}

type Launched = Result<(), EngineError>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::length::largest_exponent;
    use crate::transform::plan::Length;

    /// Two words a carry, low word first, as kernels/m61m31/pipeline.cuh reads and writes them.
    #[test]
    fn carries_are_two_words_low_first() {
        let c = [0i128, -1, 1 << 64, -(1 << 64) - 5, i128::from(i64::MIN) * 3, (1i128 << 100) + 7];
        let w = carries_to_words(&c);
        assert_eq!(&w[..6], &[0, 0, -1, -1, 0, 1]);
        assert_eq!(carries_from_words(&w), c);
    }

    quickcheck::quickcheck! {
        fn carries_round_trip(c: Vec<i128>) -> bool {
            carries_from_words(&carries_to_words(&c)) == c
        }
    }

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
