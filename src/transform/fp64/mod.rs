//! The FP64 arithmetic (issue 37): an exact NTT over two primes below 2^52 computed with f64
//! operations (on a GPU, on its FP64 units), the product recovered by CRT. [`field`]: GF(p) with
//! residues as signed doubles and the six-operation product; [`primes`]: the pair and their
//! roots; [`crt`]: the recombination; [`ntt`]: a radix-2 transform with lazy reduction, the
//! reference for the GPU passes; [`bound`]: the proven bound's largest exponent per length.
//! Not yet an `Arith` of the plan (issue 38 brings the registry it joins).

pub mod bound;
pub mod crt;
pub mod field;
pub mod ntt;
pub mod primes;
