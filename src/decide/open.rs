//! The engines a [`Decision`] names, built at its arithmetic's length (the one the decision
//! settled, not searched again): GMP, the CPU twin, or a GPU engine (Goldilocks on the pass shape
//! `prove --tune` stored for the length). Under `--engine auto` a GPU that fails to open leaves
//! the work to GMP, here and nowhere else ([`Decision::open`]).

use super::{Decision, EngineKind};
use crate::cpu_ref::GmpEngine;
use crate::engine::twin::TwinEngine;
use crate::engine::{Engine, EngineError};
use crate::gpu::GpuEngine;
use crate::transform::plan::Plan;

impl Decision {
    /// The transform plan the decision settled.
    fn plan(&self) -> Result<Plan, EngineError> {
        let (p, len) = (self.work.p, self.length);
        let len = len.ok_or_else(|| EngineError::Other(format!("no transform length decided for M{p}")))?;
        Ok(Plan::with_length(p, self.arith, len)?)
    }

    /// An engine for the work at shift `shift`: GMP or the twin as decided, or for a GPU decision
    /// GPU `gpu` (CUDA's numbering; one of [`Decision::gpus`]).
    pub fn open_on(&self, gpu: usize, shift: u32) -> Result<Box<dyn Engine>, EngineError> {
        match self.engine {
            EngineKind::Gpu => Ok(Box::new(GpuEngine::on_gpu_tuned(gpu, self.plan()?, self.work.kind, shift)?)),
            _ => self.open_cpu(shift),
        }
    }

    /// The engine of the CPU threads beside or instead of the GPUs: the twin as decided, else GMP.
    pub fn open_cpu(&self, shift: u32) -> Result<Box<dyn Engine>, EngineError> {
        let (p, kind) = (self.work.p, self.work.kind);
        match self.engine {
            EngineKind::Twin => Ok(Box::new(TwinEngine::with_plan(self.plan()?, kind, shift)?)),
            _ => Ok(Box::new(GmpEngine::new(p, kind, shift))),
        }
    }

    /// An engine for the work at shift `shift`, as decided (on the first GPU of a GPU decision),
    /// without a fallback: for the engines after the first ([`Decision::open`]).
    pub fn open_as_decided(&self, shift: u32) -> Result<Box<dyn Engine>, EngineError> {
        self.open_on(self.gpus.first().copied().unwrap_or(0), shift)
    }

    /// The second engine of an exact LL check (`--ll-check double`) at shift `shift`, and the GPU
    /// it runs on when that is not the first engine's: on a host with two GPUs or more a GPU
    /// decision puts it on the next GPU (`other_gpu`), where it runs beside the first engine
    /// instead of taking turns with it on one device; otherwise as [`Decision::open_as_decided`].
    pub fn open_second(&self, shift: u32) -> Result<(Box<dyn Engine>, Option<usize>), EngineError> {
        let first = self.gpus.first().copied().unwrap_or(0);
        let other = match self.engine {
            EngineKind::Gpu => other_gpu(first, crate::gpu::device_count()?),
            _ => None,
        };
        match other {
            Some(g) => Ok((self.open_on(g, shift)?, Some(g))),
            None => Ok((self.open_as_decided(shift)?, None)),
        }
    }

    /// The engine for the work at shift `shift`, on the first GPU of a GPU decision. Under
    /// `--engine auto` a GPU that fails to open is not fatal: the decision becomes GMP's (so the
    /// engines opened after this one are GMP too) and why is returned, for the caller to say.
    pub fn open(&mut self, shift: u32) -> Result<(Box<dyn Engine>, Option<String>), EngineError> {
        match self.open_as_decided(shift) {
            Err(e) if self.auto && self.engine == EngineKind::Gpu => {
                *self = Decision::gmp(self.work, None);
                Ok((self.open_cpu(shift)?, Some(format!("no GPU engine ({e}); using the CPU engine"))))
            }
            r => Ok((r?, None)),
        }
    }
}

/// The GPU beside `first` on a host of `count` GPUs (the next one, wrapping), if there is one.
fn other_gpu(first: usize, count: usize) -> Option<usize> {
    (count >= 2).then(|| (first + 1) % count)
}

#[cfg(test)]
mod tests {
    use super::super::{decide, Ask, Devices, Work};
    use crate::engine::arith::ArithChoice;
    use crate::engine::EngineChoice;
    use crate::exponent::TestKind;
    use crate::transform::plan::Arith;

    #[test]
    fn the_second_engine_takes_the_next_gpu_when_there_is_one() {
        use super::other_gpu;
        assert_eq!((other_gpu(0, 0), other_gpu(0, 1), other_gpu(3, 1)), (None, None, None));
        assert_eq!(
            (other_gpu(0, 2), other_gpu(1, 2), other_gpu(2, 4), other_gpu(3, 4)),
            (Some(1), Some(0), Some(3), Some(0))
        );
    }

    #[test]
    fn a_cpu_decision_opens_its_second_engine_on_the_cpu() {
        let work = Work::test(4423, TestKind::Ll, 4421, true);
        let ask = Ask { engine: EngineChoice::Twin, arith: ArithChoice::Fixed(Arith::M61M31), devices: Devices::All };
        let (e, gpu) = decide(&ask, &work).unwrap().open_second(7).unwrap();
        assert_eq!((e.arith(), gpu), (Some(Arith::M61M31), None));
        let (e, gpu) = decide(&Ask::cpu(), &work).unwrap().open_second(7).unwrap();
        assert_eq!((e.arith(), gpu), (None, None));
    }

    #[test]
    fn the_decided_engine_opens_at_the_decided_length() {
        let work = Work::test(4423, TestKind::Ll, 4421, false);
        let ask = Ask { engine: EngineChoice::Twin, arith: ArithChoice::Fixed(Arith::M61M31), devices: Devices::All };
        let mut d = decide(&ask, &work).unwrap();
        let (e, fallback) = d.open(5).unwrap();
        assert_eq!((e.arith(), fallback), (Some(Arith::M61M31), None));
        assert_eq!(e.fft_length(), d.length.map(|l| l.n()));
        let (e, _) = decide(&Ask::cpu(), &work).unwrap().open(5).unwrap();
        assert_eq!((e.arith(), e.exponent()), (None, 4423));
    }
}
