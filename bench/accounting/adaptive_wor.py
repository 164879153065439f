#!/usr/bin/env python3
"""The adaptive worst case of T steps of the Gaussian on fixed-size lots (replace-one), computed
independently of dptune (numpy and scipy only): docs/accounting.md, "Fixed-size lots in `pld`".

One step, after conditioning on the other records of the lot and joint convexity, is a pair
    P = gamma N(a) + (1 - gamma) N(0),   Q = gamma N(b) + (1 - gamma) N(0)
(noise stddev sigma relative to the clipping norm C = 1, so |a|, |b|, |a - b| <= 2 = 2C).  R is
a = 2, b = 0; R' is a = 0, b = 2.  The adversary may pick the pair of every step from the outputs
so far; the best choice is the backward induction on the accumulated privacy loss l:
    W_T(u) = (1 - e^{-u})_+,   W_t(u) = max over pairs of E_P[W_{t+1}(u + L)],
    delta(eps) = W_0(-eps)          (u = l - eps; E_P form of the hockey-stick divergence).
Losses rounded up on the grid h (with a Lipschitz margin for the cell they come from, the tails'
mass at +inf, W <= 1 above the window and W(lower end) below it) give an upper bound of the
maximum over the pairs offered; rounded down (tails dropped, W >= 0 below the window,
W >= 1 - e^{-u} above it) a lower bound, which one pair of datasets realises when the pairs
offered are realisable (every pair of this 1-D family is: x_i -> a + y, x_i' -> b + y, every other
record -> y, with y chosen so that all three lie in [-1, 1]).

    python3 bench/accounting/adaptive_wor.py            # the three short rows, R and R' only
    python3 bench/accounting/adaptive_wor.py --sweep    # also every 1-D pair on a 0.5 grid
    python3 bench/accounting/adaptive_wor.py --plane    # 2-D pairs (triangles 0, a, b), coarse
    python3 bench/accounting/adaptive_wor.py --disc     # + the right triangle in the clipping disc

The 1-D sweep and the planar pairs are evidence about the family's worst case, not a proof: the
maximum over every pair of the family is the exact adaptive value, and only R, R' and the
symmetric hull of the two are proven to bound single pairs (without_replacement.cpp).
"""
import argparse
import math
import time

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import ndtr

ROWS = [  # sigma, q, steps, grid h, window of u = l - eps
    (1.0, 0.1, 10, 5e-4, -24.0, 10.0),
    (2.0, 0.2, 20, 2e-4, -14.0, 10.0),
    (4.0, 0.1, 50, 1e-4, -8.0, 8.0),
]
DELTA = 1e-5


def loss_law_1d(q, a, b, sigma, h, upper):
    """P-law of the privacy loss of the 1-D pair (a, b) on h*Z: (first index, masses, mass at inf)."""
    span = max(abs(a), abs(b), abs(a - b))
    lipschitz = span / sigma**2  # |L'| <= (spread of the means) / sigma^2
    width = min(h * sigma**2 / (4 * span), 1e-3 * sigma)
    lo, hi = min(0.0, a, b) - 11 * sigma, max(0.0, a, b) + 11 * sigma
    edges = lo + width * np.arange(int(math.ceil((hi - lo) / width)) + 1)
    mid = (edges[:-1] + edges[1:]) / 2

    def log_mixture(y, c):
        return np.logaddexp(math.log(q) - (y - c)**2 / (2 * sigma**2),
                            math.log1p(-q) - y**2 / (2 * sigma**2))

    loss = log_mixture(mid, a) - log_mixture(mid, b)
    loss += (1 if upper else -1) * lipschitz * width / 2
    cdf = q * ndtr((edges - a) / sigma) + (1 - q) * ndtr(edges / sigma)
    mass = np.diff(cdf)
    index = np.ceil(loss / h) if upper else np.floor(loss / h)
    index = index.astype(np.int64)
    first = int(index.min())
    tail = (cdf[0] + 1 - cdf[-1]) if upper else 0.0
    return first, np.bincount(index - first, weights=mass), tail


def loss_law_2d(q, a, b, sigma, h, width):
    """The planar pair's loss law, cell-centre losses rounded to the nearest grid point (coarse)."""
    lo, hi = -9 * sigma - 2, 9 * sigma + 2
    edges = lo + width * np.arange(int(math.ceil((hi - lo) / width)) + 1)
    centre = (edges[:-1] + edges[1:]) / 2
    y1, y2 = np.meshgrid(centre, centre, indexing="ij")

    def log_mixture(m):
        return np.logaddexp(math.log(q) - ((y1 - m[0])**2 + (y2 - m[1])**2) / (2 * sigma**2),
                            math.log1p(-q) - (y1**2 + y2**2) / (2 * sigma**2))

    def cell_mass(m):
        return np.outer(np.diff(ndtr((edges - m[0]) / sigma)), np.diff(ndtr((edges - m[1]) / sigma)))

    loss = log_mixture(a) - log_mixture(b)
    mass = q * cell_mass(a) + (1 - q) * cell_mass((0.0, 0.0))
    index = np.round(loss / h).astype(np.int64).ravel()
    first = int(index.min())
    return first, np.bincount(index - first, weights=mass.ravel()), 0.0


def induction(laws, steps, h, u_lo, u_hi, upper):
    """W_0 on the grid u_lo + k h (see the module comment)."""
    points = int(round((u_hi - u_lo) / h)) + 1
    u = u_lo + h * np.arange(points)
    w = np.maximum(0.0, -np.expm1(-u))
    for _ in range(steps):
        best = None
        for first, mass, tail in laws:
            last = first + len(mass) - 1
            left, right = max(0, -first), max(0, last)
            extended = np.empty(left + points + right)
            extended[left:left + points] = w
            above_u = u_lo + h * np.arange(points, points + right)
            if upper:
                extended[:left], extended[left + points:] = w[0], 1.0
            else:
                extended[:left], extended[left + points:] = 0.0, np.maximum(0.0, -np.expm1(-above_u))
            full = fftconvolve(extended, mass[::-1], mode="valid")
            value = full[left + first:left + first + points] + tail
            best = value if best is None else np.maximum(best, value)
        w = np.clip(best, 0.0, 1.0)
    return u, w


def epsilon(u, w, upper):
    """Upper: the smallest grid eps with delta(eps) <= DELTA; lower: the largest with delta > DELTA."""
    eps, delta = -u[::-1], w[::-1]
    i = int(np.nonzero(delta <= DELTA)[0][0])
    return float(eps[i] if upper else eps[i - 1])


def bracket(laws_of, steps, h, u_lo, u_hi):
    return tuple(epsilon(*induction(laws_of(upper), steps, h, u_lo, u_hi, upper), upper)
                 for upper in (False, True))


def disc_gain():
    """The right triangle in the clipping disc (x_i -> (C, 0), x_i' -> (-C, 0), the others ->
    (0, -C): a = (1, 1), b = (-1, 1)), both orders, offered beside R and R' at every step: delta at
    the eps where the choice of R or R' reaches 1e-5, every law on the same coarse 2-D grid with
    losses rounded to the nearest grid point (a comparison, not a certified bound)."""
    pairs = {"R": ((2, 0), (0, 0)), "R'": ((0, 0), (2, 0)), "middle": ((1, 0), (-1, 0)),
             "right": ((1, 1), (-1, 1)), "right'": ((-1, 1), (1, 1))}
    for sigma, q, steps, h, u_lo, u_hi in ROWS:
        laws = {k: loss_law_2d(q, np.array(a, float), np.array(b, float), sigma, h, 0.02)
                for k, (a, b) in pairs.items()}
        at, reference = None, None
        for names in (["R", "R'"], ["R", "R'", "middle"], ["R", "R'", "right", "right'"]):
            u, w = induction([laws[n] for n in names], steps, h, u_lo, u_hi, True)
            eps, delta = -u[::-1], w[::-1]
            if at is None:
                at = int(np.nonzero(delta <= DELTA)[0][0])
                reference = delta[at]
            print(f"sigma {sigma}, q {q}, {steps} steps, pairs {names}: delta at eps {eps[at]:.4f} "
                  f"{delta[at]:.10e} ({delta[at] / reference - 1:+.1e} relative)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sweep", action="store_true", help="every 1-D pair on a 0.5 grid")
    parser.add_argument("--plane", action="store_true", help="planar pairs (coarse, row 2 only)")
    parser.add_argument("--disc", action="store_true",
                        help="only: delta with the right triangle in the clipping disc offered")
    args = parser.parse_args()
    if args.disc:
        disc_gain()
        return
    one_d = [(2.0, 0.0), (0.0, 2.0)]
    if args.sweep:
        one_d = [(a, b) for a in np.arange(0, 2.01, 0.5) for b in np.arange(a - 2, 2.01, 0.5)
                 if abs(a - b) > 1e-9]
    for sigma, q, steps, h, u_lo, u_hi in ROWS:
        start = time.time()
        alone = bracket(lambda up: [loss_law_1d(q, 2.0, 0.0, sigma, h, up)], steps, h, u_lo, u_hi)
        chosen = bracket(lambda up: [loss_law_1d(q, a, b, sigma, h, up) for a, b in one_d], steps,
                         h, u_lo, u_hi)
        print(f"sigma {sigma}, q {q}, {steps} steps: R alone in [{alone[0]:.4f}, {alone[1]:.4f}]; "
              f"adaptive over {len(one_d)} pairs in [{chosen[0]:.4f}, {chosen[1]:.4f}] "
              f"({time.time() - start:.0f} s)", flush=True)
    if args.plane:
        sigma, q, steps, h, u_lo, u_hi = ROWS[1]
        r3 = math.sqrt(3)
        pairs = {"R": ((2, 0), (0, 0)), "R'": ((0, 0), (2, 0)), "middle": ((1, 0), (-1, 0)),
                 "equilateral": ((2, 0), (1, r3)), "equilateral'": ((1, r3), (2, 0)),
                 "right": ((2, 0), (1, 1)), "right'": ((1, 1), (2, 0)),
                 "isosceles": ((1, 1), (1, -1))}
        for a, b in pairs.values():  # every side of the triangle (0, a, b) at most 2C
            a, b = np.array(a, float), np.array(b, float)
            assert max(np.linalg.norm(a), np.linalg.norm(b), np.linalg.norm(a - b)) <= 2 + 1e-12
        laws = {k: loss_law_2d(q, np.array(a, float), np.array(b, float), sigma, h, 0.02)
                for k, (a, b) in pairs.items()}
        for names in (["R", "R'"], list(pairs)):
            u, w = induction([laws[n] for n in names], steps, h, u_lo, u_hi, True)
            print(f"planar, sigma {sigma}, q {q}, {steps} steps, pairs {names}: "
                  f"eps {epsilon(u, w, True):.4f} (same coarse grid for all)", flush=True)


if __name__ == "__main__":
    main()
