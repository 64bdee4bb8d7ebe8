//! The Goldilocks arithmetic on the device: its unit's kernels ([`kernels`]), the multi-pass
//! pipeline ([`Passes`], kernels/goldilocks/ntt_block.cuh) and, at lengths up to
//! 2^SMALL_MAX_LOG2, the one-block kernel ([`SmallPipeline`], kernels/goldilocks/small.cuh);
//! both implement [`super::arith::Pipeline`].

mod kernels;
mod passes;
pub mod schedule;
mod small;

pub(crate) use kernels::{LATE_MAX_STAGES, UNIT};
pub(crate) use passes::{general_products_per_value, line_dfts, upload_plan, Layout, Op, Passes};
pub(crate) use small::{SmallPipeline, MAX_STAGES};
