//! The canonical residue: a value in [0, 2^p − 1) as little-endian u64 words, the one type that
//! crosses every boundary (engine ↔ driver ↔ certificate ↔ verifier). Also owns the shift-count
//! rotation, res64/res2048, the canonical byte form and its blake3 hash.

use crate::exponent::TestKind;
use rug::integer::Order;
use rug::{Assign, Integer};
use thiserror::Error;

/// Why bytes or words could not be read as a residue.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ResidueError {
    #[error("residue for p={p} must be {expected} bytes, got {got}")]
    Length { p: u32, expected: usize, got: usize },
    #[error("residue for p={p} is not canonical (value >= 2^p - 1)")]
    NotCanonical { p: u32 },
}

/// A residue modulo M_p = 2^p − 1, always canonical: value < M_p.
#[derive(Clone, PartialEq, Eq)]
pub struct Residue {
    p: u32,
    words: Vec<u64>,
}

impl std::fmt::Debug for Residue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Residue(p={}, res64={:016X})", self.p, self.res64())
    }
}

/// Number of u64 words of a p-bit residue.
pub const fn word_count(p: u32) -> usize {
    (p as usize).div_ceil(64)
}

/// Number of bytes of the canonical byte form of a p-bit residue.
pub const fn byte_count(p: u32) -> usize {
    (p as usize).div_ceil(8)
}

/// Reduce a non-negative or negative integer modulo 2^p − 1 into [0, 2^p − 1) by shift-and-add
/// (no division): x = hi·2^p + lo ≡ hi + lo.
pub fn reduce_mersenne(x: &mut Integer, p: u32) {
    if *x < 0 {
        // −a ≡ M_p·k − a; bring it up with a multiple of M_p of the same size.
        let bits = x.significant_bits();
        let mut m = Integer::from(1) << (bits.div_ceil(p) * p);
        m -= 1; // 2^(kp) − 1 is a multiple of 2^p − 1
        *x += m;
    }
    fold_mersenne(x, p, &mut Integer::new());
}

/// The fold of [`reduce_mersenne`] for x ≥ 0, with `hi` as scratch so that a caller in a loop
/// (the GMP engine) allocates nothing: x ← (x mod 2^p) + ⌊x / 2^p⌋ until x < 2^p, then M_p → 0.
pub fn fold_mersenne(x: &mut Integer, p: u32, hi: &mut Integer) {
    while x.significant_bits() > p {
        hi.assign(&*x >> p);
        x.keep_bits_mut(p);
        *x += &*hi;
    }
    // x < 2^p now; the only non-canonical value left is M_p itself.
    if x.significant_bits() == p && x.count_ones() == Some(p) {
        x.assign(0);
    }
}

/// Track of a shift count through squarings and multiplications, shared by all engines:
/// the stored value is x·2^s mod M_p.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shift {
    p: u32,
    s: u32,
}

impl Shift {
    pub fn new(p: u32, s: u32) -> Self {
        Shift { p, s: s % p }
    }
    pub fn get(self) -> u32 {
        self.s
    }
    /// After a squaring: s ← 2s mod p.
    pub fn squared(self) -> Self {
        Shift::new(self.p, ((self.s as u64 * 2) % self.p as u64) as u32)
    }
    /// After multiplying by a value with shift t: s ← s + t mod p.
    pub fn plus(self, t: Shift) -> Self {
        Shift::new(self.p, ((self.s as u64 + t.s as u64) % self.p as u64) as u32)
    }
}

impl Residue {
    /// The residue with value v mod M_p.
    pub fn from_u64(p: u32, v: u64) -> Self {
        Self::from_integer(p, &Integer::from(v))
    }

    /// The start value of a test: s_0 = 4 (LL) or x_0 = 3 (PRP).
    pub fn start(p: u32, kind: TestKind) -> Self {
        Self::from_u64(p, kind.start_value())
    }

    /// The residue of an arbitrary integer (reduced mod M_p).
    pub fn from_integer(p: u32, x: &Integer) -> Self {
        let mut v = x.clone();
        reduce_mersenne(&mut v, p);
        let mut words = vec![0u64; word_count(p)];
        v.write_digits(&mut words, Order::Lsf);
        Residue { p, words }
    }

    /// Build from words that must already be canonical (value < M_p, no bits at or above p).
    pub fn from_words(p: u32, words: Vec<u64>) -> Result<Self, ResidueError> {
        if words.len() != word_count(p) {
            return Err(ResidueError::Length { p, expected: word_count(p) * 8, got: words.len() * 8 });
        }
        let r = Residue { p, words };
        if !r.is_canonical() {
            return Err(ResidueError::NotCanonical { p });
        }
        Ok(r)
    }

    /// Parse the canonical byte form (⌈p/8⌉ bytes, little-endian); rejects any other length
    /// and any non-canonical value.
    pub fn from_bytes(p: u32, bytes: &[u8]) -> Result<Self, ResidueError> {
        if bytes.len() != byte_count(p) {
            return Err(ResidueError::Length { p, expected: byte_count(p), got: bytes.len() });
        }
        let words = bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect();
        Self::from_words(p, words)
    }

    fn is_canonical(&self) -> bool {
        let p = self.p as usize;
        let top_bits = p - 64 * (self.words.len() - 1);
        let top = *self.words.last().expect("p >= 2 gives at least one word");
        if top_bits < 64 && top >> top_bits != 0 {
            return false;
        }
        // Reject M_p itself (all p bits set).
        let full = self.words[..self.words.len() - 1].iter().all(|&w| w == u64::MAX);
        let top_full = if top_bits == 64 { top == u64::MAX } else { top == (1u64 << top_bits) - 1 };
        !(full && top_full)
    }

    pub fn exponent(&self) -> u32 {
        self.p
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }

    pub fn to_integer(&self) -> Integer {
        Integer::from_digits(&self.words, Order::Lsf)
    }

    /// Canonical byte form: ⌈p/8⌉ bytes, little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        out.truncate(byte_count(self.p));
        out
    }

    /// blake3 of the canonical bytes: what certificates record for each checkpoint.
    pub fn hash(&self) -> [u8; 32] {
        *blake3::hash(&self.to_bytes()).as_bytes()
    }

    pub fn is_zero(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// x / 9 mod M_p (the PRP type-1 residue from x_p = 3^(M_p+1)), by exact division:
    /// (x + k·M_p)/9 for the k in [0, 9) that makes it divisible. None when 3 divides M_p
    /// (p even), where 9 has no inverse.
    pub fn divide_by_9(&self) -> Option<Residue> {
        if self.p.is_multiple_of(2) {
            return None;
        }
        let m = (Integer::from(1) << self.p) - 1u32;
        let x = self.to_integer();
        let (xm, mm) = (x.mod_u(9), m.mod_u(9));
        let k = (0..9u32).find(|k| (xm + k * mm) % 9 == 0)?;
        let mut y = x + m * k;
        y.div_exact_u_mut(9);
        Some(Residue::from_integer(self.p, &y))
    }

    /// Equal to the small constant v?
    pub fn equals_u64(&self, v: u64) -> bool {
        *self == Residue::from_u64(self.p, v)
    }

    /// Lowest 64 bits.
    pub fn res64(&self) -> u64 {
        self.words[0]
    }

    /// res64 as GIMPS prints it: 16 upper-case hex digits.
    pub fn res64_hex(&self) -> String {
        format!("{:016X}", self.res64())
    }

    /// Lowest 2048 bits as 512 upper-case hex digits (most significant first), as GIMPS prints it.
    pub fn res2048_hex(&self) -> String {
        let mut w = self.words.clone();
        w.resize(32, 0);
        w[..32].iter().rev().map(|x| format!("{x:016X}")).collect()
    }

    /// self · 2^c mod M_p (a rotation of the p-bit value by c places to the left): the sum of
    /// (self << c) mod 2^p and self >> (p − c), whose bits do not overlap. A rotation of a value
    /// below M_p (not all ones) is again below M_p, so the words need no reduction.
    pub fn mul_pow2(&self, c: u32) -> Residue {
        let c = c % self.p;
        if c == 0 {
            return self.clone();
        }
        let (src, mut words) = (&self.words, vec![0u64; self.words.len()]);
        let (a, s) = ((c / 64) as usize, c % 64);
        for (w, &x) in words[a..].iter_mut().zip(src) {
            *w = x << s;
        }
        if s != 0 {
            for (w, &x) in words[a + 1..].iter_mut().zip(src) {
                *w |= x >> (64 - s);
            }
        }
        let top_bits = self.p as usize - 64 * (words.len() - 1);
        if top_bits < 64 {
            *words.last_mut().expect("p >= 2 gives at least one word") &= (1 << top_bits) - 1;
        }
        let (b, t) = (((self.p - c) / 64) as usize, (self.p - c) % 64);
        for (w, &x) in words.iter_mut().zip(&src[b..]) {
            *w |= x >> t;
        }
        if t != 0 {
            for (w, &x) in words.iter_mut().zip(&src[b + 1..]) {
                *w |= x << (64 - t);
            }
        }
        Residue { p: self.p, words }
    }

    /// self · 2^(−c) mod M_p (rotation to the right): undoes [`Residue::mul_pow2`].
    pub fn div_pow2(&self, c: u32) -> Residue {
        let c = c % self.p;
        self.mul_pow2((self.p - c) % self.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;
    use rug::ops::RemRounding;

    fn mp(p: u32) -> Integer {
        (Integer::from(1) << p) - 1u32
    }

    fn arbitrary_value(p: u32, seed: &[u64]) -> Integer {
        let mut x = Integer::from_digits(seed, Order::Lsf);
        x.keep_bits_mut(p);
        x
    }

    quickcheck! {
        fn divide_by_9_inverts_times_9(seed: Vec<u64>, p: u16) -> bool {
            let p = (p % 3000) as u32 + 3;
            let x = Residue::from_integer(p, &Integer::from_digits(&seed, Order::Lsf));
            match x.divide_by_9() {
                // p even: 3 | M_p, no division; p odd: (x/9)·9 = x.
                None => p.is_multiple_of(2),
                Some(q) => !p.is_multiple_of(2) && Residue::from_integer(p, &(q.to_integer() * 9u32)) == x,
            }
        }

        fn reduce_matches_rem(seed: Vec<u64>, p: u16, neg: bool) -> bool {
            let p = (p % 3000) as u32 + 2;
            let mut x = Integer::from_digits(&seed, Order::Lsf);
            if neg { x = -x; }
            let mut r = x.clone();
            reduce_mersenne(&mut r, p);
            let want = x.clone().rem_euc(&mp(p));
            r == want
        }

        fn bytes_round_trip(seed: Vec<u64>, p: u16) -> bool {
            let p = (p % 3000) as u32 + 2;
            let r = Residue::from_integer(p, &arbitrary_value(p, &seed));
            let b = r.to_bytes();
            b.len() == byte_count(p) && Residue::from_bytes(p, &b) == Ok(r)
        }

        fn rotation_is_mul_pow2(seed: Vec<u64>, p: u16, c: u32) -> bool {
            let p = (p % 3000) as u32 + 2;
            let c = c % p;
            let x = arbitrary_value(p, &seed);
            let r = Residue::from_integer(p, &x);
            let want = Integer::from(&x << c).rem_euc(&mp(p));
            let rot = r.mul_pow2(c);
            rot.to_integer() == want && rot.div_pow2(c) == r
        }
    }

    #[test]
    fn mp_itself_is_zero_and_rejected_as_bytes() {
        for p in [2u32, 7, 61, 64, 127, 521] {
            assert!(Residue::from_integer(p, &mp(p)).is_zero());
            let all_ones = Residue { p, words: Residue::from_integer(p, &mp(p)).words }.to_bytes();
            let mut b = all_ones;
            let bits = p as usize;
            for i in 0..bits {
                b[i / 8] |= 1 << (i % 8);
            }
            assert_eq!(Residue::from_bytes(p, &b), Err(ResidueError::NotCanonical { p }));
        }
    }

    #[test]
    fn rejects_bad_lengths_and_high_bits() {
        assert!(matches!(Residue::from_bytes(61, &[0u8; 7]), Err(ResidueError::Length { .. })));
        assert!(matches!(Residue::from_bytes(61, &[0u8; 9]), Err(ResidueError::Length { .. })));
        let mut b = [0u8; 8];
        b[7] = 0x20; // bit 61
        assert_eq!(Residue::from_bytes(61, &b), Err(ResidueError::NotCanonical { p: 61 }));
    }

    #[test]
    fn res_strings() {
        let r = Residue::from_u64(89, 0xABC);
        assert_eq!(r.res64_hex(), "0000000000000ABC");
        assert_eq!(r.res2048_hex().len(), 512);
        assert!(r.res2048_hex().ends_with("ABC"));
    }
}
