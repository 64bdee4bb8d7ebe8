//! The FP64 kernels (kernels/fp64/pipeline.cuh) against the CPU twin's stage functions
//! (src/transform/fp64/stages.rs, twin.rs carry_walk/carry_fixup), kernel by kernel on random
//! input, bit for bit (the same IEEE-754 operations in the same order); then a whole squaring,
//! a batch of squarings (fp_carry between them) and a product of digits with random pending
//! carries, for `gpu-selftest fp64`.

use super::verdict::{test_digits, KernelVerdict};
use super::wide_residue::WideResidue;
use crate::engine::EngineError;
use crate::exponent::TestKind;
use crate::gpu::arith::Pipeline;
use crate::gpu::four_step::FpPipeline;
use crate::gpu::launch::{copy, ADVANCE, LL};
use crate::gpu::module::{cuda_err, Device};
use crate::residue::Shift;
use crate::rng::SeededRng;
use crate::transform::fp64::stages::{self as fs, Fp64Tables};
use crate::transform::plan::Plan;
use crate::transform::twin::{self, Convolution};

struct Checker<'a> {
    dev: &'a Device,
    pipe: FpPipeline,
    t: Fp64Tables,
}

impl Checker<'_> {
    fn sync(&self) -> Result<(), EngineError> {
        self.dev.stream.synchronize().map_err(cuda_err("run"))
    }

    /// Work vector k set to both primes' values.
    fn put(&self, k: usize, v: &[Vec<f64>; 2]) -> Result<(), EngineError> {
        let words = [v[0].as_slice(), v[1].as_slice()].concat();
        let up = self.dev.stream.clone_htod(&words).map_err(cuda_err("upload"))?;
        copy(self.dev, self.pipe.work(k), &up)?;
        self.sync()
    }

    /// Work vector 0 as the bits of both primes' values.
    fn get(&self) -> Result<Vec<u64>, EngineError> {
        let v = self.dev.stream.clone_dtoh(self.pipe.work(0)).map_err(cuda_err("download"))?;
        self.sync()?;
        Ok(v.iter().map(|x| x.to_bits()).collect())
    }
}

fn bits(v: &[Vec<f64>; 2]) -> Vec<u64> {
    v.iter().flatten().map(|x| x.to_bits()).collect()
}

/// Random field values of both primes, centered (the bound every step's schedule admits).
fn random_values(t: &Fp64Tables, n: usize, rng: &mut SeededRng) -> [Vec<f64>; 2] {
    t.primes.each_ref().map(|q| (0..n).map(|_| q.f.from_i64((rng.next_u64() >> 1) as i64)).collect())
}

/// Every FP64 kernel at `plan`'s length against the twin, on random input from `rng`
/// (`extreme`: digits at the bound).
pub(crate) fn check_plan(
    dev: &Device,
    plan: &Plan,
    rng: &mut SeededRng,
    extreme: bool,
) -> Result<Vec<KernelVerdict>, EngineError> {
    let c = Checker { dev, pipe: FpPipeline::new(dev, plan.clone())?, t: Fp64Tables::new(plan)? };
    let mut out = Vec::new();
    let mut verdict = |kernel: &str, ok: bool| out.push(KernelVerdict { kernel: kernel.into(), ok });
    let (p, n, t) = (plan.exponent(), plan.n(), &c.t);
    let segs = n / plan.seg_len();
    let pending: Vec<i128> = (0..segs).map(|_| i128::from(rng.next_u64() as i64 >> 3)).collect();
    let d = test_digits(plan, rng, extreme);
    let mut fixed = d.clone();
    twin::carry_fixup(plan, &mut fixed, &pending);
    let s = rng.below(u64::from(p)) as u32;
    let s2 = ((2 * u64::from(s)) % u64::from(p)) as u32;

    // 1. fp_fwd: fix-up, weights, column DIF stages, twiddles.
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
    // SAFETY: the checker's buffers, allocated for this plan on this device.
    unsafe { c.pipe.fwd(dev, x.res(), c.pipe.work(0)) }?;
    let want = t.primes.each_ref().map(|q| fs::columns_in(plan, t, q, &fixed));
    verdict("fp_fwd (fix-up, weights, column DIF, twiddles)", c.get()? == bits(&want));

    // 2. fp_rows: square (the shift doubled), and product, on random values.
    let r = random_values(t, n, rng);
    let other = random_values(t, n, rng);
    for product in [false, true] {
        c.put(0, &r)?;
        c.put(1, &other)?;
        let y = product.then(|| c.pipe.work(1));
        let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
        let flags = if product { 0 } else { ADVANCE };
        // SAFETY: the checker's buffers, allocated for this plan on this device.
        unsafe { c.pipe.rows(dev, c.pipe.work(0), y, &x.shift, flags) }?;
        let shift_ok = x.download(dev, &c.pipe)?.2 == if product { s } else { s2 };
        let mut want = r.clone();
        for (h, q) in t.primes.iter().enumerate() {
            fs::rows(t, q, &mut want[h], product.then_some(other[h].as_slice()));
        }
        let name = if product { "fp_rows (DIF, product, DIT)" } else { "fp_rows (DIF, square, DIT, shift)" };
        verdict(name, c.get()? == bits(&want) && shift_ok);
    }

    // 3. fp_inv: inverse twiddles, column DIT, unweight, CRT, carry walk with the LL term.
    c.put(0, &r)?;
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s2)?;
    // SAFETY: the checker's buffers, allocated for this plan on this device.
    unsafe { c.pipe.inv(dev, c.pipe.work(0), x.res(), &x.shift, LL) }?;
    let [y1, y2] = [0, 1].map(|h| fs::columns_out(plan, t, &t.primes[h], r[h].clone()));
    let (wd, wc) = twin::carry_walk(plan, &t.recombine(&y1, &y2), Some(plan.minus_two_at(s2)));
    let (gd, gc, _) = x.download(dev, &c.pipe)?;
    verdict("fp_inv (twiddles, column DIT, unweight, CRT, carry, -2*2^s)", gd == wd && gc == wc);

    // 4. a whole LL squaring and a product of digits with pending carries.
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
    // SAFETY: the checker's buffers, allocated for this plan on this device.
    unsafe { c.pipe.square(dev, x.res(), &x.shift, true) }?;
    let (mut gd, gc, gs) = x.download(dev, &c.pipe)?;
    twin::carry_fixup(plan, &mut gd, &gc);
    let want = t.square_digits(plan, &fixed, Some(plan.minus_two_at(s2)));
    verdict("LL squaring (all kernels)", gd == want && gs == s2);
    // A batch of three (at every length, whether or not the engine's batches take fp_carry
    // there): fp_carry passes the carries between its blocks twice.
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
    // SAFETY: the checker's buffers, allocated for this plan on this device.
    unsafe { c.pipe.squarings(dev, x.res(), &x.shift, true, 3, 3) }?;
    let (mut gd, gc, gs) = x.download(dev, &c.pipe)?;
    twin::carry_fixup(plan, &mut gd, &gc);
    let (want, sh) = t.iterate_digits(plan, TestKind::Ll, fixed.clone(), Shift::new(p, s), 3);
    verdict("3 LL squarings (fp_fwd, fp_rows, fp_carry, fp_inv)", gd == want && gs == sh.get());
    let e = test_digits(plan, rng, extreme);
    let acc_pending: Vec<i128> = (0..segs).map(|_| i128::from(rng.next_u64() as i64 >> 3)).collect();
    let mut acc_fixed = e.clone();
    twin::carry_fixup(plan, &mut acc_fixed, &acc_pending);
    let acc = WideResidue::upload(dev, &c.pipe, &e, &acc_pending, s)?;
    let x = WideResidue::upload(dev, &c.pipe, &d, &pending, s)?;
    let tmp = dev.stream.alloc_zeros::<u64>(n).map_err(cuda_err("alloc"))?;
    // SAFETY: the checker's buffers, allocated for this plan on this device.
    unsafe { c.pipe.multiply(dev, acc.res(), x.res(), &tmp, &acc.shift) }?;
    let (mut gd, gc, _) = acc.download(dev, &c.pipe)?;
    twin::carry_fixup(plan, &mut gd, &gc);
    verdict("product (all kernels)", gd == t.multiply_digits(plan, &acc_fixed, &fixed));
    Ok(out)
}
