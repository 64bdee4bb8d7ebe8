//! Kernel-level checks for `gpu-selftest`: each kernel runs on random input and its output is
//! compared word for word with the CPU twin's stage function (src/ntt.rs) on the same input.

use super::module::{cuda_err, Device};
use super::pipeline::{addr, Op, Pipeline};
use crate::engine::EngineError;
use crate::field::{Gl, P};
use crate::ntt;
use crate::plan::Plan;
use cudarc::driver::CudaSlice;

/// One kernel's verdict at one length.
#[derive(Debug, Clone)]
pub struct KernelVerdict {
    pub kernel: &'static str,
    pub ok: bool,
}

/// An opened GPU for repeated kernel checks.
pub struct KernelChecker {
    dev: Device,
}

/// A tiny deterministic generator (xorshift*), so that failures can be replayed from the seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn as_words(v: &[Gl]) -> Vec<u64> {
    v.iter().map(|g| g.value()).collect()
}
fn signed_words(v: &[i64]) -> Vec<u64> {
    v.iter().map(|&d| d as u64).collect()
}

impl KernelChecker {
    pub fn new() -> Result<KernelChecker, EngineError> {
        Ok(KernelChecker { dev: Device::open()? })
    }

    pub fn device(&self) -> &str {
        &self.dev.description
    }

    fn put(&self, buf: &mut CudaSlice<u64>, words: &[u64]) -> Result<(), EngineError> {
        self.dev.stream.memcpy_htod(words, buf).map_err(cuda_err("upload"))
    }
    fn get(&self, buf: &CudaSlice<u64>) -> Result<Vec<u64>, EngineError> {
        let v = self.dev.stream.clone_dtoh(buf).map_err(cuda_err("download"))?;
        self.dev.stream.synchronize().map_err(cuda_err("run"))?;
        Ok(v)
    }

    /// Check every kernel at length 2^log2 on random data drawn from `seed`.
    pub fn check_length(&self, log2: u32, seed: u64) -> Result<Vec<KernelVerdict>, EngineError> {
        let n = 1usize << log2;
        // An exponent whose plan at this length has ~16-bit digits.
        let p = (16 * n as u64..).find(|&q| crate::exponent::is_prime(q)).unwrap_or(17) as u32;
        let plan = Plan::with_log2(p, log2)?;
        let pipe = Pipeline::new(&self.dev, plan.clone())?;
        let mut rng = Rng(seed | 1);
        let digits: Vec<i64> = (0..n)
            .map(|j| {
                let w = plan.width(j);
                (rng.next() % (1 << w)) as i64 - (1 << (w - 1))
            })
            .collect();
        let random_field: Vec<Gl> = (0..n).map(|_| Gl::new(rng.next() % P)).collect();
        let alloc = || self.dev.stream.alloc_zeros::<u64>(n).map_err(cuda_err("alloc"));
        let (mut x, mut y) = (alloc()?, alloc()?);
        let (xa, ya) = (addr(&self.dev, &x), addr(&self.dev, &y));
        let mut shift_buf = self.dev.stream.alloc_zeros::<u32>(1).map_err(cuda_err("alloc"))?;
        let sa = addr(&self.dev, &shift_buf);
        let mut out = Vec::new();
        let sl = 1usize << plan.shared_log2();
        let global = pipe.has_global_passes();

        // Forward global passes (weights fused) against weight_in + forward stages n/2 .. chunk.
        let mut twin = ntt::weight_in(&plan, &digits);
        if global {
            ntt::forward_stages(&plan, &mut twin, n / 2, sl);
            self.put(&mut x, &signed_words(&digits))?;
            pipe.forward_global(&self.dev, xa)?;
            out.push(KernelVerdict { kernel: "forward column passes (weigh)", ok: self.get(&x)? == as_words(&twin) });
        }
        // Shared kernel, square mode, on random field input (or the digits when it is the only pass).
        let (input, mut t) = if global {
            (as_words(&random_field), random_field.clone())
        } else {
            (signed_words(&digits), ntt::weight_in(&plan, &digits))
        };
        ntt::forward_stages(&plan, &mut t, sl / 2, 1);
        let forward_only = as_words(&t);
        let mut sq: Vec<Gl> = t.iter().map(|v| v.square()).collect();
        ntt::inverse_stages(&plan, &mut sq, 1, sl / 2);
        let sq_words = if global { as_words(&sq) } else { signed_words(&ntt::unweight_out(&plan, &sq)) };
        self.put(&mut x, &input)?;
        pipe.rows(&self.dev, xa, xa, Op::Square)?;
        out.push(KernelVerdict { kernel: "row pass (square)", ok: self.get(&x)? == sq_words });
        self.put(&mut x, &input)?;
        pipe.rows(&self.dev, xa, xa, Op::Forward)?;
        out.push(KernelVerdict { kernel: "row pass (forward)", ok: self.get(&x)? == forward_only });
        // Multiply mode: other = random field values.
        let other: Vec<Gl> = (0..n).map(|_| Gl::new(rng.next() % P)).collect();
        let mut prod: Vec<Gl> = t.iter().zip(&other).map(|(a, b)| a.mul(*b)).collect();
        ntt::inverse_stages(&plan, &mut prod, 1, sl / 2);
        let prod_words = if global { as_words(&prod) } else { signed_words(&ntt::unweight_out(&plan, &prod)) };
        self.put(&mut x, &input)?;
        self.put(&mut y, &as_words(&other))?;
        pipe.rows(&self.dev, xa, ya, Op::Multiply)?;
        out.push(KernelVerdict { kernel: "row pass (multiply)", ok: self.get(&x)? == prod_words });
        // Inverse global passes (unweighting fused) on random field input.
        if global {
            let mut inv = random_field.clone();
            ntt::inverse_stages(&plan, &mut inv, sl, n / 2);
            let want = signed_words(&ntt::unweight_out(&plan, &inv));
            self.put(&mut x, &as_words(&random_field))?;
            pipe.inverse_global(&self.dev, xa)?;
            out.push(KernelVerdict { kernel: "inverse column passes (unweigh)", ok: self.get(&x)? == want });
        }
        // Carries on convolution-sized values with the LL term at a random shift.
        let (_, w_max) = plan.widths();
        let lim = ((n as u64) << (2 * w_max - 2)).min(i64::MAX as u64);
        let c: Vec<i64> = (0..n).map(|_| (rng.next() % lim) as i64 - (lim / 2) as i64).collect();
        let s = (rng.next() % p as u64) as u32;
        let s2 = ((2 * s as u64) % p as u64) as u32;
        let want = ntt::carry(&plan, &c, Some(plan.minus_two_at(s2)));
        // Twice: the kernel's counters and flags must be back at zero after a launch.
        for _ in 0..2 {
            self.put(&mut x, &signed_words(&c))?;
            self.dev.stream.memcpy_htod(&[s], &mut shift_buf).map_err(cuda_err("upload"))?;
            pipe.carry(&self.dev, xa, sa, true, true)?;
            let got_s = self.dev.stream.clone_dtoh(&shift_buf).map_err(cuda_err("download"))?;
            let ok = self.get(&x)? == signed_words(&want) && got_s == [s2];
            out.push(KernelVerdict { kernel: "carry (with -2*2^s, shift)", ok });
        }
        Ok(out)
    }
}
