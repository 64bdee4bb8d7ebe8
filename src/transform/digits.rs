//! Conversion between a residue and the digits of a plan's IBDWT layout (digit j holds bits
//! [start_j, start_j + w_j) of r·2^shift): balanced digits out of a residue, and a residue out of
//! any digits. Each is one streaming pass over the digits and the residue's words.

use crate::residue::{word_count, Residue, ResidueError};
use crate::transform::plan::Plan;
use crate::transform::PlanError;

impl Plan {
    /// Balanced digits of r·2^shift (|d| ≤ 2^(w−1)).
    pub fn residue_to_digits(&self, r: &Residue, shift: u32) -> Vec<i64> {
        let (p, n) = (self.exponent(), self.n());
        let rotated;
        let words = if shift.is_multiple_of(p) {
            r.words()
        } else {
            rotated = r.mul_pow2(shift);
            rotated.words()
        };
        // A plain loop over a sized vector (no closure, no push) keeps start and carry in registers.
        let (mut d, mut start, mut carry) = (vec![0i64; n], 0u64, 0i64);
        for (j, dj) in d.iter_mut().enumerate() {
            let next = self.start(j + 1);
            let w = (next - start) as u32;
            // Bits [start, start + w) from the two words they may touch; (x << 1) << (63 − off)
            // is x << (64 − off), and 0 when off = 0.
            let (i, off) = ((start / 64) as usize, (start % 64) as u32);
            let hi = (words.get(i + 1).copied().unwrap_or(0) << 1) << (63 - off);
            let v = ((words[i] >> off | hi) & ((1 << w) - 1)) as i64;
            start = next;
            let t = v + carry;
            carry = i64::from(t >= 1 << (w - 1));
            *dj = t - (carry << w);
        }
        // The carry out of the top digit is worth 2^p ≡ 1: it enters digit 0 and ripples up while
        // it meets digits at 2^(w−1) − 1 (the rest are already balanced and stay as they are).
        let mut j = 0;
        while carry != 0 {
            let w = self.width(j);
            let t = d[j] + carry;
            carry = i64::from(t >= 1 << (w - 1));
            d[j] = t - (carry << w);
            j = (j + 1) % n;
        }
        d
    }

    /// The residue x with x·2^shift ≡ Σ d_j·2^start_j (mod M_p), for any digits.
    pub fn digits_to_residue(&self, digits: &[i64], shift: u32) -> Result<Residue, PlanError> {
        let (p, n) = (self.exponent(), self.n());
        if digits.len() != n {
            return Err(PlanError::DigitCount { got: digits.len(), n });
        }
        // With digits of 2 bits or more the carry fits an i64 (see `Carry for i64`).
        let (words, carry) = if self.widths().0 >= 2 { self.pack::<i64>(digits) } else { self.pack::<i128>(digits) };
        let x = fold_carry(p, words, carry)?;
        Ok(if shift.is_multiple_of(p) { x } else { x.div_pow2(shift) })
    }

    /// Carry through the digits once: digit j leaves u = t mod 2^w, t = d_j + carry, in the bit
    /// stream and passes ⌊t/2^w⌋ on. Returns the stream's p bits as words and the carry out of
    /// the top. The stream's current word (acc, `have` bits filled) is stored at every digit and
    /// moves on without a branch when it fills.
    fn pack<C: Carry>(&self, digits: &[i64]) -> (Vec<u64>, i128) {
        let p = self.exponent();
        let mut words = vec![0u64; word_count(p) + 1];
        let (mut k, mut acc, mut have) = (0usize, 0u64, 0u32);
        let (mut start, mut carry) = (0u64, C::default());
        for (j, &dj) in digits.iter().enumerate() {
            let next = self.start(j + 1);
            let w = (next - start) as u32;
            start = next;
            let u = carry.step(dj, w);
            acc |= u << have;
            words[k] = acc;
            let full = have + w >= 64;
            // The bits of u past the word: u >> (64 − have), written so that have = 0 gives 0.
            acc = if full { (u >> 1) >> (63 - have) } else { acc };
            k += usize::from(full);
            have = (have + w) % 64;
        }
        words[k] = acc; // what the last digit put past its word (at p = 64·words: nothing, dropped)
        words.truncate(word_count(p));
        (words, carry.wide())
    }
}

/// The running carry of [`Plan::pack`].
trait Carry: Copy + Default {
    /// With t = d + self: set self to ⌊t/2^w⌋ and return t mod 2^w.
    fn step(&mut self, d: i64, w: u32) -> u64;
    fn wide(self) -> i128;
}

/// For digits of w ≥ 2 bits: split d = q·2^w + lo first (lo = d mod 2^w), so t = lo + carry
/// cannot overflow. By induction from carry 0, |carry| ≤ 3·2^60: |q| ≤ 2^61 and
/// |t >> w| ≤ (3·2^60 + 2^32)/4 + 1 < 2^60.
impl Carry for i64 {
    fn step(&mut self, d: i64, w: u32) -> u64 {
        let mask = (1 << w) - 1;
        let t = (d & mask) + *self;
        *self = (d >> w) + (t >> w);
        (t & mask) as u64
    }
    fn wide(self) -> i128 {
        self as i128
    }
}

/// For any widths: 1-bit digits of i64::MIN drive the carry towards −2^64.
impl Carry for i128 {
    fn step(&mut self, d: i64, w: u32) -> u64 {
        let t = d as i128 + *self;
        *self = t >> w;
        t as u64 & ((1 << w) - 1)
    }
    fn wide(self) -> i128 {
        self
    }
}

/// The residue of W + c·2^p ≡ W + c (mod M_p), W the p-bit value in `words` and c the carry out of
/// its top bit: c is added at bit 0 and whatever then stands at or above bit p is added again,
/// until nothing does. Each round shrinks |c| by about 2^p; a carry of ±1 (the usual one) costs
/// one round and stops rippling at the first word it does not change.
fn fold_carry(p: u32, mut words: Vec<u64>, mut c: i128) -> Result<Residue, PlanError> {
    let top_bits = p - 64 * (words.len() as u32 - 1); // 1..=64 bits of the value in the top word
    while c != 0 {
        for w in words.iter_mut() {
            let t = *w as i128 + c;
            *w = t as u64;
            c = t >> 64;
            if c == 0 {
                break;
            }
        }
        // c is now the (signed) carry out of the whole word array; add what lies above bit p.
        let top = words.last_mut().expect("p >= 13 gives at least one word");
        if top_bits < 64 {
            c = (c << (64 - top_bits)) + (*top >> top_bits) as i128;
            *top &= (1 << top_bits) - 1;
        }
    }
    match Residue::from_words(p, words) {
        Err(ResidueError::NotCanonical { .. }) => Ok(Residue::from_u64(p, 0)), // M_p itself
        r => Ok(r?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;
    use quickcheck::{quickcheck, TestResult};
    use rug::integer::Order;
    use rug::ops::RemRounding;
    use rug::Integer;

    fn mp(p: u32) -> Integer {
        (Integer::from(1) << p) - 1u32
    }

    /// Σ d_j·2^start_j mod M_p, times 2^(−shift) = 2^(p − shift mod p): the definition.
    fn reference_residue(plan: &Plan, digits: &[i64], shift: u32) -> Integer {
        let p = plan.exponent();
        let x = sum_from(plan, digits, 0).rem_euc(&mp(p));
        (x << (p - shift % p)).rem_euc(&mp(p))
    }

    /// Σ d_j·2^(start_j − start_j0) over digits j0.., summed by halves (so it stays fast at 2^18 digits).
    fn sum_from(plan: &Plan, digits: &[i64], j0: usize) -> Integer {
        if let [d] = digits {
            return Integer::from(*d);
        }
        let mid = digits.len() / 2;
        let hi = sum_from(plan, &digits[mid..], j0 + mid) << (plan.start(j0 + mid) - plan.start(j0)) as u32;
        sum_from(plan, &digits[..mid], j0) + hi
    }

    /// Bits [pos, pos + w) of a little-endian word array (w ≤ 63; bits past the end read as 0).
    fn get_bits(words: &[u64], pos: u64, w: u32) -> u64 {
        let (i, off) = ((pos / 64) as usize, (pos % 64) as u32);
        let lo = words.get(i).copied().unwrap_or(0) >> off;
        let hi = if off == 0 { 0 } else { words.get(i + 1).copied().unwrap_or(0) << (64 - off) };
        (lo | hi) & ((1u64 << w) - 1)
    }

    /// The straightforward residue_to_digits (the implementation before the streaming one).
    fn reference_digits(plan: &Plan, r: &Residue, shift: u32) -> Vec<i64> {
        let x = r.mul_pow2(shift);
        let mut d: Vec<i64> = (0..plan.n()).map(|j| get_bits(x.words(), plan.start(j), plan.width(j)) as i64).collect();
        let mut carry = 0i64;
        loop {
            for (j, dj) in d.iter_mut().enumerate() {
                let w = plan.width(j);
                let t = *dj + carry;
                (*dj, carry) = if t >= 1 << (w - 1) { (t - (1 << w), 1) } else { (t, 0) };
            }
            if carry == 0 {
                return d;
            }
        }
    }

    /// Digits from a seed: as they come (quickcheck's i64s include the extremes), all at i64::MIN
    /// or i64::MAX, a mix of the extremes and ±1, or balanced with an unbalanced top digit.
    fn digits_from(plan: &Plan, seed: &[i64], mode: u8) -> Vec<i64> {
        let pick = |j: usize| seed.get(j % seed.len().max(1)).copied().unwrap_or(0).wrapping_add(j as i64);
        (0..plan.n())
            .map(|j| match mode % 5 {
                0 => pick(j),
                1 => i64::MIN,
                2 => i64::MAX,
                3 => [i64::MIN, i64::MAX, -1, 1, 0, i64::MIN + 1][pick(j).rem_euclid(6) as usize],
                _ if j + 1 == plan.n() => pick(j),
                _ => pick(j) % (1 << (plan.width(j) - 1)),
            })
            .collect()
    }

    /// A residue from a seed: random bits, or digits raw-cut from 0, 2^(w−1) − 1, 2^(w−1),
    /// 2^w − 1 (carries that ripple, and a carry out of the top), or 0, 1, M_p − 1.
    fn residue_from(plan: &Plan, seed: &[u64], mode: u8) -> Residue {
        let p = plan.exponent();
        let x = match mode % 3 {
            0 => Integer::from_digits(seed, Order::Lsf).keep_bits(p),
            1 => {
                let raw: Vec<i64> = (0..plan.n())
                    .map(|j| {
                        let w = plan.width(j);
                        let pick = seed.get(j % seed.len().max(1)).copied().unwrap_or(j as u64) % 4;
                        [0, (1 << (w - 1)) - 1, 1 << (w - 1), (1 << w) - 1][pick as usize]
                    })
                    .collect();
                sum_from(plan, &raw, 0)
            }
            _ => [Integer::new(), Integer::from(1), mp(p) - 1u32][seed.len() % 3].clone(),
        };
        Residue::from_integer(p, &x)
    }

    fn balanced(plan: &Plan, d: &[i64]) -> bool {
        d.iter().enumerate().all(|(j, &v)| v.unsigned_abs() <= 1 << (plan.width(j) - 1))
    }

    quickcheck! {
        fn digits_round_trip(seed: Vec<u64>, p: u32, shift: u32) -> TestResult {
            let p = 100 + p % 20_000;
            if !crate::exponent::is_prime(p as u64) { return TestResult::discard(); }
            let plan = Plan::new(p).unwrap();
            let mut x = Integer::from_digits(&seed, Order::Lsf);
            x.keep_bits_mut(p);
            let r = Residue::from_integer(p, &x);
            let s = shift % p;
            let d = plan.residue_to_digits(&r, s);
            TestResult::from_bool(balanced(&plan, &d) && plan.digits_to_residue(&d, s).unwrap() == r)
        }

        fn digits_to_residue_is_the_sum(seed: Vec<i64>, mode: u8, p: u32, extra: u8, shift: u32) -> TestResult {
            let p = 13 + p % 188;
            let Ok(plan) = Plan::with_log2(p, Plan::new(p).unwrap().log2() + u32::from(extra % 3)) else {
                return TestResult::discard();
            };
            let d = digits_from(&plan, &seed, mode);
            let got = plan.digits_to_residue(&d, shift).unwrap();
            TestResult::from_bool(got.to_integer() == reference_residue(&plan, &d, shift))
        }

        fn residue_to_digits_matches_reference(seed: Vec<u64>, mode: u8, p: u32, extra: u8, shift: u32) -> TestResult {
            let p = 13 + p % 188;
            let Ok(plan) = Plan::with_log2(p, Plan::new(p).unwrap().log2() + u32::from(extra % 3)) else {
                return TestResult::discard();
            };
            let r = residue_from(&plan, &seed, mode);
            let d = plan.residue_to_digits(&r, shift);
            TestResult::from_bool(d == reference_digits(&plan, &r, shift) && balanced(&plan, &d))
        }
    }

    #[test]
    fn every_small_plan_matches_the_references() {
        // Every plan for p = 13..=200 (each length up to n ≤ p) and some with n just below p: long
        // runs of 1-bit digits, where the carry outgrows an i64, then a 2-bit one. Every kind of
        // digits and residue.
        let seed: Vec<i64> = (0..97).map(|i: i64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64)).collect();
        let words: Vec<u64> = seed.iter().map(|&x| x.rotate_left(17) as u64).collect();
        let small = (13u32..=200).flat_map(|p| (Plan::new(p).unwrap().log2()..=7).map(move |log2| (p, log2)));
        let mut checked = 0;
        for (p, log2) in small.chain([(258, 8), (263, 8), (1031, 10)]) {
            let Ok(plan) = Plan::with_log2(p, log2) else { continue };
            for shift in [0, 1, p / 2, p - 1, p] {
                for mode in 0..5 {
                    let d = digits_from(&plan, &seed, mode);
                    let got = plan.digits_to_residue(&d, shift).unwrap();
                    assert!(
                        got.to_integer() == reference_residue(&plan, &d, shift),
                        "p={p} n={} shift={shift} mode={mode}",
                        plan.n()
                    );
                }
                for mode in 0..3 {
                    let r = residue_from(&plan, &words[(mode as usize + shift as usize) % 7..], mode);
                    assert_eq!(
                        plan.residue_to_digits(&r, shift),
                        reference_digits(&plan, &r, shift),
                        "p={p} n={} shift={shift}",
                        plan.n()
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 2500, "{checked}");
    }

    #[test]
    fn large_exponents_match_the_references() {
        let mut rng = SeededRng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = move || rng.next_u64();
        for (p, shift) in [(1_257_787u32, 0u32), (3_021_377, 1_234_567)] {
            let plan = Plan::new(p).unwrap();
            let seed: Vec<i64> = (0..4099).map(|_| next() as i64).collect();
            for mode in 0..5 {
                let d = digits_from(&plan, &seed, mode);
                let got = plan.digits_to_residue(&d, shift).unwrap();
                assert!(got.to_integer() == reference_residue(&plan, &d, shift), "p={p} mode={mode}");
            }
            let words: Vec<u64> = (0..4099).map(|_| next()).collect();
            for mode in 0..3 {
                let r = residue_from(&plan, &words, mode);
                let d = plan.residue_to_digits(&r, shift);
                assert_eq!(d, reference_digits(&plan, &r, shift), "p={p} mode={mode}");
                assert_eq!(plan.digits_to_residue(&d, shift).unwrap(), r, "p={p} mode={mode}");
            }
        }
    }

    #[test]
    fn wrong_digit_count_is_refused() {
        let plan = Plan::new(127).unwrap();
        assert!(matches!(plan.digits_to_residue(&[0; 7], 0), Err(PlanError::DigitCount { .. })));
    }
}
