//! The arithmetic a Pietrzak proof needs — multiplications, 64-bit exponentiations and runs of
//! squarings modulo M_p — behind a small trait, so that a GPU can be plugged in later, and a CPU
//! implementation on GMP (rug) that reduces modulo M_p by shift-and-add.

use super::ProofError;
use crate::residue::{reduce_mersenne, Residue};
use rayon::prelude::*;
use rug::Integer;

/// One independent job for [`ProofArith::exp_mul_batch`]: `base^exp · factor`.
#[derive(Debug, Clone, Copy)]
pub struct ExpMul<'a> {
    pub base: &'a Residue,
    pub exp: u64,
    pub factor: &'a Residue,
}

/// Leaves per block combined with parallel batches by [`fold_in_blocks`] (2^4 residues held in
/// memory at once, besides one per tree level above the block).
const BLOCK_BITS: u32 = 4;

/// Where a proof point comes from: index → residue (read from disk, checked).
pub type Leaves<'a> = dyn FnMut(usize) -> Result<Residue, ProofError> + 'a;

/// Arithmetic modulo M_p on canonical residues. All arguments of one call share one exponent p.
pub trait ProofArith {
    /// a · b mod M_p.
    fn mul(&mut self, a: &Residue, b: &Residue) -> Residue;
    /// a^e mod M_p (a^0 = 1).
    fn exp(&mut self, a: &Residue, e: u64) -> Residue;
    /// a^(2^n) mod M_p: n squarings.
    fn square_n(&mut self, a: &Residue, n: u64) -> Residue;
    /// a^e · b mod M_p.
    fn exp_mul(&mut self, a: &Residue, e: u64, b: &Residue) -> Residue {
        let t = self.exp(a, e);
        self.mul(&t, b)
    }
    /// Independent `base^exp · factor` jobs, results in order. The default runs them one after
    /// the other; an implementation with spare parallel capacity runs them at once.
    fn exp_mul_batch(&mut self, jobs: &[ExpMul<'_>]) -> Vec<Residue> {
        jobs.iter().map(|j| self.exp_mul(j.base, j.exp, j.factor)).collect()
    }
    /// The root of the binary tree over the `count` values `leaf(0)`, …, `leaf(count − 1)`
    /// (count a power of two; each leaf is asked for once, in order), in which the node over a
    /// pair (left, right) at height t (t = 0: two leaves) is left^heights\[t\] · right. The
    /// default is [`fold_in_blocks`]; an engine keeps the values in its own memory instead.
    fn fold(&mut self, count: usize, heights: &[u64], leaf: &mut Leaves<'_>) -> Result<Residue, ProofError> {
        fold_in_blocks(self, count, heights, leaf)
    }
}

/// Check the tree shape [`ProofArith::fold`] is asked for: 2^levels leaves, a challenge per level.
pub(crate) fn tree_levels(count: usize, heights: &[u64]) -> Result<u32, ProofError> {
    let levels = count.trailing_zeros();
    if !count.is_power_of_two() || heights.len() < levels as usize {
        return Err(ProofError::Arith(format!("a tree of {count} leaves with {} challenges", heights.len())));
    }
    Ok(levels)
}

/// Run a batch and check that the arithmetic kept its side of the contract.
pub(crate) fn checked_batch<A: ProofArith + ?Sized>(
    arith: &mut A,
    jobs: &[ExpMul<'_>],
) -> Result<Vec<Residue>, ProofError> {
    let out = arith.exp_mul_batch(jobs);
    if out.len() != jobs.len() {
        return Err(ProofError::Arith(format!("exp_mul_batch returned {} results for {} jobs", out.len(), jobs.len())));
    }
    Ok(out)
}

/// [`ProofArith::fold`] on host residues: blocks of 2^BLOCK_BITS leaves are combined level by
/// level with [`ProofArith::exp_mul_batch`] (in parallel on the CPU), and the blocks' roots
/// with a stack, as in a binary counter.
pub fn fold_in_blocks<A: ProofArith + ?Sized>(
    arith: &mut A,
    count: usize,
    heights: &[u64],
    leaf: &mut Leaves<'_>,
) -> Result<Residue, ProofError> {
    let levels = tree_levels(count, heights)?;
    let block_bits = levels.min(BLOCK_BITS);
    let block = 1usize << block_bits;
    let mut stack: Vec<Residue> = Vec::with_capacity(levels as usize + 1);
    for q in 0..count / block {
        let mut layer = (q * block..(q + 1) * block).map(&mut *leaf).collect::<Result<Vec<_>, _>>()?;
        for &h in &heights[..block_bits as usize] {
            let jobs: Vec<ExpMul<'_>> =
                layer.chunks(2).map(|pair| ExpMul { base: &pair[0], exp: h, factor: &pair[1] }).collect();
            layer = checked_batch(arith, &jobs)?;
        }
        stack.extend(layer);
        let mut t = block_bits;
        while (q >> (t - block_bits)) & 1 == 1 {
            let right = stack.pop().expect("binary counter keeps a left operand");
            let left = stack.pop().expect("binary counter keeps a left operand");
            stack.push(arith.exp_mul(&left, heights[t as usize], &right));
            t += 1;
        }
    }
    Ok(stack.pop().expect("one value per tree"))
}

/// GMP on the CPU; independent jobs of a batch run on the rayon thread pool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuArith;

fn square_reduce(x: &mut Integer, p: u32) {
    x.square_mut();
    reduce_mersenne(x, p);
}

fn mul_reduce(x: &mut Integer, y: &Integer, p: u32) {
    *x *= y;
    reduce_mersenne(x, p);
}

/// Window width of [`pow_u64`]: odd powers base^1 … base^(2^W − 1) are precomputed.
const WINDOW: u32 = 4;

/// Left-to-right sliding-window exponentiation of an already reduced value: for a 64-bit
/// exponent about 64 squarings and 16 multiplications (binary: 64 and 32), plus 8 to
/// precompute the odd powers.
fn pow_u64(base: &Integer, e: u64, p: u32) -> Integer {
    if e == 0 {
        return Integer::from(1);
    }
    let mut sq = base.clone();
    square_reduce(&mut sq, p);
    let mut odd = vec![base.clone()]; // odd[i] = base^(2i+1)
    for i in 1..1usize << (WINDOW - 1) {
        let mut next = odd[i - 1].clone();
        mul_reduce(&mut next, &sq, p);
        odd.push(next);
    }
    let mut acc: Option<Integer> = None;
    let mut bit = 63 - e.leading_zeros() as i32; // the highest bit not yet consumed
    while bit >= 0 {
        if (e >> bit) & 1 == 0 {
            if let Some(a) = acc.as_mut() {
                square_reduce(a, p);
            }
            bit -= 1;
            continue;
        }
        // The longest window bit..=low of at most WINDOW bits that ends in a 1.
        let mut low = (bit - WINDOW as i32 + 1).max(0);
        while (e >> low) & 1 == 0 {
            low += 1;
        }
        let width = (bit - low + 1) as u32;
        let value = ((e >> low) & ((1u64 << width) - 1)) as usize;
        acc = Some(match acc {
            None => odd[value >> 1].clone(),
            Some(mut a) => {
                for _ in 0..width {
                    square_reduce(&mut a, p);
                }
                mul_reduce(&mut a, &odd[value >> 1], p);
                a
            }
        });
        bit = low - 1;
    }
    acc.expect("e > 0 has a set bit")
}

fn exp_mul_int(a: &Residue, e: u64, b: &Residue) -> Residue {
    let p = a.exponent();
    let mut x = pow_u64(&a.to_integer(), e, p);
    mul_reduce(&mut x, &b.to_integer(), p);
    Residue::from_integer(p, &x)
}

impl ProofArith for CpuArith {
    fn mul(&mut self, a: &Residue, b: &Residue) -> Residue {
        let p = a.exponent();
        let mut x = a.to_integer();
        mul_reduce(&mut x, &b.to_integer(), p);
        Residue::from_integer(p, &x)
    }

    fn exp(&mut self, a: &Residue, e: u64) -> Residue {
        let p = a.exponent();
        Residue::from_integer(p, &pow_u64(&a.to_integer(), e, p))
    }

    fn square_n(&mut self, a: &Residue, n: u64) -> Residue {
        let p = a.exponent();
        let mut x = a.to_integer();
        for _ in 0..n {
            square_reduce(&mut x, p);
        }
        Residue::from_integer(p, &x)
    }

    fn exp_mul(&mut self, a: &Residue, e: u64, b: &Residue) -> Residue {
        exp_mul_int(a, e, b)
    }

    fn exp_mul_batch(&mut self, jobs: &[ExpMul<'_>]) -> Vec<Residue> {
        jobs.par_iter().map(|j| exp_mul_int(j.base, j.exp, j.factor)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rug::ops::Pow;

    fn mp(p: u32) -> Integer {
        (Integer::from(1) << p) - 1u32
    }

    quickcheck::quickcheck! {
        fn window_pow_matches_gmp(e: u64, seed: u64) -> bool {
            let p = 607;
            let base = (Integer::from(seed) << 300u32) + 3u32;
            let m = mp(p);
            pow_u64(&(base.clone() % &m), e, p) % &m == base.pow_mod(&Integer::from(e), &m).unwrap()
        }
    }

    /// The tree's root by its definition, with rug's pow_mod: the node over (left, right) at
    /// height t is left^heights[t] · right.
    fn naive_root(leaves: &[Integer], heights: &[u64], m: &Integer) -> Integer {
        if leaves.len() == 1 {
            return leaves[0].clone() % m;
        }
        let half = leaves.len() / 2;
        let t = half.trailing_zeros() as usize;
        let left = naive_root(&leaves[..half], heights, m).pow_mod(&Integer::from(heights[t]), m).unwrap();
        (left * naive_root(&leaves[half..], heights, m)) % m
    }

    quickcheck::quickcheck! {
        fn fold_in_blocks_is_the_tree_root(seed: u64, levels: u8, h0: u64, h_zero: bool) -> bool {
            // Up to 2^6 leaves: blocks of 2^4 and a stack above them.
            let (p, levels) = (127u32, u32::from(levels % 7));
            let m = mp(p);
            let leaves: Vec<Integer> = (0..1u64 << levels).map(|i| (Integer::from(seed ^ i) << 64u32) + i * 7 + 1).collect();
            let mut heights: Vec<u64> = (0..levels as u64).map(|t| h0.rotate_left(t as u32 * 9) ^ t).collect();
            if h_zero && levels > 0 {
                heights[(seed % levels as u64) as usize] = 0;
            }
            let mut leaf = |i: usize| Ok(Residue::from_integer(p, &leaves[i]));
            let got = fold_in_blocks(&mut CpuArith, leaves.len(), &heights, &mut leaf).unwrap();
            got.to_integer() == naive_root(&leaves, &heights, &m)
        }
    }

    #[test]
    fn fold_refuses_a_wrong_tree() {
        let mut leaf = |_: usize| Ok(Residue::from_u64(127, 3));
        assert!(matches!(fold_in_blocks(&mut CpuArith, 6, &[1, 2, 3], &mut leaf), Err(ProofError::Arith(_))));
        assert!(matches!(fold_in_blocks(&mut CpuArith, 8, &[1, 2], &mut leaf), Err(ProofError::Arith(_))));
    }

    #[test]
    fn cpu_matches_plain_gmp() {
        let p = 521;
        let a = Residue::from_integer(p, &(Integer::from(3).pow(400u32) + 12345u32));
        let b = Residue::from_integer(p, &(Integer::from(7).pow(300u32)));
        let m = mp(p);
        let mut ar = CpuArith;
        let want_mul = (a.to_integer() * b.to_integer()) % &m;
        assert_eq!(ar.mul(&a, &b).to_integer(), want_mul);
        for e in [0u64, 1, 2, 3, 5, 16, 17, 0x8000_0000_0000_0001, 0xdead_beef_cafe_f00d, u64::MAX] {
            let want = a.to_integer().pow_mod(&Integer::from(e), &m).unwrap();
            assert_eq!(ar.exp(&a, e).to_integer(), want, "e={e}");
            let want2 = Integer::from(&want * &b.to_integer()) % &m;
            assert_eq!(ar.exp_mul(&a, e, &b).to_integer(), want2);
            let jobs = [ExpMul { base: &a, exp: e, factor: &b }, ExpMul { base: &b, exp: e, factor: &a }];
            let got = ar.exp_mul_batch(&jobs);
            assert_eq!(got[0].to_integer(), want2);
            assert_eq!(got[1], ar.exp_mul(&b, e, &a));
        }
        let e = Integer::from(1) << 100u32;
        assert_eq!(ar.square_n(&a, 100).to_integer(), a.to_integer().pow_mod(&e, &m).unwrap());
    }
}
