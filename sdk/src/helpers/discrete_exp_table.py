#!/usr/bin/env python3
# Writes the table of sdk/src/helpers/discrete_exp_table.inc (without its comment header):
# floor(2^128 * exp(-j/256)) for j = 1..255, exactly: exp by its Taylor series in exact rationals
# (terms up to k = 60 for x <= 1: remainder below 1/60! < 2^-270), floor checked at both ends.
from fractions import Fraction
from math import factorial
def exp_bounds(x):
    s = Fraction(0)
    for k in range(60):
        s += Fraction((-1)**k) * x**k / factorial(k)
    err = Fraction(1, factorial(60))
    return s - err, s + err
out = []
for j in range(1, 256):
    lo, hi = exp_bounds(Fraction(j, 256))
    a = (lo * 2**128).__floor__(); b = (hi * 2**128).__floor__()
    assert a == b
    out.append(a)
import decimal
decimal.getcontext().prec = 80
for j, a in zip(range(1,256), out):
    d = (decimal.Decimal(-j)/256).exp() * (decimal.Decimal(2)**128)
    assert int(d) == a, j
lines = []
for a in out:
    lines.append("    {0x%016xULL, 0x%016xULL}," % (a >> 64, a & (2**64-1)))
print("\n".join(lines))
