//! The floor under one squaring of the FP64 arithmetic (issue 37's gate), from the measured
//! register-only rates (fp64.rs) and copy bandwidth: no kernel built from these operations, in
//! the planned shape, squares faster. Per squaring of n = 2^k words, in both primes:
//! - butterflies: a forward and an inverse radix-2 transform, (n/2)·k each, at the measured rate
//!   of butterflies with lazy reduction;
//! - products: the weights, the pointwise square and the unweights (n^(−1) folded in), n each,
//!   and the twiddles between the passes of a transform, n per pass boundary and direction;
//! - the CRT of every output, once (both primes together);
//! - memory: the planned global round trips of the residue (both primes: 16 B a word), each
//!   reading and writing it once at the copy bandwidth: one where a block holds the whole
//!   transform (n ≤ 2^11), two up to 2^22 (a 2^11 × 2^11 row and column pass, the square and
//!   the carry fused in), three above.
//!
//! The arithmetic and the memory traffic can overlap, so the floor is the larger of the two.

use super::fp64::Fp64Rates;

/// Bytes per word of a residue held in both primes (two doubles).
const WORD_BYTES: f64 = 16.0;

/// The floor of one squaring of 2^k words, each term in µs.
#[derive(Clone, Copy, Debug)]
pub struct Fp64Floor {
    pub log2: u32,
    pub round_trips: u32,
    pub butterflies_us: f64,
    pub products_us: f64,
    pub crt_us: f64,
    pub memory_us: f64,
}

impl Fp64Floor {
    pub fn arith_us(&self) -> f64 {
        self.butterflies_us + self.products_us + self.crt_us
    }

    /// The larger of the arithmetic and the memory traffic.
    pub fn floor_us(&self) -> f64 {
        self.arith_us().max(self.memory_us)
    }
}

/// The global round trips of the residue a squaring of 2^k words makes in the planned shape.
pub fn round_trips(log2: u32) -> u32 {
    match log2 {
        0..=11 => 1,
        12..=22 => 2,
        _ => 3,
    }
}

/// The floor at 2^k words from the rates and the bandwidth (bytes/s).
pub fn floor(rates: &Fp64Rates, bandwidth: f64, log2: u32) -> Fp64Floor {
    let n = (1u64 << log2) as f64;
    let trips = round_trips(log2);
    let primes = 2.0;
    let butterflies = primes * 2.0 * (n / 2.0) * f64::from(log2);
    let products = primes * n * (3.0 + 2.0 * f64::from(trips - 1));
    Fp64Floor {
        log2,
        round_trips: trips,
        butterflies_us: butterflies / rates.bfly * 1e6,
        products_us: products / rates.mul * 1e6,
        crt_us: n / rates.crt * 1e6,
        memory_us: f64::from(trips) * 2.0 * WORD_BYTES * n / bandwidth * 1e6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counted by hand at the H100 figures (2596 G products/s, 1425 G butterflies/s,
    /// ~3.0 TB/s): 2^22 words, two round trips.
    #[test]
    fn floor_at_2_22_by_hand() {
        let rates = Fp64Rates { mul: 2596e9, bfly: 1425e9, crt: 1000e9 };
        let f = floor(&rates, 3.0e12, 22);
        let n = 4_194_304.0;
        assert_eq!(f.round_trips, 2);
        assert!((f.butterflies_us - 2.0 * n * 22.0 / 1425e9 * 1e6).abs() < 1e-9);
        assert!((f.products_us - 2.0 * n * 5.0 / 2596e9 * 1e6).abs() < 1e-9);
        assert!((f.memory_us - 2.0 * 2.0 * 16.0 * n / 3.0e12 * 1e6).abs() < 1e-9);
        assert!((f.floor_us() - f.arith_us().max(f.memory_us)).abs() < 1e-12);
        // ~130 µs of butterflies: the estimate for 136,279,841.
        assert!((125.0..135.0).contains(&f.butterflies_us), "{}", f.butterflies_us);
        assert_eq!((round_trips(11), round_trips(12), round_trips(23)), (1, 2, 3));
    }
}
