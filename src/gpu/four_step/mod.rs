//! The four-step pipeline on the device ([`FsPipeline`], kernels/common/pipeline.cuh), an
//! implementation of [`super::arith::Pipeline`] over an arithmetic ([`setup::FourStep`]): the
//! FP64 arithmetic ([`fp64`], kernels/fp64/) and Goldilocks ([`goldilocks`],
//! kernels/goldilocks/four_step.cuh); the plan set up on the device ([`setup`]: tables, layout)
//! and the launches of its kernels ([`pipeline`]).

mod fp64;
mod goldilocks;
mod pipeline;
mod setup;

#[cfg(test)]
pub(crate) use fp64::Fp64;
pub(crate) use goldilocks::GoldilocksFs;
pub(crate) use pipeline::{FpPipeline, FsPipeline};
#[cfg(test)]
pub(crate) use setup::FourStep;
