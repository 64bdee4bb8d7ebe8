//! The plan on the device and the launch sequence of one squaring or multiplication: global
//! forward passes (weights fused into the first), the shared-memory kernel (innermost forward
//! stages, pointwise square or multiply, innermost inverse stages), global inverse passes
//! (unweighting fused into the last), then the two carry passes. Nothing is copied to the host.

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

/// What the shared-memory kernel does between its forward and inverse stages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    Square = 0,
    Multiply = 1,
    ForwardOnly = 2,
}

/// A raw device address of a buffer that lives as long as the pipeline using it.
pub(crate) fn addr<T>(dev: &Device, s: &CudaSlice<T>) -> u64 {
    let (ptr, _sync) = s.device_ptr(&dev.stream);
    ptr
}

/// Plan tables on the device and the launches that use them.
pub(crate) struct Pipeline {
    pub plan: Plan,
    layout: Layout,
    _tables: Vec<CudaSlice<u64>>,
    /// (stages, s_log) of each global pass in forward order.
    passes: Vec<(u32, u32)>,
}

/// Threads per block: 256, or 64 when there are too few threads to give every SM a few blocks.
fn grid(threads: u64) -> LaunchConfig {
    let block = if threads >= 1 << 17 { 256 } else { 64 }.min(threads) as u32;
    LaunchConfig { grid_dim: (threads.div_ceil(block as u64) as u32, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
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
        let mut top = plan.log2(); // log2 of the block size 2M the next pass splits
        let passes = plan
            .global_passes()
            .into_iter()
            .map(|r| {
                top -= r;
                (r, top)
            })
            .collect();
        Ok(Pipeline { plan, layout, _tables: tables, passes })
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

    /// Global forward passes over x; the first weighs the digits.
    pub fn forward_global(&self, dev: &Device, x: u64) -> Result<(), EngineError> {
        for (k, &(r, s_log)) in self.passes.iter().enumerate() {
            let weigh = u32::from(k == 0);
            let f = &dev.kernels.fwd_pass[r as usize - 1];
            Self::launch(dev, f, grid(self.n() >> r), &[&x, &self.layout, &s_log, &weigh])?;
        }
        Ok(())
    }

    /// Global inverse passes over x; the last unweighs into signed convolution outputs.
    pub fn inverse_global(&self, dev: &Device, x: u64) -> Result<(), EngineError> {
        for (k, &(r, s_log)) in self.passes.iter().enumerate().rev() {
            let unweigh = u32::from(k == 0);
            let f = &dev.kernels.inv_pass[r as usize - 1];
            Self::launch(dev, f, grid(self.n() >> r), &[&x, &self.layout, &s_log, &unweigh])?;
        }
        Ok(())
    }

    /// The shared-memory kernel on every chunk of x (`other` is read in Multiply mode only).
    pub fn shared(&self, dev: &Device, x: u64, other: u64, mode: Mode) -> Result<(), EngineError> {
        let log = self.plan.shared_log2();
        let flags: u32 = if self.has_global_passes() { 0 } else { 3 };
        let threads = (1u32 << (log - 1)).min(512);
        let cfg = LaunchConfig {
            grid_dim: ((self.n() >> log) as u32, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 8 << log,
        };
        Self::launch(dev, &dev.kernels.shared_square, cfg, &[&x, &other, &self.layout, &(mode as u32), &flags])
    }

    /// Carry pass 1 (segment walks); `inject` adds the LL term for the shift stored at `shift`.
    pub fn carry_walk(&self, dev: &Device, x: u64, carries: u64, shift: u64, inject: bool) -> Result<(), EngineError> {
        let segs = self.n() / self.plan.seg_len() as u64;
        let mut cfg = grid(segs);
        cfg.shared_mem_bytes = cfg.block_dim.0 * (self.plan.seg_len() as u32 + 1) * 8;
        Self::launch(dev, &dev.kernels.carry_walk, cfg, &[&x, &carries, &self.layout, &shift, &u32::from(inject)])
    }

    /// Carry pass 2 (fix-ups); `advance` doubles the stored shift (a squaring happened).
    pub fn carry_fixup(&self, dev: &Device, x: u64, carries: u64, shift: u64, advance: bool) -> Result<(), EngineError> {
        let segs = self.n() / self.plan.seg_len() as u64;
        Self::launch(dev, &dev.kernels.carry_fixup, grid(segs), &[&x, &carries, &self.layout, &shift, &u32::from(advance)])
    }

    /// Flip one bit of word `word` of the buffer at x (fault injection).
    pub fn flip_bit(&self, dev: &Device, x: u64, word: u64, bit: u32) -> Result<(), EngineError> {
        Self::launch(dev, &dev.kernels.flip_bit, grid(1), &[&x, &word, &bit])
    }

    /// One squaring of the digits at x, all on the device.
    pub fn square(&self, dev: &Device, x: u64, carries: u64, shift: u64, ll: bool) -> Result<(), EngineError> {
        self.forward_global(dev, x)?;
        self.shared(dev, x, x, Mode::Square)?;
        self.inverse_global(dev, x)?;
        self.carry_walk(dev, x, carries, shift, ll)?;
        self.carry_fixup(dev, x, carries, shift, true)
    }

    /// acc := acc·x; `tmp` receives the transform of x (x itself is left as it was).
    pub fn multiply(&self, dev: &Device, bufs: MulBuffers) -> Result<(), EngineError> {
        let MulBuffers { acc, x, tmp, carries, shift, n_bytes } = bufs;
        // SAFETY: both are live allocations of n_bytes on this device.
        unsafe { cudarc::driver::result::memcpy_dtod_async(tmp, x, n_bytes, dev.stream.cu_stream()) }
            .map_err(cuda_err("copy"))?;
        self.forward_global(dev, tmp)?;
        self.shared(dev, tmp, tmp, Mode::ForwardOnly)?;
        self.forward_global(dev, acc)?;
        self.shared(dev, acc, tmp, Mode::Multiply)?;
        self.inverse_global(dev, acc)?;
        self.carry_walk(dev, acc, carries, shift, false)?;
        self.carry_fixup(dev, acc, carries, shift, false)
    }
}

/// The device buffers a multiplication touches.
pub(crate) struct MulBuffers {
    pub acc: u64,
    pub x: u64,
    pub tmp: u64,
    pub carries: u64,
    pub shift: u64,
    pub n_bytes: usize,
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
