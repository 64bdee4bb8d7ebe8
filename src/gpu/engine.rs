//! [`GpuEngine`]: the [`Engine`] on an NVIDIA GPU. The state, the accumulator (each as digits
//! plus pending carries, see kernels/goldilocks/carry.cuh) and the shift count live in device memory; the
//! host applies the pending carries (the CPU twin's carry_fixup) when it reads a residue, tracks
//! the shift too and checks that both agree on every read. Iterations are launched as replays
//! of CUDA graphs of 2^k iterations, or at small lengths as one launch of the one-block kernel
//! (gpu/goldilocks/small.rs) for the whole batch. What differs between arithmetics is behind
//! [`super::arith::Pipeline`], chosen once per plan by [`super::arith::pipeline`].

use super::arith::{pipeline, Pipeline};
use super::graphs::Graphs;
use super::launch::{addr, copy, flip_bit, Res};
use super::module::{cuda_err, Device};
use crate::engine::{Engine, EngineError, Shift, Slots, Value};
use crate::exponent::TestKind;
use crate::residue::Residue;
use crate::transform::plan::Plan;
use cudarc::driver::{CudaEvent, CudaSlice, PinnedHostSlice};

/// Device buffers of one engine.
struct Buffers {
    x: CudaSlice<u64>,
    x_carries: CudaSlice<i64>,
    acc: CudaSlice<u64>,
    acc_carries: CudaSlice<i64>,
    tmp: CudaSlice<u64>,
    shift: CudaSlice<u32>,
}

/// Page-locked host copies of one value and the device shift: a read queues the three copies
/// and waits once (a copy to pageable memory waits for each).
struct HostCopy {
    x: PinnedHostSlice<u64>,
    carries: PinnedHostSlice<i64>,
    shift: PinnedHostSlice<u32>,
}

/// Page-locked staging buffer of uploads, and the event of the last upload from it: an upload
/// from pageable memory would wait for everything queued before it, so that the host could not
/// prepare the next value while the GPU works.
struct Staging {
    words: PinnedHostSlice<u64>,
    sent: Option<CudaEvent>,
}

/// The GPU engine for one exponent, test kind and starting shift.
pub struct GpuEngine {
    dev: Device,
    pipe: Box<dyn Pipeline>,
    buf: Buffers,
    kind: TestKind,
    shift: Shift,
    acc_shift: Shift,
    /// The squarings and the product, as CUDA graphs captured on first use.
    graphs: Graphs,
    /// Host side of reads, allocated by the first.
    host: Option<HostCopy>,
    /// Host side of uploads, allocated by the first.
    staging: Option<Staging>,
    /// Scratch slots (digits, pending carries) for the proof arithmetic.
    slots: Slots<(CudaSlice<u64>, CudaSlice<i64>)>,
}

impl GpuEngine {
    /// Open the GPU, plan the smallest safe length for p and load the start value (4 or 3)
    /// shifted by `shift`.
    /// The passes take the shape `prove --tune` found fastest for this length on this GPU,
    /// when it was run (else the plan's default).
    pub fn new(p: u32, kind: TestKind, shift: u32) -> Result<GpuEngine, EngineError> {
        GpuEngine::on_gpu(0, p, kind, shift)
    }

    /// Like [`GpuEngine::new`] on GPU `ordinal`.
    pub fn on_gpu(ordinal: usize, p: u32, kind: TestKind, shift: u32) -> Result<GpuEngine, EngineError> {
        GpuEngine::on_gpu_tuned(ordinal, Plan::new(p)?, kind, shift)
    }

    /// Like [`GpuEngine::on_gpu_with_plan`], a Goldilocks plan's passes shaped as `prove --tune`
    /// stored for its length on this GPU (when it was run).
    pub fn on_gpu_tuned(ordinal: usize, plan: Plan, kind: TestKind, shift: u32) -> Result<GpuEngine, EngineError> {
        let dev = Device::open_ordinal(ordinal)?;
        let plan = super::tune::tuned(&dev, plan);
        GpuEngine::on_device(dev, plan, kind, shift)
    }

    /// Like [`GpuEngine::new`] on a given plan (e.g. a longer length than the smallest, or the
    /// M61·M31 arithmetic's).
    pub fn with_plan(plan: Plan, kind: TestKind, shift: u32) -> Result<GpuEngine, EngineError> {
        GpuEngine::on_gpu_with_plan(0, plan, kind, shift)
    }

    /// Like [`GpuEngine::with_plan`] on GPU `ordinal`.
    pub fn on_gpu_with_plan(ordinal: usize, plan: Plan, kind: TestKind, shift: u32) -> Result<GpuEngine, EngineError> {
        GpuEngine::on_device(Device::open_ordinal(ordinal)?, plan, kind, shift)
    }

    fn on_device(dev: Device, plan: Plan, kind: TestKind, shift: u32) -> Result<GpuEngine, EngineError> {
        let p = plan.exponent();
        let n = plan.n();
        let pipe = pipeline(&dev, plan)?;
        crate::trace::mark("gpu: tables uploaded, pipeline built");
        let alloc = |len: usize| dev.stream.alloc_zeros::<u64>(len).map_err(cuda_err("alloc"));
        let carries = || dev.stream.alloc_zeros::<i64>(pipe.carry_words()).map_err(cuda_err("alloc"));
        let buf = Buffers {
            x: alloc(n)?,
            x_carries: carries()?,
            acc: alloc(n)?,
            acc_carries: carries()?,
            tmp: alloc(n)?,
            shift: dev.stream.alloc_zeros::<u32>(1).map_err(cuda_err("alloc"))?,
        };
        let shift = Shift::new(p, shift);
        let mut e = GpuEngine {
            dev,
            pipe,
            buf,
            kind,
            shift,
            acc_shift: shift,
            graphs: Graphs::default(),
            host: None,
            staging: None,
            slots: Slots::default(),
        };
        e.load(&Residue::from_u64(p, kind.start_value()))?;
        e.acc_reset()?;
        crate::trace::mark("gpu: buffers allocated, start value loaded");
        Ok(e)
    }

    /// The device description (name, architecture, memory, driver, kernels).
    pub fn device(&self) -> String {
        self.dev.description()
    }

    /// Queue a copy of one value (digits and pending carries) over another.
    fn copy_value(&self, to: Res, from: Res) -> Result<(), EngineError> {
        copy(&self.dev, to.x, from.x)?;
        copy(&self.dev, to.carries, from.carries)
    }

    /// Scratch slot `slot` as a value (it must exist).
    fn slot_res(&self, slot: usize) -> Result<(Res<'_>, Shift), EngineError> {
        let ((x, carries), shift) = self.slots.get(slot)?;
        Ok((Res { x, carries }, *shift))
    }

    /// Store digits (no pending carries).
    fn upload(&mut self, which: Which, digits: &[i64]) -> Result<(), EngineError> {
        if self.staging.is_none() {
            // SAFETY: page-locked host memory, write-combined (the host only writes it); every
            // word is written below before the first copy from it.
            let words =
                unsafe { self.dev.ctx.alloc_pinned::<u64>(self.pipe.plan().n()) }.map_err(cuda_err("host buffer"))?;
            self.staging = Some(Staging { words, sent: None });
        }
        let st = self.staging.as_mut().expect("allocated above");
        if let Some(e) = st.sent.take() {
            e.synchronize().map_err(cuda_err("upload"))?; // the previous upload has left the buffer
        }
        let words = st.words.as_mut_slice().map_err(cuda_err("upload"))?;
        for (w, &d) in words.iter_mut().zip(digits) {
            *w = d as u64;
        }
        let (dst, carries) = match which {
            Which::State => (&mut self.buf.x, &mut self.buf.x_carries),
            Which::Acc => (&mut self.buf.acc, &mut self.buf.acc_carries),
        };
        let stream = &self.dev.stream;
        stream.memcpy_htod(&st.words, dst).map_err(cuda_err("upload"))?;
        st.sent = Some(stream.record_event(None).map_err(cuda_err("upload"))?);
        stream.memset_zeros(carries).map_err(cuda_err("upload"))
    }

    /// The digits with the pending carries applied, and the device's shift count; `then`
    /// iterations of the state are queued after the copies, so that they run while the host
    /// waits for the copies (not for them) and converts.
    fn download(&mut self, which: Which, then: u64) -> Result<(Vec<i64>, u32), EngineError> {
        let (n, segs) = (self.pipe.plan().n(), self.pipe.carry_words());
        if self.host.is_none() {
            let ctx = &self.dev.ctx;
            // SAFETY: page-locked host buffers (flags 0: cached, readable by the host), fully
            // written by the copies below before they are read.
            self.host = Some(unsafe {
                HostCopy {
                    x: ctx.alloc_pinned_with_flags(n, 0).map_err(cuda_err("host buffer"))?,
                    carries: ctx.alloc_pinned_with_flags(segs, 0).map_err(cuda_err("host buffer"))?,
                    shift: ctx.alloc_pinned_with_flags(1, 0).map_err(cuda_err("host buffer"))?,
                }
            });
        }
        let h = self.host.as_mut().expect("allocated above");
        let (src, carries) = match which {
            Which::State => (&self.buf.x, &self.buf.x_carries),
            Which::Acc => (&self.buf.acc, &self.buf.acc_carries),
        };
        let stream = &self.dev.stream;
        stream.memcpy_dtoh(src, &mut h.x).map_err(cuda_err("download"))?;
        stream.memcpy_dtoh(carries, &mut h.carries).map_err(cuda_err("download"))?;
        stream.memcpy_dtoh(&self.buf.shift, &mut h.shift).map_err(cuda_err("download"))?;
        // The context tracks no events (module.rs), so the pinned buffers record none after
        // their copies and their as_slice waits for nothing: the host waits for this one.
        let copied = stream.record_event(None).map_err(cuda_err("download"))?;
        if then > 0 {
            self.launch_iterations(then)?;
        }
        copied.synchronize().map_err(cuda_err("download"))?;
        let h = self.host.as_ref().expect("allocated above");
        let words = h.x.as_slice().map_err(cuda_err("download"))?;
        let mut digits: Vec<i64> = words.iter().map(|&w| w as i64).collect();
        let carries = h.carries.as_slice().map_err(cuda_err("download"))?;
        self.pipe.apply_carries(&mut digits, carries);
        Ok((digits, h.shift.as_slice().map_err(cuda_err("download"))?[0]))
    }

    /// A value as a residue, with `then` iterations of the state queued behind its copy (see
    /// download). The device keeps the state's shift count too, and it must agree with ours.
    fn read_value(&mut self, what: Value, then: u64) -> Result<Residue, EngineError> {
        let (which, shift) = match what {
            Value::State => (Which::State, self.shift.get()),
            Value::Acc => (Which::Acc, self.acc_shift.get()),
        };
        let (d, dev_shift) = self.download(which, then)?;
        if what == Value::State && dev_shift != shift {
            return Err(EngineError::Other(format!("device shift {dev_shift} disagrees with host shift {shift}")));
        }
        Ok(self.pipe.plan().digits_to_residue(&d, shift)?)
    }

    /// Queue the host's shift count into the device's. A memset carries the value in the call:
    /// a copy from pageable host memory may wait for the work queued before it, and `unstash`
    /// (twice per node of a proof middle) would then stall the host behind the GPU.
    fn set_device_shift(&mut self) -> Result<(), EngineError> {
        let dst = addr(&self.dev, &self.buf.shift);
        // A raw driver call: the context must be this thread's (the engine may have moved to
        // another thread since its last cudarc call, as the exact LL check's second engine does).
        self.dev.ctx.bind_to_thread().map_err(cuda_err("context"))?;
        // SAFETY: buf.shift is a live allocation of one u32 on this device and stream.
        unsafe { cudarc::driver::sys::cuMemsetD32Async(dst, self.shift.get(), 1, self.dev.stream.cu_stream()) }
            .result()
            .map_err(cuda_err("upload shift"))
    }

    /// Queue `count` squarings without waiting for them (the host shift advances with them).
    pub(crate) fn launch_iterations(&mut self, count: u64) -> Result<(), EngineError> {
        let ll = self.kind == TestKind::Ll;
        let (b, x) = (&self.buf, self.buf.res(Which::State));
        // SAFETY: the engine's own buffers, allocated for this plan on this device (the same
        // on every call, as the graphs need).
        unsafe { self.pipe.queue_squarings(&self.dev, &mut self.graphs, x, &b.shift, ll, count) }?;
        for _ in 0..count {
            self.shift = self.shift.squared();
        }
        Ok(())
    }

    pub(crate) fn synchronize(&self) -> Result<(), EngineError> {
        self.dev.stream.synchronize().map_err(cuda_err("run"))
    }

    /// Per-kernel timings of this engine's squaring (see `Pipeline::profile`).
    pub fn profile(&mut self, reps: usize) -> Result<Vec<(String, f64)>, EngineError> {
        let x = self.buf.res(Which::State);
        // SAFETY: the engine's own buffers, allocated for this plan on this device.
        let out = unsafe { self.pipe.profile(&self.dev, x, &self.buf.shift, reps) }?;
        self.synchronize()?;
        Ok(out)
    }

    pub(crate) fn device_handle(&self) -> &Device {
        &self.dev
    }
}

#[derive(Clone, Copy)]
enum Which {
    State,
    Acc,
}

impl Buffers {
    fn res(&self, which: Which) -> Res<'_> {
        match which {
            Which::State => Res { x: &self.x, carries: &self.x_carries },
            Which::Acc => Res { x: &self.acc, carries: &self.acc_carries },
        }
    }
}

impl Engine for GpuEngine {
    fn describe(&self) -> String {
        let (lo, hi) = self.pipe.plan().widths();
        format!("gpu {} {} widths {lo}-{hi} bits", self.dev.name, self.pipe.transform_name())
    }
    fn fft_length(&self) -> Option<usize> {
        Some(self.pipe.plan().n())
    }
    fn arith(&self) -> Option<crate::transform::plan::Arith> {
        Some(self.pipe.plan().arith())
    }
    fn load(&mut self, r: &Residue) -> Result<(), EngineError> {
        let p = self.pipe.plan().exponent();
        if r.exponent() != p {
            return Err(EngineError::WrongExponent { want: p, got: r.exponent() });
        }
        let d = self.pipe.plan().residue_to_digits(r, self.shift.get());
        self.upload(Which::State, &d)?;
        self.set_device_shift()
    }
    fn iterate(&mut self, count: u64) -> Result<(), EngineError> {
        self.launch_iterations(count)?;
        self.synchronize()
    }
    fn read(&mut self) -> Result<Residue, EngineError> {
        self.read_value(Value::State, 0)
    }
    fn read_then_queue(&mut self, what: Value, count: u64) -> Result<Residue, EngineError> {
        self.read_value(what, count)
    }
    fn acc_reset(&mut self) -> Result<(), EngineError> {
        self.copy_value(self.buf.res(Which::Acc), self.buf.res(Which::State))?;
        self.acc_shift = self.shift;
        Ok(())
    }
    fn acc_mul(&mut self) -> Result<(), EngineError> {
        let b = &self.buf;
        let (acc, x) = (b.res(Which::Acc), b.res(Which::State));
        // SAFETY: the engine's own buffers, allocated for this plan on this device (the same
        // on every call, as the graph needs).
        unsafe { self.pipe.queue_multiply(&self.dev, &mut self.graphs, acc, x, &b.tmp, &b.shift) }?;
        self.acc_shift = self.acc_shift.plus(self.shift);
        Ok(())
    }
    fn acc_read(&mut self) -> Result<Residue, EngineError> {
        self.read_value(Value::Acc, 0)
    }
    fn acc_load(&mut self, r: &Residue) -> Result<(), EngineError> {
        let p = self.pipe.plan().exponent();
        if r.exponent() != p {
            return Err(EngineError::WrongExponent { want: p, got: r.exponent() });
        }
        self.acc_shift = Shift::new(p, 0);
        let d = self.pipe.plan().residue_to_digits(r, 0);
        self.upload(Which::Acc, &d)
    }
    fn iterate_queued(&mut self, count: u64) -> Result<(), EngineError> {
        self.launch_iterations(count)
    }
    fn stash(&mut self, from: Value, slot: usize) -> Result<(), EngineError> {
        let (which, shift) = match from {
            Value::State => (Which::State, self.shift),
            Value::Acc => (Which::Acc, self.acc_shift),
        };
        let (n, segs, stream) = (self.pipe.plan().n(), self.pipe.carry_words(), &self.dev.stream);
        let e = self.slots.entry(slot, shift, || {
            let x = stream.alloc_zeros::<u64>(n).map_err(cuda_err("alloc"))?;
            Ok((x, stream.alloc_zeros::<i64>(segs).map_err(cuda_err("alloc"))?))
        })?;
        e.1 = shift;
        let (dst, _) = self.slot_res(slot)?;
        self.copy_value(dst, self.buf.res(which))
    }
    fn unstash(&mut self, slot: usize) -> Result<(), EngineError> {
        let (src, shift) = self.slot_res(slot)?;
        self.copy_value(self.buf.res(Which::State), src)?;
        self.shift = shift;
        self.set_device_shift()
    }
    fn inject_fault(&mut self, word: usize, bit: u32) -> Result<(), EngineError> {
        flip_bit(&self.dev, self.pipe.module(), &self.buf.x, word % self.pipe.plan().n(), bit)?;
        self.synchronize()
    }
    fn kind(&self) -> TestKind {
        self.kind
    }
    fn exponent(&self) -> u32 {
        self.pipe.plan().exponent()
    }
}
