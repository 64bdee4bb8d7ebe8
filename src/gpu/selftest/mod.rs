//! Self-tests and rate benchmarks of the GPU engine, for `gpu-selftest`: the kernels against the
//! CPU twin ([`check`]) and the field operations' throughput with the floor it sets ([`rate`]).

pub mod check;
pub mod rate;
