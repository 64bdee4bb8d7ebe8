//! The FP64 arithmetic on the device ([`FpPipeline`], kernels/fp64/), an implementation of
//! [`super::arith::Pipeline`]: the plan set up on the device ([`setup`]: tables, layout, launch
//! geometry) and the launches of its kernels ([`pipeline`]).

mod pipeline;
mod setup;

pub(crate) use pipeline::FpPipeline;
#[cfg(test)]
pub(crate) use pipeline::UNIT;
