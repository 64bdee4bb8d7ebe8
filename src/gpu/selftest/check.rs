//! Kernel-level checks for `gpu-selftest`: the field operations on edge words, then each kernel on
//! random input (digits with random pending carries, or field elements), its output (values,
//! carries, shift count) compared word for word with the CPU twin's stage functions (src/transform/twin.rs)
//! on the same input. Small lengths run on the one-block kernel, checked by small.rs.

use super::mersenne;
use super::verdict::{as_words, signed_words, KernelVerdict};
use crate::engine::EngineError;
use crate::gpu::goldilocks::{Op, Passes};
use crate::gpu::launch::{launch, Res, Shape, ADVANCE, LL};
use crate::gpu::module::{cuda_err, function, Device, CHECK_UNIT};
use crate::rng::SeededRng;
use crate::transform::goldilocks::field::{edge_words, Gl, P};
use crate::transform::plan::Plan;
use crate::transform::twin;
use cudarc::driver::CudaSlice;

/// A kernel's input and output buffers.
struct Io {
    x: CudaSlice<u64>,
    carries: CudaSlice<i64>,
    shift: CudaSlice<u32>,
}

impl Io {
    fn res(&self) -> Res<'_> {
        Res { x: &self.x, carries: &self.carries }
    }
}

/// An opened GPU for repeated kernel checks.
pub struct KernelChecker {
    dev: Device,
}

impl KernelChecker {
    pub fn new() -> Result<KernelChecker, EngineError> {
        Ok(KernelChecker { dev: Device::open()? })
    }

    /// The device's description (with the kernels built so far).
    pub fn device(&self) -> String {
        self.dev.description()
    }

    /// A kernel of the field checks' unit (built on the first call).
    fn check_kernel(&self, name: &str) -> Result<cudarc::driver::CudaFunction, EngineError> {
        function(&self.dev.module(CHECK_UNIT)?, name)
    }

    fn put(&self, buf: &mut CudaSlice<u64>, words: &[u64]) -> Result<(), EngineError> {
        self.dev.stream.memcpy_htod(words, buf).map_err(cuda_err("upload"))
    }
    fn get(&self, buf: &CudaSlice<u64>) -> Result<Vec<u64>, EngineError> {
        let v = self.dev.stream.clone_dtoh(buf).map_err(cuda_err("download"))?;
        self.dev.stream.synchronize().map_err(cuda_err("run"))?;
        Ok(v)
    }

    /// Load a kernel's input: x, the pending carries and the shift count.
    fn load(&self, io: &mut Io, pending: &[i64], words: &[u64], shift: u32) -> Result<(), EngineError> {
        self.put(&mut io.x, words)?;
        self.dev.stream.memcpy_htod(pending, &mut io.carries).map_err(cuda_err("upload"))?;
        self.dev.stream.memcpy_htod(&[shift], &mut io.shift).map_err(cuda_err("upload"))
    }

    /// A kernel's output: x, the carries and the shift count.
    fn fetch(&self, io: &Io) -> Result<(Vec<u64>, Vec<i64>, u32), EngineError> {
        let c = self.dev.stream.clone_dtoh(&io.carries).map_err(cuda_err("download"))?;
        let s = self.dev.stream.clone_dtoh(&io.shift).map_err(cuda_err("download"))?;
        Ok((self.get(&io.x)?, c, s[0]))
    }

    /// The kernels' field operations (kernels/goldilocks/field_check.cuh) against the CPU field, word for
    /// word, on every pair of edge words and `random` random pairs drawn from `seed`.
    pub fn check_field(&self, seed: u64, random: usize) -> Result<KernelVerdict, EngineError> {
        let edges = edge_words();
        let mut rng = SeededRng::new(seed);
        let (mut a, mut b): (Vec<u64>, Vec<u64>) =
            edges.iter().flat_map(|&x| edges.iter().map(move |&y| (x, y))).unzip();
        a.extend((0..random).map(|_| rng.next_u64()));
        b.extend((0..random).map(|_| rng.next_u64()));
        let n = a.len() as u32;
        let up = |v: &[u64]| self.dev.stream.clone_htod(v).map_err(cuda_err("upload"));
        let (da, db) = (up(&a)?, up(&b)?);
        let out = self.dev.stream.alloc_zeros::<u64>(4 * a.len()).map_err(cuda_err("alloc"))?;
        let shape = Shape { blocks: n.div_ceil(256), threads: 256, shared_bytes: 0 };
        let f = self.check_kernel("field_ops")?;
        // SAFETY: field_ops(const u64* a, const u64* b, u64* out, u32 n) with a, b of n words and
        // out of 4n (kernels/goldilocks/field_check.cuh).
        unsafe { launch(&self.dev, &f, shape, &[&da, &db, &out, &n]) }?;
        let got = self.get(&out)?;
        let want: Vec<u64> = a
            .iter()
            .zip(&b)
            .enumerate()
            .flat_map(|(i, (&x, &y))| {
                let (gx, gy) = (Gl::new(x), Gl::new(y));
                let shifted = Gl::new(x).mul(Gl::new(2).pow(i as u64 % 96));
                [gx.add(gy), gx.sub(gy), Gl::reduce128(x as u128 * y as u128), shifted].map(Gl::value)
            })
            .collect();
        Ok(KernelVerdict { kernel: format!("field operations ({n} pairs)"), ok: got == want })
    }

    /// The second arithmetic's device operations (field_ops_m61m31 in kernels/m61m31/field_check.cuh)
    /// against their definitions (`selftest::mersenne`), word for word, on every pair of edge inputs
    /// and `random` random pairs of partial M61 values drawn from `seed`.
    pub fn check_m61m31(&self, seed: u64, random: usize) -> Result<KernelVerdict, EngineError> {
        let edges = mersenne::edge_inputs();
        let mut rng = SeededRng::new(seed);
        let (mut a, mut b): (Vec<u64>, Vec<u64>) =
            edges.iter().flat_map(|&x| edges.iter().map(move |&y| (x, y))).unzip();
        let bound = mersenne::M61.p() + 8;
        a.extend((0..random).map(|_| rng.next_u64() % bound));
        b.extend((0..random).map(|_| rng.next_u64() % bound));
        let n = a.len() as u32;
        let up = |v: &[u64]| self.dev.stream.clone_htod(v).map_err(cuda_err("upload"));
        let (da, db) = (up(&a)?, up(&b)?);
        let out = self.dev.stream.alloc_zeros::<u64>(mersenne::OUT_WORDS * a.len()).map_err(cuda_err("alloc"))?;
        let shape = Shape { blocks: n.div_ceil(256), threads: 256, shared_bytes: 0 };
        let f = self.check_kernel("field_ops_m61m31")?;
        // SAFETY: field_ops_m61m31(const u64* a, const u64* b, u64* out, u32 n) with a, b of n words
        // and out of MERSENNE_OUT·n (kernels/m61m31/field_check.cuh).
        unsafe { launch(&self.dev, &f, shape, &[&da, &db, &out, &n]) }?;
        let ok = self.get(&out)? == mersenne::expected(&a, &b);
        Ok(KernelVerdict { kernel: format!("field operations of M61, M31, GF(p^2) and the CRT ({n} inputs)"), ok })
    }

    /// Every M61·M31 kernel on `plan` against the twin, on random data drawn from `seed`
    /// (`extreme`: digits at the bound), stage by stage (src/gpu/selftest/m61m31.rs).
    pub fn check_m61m31_plan(&self, plan: &Plan, seed: u64, extreme: bool) -> Result<Vec<KernelVerdict>, EngineError> {
        super::m61m31::check_plan(&self.dev, plan, &mut SeededRng::new(seed), extreme)
    }

    /// Every FP64 kernel on `plan` against the twin, on random data drawn from `seed`
    /// (`extreme`: digits at the bound), kernel by kernel (src/gpu/selftest/fp64_stages.rs).
    pub fn check_fp64_plan(&self, plan: &Plan, seed: u64, extreme: bool) -> Result<Vec<KernelVerdict>, EngineError> {
        super::fp64_stages::check_plan(&self.dev, plan, &mut SeededRng::new(seed), extreme)
    }

    /// Check every kernel at length 2^log2 on random data drawn from `seed`.
    pub fn check_length(&self, log2: u32, seed: u64) -> Result<Vec<KernelVerdict>, EngineError> {
        let n = 1usize << log2;
        // An exponent whose plan at this length has ~16-bit digits.
        let p = (16 * n as u64..).find(|&q| crate::exponent::is_prime(q)).unwrap_or(17) as u32;
        let plan = Plan::with_log2(p, log2)?;
        let mut rng = SeededRng::new(seed);
        if plan.is_small() {
            return super::small::check(&self.dev, &plan, &mut rng);
        }
        let pipe = Passes::new(&self.dev, plan.clone())?;
        let digits: Vec<i64> = (0..n)
            .map(|j| {
                let w = plan.width(j);
                (rng.next_u64() % (1 << w)) as i64 - (1 << (w - 1))
            })
            .collect();
        // Pending carries as large as a walk leaves them (≈ n·2^w), and their fix-up by the twin.
        let pending: Vec<i64> = (0..pipe.segments()).map(|_| (rng.next_u64() % (1 << 40)) as i64 - (1 << 39)).collect();
        let mut fixed = digits.clone();
        twin::carry_fixup(&plan, &mut fixed, &pending);
        let random_field: Vec<Gl> = (0..n).map(|_| Gl::new(rng.next_u64() % P)).collect();
        let other: Vec<Gl> = (0..n).map(|_| Gl::new(rng.next_u64() % P)).collect();
        let s = (rng.next_u64() % p as u64) as u32;
        let s2 = ((2 * s as u64) % p as u64) as u32;
        let alloc = || self.dev.stream.alloc_zeros::<u64>(n).map_err(cuda_err("alloc"));
        let mut y = alloc()?;
        let mut io = Io {
            x: alloc()?,
            carries: self.dev.stream.alloc_zeros::<i64>(pipe.segments()).map_err(cuda_err("alloc"))?,
            shift: self.dev.stream.alloc_zeros::<u32>(1).map_err(cuda_err("alloc"))?,
        };
        self.put(&mut y, &as_words(&other))?;
        let mut out = Vec::new();
        let mut verdict = |kernel: &str, ok: bool| out.push(KernelVerdict { kernel: kernel.into(), ok });
        let sl = 1usize << plan.shared_log2();

        // Forward global passes (fix-up, weights, shift update) against the twin.
        let mut twin = twin::weight_in(&plan, &fixed);
        twin::forward_stages(&plan, &mut twin, n / 2, sl);
        self.load(&mut io, &pending, &signed_words(&digits), s)?;
        // SAFETY: the self-test's buffers, allocated for this plan on this device.
        unsafe { pipe.forward_global(&self.dev, io.res(), &io.shift, ADVANCE) }?;
        let (got, _, got_s) = self.fetch(&io)?;
        verdict("forward column passes (carry fix-up, weigh, shift)", got == as_words(&twin) && got_s == s2);
        // Row pass on random field input (the pending carries stay as they are).
        let mut t = random_field.clone();
        twin::forward_stages(&plan, &mut t, sl / 2, 1);
        let forward_only = as_words(&t);
        let finish = |mut v: Vec<Gl>| {
            twin::inverse_stages(&plan, &mut v, 1, sl / 2);
            (as_words(&v), pending.clone())
        };
        let input = as_words(&random_field);
        let want = finish(t.iter().map(|v| v.square()).collect());
        self.load(&mut io, &pending, &input, s)?;
        // SAFETY: the self-test's buffers, allocated for this plan on this device.
        unsafe { pipe.rows(&self.dev, io.res(), &io.x, &io.shift, Op::Square, 0) }?;
        let (got, got_c, _) = self.fetch(&io)?;
        verdict("row pass (square)", (got, got_c) == want);
        self.load(&mut io, &pending, &input, s)?;
        // SAFETY: the self-test's buffers, allocated for this plan on this device.
        unsafe { pipe.rows(&self.dev, io.res(), &io.x, &io.shift, Op::Forward, 0) }?;
        verdict("row pass (forward)", self.get(&io.x)? == forward_only);
        let want = finish(t.iter().zip(&other).map(|(a, b)| a.mul(*b)).collect());
        self.load(&mut io, &pending, &input, s)?;
        // SAFETY: the self-test's buffers, allocated for this plan on this device.
        unsafe { pipe.rows(&self.dev, io.res(), &y, &io.shift, Op::Multiply, 0) }?;
        let (got, got_c, _) = self.fetch(&io)?;
        verdict("row pass (multiply)", (got, got_c) == want);
        // Inverse global passes (unweighting, carry walk with the LL term) on random field input.
        let mut inv = random_field.clone();
        twin::inverse_stages(&plan, &mut inv, sl, n / 2);
        let (d, cs) = twin::carry_walk(&plan, &twin::unweight_out(&plan, &inv), Some(plan.minus_two_at(s2)));
        self.load(&mut io, &pending, &as_words(&random_field), s2)?;
        // SAFETY: the self-test's buffers, allocated for this plan on this device.
        unsafe { pipe.inverse_global(&self.dev, io.res(), &io.shift, LL) }?;
        let (got, got_c, _) = self.fetch(&io)?;
        verdict("inverse column passes (unweigh, carry walk, -2*2^s)", (got, got_c) == (signed_words(&d), cs));
        Ok(out)
    }
}
