#!/usr/bin/env python3
"""Is every single-step pair of fixed-size lots dominated by a flagged mixture of R and R'?

docs/accounting.md, "Is a tighter sound bound known?".  Units: noise stddev 1, so the replace-one
sensitivity 2C is mu = 2 / sigma (sigma = noise stddev / clipping norm).  A step, after
conditioning on the lot's other records, is a pair
    P = g N(a) + (1 - g) N(0),   Q = g N(b) + (1 - g) N(0),   |a|, |b|, |a - b| <= mu,
R is (a, b) = (mu, 0), R' is (0, mu).  The flagged mixture "with probability lam run R, else R',
and reveal which" has hockey-stick curve M_lam = lam H(R) + (1 - lam) H(R').  (P, Q) is
Blackwell-dominated by it iff H_alpha(P || Q) <= M_lam(alpha) for every alpha >= 0; the margin
    m(P, Q) = min over lam in [0, 1] of max over alpha of H_alpha(P || Q) - M_lam(alpha)
is <= 0 iff some lam works (up to the alpha grid: a positive margin is a certificate, found at
two alphas, which is re-checked in mpmath at 40 digits).

The curves are closed forms: p - alpha q = phi(x) (w_a e^{a x - a^2/2} + w_0 (1 - alpha)
- alpha w_b e^{b x - b^2/2}), a sum of three exponentials with at most two sign changes, found on a
fine grid and refined by brentq; each interval contributes normal CDF differences.  Planar pairs
(triangles 0, a, b) are integrated over the coordinate perpendicular to a - b by Gauss-Hermite,
the inner integral in closed form (the perpendicular offset c only rescales w_a = w_b).

    python3 bench/accounting/flagged_mixture.py          # 1-D scan, planar scan, certificates
    python3 bench/accounting/flagged_mixture.py --quick  # coarser grids
    python3 bench/accounting/flagged_mixture.py --two-steps  # only the two-step comparison

Second order at alpha = 1 (the analytic reason for the failures, docs/accounting.md): every pair
with |a - b| = mu has H_1 = TV(R) = TV(R'), so a dominating mixture must match its slope at 1
(which fixes lam) and its second derivative there must not exceed the mixture's; the ratio of
second derivatives (densities of the likelihood ratio under Q at 1) is, in 1-D,
    (g + (1 - g) e^{-a b / 2})^2  > 1  whenever a b < 0,
so every 1-D pair strictly between R and R' (a in (0, mu), b = a - mu) fails.
"""
import argparse
import math

import mpmath as mp
import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

GRID = np.linspace(-45.0, 45.0, 3601)


def positive_intervals(f):
    """Intervals of the real line where f > 0 (f: a sum of three exponentials, <= 2 sign changes)."""
    values = f(GRID)
    roots = []
    for i in np.nonzero(np.sign(values[:-1]) != np.sign(values[1:]))[0]:
        roots.append(brentq(f, GRID[i], GRID[i + 1], xtol=1e-15, rtol=1e-15))
    cuts = [-np.inf] + roots + [np.inf]
    mids = [GRID[0] - 1 if k == 0 else (GRID[-1] + 1 if k == len(cuts) - 2 else
                                        (cuts[k] + cuts[k + 1]) / 2) for k in range(len(cuts) - 1)]
    return [(cuts[k], cuts[k + 1]) for k in range(len(mids)) if f(np.array([mids[k]]))[0] > 0]


def hockey_1d(w_a, a, w_0, w_b, b, alpha):
    """int phi(x) (w_a e^{a x - a^2/2} + w_0 (1 - alpha) - alpha w_b e^{b x - b^2/2})_+ dx."""
    def f(x):
        return (w_a * np.exp(a * x - a * a / 2) + w_0 * (1 - alpha)
                - alpha * w_b * np.exp(b * x - b * b / 2))
    total = 0.0
    for lo, hi in positive_intervals(f):
        def span(shift):
            return ndtr(hi - shift) - ndtr(lo - shift)
        total += w_a * span(a) + w_0 * (1 - alpha) * span(0.0) - alpha * w_b * span(b)
    return max(total, 0.0)


def curve(g, a, b, alphas, c=0.0, nodes=None):
    """H_alpha(P || Q) for the pair (a, b) along a - b, perpendicular offset c (planar)."""
    if c == 0.0:
        return np.array([hockey_1d(g, a, 1 - g, g, b, x) for x in alphas])
    v, w = nodes
    out = np.zeros(len(alphas))
    for vk, wk in zip(v, w):
        scale = g * math.exp(c * vk - c * c / 2)
        out += wk * np.array([hockey_1d(scale, a, 1 - g, scale, b, x) for x in alphas])
    return out


def margin(h_p, h_r, h_rr):
    """min over lam of max over alpha of h_p - lam h_r - (1 - lam) h_rr, and the minimising lam."""
    lams = np.linspace(0, 1, 2001)
    excess = h_p[None, :] - lams[:, None] * h_r[None, :] - (1 - lams[:, None]) * h_rr[None, :]
    worst = excess.max(axis=1)
    k = int(worst.argmin())
    return float(worst[k]), float(lams[k])


def alphas(n):
    t = np.concatenate([-np.geomspace(1e-4, 25, n)[::-1], [0.0], np.geomspace(1e-4, 25, n)])
    return np.exp(t)


def scan_1d(gammas, sigmas, n_alpha, step):
    print("1-D pairs (a, b), |a|, |b|, |a - b| <= 2C, a >= |b| up to reflection and swap:")
    worst_ok = -np.inf
    failures = 0
    total = 0
    al = alphas(n_alpha)
    for sigma in sigmas:
        mu = 2 / sigma
        for g in gammas:
            h_r = curve(g, mu, 0.0, al)
            h_rr = curve(g, 0.0, mu, al)
            worst = (-np.inf, None)
            for a in np.arange(0, 2.0 + 1e-9, step) * mu / 2:
                for b in np.arange(-2.0, 2.0 + 1e-9, step) * mu / 2:
                    if abs(a - b) > mu + 1e-12 or abs(b) > a + 1e-12 or a == b:
                        continue
                    total += 1
                    m, lam = margin(curve(g, a, b, al), h_r, h_rr)
                    if m > 1e-12:
                        failures += 1
                    else:
                        worst_ok = max(worst_ok, m)
                    if m > worst[0]:
                        worst = (m, (a * sigma, b * sigma, lam))
            m, (a, b, lam) = worst
            print(f"  sigma {sigma:4}, gamma {g:5}: worst margin {m:+.3e} at (a, b) = "
                  f"({a:.3f}C, {b:.3f}C), lam {lam:.3f}", flush=True)
    print(f"  {failures} of {total} pairs fail (margin > 1e-12); largest margin among the others "
          f"{worst_ok:+.2e}")


def scan_plane(gammas, sigmas, n_alpha):
    """Triangles (0, a, b) in the plane: a - b along the first axis (length s), both at height c.
    Up to rotation, reflection and swap every triangle with sides <= mu is one of these."""
    print("planar pairs: a = (a1, c), b = (a1 - s, c), |a|, |b| <= mu = 2C, s = |a - b|:")
    v, w = np.polynomial.hermite_e.hermegauss(48)
    nodes = (v, w / math.sqrt(2 * math.pi))
    al = alphas(n_alpha)
    for sigma in sigmas:
        mu = 2 / sigma
        for g in gammas:
            h_r = curve(g, mu, 0.0, al)
            h_rr = curve(g, 0.0, mu, al)
            rows = []
            for s_frac in (1.0, 0.9):
                for c_frac in (0.0, 0.25, 0.5, 0.75, math.sqrt(3) / 2):
                    s, c = s_frac * mu, c_frac * mu
                    limit = math.sqrt(max(mu * mu - c * c, 0.0))
                    for a1 in np.linspace(s - limit, limit, 5):
                        b1 = a1 - s
                        if abs(b1) > limit + 1e-12 or a1 < -b1 - 1e-12:
                            continue  # outside, or the reflection of one already taken
                        m, lam = margin(curve(g, a1, b1, al, c, nodes), h_r, h_rr)
                        rows.append((m, s_frac, c_frac, a1 / mu * 2, lam))
            fails = sum(1 for r in rows if r[0] > 1e-12)
            m, s_frac, c_frac, a1, lam = max(rows)
            ok = max((r for r in rows if r[0] <= 1e-12), default=(float("nan"),))[0]
            print(f"  sigma {sigma}, gamma {g}: {fails} of {len(rows)} fail; worst margin {m:+.3e} "
                  f"at |a - b| = {s_frac:.2f} x 2C, height {c_frac:.3f} x 2C, a1 = {a1:.3f}C "
                  f"(lam {lam:.3f}); largest margin among the others {ok:+.2e}", flush=True)


def symmetric_curve(g, mu, alpha):
    """max(H_alpha(R), H_alpha(R')) in closed form (R's loss crosses each level once)."""
    alpha = np.asarray(alpha, float)

    def h_r(x):
        out = 1 - x
        m = x > 1 - g
        cross = (np.log((x[m] - 1 + g) / g) + mu * mu / 2) / mu
        out[m] = g * ndtr(mu - cross) + (1 - g - x[m]) * ndtr(-cross)
        return np.maximum(out, 0)
    return np.maximum(h_r(alpha), 1 - alpha + alpha * h_r(1 / alpha))


def two_steps(g, sigma, eps, width=0.005):
    """delta(eps) of two steps: a first pair, then R or R' (the worse at the first step's loss).
    First pairs: R (1-D, fine grid), the middle pair, the right triangle in the clipping disc
    (a = (C, C), b = (-C, C)) and the equilateral triangle of side 2C (2-D grid, midpoint rule)."""
    mu = 2 / sigma
    x = np.arange(-14, 14, 1e-4) + 5e-5
    p = g * np.exp(-(x - mu) ** 2 / 2) + (1 - g) * np.exp(-x ** 2 / 2)
    q = np.exp(-x ** 2 / 2)
    out = {"R": float(np.sum(p * symmetric_curve(g, mu, np.exp(eps - np.log(p / q))))
                      * 1e-4 / math.sqrt(2 * math.pi))}
    u = np.arange(-12, 12, width) + width / 2
    U, V = np.meshgrid(u, u, indexing="ij")
    for name, c in (("middle", 0.0), ("right", mu / 2), ("equilateral", math.sqrt(3) / 2 * mu)):
        shifted = g * np.exp(-(V - c) ** 2 / 2)
        centred = (1 - g) * np.exp(-V ** 2 / 2 - U ** 2 / 2)
        p = shifted * np.exp(-(U - mu / 2) ** 2 / 2) + centred
        q = shifted * np.exp(-(U + mu / 2) ** 2 / 2) + centred
        value = np.sum(p * symmetric_curve(g, mu, np.exp(eps - np.log(p / q)).ravel()).reshape(
            p.shape))
        out[name] = float(value * width * width / (2 * math.pi))
    return out


def second_order_ratio_1d(g, a, b):
    return (g + (1 - g) * math.exp(-a * b / 2)) ** 2


def certificate(g, sigma, a_c, b_c, t):
    """mpmath, 40 digits: the lam-interval cut out by alpha = e^{+t} (lam >= L) and e^{-t} (lam <=
    U) for the pair (a_c C, b_c C); L > U means no flagged mixture dominates the pair."""
    mp.mp.dps = 40
    mu = mp.mpf(2) / sigma
    a, b = mp.mpf(a_c) / sigma, mp.mpf(b_c) / sigma
    g = mp.mpf(g)

    def h(wa, sa, wb, sb, alpha):
        def f(x):
            return (wa * mp.e ** (sa * x - sa ** 2 / 2) + (1 - g) * (1 - alpha)
                    - alpha * wb * mp.e ** (sb * x - sb ** 2 / 2))
        xs = [mp.mpf(x) / 10 for x in range(-600, 601)]
        roots = [mp.findroot(f, (xs[i], xs[i + 1]), solver="anderson")
                 for i in range(len(xs) - 1) if mp.sign(f(xs[i])) != mp.sign(f(xs[i + 1]))]
        cuts = [-mp.inf] + roots + [mp.inf]
        total = mp.mpf(0)
        for k in range(len(cuts) - 1):
            lo, hi = cuts[k], cuts[k + 1]
            probe = (lo + hi) / 2 if k not in (0, len(cuts) - 2) else (
                xs[0] - 1 if k == 0 else xs[-1] + 1)
            if len(cuts) == 2:
                probe = mp.mpf(0)
            if f(probe) <= 0:
                continue
            def span(s):
                return mp.ncdf(hi - s) - mp.ncdf(lo - s)
            total += wa * span(sa) + (1 - g) * (1 - alpha) * span(0) - alpha * wb * span(sb)
        return total

    out = {}
    for name, alpha in (("up", mp.e ** t), ("down", mp.e ** (-t))):
        hp = h(g, a, g, b, alpha)
        hr = h(g, mu, g, 0, alpha)
        hrr = h(g, 0, g, mu, alpha)
        out[name] = (hp, hr, hrr)
    hp, hr, hrr = out["up"]
    lower = (hp - hrr) / (hr - hrr)  # alpha > 1: H(R) > H(R'), so lam >= lower
    hp2, hr2, hrr2 = out["down"]
    upper = (hrr2 - hp2) / (hrr2 - hr2)  # alpha < 1: H(R') > H(R), so lam <= upper
    return lower, upper, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--two-steps", action="store_true", help="only the two-step comparison")
    args = parser.parse_args()
    print("two steps, sigma 1, gamma 0.1: delta of a first pair, then R or R' (the worse):")
    for eps in (0.0, 0.05):
        print(f"  eps {eps}: " + ", ".join(f"{k} first {v:.8f}"
                                          for k, v in two_steps(0.1, 1.0, eps).items()), flush=True)
    if args.two_steps:
        return
    quick = args.quick
    gammas = [0.001, 0.01, 0.1, 0.5] if quick else [0.001, 0.004, 0.01, 0.05, 0.1, 0.2, 0.5]
    sigmas = [0.5, 1, 2, 8] if quick else [0.5, 1, 1.5, 2, 4, 8]
    scan_1d(gammas, sigmas, 60 if quick else 150, 0.25 if quick else 0.125)

    for sigma, g in ((1, 0.1), (2, 0.2), (4, 0.1)):  # the three short rows of the table
        scan_plane([g], [sigma], 30 if quick else 40)

    print("certificates (mpmath, 40 digits): middle pair (C, -C), alpha = e^{+-t}")
    for g, sigma, t in ((0.1, 1, 0.05), (0.2, 2, 0.05), (0.1, 4, 0.02), (0.001, 0.5, 0.0005),
                        (0.5, 8, 0.01)):
        lower, upper, _ = certificate(g, sigma, 1, -1, t)
        print(f"  gamma {g}, sigma {sigma}: alpha = e^{t}: lam >= {mp.nstr(lower, 12)}; "
              f"alpha = e^-{t}: lam <= {mp.nstr(upper, 12)}; gap {mp.nstr(lower - upper, 6)}; "
              f"second-order ratio {second_order_ratio_1d(g, 1 / sigma, -1 / sigma):.6f}")


if __name__ == "__main__":
    main()
