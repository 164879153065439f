#!/usr/bin/env python3
"""Independent check of the total-variation lemma behind discrete_gaussian_on_grid (pure Python).

Y ~ N(0, s1^2), K ~ N_Z(Y, s2^2): prints TV(K, N_Z(0, s1^2 + s2^2)) by Simpson's rule over y, the
bound theta/(1 - theta) with theta = 2 sum_{j>=1} exp(-2 pi^2 s2^2 j^2), and their ratio.  The
test "the discrete Gaussian's surrogate: total variation within ..." in pld_exact_test.cpp
computes the same TVs in long double and checks TV <= bound and TV >= 2e-3 bound; run this to
see the numbers it rests on (ratios 0.001-0.06).
"""
import math
for s1,s2 in [(1.5,0.35),(1.5,0.45),(0.8,0.6),(3.0,0.4),(0.5,0.4)]:
    th=sum(2*math.exp(-2*math.pi**2*s2**2*j*j) for j in range(1,40))
    n=4000; lo=-14*s1; st=28*s1/n
    ks=range(-40,41)
    P={k:0.0 for k in ks}
    for i in range(n+1):
        v=lo+st*i; w=(1 if i in (0,n) else (4 if i%2 else 2))*st/3
        T=sum(math.exp(-(k-v)**2/(2*s2*s2)) for k in range(int(math.floor(v))-20,int(math.floor(v))+21))
        d=math.exp(-v*v/(2*s1*s1))/(math.sqrt(2*math.pi)*s1)
        for k in ks: P[k]+=w*d*math.exp(-(k-v)**2/(2*s2*s2))/T
    s=math.sqrt(s1*s1+s2*s2); z=sum(math.exp(-k*k/(2*s*s)) for k in ks)
    tv=0.5*sum(abs(P[k]-math.exp(-k*k/(2*s*s))/z) for k in ks)
    b=th/(1-th); print(s1,s2,tv,b,tv/b)
