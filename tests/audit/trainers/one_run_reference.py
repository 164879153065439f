#!/usr/bin/env python3
"""Reference values for the one-run audit's statistics (tests/audit/trainers/one_run_test.cpp).

Steinke, Nasr & Jagielski (NeurIPS 2023) p-value, as their published snippet and jax_privacy's
`_one_run_p_value` compute it with scipy, here by exact summation of binomial terms in mpmath at
60 significant digits (no scipy, no incomplete-beta continued fraction: an independent route):
    q = e^eps / (1 + e^eps)
    beta = P[Bin(r, q) >= v]
    alpha = max_{i=1..v} P[v - i <= Bin(r, q) < v] / i
    p = min(1, beta + 2 m delta alpha)
and the lower bound sup{eps : p(eps) <= level} by 200 bisection steps.
Mahloujifar, Melis & Chaudhuri (ICML 2025) Algorithm 3 for k = 2 with jax_privacy's guards
(`_epsilon_one_run_fdp`: h = max(h, f_bar_inv(r)), r <= 1, stop when h stops growing), for the
(eps, delta)-DP hypothesis f_bar(x) = min(1, e^eps x + delta), in mpmath, and its largest
rejected eps by 200 bisection steps.
Run: python3 one_run_reference.py (needs mpmath); paste the output into one_run_test.cpp.
"""
import random

import mpmath as mp

mp.mp.dps = 60


def pmf(r, j, q):
    return mp.binomial(r, j) * q**j * (1 - q) ** (r - j)


def p_value(m, r, v, eps, delta):
    if r == 0 or v == 0:
        return mp.mpf(1)
    q = mp.e**eps / (1 + mp.e**eps)
    beta = mp.fsum(pmf(r, j, q) for j in range(v, r + 1))
    alpha, partial = mp.mpf(0), mp.mpf(0)
    for i in range(1, v + 1):
        partial += pmf(r, v - i, q)
        alpha = max(alpha, partial / i)
    return min(mp.mpf(1), beta + 2 * m * delta * alpha)


def eps_lower(m, r, v, delta, level):
    if p_value(m, r, v, 0, delta) > level:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while p_value(m, r, v, hi, delta) <= level:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if p_value(m, r, v, mid, delta) <= level:
            lo = mid
        else:
            hi = mid
    return lo


def fdp_rejects(m, c_prime, c, eps, delta, level):
    if c == 0:
        return False
    inv = lambda y: min(mp.mpf(1), max(mp.mpf(0), y - delta) * mp.e ** (-eps))
    r = mp.mpf(level) * c / m
    h = mp.mpf(level) * (c_prime - c) / m
    for i in range(c - 1, -1, -1):
        h_new = max(h, inv(r))
        if h_new == h:
            break
        r = min(mp.mpf(1), r + mp.mpf(i) / (c_prime - i) * (h_new - h))
        h = h_new
    return r + h >= mp.mpf(c_prime) / m


def fdp_eps_lower(m, c_prime, c, delta, level):
    if not fdp_rejects(m, c_prime, c, 0, delta, level):
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while fdp_rejects(m, c_prime, c, hi, delta, level):
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if fdp_rejects(m, c_prime, c, mid, delta, level):
            lo = mid
        else:
            hi = mid
    return lo


def main():
    rng = random.Random(20231107)
    print("// {m, r, v, epsilon, delta, p}")
    for _ in range(50):
        m = rng.choice([100, 200, 1000, 5000])
        r = rng.randint(1, min(m, 300))
        eps = round(rng.uniform(0, 4), 3)
        # v near r q(eps) + z sd, z in [-1, 4]: p-values across (0, 1), not mostly 1.
        q = mp.e**eps / (1 + mp.e**eps)
        z = rng.uniform(-1, 4)
        v = max(0, min(r, int(mp.nint(r * q + z * mp.sqrt(r * q * (1 - q))))))
        delta = rng.choice([0, 1e-6, 1e-5, 1e-3])
        print("{%d, %d, %d, %.3f, %g, %s}," % (m, r, v, eps, delta, mp.nstr(p_value(m, r, v, eps, delta), 17)))
    print("// {m, r, v, delta, level, epsilon_lower}")
    for m, r, v, delta, level in [(1000, 24, 24, 0, 0.05), (200, 50, 50, 1e-5, 0.01),
                                  (200, 100, 90, 1e-5, 0.01), (1000, 250, 200, 1e-5, 0.0125),
                                  (5000, 1000, 700, 1e-6, 0.05), (100, 10, 9, 0, 0.05),
                                  (200, 25, 25, 1e-3, 0.01)]:
        print("{%d, %d, %d, %g, %g, %s}," % (m, r, v, delta, level, mp.nstr(eps_lower(m, r, v, delta, level), 17)))
    print("// MMC: {m, r, v, delta, level, epsilon_lower}")
    for m, r, v, delta, level in [(1000, 100, 95, 1e-5, 0.05), (1000, 24, 24, 0, 0.05),
                                  (200, 50, 50, 1e-5, 0.01), (200, 100, 90, 1e-5, 0.01),
                                  (1000, 250, 200, 1e-5, 0.0125), (5000, 1000, 700, 1e-6, 0.05),
                                  (100, 10, 9, 0, 0.05), (10000, 500, 480, 1e-5, 0.05)]:
        print("{%d, %d, %d, %g, %g, %s}," % (m, r, v, delta, level, mp.nstr(fdp_eps_lower(m, r, v, delta, level), 17)))


if __name__ == "__main__":
    main()
