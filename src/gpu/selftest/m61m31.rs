//! The M61·M31 kernels (kernels/m61m31/pipeline.cuh) against the CPU twin's stage functions
//! (src/transform/m61m31.rs, twin.rs carry_walk/carry_fixup), stage by stage on random input so
//! that a failure names the stage; then a whole squaring and a product of digits with random
//! pending carries against the twin, for `gpu-selftest m61m31`.

use super::verdict::{test_digits, KernelVerdict};
use super::wide_residue::WideResidue;
use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::launch::{ADVANCE, LL};
use crate::gpu::m61m31::{MmPipeline, Zs};
use crate::gpu::module::{cuda_err, Device};
use crate::rng::SeededRng;
use crate::transform::field::Field;
use crate::transform::m61m31::gfp2::Gfp2;
use crate::transform::m61m31::m31::M31;
use crate::transform::m61m31::m61::M61;
use crate::transform::m61m31::mersenne::Mersenne;
use crate::transform::m61m31::stages::{self as mm, M61M31Tables};
use crate::transform::plan::Plan;
use crate::transform::twin::{self, Convolution};
use cudarc::driver::CudaSlice;

/// Device buffers of one check: two complex vectors per field.
struct Bufs {
    z: (CudaSlice<u64>, CudaSlice<u32>),
    y: (CudaSlice<u64>, CudaSlice<u32>),
}

/// Both fields' values of one complex vector, as the twin holds them.
#[derive(Clone, PartialEq, Debug)]
struct Pair {
    v61: Vec<Gfp2<M61>>,
    v31: Vec<Gfp2<M31>>,
}

fn random_pair(rng: &mut SeededRng, len: usize) -> Pair {
    let v61 =
        (0..len).map(|_| Gfp2::new(M61::new(rng.below(M61::MODULUS)), M61::new(rng.below(M61::MODULUS)))).collect();
    let v31 =
        (0..len).map(|_| Gfp2::new(M31::new(rng.below(M31::MODULUS)), M31::new(rng.below(M31::MODULUS)))).collect();
    Pair { v61, v31 }
}

struct Checker<'a> {
    dev: &'a Device,
    pipe: MmPipeline,
    t: M61M31Tables,
    b: Bufs,
}

impl Checker<'_> {
    fn sync(&self) -> Result<(), EngineError> {
        self.dev.stream.synchronize().map_err(cuda_err("run"))
    }

    fn zs(&self, which: bool) -> Zs<'_> {
        let (z61, z31) = if which { &self.b.y } else { &self.b.z };
        Zs { z61, z31 }
    }

    fn put_pair(&mut self, which: bool, v: &Pair) -> Result<(), EngineError> {
        let w61: Vec<u64> = v.v61.iter().flat_map(|c| [c.re.value(), c.im.value()]).collect();
        let w31: Vec<u32> = v.v31.iter().flat_map(|c| [c.re.value(), c.im.value()]).collect();
        let s = &self.dev.stream;
        let (a, b) = if which { &mut self.b.y } else { &mut self.b.z };
        s.memcpy_htod(&w61, a).map_err(cuda_err("upload"))?;
        s.memcpy_htod(&w31, b).map_err(cuda_err("upload"))
    }

    /// z as canonical field elements (the kernels leave M61 values below 2^61 + 8 and M31 values
    /// in [0, M31]).
    fn get_pair(&self) -> Result<Pair, EngineError> {
        let s = &self.dev.stream;
        let w61 = s.clone_dtoh(&self.b.z.0).map_err(cuda_err("download"))?;
        let w31 = s.clone_dtoh(&self.b.z.1).map_err(cuda_err("download"))?;
        self.sync()?;
        let v61 = w61.chunks_exact(2).map(|c| Gfp2::new(M61::new(c[0] % M61::MODULUS), M61::new(c[1] % M61::MODULUS)));
        let v31 = w31
            .chunks_exact(2)
            .map(|c| Gfp2::new(M31::new(u64::from(c[0]) % M31::MODULUS), M31::new(u64::from(c[1]) % M31::MODULUS)));
        Ok(Pair { v61: v61.collect(), v31: v31.collect() })
    }
}

fn stages_fwd<B: Mersenne>(t: &mm::Tables<B>, z: &mut [Gfp2<B>], hi: usize, lo: usize) {
    if hi >= lo.max(1) {
        mm::forward_stages(t, z, hi, lo);
    }
}
fn stages_inv<B: Mersenne>(t: &mm::Tables<B>, z: &mut [Gfp2<B>], lo: usize, hi: usize) {
    if hi >= lo.max(1) {
        mm::inverse_stages(t, z, lo, hi);
    }
}

/// A transform stage the check runs alone (forward or inverse), in either field.
#[derive(Clone, Copy)]
enum Stage {
    Radix3 {
        inverse: bool,
    },
    Global {
        inverse: bool,
    },
    Block {
        inverse: bool,
    },
    PairSquare,
    /// The fused core (2^k): forward block, pair step of a square, inverse block.
    CoreSquare,
}

impl Stage {
    /// The twin's stage function on z in field B (radix-2 blocks of m, shared chunks of `chunk`).
    fn twin<B: Mersenne>(self, t: &mm::Tables<B>, z: &mut [Gfp2<B>], m: usize, chunk: usize) {
        match self {
            Stage::Radix3 { .. } if t.odd != 3 => {}
            Stage::Radix3 { inverse: false } => mm::forward_radix3(t, z),
            Stage::Radix3 { inverse: true } => mm::inverse_radix3(t, z),
            Stage::Global { inverse: false } => stages_fwd(t, z, m / 2, chunk),
            Stage::Global { inverse: true } => stages_inv(t, z, chunk, m / 2),
            Stage::Block { inverse: false } => stages_fwd(t, z, chunk / 2, 1),
            Stage::Block { inverse: true } => stages_inv(t, z, 1, chunk / 2),
            Stage::PairSquare => {
                let y = z.to_vec();
                mm::pair_step(t, z, &y)
            }
            Stage::CoreSquare => {
                stages_fwd(t, z, chunk / 2, 1);
                let y = z.to_vec();
                mm::pair_step(t, z, &y);
                stages_inv(t, z, 1, chunk / 2);
            }
        }
    }

    /// The twin's stage function on both fields of v.
    fn twin_pair(self, t: &M61M31Tables, v: &mut Pair, m: usize, chunk: usize) {
        self.twin(&t.t61, &mut v.v61, m, chunk);
        self.twin(&t.t31, &mut v.v31, m, chunk);
    }

    /// The stage's kernels on z.
    ///
    /// # Safety
    /// As [`MmPipeline::weigh`].
    unsafe fn launch(self, pipe: &MmPipeline, dev: &Device, z: Zs) -> Result<(), EngineError> {
        // SAFETY: the caller's, under this function's contract.
        unsafe {
            match self {
                Stage::Radix3 { inverse } => pipe.radix3(dev, z, inverse),
                Stage::Global { inverse } => pipe.global(dev, z, inverse),
                Stage::Block { inverse } => pipe.block(dev, z, inverse),
                Stage::PairSquare => pipe.pair(dev, z, z),
                Stage::CoreSquare => pipe.core(dev, z, z),
            }
        }
    }
}

/// Every M61·M31 kernel at `plan`'s length against the twin, on random input from `rng`
/// (`extreme`: digits at the bound).
pub(crate) fn check_plan(
    dev: &Device,
    plan: &Plan,
    rng: &mut SeededRng,
    extreme: bool,
) -> Result<Vec<KernelVerdict>, EngineError> {
    let pipe = MmPipeline::new(dev, plan.clone())?;
    let t = M61M31Tables::new(plan)?;
    let (n, big_n) = (plan.n(), plan.n() / 2);
    let alloc64 = |len: usize| dev.stream.alloc_zeros::<u64>(len).map_err(cuda_err("alloc"));
    let alloc32 = |len: usize| dev.stream.alloc_zeros::<u32>(len).map_err(cuda_err("alloc"));
    let b = Bufs { z: (alloc64(2 * big_n)?, alloc32(2 * big_n)?), y: (alloc64(2 * big_n)?, alloc32(2 * big_n)?) };
    let mut c = Checker { dev, pipe, t, b };
    let mut out = Vec::new();
    let mut verdict = |kernel: &str, ok: bool| out.push(KernelVerdict { kernel: kernel.into(), ok });
    let p = plan.exponent();
    let (m, log_c) = (c.t.t61.m, c.pipe.log_c());
    let chunk = 1usize << log_c;

    // Pending carries as large as a walk leaves them, and their fix-up by the twin.
    let segs = c.pipe.segments();
    let pending: Vec<i128> = (0..segs).map(|_| i128::from(rng.next_u64() as i64 >> 3)).collect();
    let d = test_digits(plan, rng, extreme);
    let mut fixed = d.clone();
    twin::carry_fixup(plan, &mut fixed, &pending);
    let s = rng.below(u64::from(p)) as u32;
    let s2 = ((2 * u64::from(s)) % u64::from(p)) as u32;

    // 1. weigh (fix-up, weights, pack, shift).
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
    // SAFETY: the checker's buffers and x, allocated for this plan on this device.
    unsafe { c.pipe.weigh(dev, x.res(), c.zs(false), &x.shift, ADVANCE) }?;
    let want = Pair { v61: mm::weight_in(plan, &c.t.t61, &fixed), v31: mm::weight_in(plan, &c.t.t31, &fixed) };
    let got_shift = x.download(dev, &c.pipe)?.2;
    verdict("weigh (carry fix-up, weights, pack, shift)", c.get_pair()? == want && got_shift == s2);
    // The weigh and the global forward passes as a squaring launches them.
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
    // SAFETY: the checker's buffers and x, allocated for this plan on this device.
    unsafe { c.pipe.head(dev, x.res(), c.zs(false), &x.shift, ADVANCE) }?;
    let mut want = want;
    Stage::Radix3 { inverse: false }.twin_pair(&c.t, &mut want, m, chunk);
    Stage::Global { inverse: false }.twin_pair(&c.t, &mut want, m, chunk);
    let got_shift = x.download(dev, &c.pipe)?.2;
    verdict("weigh + forward down to the chunks (shift)", c.get_pair()? == want && got_shift == s2);

    // 2. the stages, each on random field input.
    let r = random_pair(rng, big_n);
    let stages = [
        ("radix-3 forward", Stage::Radix3 { inverse: false }),
        ("global passes forward", Stage::Global { inverse: false }),
        ("shared-memory block forward", Stage::Block { inverse: false }),
        ("pair step (square)", Stage::PairSquare),
        ("shared-memory block inverse", Stage::Block { inverse: true }),
        ("global passes inverse", Stage::Global { inverse: true }),
        ("radix-3 inverse", Stage::Radix3 { inverse: true }),
        ("fused core: fwd block, pair (square), inv block", Stage::CoreSquare),
    ];
    let fused = c.pipe.fused();
    for (name, stage) in stages.into_iter().filter(|(_, s)| fused || !matches!(s, Stage::CoreSquare)) {
        let mut want = r.clone();
        stage.twin_pair(&c.t, &mut want, m, chunk);
        c.put_pair(false, &r)?;
        // SAFETY: the checker's buffers, allocated for this plan on this device.
        unsafe { stage.launch(&c.pipe, dev, c.zs(false)) }?;
        verdict(name, c.get_pair()? == want);
    }
    // The pair step of a product.
    let other = random_pair(rng, big_n);
    c.put_pair(false, &r)?;
    c.put_pair(true, &other)?;
    // SAFETY: the checker's buffers, allocated for this plan on this device.
    unsafe { c.pipe.pair(dev, c.zs(false), c.zs(true)) }?;
    let mut want = r.clone();
    mm::pair_step(&c.t.t61, &mut want.v61, &other.v61);
    mm::pair_step(&c.t.t31, &mut want.v31, &other.v31);
    verdict("pair step (product)", c.get_pair()? == want);
    if c.pipe.fused() {
        // The fused core of a product: z down to the chunks, y fully transformed.
        c.put_pair(false, &r)?;
        c.put_pair(true, &other)?;
        // SAFETY: the checker's buffers, allocated for this plan on this device.
        unsafe { c.pipe.core(dev, c.zs(false), c.zs(true)) }?;
        let mut want = r.clone();
        Stage::Block { inverse: false }.twin_pair(&c.t, &mut want, m, chunk);
        mm::pair_step(&c.t.t61, &mut want.v61, &other.v61);
        mm::pair_step(&c.t.t31, &mut want.v31, &other.v31);
        Stage::Block { inverse: true }.twin_pair(&c.t, &mut want, m, chunk);
        verdict("fused core (product)", c.get_pair()? == want);
    }

    // 3. unweight, CRT and the carry walk with the LL term, on random field input.
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s2)?;
    c.put_pair(false, &r)?;
    // SAFETY: the checker's buffers and x, allocated for this plan on this device.
    unsafe { c.pipe.carry(dev, c.zs(false), x.res(), &x.shift, LL) }?;
    let conv = mm::recombine(&mm::unweight_out(plan, &c.t.t61, &r.v61), &mm::unweight_out(plan, &c.t.t31, &r.v31));
    let (wd, wc) = twin::carry_walk(plan, &conv, Some(plan.minus_two_at(s2)));
    let (gd, gc, _) = x.download(dev, &c.pipe)?;
    verdict("unweight, CRT, carry walk, -2*2^s", gd == wd && gc == wc);

    // 4. a whole LL squaring and a product of digits with pending carries.
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
    // SAFETY: x, allocated for this plan on this device.
    unsafe { c.pipe.square(dev, x.res(), &x.shift, true) }?;
    let (mut gd, gc, gs) = x.download(dev, &c.pipe)?;
    twin::carry_fixup(plan, &mut gd, &gc);
    let want = c.t.square_digits(plan, &fixed, Some(plan.minus_two_at(s2)));
    verdict("LL squaring (all kernels)", gd == want && gs == s2);
    let e = test_digits(plan, rng, extreme);
    let acc_pending: Vec<i128> = (0..segs).map(|_| i128::from(rng.next_u64() as i64 >> 3)).collect();
    let mut acc_fixed = e.clone();
    twin::carry_fixup(plan, &mut acc_fixed, &acc_pending);
    let acc = WideResidue::upload(dev, &c.pipe, &e, &acc_pending, s)?;
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
    let tmp = alloc64(n)?;
    // SAFETY: acc, x and tmp, allocated for this plan on this device.
    unsafe { c.pipe.multiply(dev, acc.res(), x.res(), &tmp, &acc.shift) }?;
    let (mut gd, gc, _) = acc.download(dev, &c.pipe)?;
    twin::carry_fixup(plan, &mut gd, &gc);
    verdict("product (all kernels)", gd == c.t.multiply_digits(plan, &acc_fixed, &fixed));
    Ok(out)
}
