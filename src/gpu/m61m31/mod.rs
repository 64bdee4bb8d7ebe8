//! The GF(M61²) × GF(M31²) arithmetic on the device ([`MmPipeline`], kernels/m61m31/), an
//! implementation of [`super::arith::Pipeline`].

mod pipeline;

pub(crate) use pipeline::*;
