#!/usr/bin/env python3
"""Primes for the FP64 arithmetic (issue 37): p < 2^51 with p ≡ 1 (mod L) and 2 an L-th power
residue mod p, so that GF(p) has roots of unity of order L and an L-th root of 2 (the IBDWT
weights 2^(j/n) for every length n dividing L). docs/arithmetic.md ("FP64") records the choice.

2 is an L-th power iff 2^((p−1)/L) ≡ 1 (mod p): one modular power per candidate p = m·L + 1, and
among primes ≡ 1 (mod L) it holds for about one in L. So such primes are rare: below 2^X about
2^X / (X·ln 2 · φ(L) · L) of them; for L = 2^22 about 0.01 below 2^46 but ~5 in [2^49, 2^51).
The search sieves the candidates by the primes below SIEVE_BOUND, tests 2's power on the rest,
and proves primality (Miller–Rabin with the bases that are deterministic below 2^64).

    scripts/fp64-primes.py search 3:22 --lo 49 --hi 51    # L = 3·2^22 in [2^49, 2^51)
    scripts/fp64-primes.py search 22 --lo 44 --hi 51      # L = 2^22
    scripts/fp64-primes.py show 25168793567233            # lengths a prime supports

A length spec is K (2^K) or C:K (C·2^K). For every prime found, `search` prints the largest
2^k, 3·2^k and 5·2^k whose roots of unity and root of 2 exist (`show` prints the same).
"""

import argparse
import math
import sys

SIEVE_BOUND = 1 << 14
CHUNK = 1 << 20
MR_BASES = (2, 325, 9375, 28178, 450775, 9780504, 1795265022)


def is_prime(n):
    """Deterministic Miller–Rabin below 2^64."""
    if n < 2:
        return False
    for q in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % q == 0:
            return n == q
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in MR_BASES:
        a %= n
        if a == 0:
            continue
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def small_primes(bound):
    sieve = bytearray([1]) * bound
    sieve[0:2] = b"\x00\x00"
    for i in range(2, math.isqrt(bound) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return [i for i in range(bound) if sieve[i]]


def parse_len(spec):
    c, _, k = spec.rpartition(":")
    return (int(c) if c else 1) << int(k)


def factor(n):
    out, q = [], 2
    while q * q <= n:
        while n % q == 0:
            out.append(q)
            n //= q
        q += 1
    if n > 1:
        out.append(n)
    return out


def supported(p):
    """The largest 2^k, 3·2^k and 5·2^k lengths n with n | p − 1 and 2 an n-th power mod p
    (the weights of every divisor of n exist then too), as (c, k) or None."""
    best = []
    for c in (1, 3, 5):
        k_top = None
        for k in range(1, 40):
            n = c << k
            if (p - 1) % n or pow(2, (p - 1) // n, p) != 1:
                break
            k_top = k
        best.append((c, k_top))
    return best


def generator(p):
    """The least primitive root mod p."""
    qs = set(factor(p - 1))
    return next(g for g in range(2, p) if all(pow(g, (p - 1) // q, p) != 1 for q in qs))


def log2_base(g, p):
    """E with g^E ≡ 2 (mod p), by Pohlig–Hellman over p − 1's prime powers (a brute-force
    search per digit: fine while p − 1's prime factors are below ~10^8), combined by CRT."""
    n, fs = p - 1, factor(p - 1)
    e_total, mod_total = 0, 1
    for q in sorted(set(fs)):
        k = fs.count(q)
        gq = pow(g, n // q, p)  # order q
        x = 0
        for j in range(k):
            # (2·g^(−x))^(n/q^(j+1)) = gq^d
            t = pow(2 * pow(g, -x, p) % p, n // q ** (j + 1), p)
            d, acc = 0, 1
            while acc != t:
                acc, d = acc * gq % p, d + 1
            x += d * q**j
        qk = q**k
        # combine x mod qk with e_total mod mod_total
        inv = pow(mod_total, -1, qk)
        e_total += mod_total * ((x - e_total) * inv % qk)
        mod_total *= qk
    assert pow(g, e_total, p) == 2
    return e_total


def describe(p):
    lens = ", ".join(f"{c}·2^{k}" if c > 1 else f"2^{k}" for c, k in supported(p) if k)
    fs = factor(p - 1)
    fac = "·".join(f"{q}^{fs.count(q)}" if fs.count(q) > 1 else str(q) for q in sorted(set(fs)))
    return f"{p} ({math.log2(p):.2f} bits) p−1 = {fac}; weights and roots up to {lens or 'none'}"


def params(p):
    """The constants src/transform/fp64/primes.rs records: a generator g and E = log_g 2."""
    g = generator(p)
    return f"  generator {g}, 2 = g^{log2_base(g, p)}"


def search(length, lo_bits, hi_bits, limit):
    primes = [q for q in small_primes(SIEVE_BOUND) if length % q]
    m_lo = max(1, ((1 << lo_bits) - 1) // length + 1)
    m_hi = ((1 << hi_bits) - 2) // length  # p = m·L + 1 < 2^hi
    # p ≡ 0 (mod q) ⇔ m ≡ −L^(−1) (mod q).
    roots = [(q, (-pow(length, -1, q)) % q) for q in primes]
    found = 0
    for start in range(m_lo, m_hi + 1, CHUNK):
        size = min(CHUNK, m_hi + 1 - start)
        keep = bytearray([1]) * size
        for q, r in roots:
            first = (r - start) % q
            keep[first::q] = bytearray(len(range(first, size, q)))
        for i in (i for i, v in enumerate(keep) if v):
            m = start + i
            p = m * length + 1
            if pow(2, m, p) == 1 and is_prime(p):
                print(describe(p), flush=True)
                found += 1
                if found >= limit:
                    return found
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("search", help="primes p ≡ 1 (mod L), 2 an L-th power, in [2^lo, 2^hi)")
    s.add_argument("length", help="L as K (2^K) or C:K (C·2^K)")
    s.add_argument("--lo", type=int, default=44)
    s.add_argument("--hi", type=int, default=51)
    s.add_argument("--limit", type=int, default=1 << 30, help="stop after this many")
    sh = sub.add_parser("show", help="the lengths that given primes support")
    sh.add_argument("primes", nargs="+", type=int)
    args = ap.parse_args()
    if args.cmd == "show":
        for p in args.primes:
            if not is_prime(p):
                sys.exit(f"{p} is not prime")
            print(describe(p))
            print(params(p))
        return
    length = parse_len(args.length)
    if not 1 <= args.lo < args.hi <= 53:
        sys.exit("need 1 <= lo < hi <= 53")
    found = search(length, args.lo, args.hi, args.limit)
    print(f"{found} primes p ≡ 1 (mod {length}) in [2^{args.lo}, 2^{args.hi}) with 2 a {length}-th power")


if __name__ == "__main__":
    main()
