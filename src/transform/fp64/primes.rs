//! The primes of the FP64 arithmetic and the roots its transforms take from them: for each a
//! generator g of GF(p)^× and E = log_g 2, from which a primitive n-th root of unity is
//! g^((p−1)/n) and an n-th root of 2 (the IBDWT weight 2^(1/n)) is g^(E/n), for every length n
//! that divides both p − 1 and E (2 is an n-th power iff n | E). scripts/fp64-primes.py found
//! them and computed g and E; the tests here check every constant from scratch.

/// A prime of the FP64 arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp64Prime {
    pub p: u64,
    /// A generator of GF(p)^×.
    pub g: u64,
    /// log_g 2: g^E ≡ 2 (mod p).
    pub log2: u64,
}

/// 25,168,793,567,233 = 3·7·71437·2^24 + 1 (44.52 bits): roots of unity and roots of 2 for
/// every 2^k and 3·2^k up to 3·2^23.
pub const P1: Fp64Prime = Fp64Prime { p: 25_168_793_567_233, g: 5, log2: 3_343_153_889_280 };
/// 331,363,165,143,041 = 5·83·190369·2^22 + 1 (48.24 bits): roots of unity and roots of 2 for
/// every 2^k up to 2^22 (the first such prime above 2^48; none supports 3·2^k as well).
pub const P2: Fp64Prime = Fp64Prime { p: 331_363_165_143_041, g: 3, log2: 199_327_767_068_672 };
/// The pair whose residues the CRT recombines ([`super::crt`]).
pub const PRIMES: [Fp64Prime; 2] = [P1, P2];

/// b^e mod p, by u128 products.
pub fn pow_mod(b: u64, mut e: u64, p: u64) -> u64 {
    let (mut base, mut acc) = (u128::from(b % p), 1u128);
    let m = u128::from(p);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc * base % m;
        }
        base = base * base % m;
        e >>= 1;
    }
    acc as u64
}

impl Fp64Prime {
    /// Whether a transform of length n has its roots here: n | p − 1 and 2 an n-th power.
    pub fn supports(&self, n: u64) -> bool {
        n > 0 && (self.p - 1).is_multiple_of(n) && self.log2.is_multiple_of(n)
    }

    /// A primitive n-th root of unity (canonical), for a supported n.
    pub fn root_of_unity(&self, n: u64) -> Option<u64> {
        self.supports(n).then(|| pow_mod(self.g, (self.p - 1) / n, self.p))
    }

    /// An n-th root of 2 (canonical), for a supported n: the IBDWT weights are its powers.
    pub fn root_of_two(&self, n: u64) -> Option<u64> {
        self.supports(n).then(|| pow_mod(self.g, self.log2 / n, self.p))
    }

    /// The largest odd·2^k this prime supports, for odd ∈ {1, 3, 5} (None: not even odd·2).
    pub fn longest(&self, odd: u64) -> Option<u32> {
        (1..63).take_while(|&k| odd << k < self.p && self.supports(odd << k)).last()
    }
}

/// The product of the pair, M = P1·P2: the CRT recovers integers c with |c| ≤ (M − 1)/2.
pub const MODULUS: u128 = P1.p as u128 * P2.p as u128;

#[cfg(test)]
mod tests {
    use super::*;

    fn is_prime(n: u64) -> bool {
        rug::Integer::from(n).is_probably_prime(40) != rug::integer::IsPrime::No
    }

    /// The prime factors of n by trial division (n − 1 of these primes is smooth enough).
    fn prime_factors(mut n: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut q = 2;
        while q * q <= n {
            if n.is_multiple_of(q) {
                out.push(q);
                while n.is_multiple_of(q) {
                    n /= q;
                }
            }
            q += 1;
        }
        if n > 1 {
            out.push(n);
        }
        out
    }

    #[test]
    fn constants_are_what_they_claim() {
        for pr in PRIMES {
            assert!(is_prime(pr.p), "{}", pr.p);
            assert!(pr.p <= super::super::field::MAX_PRIME);
            for q in prime_factors(pr.p - 1) {
                assert_ne!(pow_mod(pr.g, (pr.p - 1) / q, pr.p), 1, "{} is no generator mod {}", pr.g, pr.p);
            }
            assert_eq!(pow_mod(pr.g, pr.log2, pr.p), 2, "log of 2 mod {}", pr.p);
        }
        assert_eq!((P1.longest(1), P1.longest(3), P1.longest(5)), (Some(23), Some(23), None));
        assert_eq!((P2.longest(1), P2.longest(3), P2.longest(5)), (Some(22), None, None));
        assert_eq!(MODULUS, u128::from(P1.p) * u128::from(P2.p));
        assert_ne!(P1.p, P2.p);
    }

    #[test]
    fn roots_have_their_orders() {
        for pr in PRIMES {
            for odd in [1u64, 3, 5] {
                let Some(top) = pr.longest(odd) else { continue };
                for k in 1..=top {
                    let n = odd << k;
                    let w = pr.root_of_unity(n).unwrap();
                    assert_eq!(pow_mod(w, n, pr.p), 1);
                    assert_eq!(pow_mod(w, n / 2, pr.p), pr.p - 1, "n={n}: not primitive");
                    if odd > 1 {
                        assert_ne!(pow_mod(w, n / odd, pr.p), 1, "n={n}: not primitive");
                    }
                    assert_eq!(pow_mod(pr.root_of_two(n).unwrap(), n, pr.p), 2, "n={n}");
                }
                assert!(pr.root_of_two(odd << (top + 1)).is_none());
            }
        }
    }
}
