//! The GF(M61²) × GF(M31²) arithmetic on the device ([`MmPipeline`], kernels/m61m31/), an
//! implementation of [`super::arith::Pipeline`]: its unit's kernels ([`kernels`]), the plan set
//! up on the device ([`setup`]: tables, layout, launch geometry) and the launches ([`pipeline`]).

mod kernels;
mod pipeline;
mod setup;

#[cfg(test)]
pub(crate) use kernels::UNIT;
pub(crate) use pipeline::{MmPipeline, Zs};
