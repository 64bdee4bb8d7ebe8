//! Self-tests and rate benchmarks of the GPU engine, for `gpu-selftest`: the kernels against the
//! CPU twin ([`check`]; the second arithmetic's device operations against [`mersenne`]), the field
//! operations' throughput with the floor it sets ([`rate`]), and the second arithmetic's floor
//! model ([`floor_m61m31`]).

pub mod check;
pub mod floor_m61m31;
pub mod mersenne;
pub mod rate;
