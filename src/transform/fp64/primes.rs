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
/// 1,132,578,729,885,697 = 3·180018541·2^21 + 1 (50.01 bits): roots for every 2^k up to 2^21.
pub const Q1: Fp64Prime = Fp64Prime { p: 1_132_578_729_885_697, g: 5, log2: 446_710_505_537_536 };
/// 1,146,461,511,221,249 = 1609·339761·2^21 + 1 (50.03 bits): roots for every 2^k up to 2^21.
pub const Q2: Fp64Prime = Fp64Prime { p: 1_146_461_511_221_249, g: 3, log2: 584_040_503_574_528 };
/// 1,333,960,596,520,961 = 5·751·42349·2^23 + 1 (50.24 bits): roots for every 2^k up to 2^22.
pub const Q3: Fp64Prime = Fp64Prime { p: 1_333_960_596_520_961, g: 3, log2: 102_054_685_048_832 };
/// 1,357,337,004,605,441 = 5·337·24007·2^25 + 1 (50.27 bits): roots for every 2^k up to 2^23.
pub const Q4: Fp64Prime = Fp64Prime { p: 1_357_337_004_605_441, g: 6, log2: 1_185_348_956_717_056 };

/// Two primes whose residues the CRT recombines ([`super::crt`]): integers c with
/// |c| ≤ (M − 1)/2, M the product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub primes: [Fp64Prime; 2],
    /// How errors name the CRT's limit.
    pub limit_name: &'static str,
}

impl Pair {
    /// M = the product of the pair.
    pub const fn modulus(&self) -> u128 {
        self.primes[0].p as u128 * self.primes[1].p as u128
    }

    /// The largest |c| the pair recovers: (M − 1)/2.
    pub const fn max_abs(&self) -> u128 {
        (self.modulus() - 1) / 2
    }

    /// Whether both primes have the roots of length n.
    pub fn supports(&self, n: u64) -> bool {
        self.primes.iter().all(|pr| pr.supports(n))
    }
}

/// P1·P2 ≈ 2^92.8: small primes leave room for lazy sums (a forward transform reduces every
/// 7th stage in P1, every 3rd in P2), lengths 2^1 … 2^22.
pub const NARROW: Pair = Pair { primes: [P1, P2], limit_name: "(P1·P2-1)/2" };
/// Q1·Q2 ≈ 2^100.03: 4.5 bits more a digit where the narrow pair's bound fails (e.g. 20,996,011
/// on 2^19 and 82,589,933 on 2^21 words, half the narrow pair's lengths), at the price of a
/// reduction every second forward stage; lengths 2^1 … 2^21.
pub const WIDE: Pair = Pair { primes: [Q1, Q2], limit_name: "(Q1·Q2-1)/2" };
/// Q3·Q4 ≈ 2^100.51: half a bit more a digit than the wide pair and lengths to 2^22, where it
/// takes FP64 from the narrow pair's 146,800,639 to 163,577,855; the same reductions as the
/// wide pair.
pub const WIDER: Pair = Pair { primes: [Q3, Q4], limit_name: "(Q3·Q4-1)/2" };
/// The pairs in the order a plan takes them: the first whose bound holds the exponent at the
/// plan's length (the narrow one reduces less, so it is faster where both hold).
pub const PAIRS: [Pair; 3] = [NARROW, WIDE, WIDER];
/// Every prime of the arithmetic.
pub const PRIMES: [Fp64Prime; 6] = [P1, P2, Q1, Q2, Q3, Q4];

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
        for q in [Q1, Q2] {
            assert_eq!((q.longest(1), q.longest(3), q.longest(5)), (Some(21), None, None));
        }
        assert_eq!((Q3.longest(1), Q3.longest(3), Q3.longest(5)), (Some(22), None, None));
        assert_eq!((Q4.longest(1), Q4.longest(3), Q4.longest(5)), (Some(23), None, None));
        for pair in PAIRS {
            let [a, b] = pair.primes;
            assert_eq!(pair.modulus(), u128::from(a.p) * u128::from(b.p));
            assert_ne!(a.p, b.p);
            // The CRT's one product (crt.rs) needs the sum of the pair below 2^52.
            assert!(a.p + b.p <= 1 << 52);
        }
        // The wide pairs hold more than 2^100, the narrow one less than 2^93; each pair more
        // than the one before it.
        assert!(WIDE.modulus() > 1 << 100 && NARROW.modulus() < 1 << 93);
        assert!(PAIRS.windows(2).all(|w| w[0].modulus() < w[1].modulus()));
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
