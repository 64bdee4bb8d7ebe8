//! The one-block kernel (src/gpu/goldilocks/small.rs, kernels/goldilocks/small.cuh) against the CPU twin,
//! for `gpu-selftest check` at small lengths.

use super::verdict::{as_words, signed_words, KernelVerdict};
use crate::engine::EngineError;
use crate::gpu::arith::Pipeline;
use crate::gpu::goldilocks::{SmallPipeline, MAX_STAGES};
use crate::gpu::launch::Res;
use crate::gpu::module::{cuda_err, Device};
use crate::rng::SeededRng;
use crate::transform::plan::Plan;
use crate::transform::twin;
use cudarc::driver::CudaSlice;

/// Check the one-block kernel at a small plan against the CPU twin, for every stages-per-round
/// variant: 1 and 7 LL squarings and 2 PRP squarings at a random shift, then one product (and
/// the transform of x it leaves in tmp), from random digits with random pending carries.
pub(crate) fn check(dev: &Device, plan: &Plan, rng: &mut SeededRng) -> Result<Vec<KernelVerdict>, EngineError> {
    let (n, p) = (plan.n(), plan.exponent());
    let segs = n / plan.seg_len();
    let (w_min, _) = plan.widths();
    let mut digits = || -> Vec<i64> {
        (0..n)
            .map(|j| {
                let w = plan.width(j);
                (rng.next_u64() % (1 << w)) as i64 - (1 << (w - 1))
            })
            .collect()
    };
    let (d, a, b) = (digits(), digits(), digits());
    // Pending carries of the size a walk leaves (about n·2^(w−2)), and their fix-up by the twin.
    let span = (n as u64) << (w_min - 1);
    let mut carries =
        || -> Vec<i64> { (0..segs).map(|_| (rng.next_u64() % span) as i64 - (span / 2) as i64).collect() };
    let (dc, ac, bc) = (carries(), carries(), carries());
    let fixed = |d: &[i64], c: &[i64]| {
        let mut f = d.to_vec();
        twin::carry_fixup(plan, &mut f, c);
        f
    };
    let s0 = (rng.next_u64() % p as u64) as u32;
    let alloc = |len: usize| dev.stream.alloc_zeros::<u64>(len).map_err(cuda_err("alloc"));
    let alloc_carries = |len: usize| dev.stream.alloc_zeros::<i64>(len).map_err(cuda_err("alloc"));
    let (mut x, mut xc, mut y, mut yc, tmp) =
        (alloc(n)?, alloc_carries(segs)?, alloc(n)?, alloc_carries(segs)?, alloc(n)?);
    let mut sh = dev.stream.alloc_zeros::<u32>(1).map_err(cuda_err("alloc"))?;
    let put = |buf: &mut CudaSlice<u64>, words: &[u64]| dev.stream.memcpy_htod(words, buf).map_err(cuda_err("upload"));
    let get = |buf: &CudaSlice<u64>| dev.stream.clone_dtoh(buf).map_err(cuda_err("download"));
    let put_carries =
        |buf: &mut CudaSlice<i64>, words: &[i64]| dev.stream.memcpy_htod(words, buf).map_err(cuda_err("upload"));
    let get_carries = |buf: &CudaSlice<i64>| dev.stream.clone_dtoh(buf).map_err(cuda_err("download"));
    let mut out = Vec::new();
    for stages in 1..=MAX_STAGES {
        let pipe = SmallPipeline::with_stages(dev, plan.clone(), stages)?;
        for (count, ll) in [(1u32, true), (7, true), (2, false)] {
            put(&mut x, &signed_words(&d))?;
            put_carries(&mut xc, &dc)?;
            dev.stream.memcpy_htod(&[s0], &mut sh).map_err(cuda_err("upload"))?;
            // SAFETY: the self-test's buffers, allocated for this plan on this device.
            unsafe { pipe.squarings(dev, Res { x: &x, carries: &xc }, &sh, ll, count as u64) }?;
            let got_s = dev.stream.clone_dtoh(&sh).map_err(cuda_err("download"))?;
            let (got, got_c) = (get(&x)?, get_carries(&xc)?);
            let (mut want, mut s) = (fixed(&d, &dc), s0);
            for _ in 0..count {
                s = ((2 * s as u64) % p as u64) as u32;
                want = twin::square_digits(plan, &want, ll.then(|| plan.minus_two_at(s)));
            }
            let ok = got == signed_words(&want) && got_c.iter().all(|&c| c == 0) && got_s[0] == s;
            let what = if ll { "LL" } else { "PRP" };
            out.push(KernelVerdict { kernel: format!("one block, rounds of {stages}: {count} {what} squarings"), ok });
        }
        put(&mut x, &signed_words(&a))?;
        put_carries(&mut xc, &ac)?;
        put(&mut y, &signed_words(&b))?;
        put_carries(&mut yc, &bc)?;
        dev.stream.memcpy_htod(&[s0], &mut sh).map_err(cuda_err("upload"))?;
        let (xs, ys) = (Res { x: &x, carries: &xc }, Res { x: &y, carries: &yc });
        // SAFETY: the self-test's buffers, allocated for this plan on this device.
        unsafe { pipe.multiply(dev, xs, ys, &tmp, &sh) }?;
        let (fa, fb) = (fixed(&a, &ac), fixed(&b, &bc));
        let ok = get(&x)? == signed_words(&twin::multiply_digits(plan, &fa, &fb))
            && get(&tmp)? == as_words(&twin::forward(plan, &fb))
            && get_carries(&xc)?.iter().all(|&c| c == 0)
            && get(&y)? == signed_words(&b)
            && dev.stream.clone_dtoh(&sh).map_err(cuda_err("download"))?[0] == s0;
        out.push(KernelVerdict { kernel: format!("one block, rounds of {stages}: product"), ok });
    }
    dev.stream.synchronize().map_err(cuda_err("run"))?;
    Ok(out)
}
