//! The plan on the device and the launch sequence of one squaring or multiplication: forward
//! column passes over the outer stages (weights fused into the first), the row pass over
//! contiguous chunks (inner forward stages, pointwise square or multiply, inner inverse stages),
//! inverse column passes (unweighting fused into the last), then one carry kernel. All of them
//! are the ntt_r<R> kernels of kernels/ntt_block.cu. Nothing is copied to the host.

use super::module::{cuda_err, Device};
use crate::engine::EngineError;
use crate::plan::Plan;
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};

/// The plan as the kernels see it; field for field the `Layout` of kernels/goldilocks.cuh.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    tw: u64,
    itw: u64,
    w_hi: u64,
    w_lo: u64,
    iw_hi: u64,
    iw_lo: u64,
    p: u32,
    log_n: u32,
    lo_bits: u32,
    shared_log: u32,
    seg_len: u32,
    fixup_depth: u32,
}

// SAFETY: plain-old-data with the C layout the kernels declare.
unsafe impl DeviceRepr for Layout {}

/// What an ntt_r<R> launch does (the OP_* of kernels/ntt_block.cu).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Op {
    Forward = 0,
    Inverse = 1,
    Square = 2,
    Multiply = 3,
}

/// Flags of an ntt_r<R> launch.
const WEIGH: u32 = 1;
const UNWEIGH: u32 = 2;

/// A raw device address of a buffer that lives as long as the pipeline using it.
pub(crate) fn addr<T>(dev: &Device, s: &CudaSlice<T>) -> u64 {
    let (ptr, _sync) = s.device_ptr(&dev.stream);
    ptr
}

/// One ntt_r<R> launch shape: `stages` (R) radix-2 stages down to half-size 2^s_log (0: the
/// row pass), 2^c_log lines a block.
#[derive(Clone, Copy, Debug)]
struct Pass {
    stages: u32,
    s_log: u32,
    c_log: u32,
}

impl Pass {
    fn config(&self, n: u64) -> LaunchConfig {
        let (r1, r2) = (self.stages.div_ceil(2), self.stages / 2);
        let words = ((1u64 << self.stages) + (1 << r1)) << self.c_log;
        config(n >> (self.stages + self.c_log), 1 << (self.c_log + r2), words)
    }
}

/// log2 of the values a block may hold (32 KiB of shared memory, plus padding).
const BLOCK_WORDS_LOG2: u32 = 12;
/// At most 2^5 adjacent columns per block; at least 2^2 (32-byte runs, one memory sector).
const COLUMNS_LOG2: (u32, u32) = (2, 5);
/// Blocks to aim for per launch (132 SMs).
const BLOCKS_LOG2: u32 = 7;
/// At most 2^8 threads per block.
const THREADS_LOG2: u32 = 8;
/// Threads per carry block (one segment each); must not exceed CARRY_MAX_BLOCK in carry.cu.
const CARRY_BLOCK: u64 = 256;

/// Scratch of the carry kernel: each block's published carry, its flag, ticket and done counters.
struct CarryScratch {
    blocks: u32,
    threads: u32,
    published: CudaSlice<u64>,
    flags: CudaSlice<u32>,
    sync: CudaSlice<u32>,
}

/// Plan tables on the device and the launches that use them.
pub(crate) struct Pipeline {
    pub plan: Plan,
    layout: Layout,
    _tables: Vec<CudaSlice<u64>>,
    passes: Vec<Pass>,
    row: Pass,
    carry: CarryScratch,
}

fn config(blocks: u64, threads: u64, shared_words: u64) -> LaunchConfig {
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: (shared_words * 8) as u32 }
}

impl Pipeline {
    pub fn new(dev: &Device, plan: Plan) -> Result<Pipeline, EngineError> {
        if plan.length().odd != 1 {
            return Err(EngineError::NoPlan { p: plan.exponent(), why: "GPU kernels take power-of-two lengths".into() });
        }
        let upload = |v: &[crate::field::Gl]| {
            let words: Vec<u64> = v.iter().map(|g| g.value()).collect();
            dev.stream.clone_htod(&words).map_err(cuda_err("upload plan"))
        };
        let (tw, itw) = plan.twiddles();
        let [w_hi, w_lo, iw_hi, iw_lo] = plan.weight_tables();
        let tables = vec![upload(tw)?, upload(itw)?, upload(w_hi)?, upload(w_lo)?, upload(iw_hi)?, upload(iw_lo)?];
        let a: Vec<u64> = tables.iter().map(|t| addr(dev, t)).collect();
        let layout = Layout {
            tw: a[0],
            itw: a[1],
            w_hi: a[2],
            w_lo: a[3],
            iw_hi: a[4],
            iw_lo: a[5],
            p: plan.exponent(),
            log_n: plan.log2(),
            lo_bits: plan.lo_bits(),
            shared_log: plan.shared_log2(),
            seg_len: plan.seg_len() as u32,
            fixup_depth: plan.fixup_depth() as u32,
        };
        let mut top = plan.log2(); // log2 of the block-row the next pass splits
        let passes = plan
            .global_passes()
            .into_iter()
            .map(|stages| {
                top -= stages;
                let columns_log = plan.log2() - stages;
                let c_log = columns_log
                    .saturating_sub(BLOCKS_LOG2)
                    .clamp(COLUMNS_LOG2.0, COLUMNS_LOG2.1)
                    .min(BLOCK_WORDS_LOG2 - stages)
                    .min(top);
                Pass { stages, s_log: top, c_log }
            })
            .collect();
        let r = plan.shared_log2();
        let row_c_log = (plan.log2() - r)
            .saturating_sub(BLOCKS_LOG2)
            .min(BLOCK_WORDS_LOG2 - r)
            .min(THREADS_LOG2 - r / 2);
        let row = Pass { stages: r, s_log: 0, c_log: row_c_log };
        let segs = (plan.n() / plan.seg_len()) as u64;
        let threads = segs.min(if segs >= 1 << 15 { CARRY_BLOCK } else { 64 });
        let blocks = segs.div_ceil(threads);
        let zeros = |len: u64| dev.stream.alloc_zeros::<u32>(len as usize).map_err(cuda_err("alloc"));
        let carry = CarryScratch {
            blocks: blocks as u32,
            threads: threads as u32,
            published: dev.stream.alloc_zeros::<u64>(blocks as usize).map_err(cuda_err("alloc"))?,
            flags: zeros(blocks)?,
            sync: zeros(2)?,
        };
        Ok(Pipeline { plan, layout, _tables: tables, passes, row, carry })
    }

    fn n(&self) -> u64 {
        self.plan.n() as u64
    }

    pub fn has_global_passes(&self) -> bool {
        !self.passes.is_empty()
    }

    fn launch(dev: &Device, f: &CudaFunction, cfg: LaunchConfig, args: &[&dyn Arg]) -> Result<(), EngineError> {
        let mut b = dev.stream.launch_builder(f);
        for a in args {
            a.push(&mut b);
        }
        // SAFETY: every kernel's parameter list is matched by its caller below; buffers are
        // sized from the plan the kernels index with.
        unsafe { b.launch(cfg) }.map(|_| ()).map_err(cuda_err("launch"))
    }

    fn ntt(&self, dev: &Device, pass: &Pass, x: u64, other: u64, op: Op, flags: u32) -> Result<(), EngineError> {
        let f = &dev.kernels.ntt[pass.stages as usize - 1];
        let args: [&dyn Arg; 7] = [&x, &other, &self.layout, &pass.s_log, &pass.c_log, &(op as u32), &flags];
        Self::launch(dev, f, pass.config(self.n()), &args)
    }

    /// Forward column passes over x; the first weighs the digits.
    pub fn forward_global(&self, dev: &Device, x: u64) -> Result<(), EngineError> {
        for (k, pass) in self.passes.iter().enumerate() {
            self.ntt(dev, pass, x, x, Op::Forward, if k == 0 { WEIGH } else { 0 })?;
        }
        Ok(())
    }

    /// Inverse column passes over x; the last unweighs into signed convolution outputs.
    pub fn inverse_global(&self, dev: &Device, x: u64) -> Result<(), EngineError> {
        for (k, pass) in self.passes.iter().enumerate().rev() {
            self.ntt(dev, pass, x, x, Op::Inverse, if k == 0 { UNWEIGH } else { 0 })?;
        }
        Ok(())
    }

    /// The row pass on every chunk of x (`other` is read by Multiply only); it weighs and
    /// unweighs itself when there are no column passes.
    pub fn rows(&self, dev: &Device, x: u64, other: u64, op: Op) -> Result<(), EngineError> {
        let flags = if self.has_global_passes() { 0 } else { WEIGH | UNWEIGH };
        self.ntt(dev, &self.row, x, other, op, flags)
    }

    /// Carry propagation of the convolution outputs at x into balanced digits; `inject` adds the
    /// LL term for the shift stored at `shift`, `advance` doubles that shift.
    pub fn carry(&self, dev: &Device, x: u64, shift: u64, inject: bool, advance: bool) -> Result<(), EngineError> {
        let c = &self.carry;
        let cfg = config(c.blocks as u64, c.threads as u64, c.threads as u64 * (self.plan.seg_len() as u64 + 1));
        let (publ, flags, sync) = (addr(dev, &c.published), addr(dev, &c.flags), addr(dev, &c.sync));
        let args: [&dyn Arg; 8] = [&x, &publ, &flags, &sync, &self.layout, &shift, &u32::from(inject), &u32::from(advance)];
        Self::launch(dev, &dev.kernels.carry, cfg, &args)
    }

    /// Microseconds per launch of each kernel of a squaring, each timed alone over `reps`
    /// launches replayed from a CUDA graph (for tuning; the data is whatever x holds).
    pub fn profile(&self, dev: &Device, x: u64, shift: u64, reps: usize) -> Result<Vec<(String, f64)>, EngineError> {
        use cudarc::driver::sys;
        type Step<'a> = Box<dyn Fn() -> Result<(), EngineError> + 'a>;
        let mut steps: Vec<(String, Step)> = Vec::new();
        for (k, pass) in self.passes.iter().enumerate() {
            let name = format!("fwd column pass {} ({} stages, 2^{} lines/block)", k, pass.stages, pass.c_log);
            steps.push((name, Box::new(move || self.ntt(dev, pass, x, x, Op::Forward, 0))));
        }
        let row = &self.row;
        let name = format!("row pass square ({} stages, 2^{} lines/block)", row.stages, row.c_log);
        steps.push((name, Box::new(move || self.ntt(dev, row, x, x, Op::Square, 0))));
        for (k, pass) in self.passes.iter().enumerate() {
            let name = format!("inv column pass {} ({} stages)", k, pass.stages);
            steps.push((name, Box::new(move || self.ntt(dev, pass, x, x, Op::Inverse, 0))));
        }
        steps.push(("carry".into(), Box::new(move || self.carry(dev, x, shift, false, false))));
        let mut out = Vec::new();
        for (name, step) in &steps {
            let s = &dev.stream;
            s.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).map_err(cuda_err("capture"))?;
            let queued = (0..reps).try_for_each(|_| step());
            let graph = s.end_capture(sys::CUgraphInstantiate_flags(0)).map_err(cuda_err("graph"))?;
            queued?;
            let graph = graph.ok_or_else(|| EngineError::Cuda("empty graph".into()))?;
            graph.launch().map_err(cuda_err("graph"))?;
            let ev = || dev.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(cuda_err("event"));
            let (a, b) = (ev()?, ev()?);
            a.record(s).map_err(cuda_err("event"))?;
            graph.launch().map_err(cuda_err("graph"))?;
            b.record(s).map_err(cuda_err("event"))?;
            let ms = a.elapsed_ms(&b).map_err(cuda_err("event"))?;
            out.push((name.clone(), ms as f64 * 1000.0 / reps as f64));
        }
        Ok(out)
    }

    /// Flip one bit of word `word` of the buffer at x (fault injection).
    pub fn flip_bit(&self, dev: &Device, x: u64, word: u64, bit: u32) -> Result<(), EngineError> {
        Self::launch(dev, &dev.kernels.flip_bit, config(1, 1, 0), &[&x, &word, &bit])
    }

    /// One squaring of the digits at x, all on the device.
    pub fn square(&self, dev: &Device, x: u64, shift: u64, ll: bool) -> Result<(), EngineError> {
        self.forward_global(dev, x)?;
        self.rows(dev, x, x, Op::Square)?;
        self.inverse_global(dev, x)?;
        self.carry(dev, x, shift, ll, true)
    }

    /// acc := acc·x; `tmp` receives the transform of x (x itself is left as it was).
    pub fn multiply(&self, dev: &Device, acc: u64, x: u64, tmp: u64, shift: u64) -> Result<(), EngineError> {
        // SAFETY: all three are live allocations of n words on this device.
        unsafe { cudarc::driver::result::memcpy_dtod_async(tmp, x, self.plan.n() * 8, dev.stream.cu_stream()) }
            .map_err(cuda_err("copy"))?;
        self.forward_global(dev, tmp)?;
        self.rows(dev, tmp, tmp, Op::Forward)?;
        self.forward_global(dev, acc)?;
        self.rows(dev, acc, tmp, Op::Multiply)?;
        self.inverse_global(dev, acc)?;
        self.carry(dev, acc, shift, false, false)
    }
}

/// A kernel argument (object-safe wrapper over cudarc's PushKernelArg).
pub(crate) trait Arg {
    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>);
}

impl<T: DeviceRepr> Arg for T {
    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>) {
        b.arg(self);
    }
}
