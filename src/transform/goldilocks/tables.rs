//! The Goldilocks IBDWT's tables for a length n = 2^log2: the weights a = g^e (g^n = 2) split
//! into a hi and a lo table (a = hi\[e >> lo_bits\]·lo\[e & (2^lo_bits − 1)\]), the inverse weights
//! with 1/n folded into their hi table, and the twiddles of every radix-2 stage. The plan carries
//! them ([`crate::transform::plan::Plan::weight`]); they depend on n only.

use crate::transform::goldilocks::field::Gl;

/// The weight and twiddle tables of one length (empty: a plan of another arithmetic).
#[derive(Debug, Clone, Default)]
pub struct GlTables {
    /// a_j = g^e = hi[e >> lo_bits]·lo[e & (2^lo_bits − 1)], e = `Plan::weight_exp(j)`.
    pub(crate) weight_hi: Vec<Gl>,
    pub(crate) weight_lo: Vec<Gl>,
    /// Inverse weights with 1/n folded into the hi table.
    pub(crate) inv_weight_hi: Vec<Gl>,
    pub(crate) inv_weight_lo: Vec<Gl>,
    pub(crate) lo_bits: u32,
    /// twiddle[m + i] = ω_{2m}^i for each stage half-size m (power of two < n) and i < m.
    pub(crate) twiddle: Vec<Gl>,
    /// inv_twiddle[m + i] = ω_{2m}^(−i).
    pub(crate) inv_twiddle: Vec<Gl>,
}

/// first·base^i for i < len.
fn powers(base: Gl, len: usize, first: Gl) -> Vec<Gl> {
    std::iter::successors(Some(first), |x| Some(x.mul(base))).take(len).collect()
}

/// g^e for e < 2^log2 as two tables, [hi, lo]: g^e = hi[e >> lo_bits]·lo[e & (2^lo_bits − 1)],
/// lo_bits = ⌈log2/2⌉, every entry of hi times `scale`.
fn hi_lo(g: Gl, scale: Gl, log2: u32) -> [Vec<Gl>; 2] {
    let lo_len = 1usize << log2.div_ceil(2);
    [powers(g.pow(lo_len as u64), (1usize << log2) / lo_len, scale), powers(g, lo_len, Gl::ONE)]
}

impl GlTables {
    /// The tables of length 2^log2, or why the field has none (no n-th root of 2 beyond 2^26).
    pub fn new(log2: u32) -> Result<GlTables, String> {
        let n = 1usize << log2;
        let g = Gl::root_of_two(log2).ok_or("no n-th root of 2")?;
        let g_inv = g.inverse().ok_or("g = 0")?;
        let n_inv = Gl::new(n as u64).inverse().ok_or("n = 0 mod P")?;
        let lo_bits = log2.div_ceil(2);
        let [weight_hi, weight_lo] = hi_lo(g, Gl::ONE, log2);
        let [inv_weight_hi, inv_weight_lo] = hi_lo(g_inv, n_inv, log2);
        let mut twiddle = vec![Gl::ZERO; n];
        let mut inv_twiddle = vec![Gl::ZERO; n];
        for s in 0..log2 {
            let m = 1usize << s;
            let w = Gl::root_of_unity(s + 1).ok_or("no root of unity")?;
            let w_inv = w.inverse().ok_or("root = 0")?;
            twiddle[m..2 * m].copy_from_slice(&powers(w, m, Gl::ONE));
            inv_twiddle[m..2 * m].copy_from_slice(&powers(w_inv, m, Gl::ONE));
        }
        Ok(GlTables { weight_hi, weight_lo, inv_weight_hi, inv_weight_lo, lo_bits, twiddle, inv_twiddle })
    }

    /// g^e.
    pub fn weight(&self, e: usize) -> Gl {
        self.weight_hi[e >> self.lo_bits].mul(self.weight_lo[e & ((1 << self.lo_bits) - 1)])
    }

    /// g^(−e)/n.
    pub fn inv_weight(&self, e: usize) -> Gl {
        self.inv_weight_hi[e >> self.lo_bits].mul(self.inv_weight_lo[e & ((1 << self.lo_bits) - 1)])
    }
}
