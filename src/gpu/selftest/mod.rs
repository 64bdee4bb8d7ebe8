//! Self-tests and rate benchmarks of the GPU engine, for `gpu-selftest`: the kernels against the
//! CPU twin ([`check`]; the second arithmetic's device operations against [`mersenne`], its kernels stage by stage against the twin in [`m61m31`]), the field
//! operations' throughput with the floor it sets ([`rate`]), the second arithmetic's floor
//! model ([`floor_m61m31`]), the FP64 arithmetic's operations checked and timed ([`fp64`]) and
//! its floor ([`floor_fp64`]) and its kernels against the twin ([`fp64_stages`]), the one-block kernel against the twin ([`small`]), what every
//! check reports ([`verdict`]) and the residue with i128 carries that the M61·M31 and FP64 checks
//! upload ([`wide_residue`]).

pub mod check;
pub mod floor_fp64;
pub mod floor_m61m31;
pub mod fp64;
pub mod fp64_stages;
pub mod m61m31;
pub mod mersenne;
pub mod rate;
pub mod small;
pub mod verdict;
pub mod wide_residue;
