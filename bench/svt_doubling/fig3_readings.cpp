// Ding et al. (Ding, Wu, Xu, Pan) §4.2, Figure 3: which reading of the experiment gives the paper's
// fidelity curve (α_T = u_{s*} / u* low at kϵ = 0.5, close to 1 at kϵ = 5 and 10)?
//
// An independent re-implementation of Algorithm 1's ladder (it does NOT use the svt_doubling core,
// so that it can confirm or refute it), run under several readings of the experiment:
//
//   literal      Algorithm 1 as printed: threshold noise Lap(2/(kϵ)), query noise Lap(4/(kϵ)),
//                random (utility-independent) candidate order, u0 = 0, g = 0.01, with Ding & Wu's
//                `u >= 1` break;
//   no-break     the same without the break (Ding et al.'s listing; ends only when step = 0);
//   eps-legend   the legend values are ϵ with k = 10, i.e. kϵ = 10 x {0.5, 5, 10};
//   total        the legend is the total budget, split over the default cap T_max = 32;
//   percent      utilities on a 0..100 scale (g = 1) with the noise scales left at 2/(kϵ), 4/(kϵ);
//   sorted-desc  candidates scanned best first / sorted-asc worst first;
//   no-query     threshold noise only (query noise switched off);
//   averaged     u_s = mean of k = 10 per-partition scores, each uniform on (0, 1).
//
// Plus the closed form that explains the literal numbers: in the regime of the last passes the
// threshold sits far above most u_s, and the first candidate that passes is (nearly) drawn with
// probability proportional to Pr[u_s + Lap(b) >= t] ∝ exp(u_s / b): an exponential mechanism with
// scale b = 4/(kϵ), whose mean over utilities uniform on (0, 1) is 1/(1 - e^(-1/b)) - b.
//
// Usage: bench_svt_doubling_fig3 [runs per setting = 2000] [seed = 1]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "dptune/rng.hpp"

namespace {

struct Reading {
  std::string name;
  double ke_factor = 1;  // kϵ used = factor * legend value
  double scale = 1;      // utilities and g multiplied by this (noise NOT rescaled)
  int order = 0;         // 0 random, +1 sorted descending, -1 sorted ascending
  bool query_noise = true;
  bool threshold_noise = true;
  bool one_break = true;  // Ding & Wu's `if u >= 1: break` (scaled)
  bool averaged = false;  // u_s = mean of 10 uniforms
};

struct Outcome {
  double alpha = 0;  // final fidelity, mean over runs
  double alpha_sd = 0;
  double iterations = 0;
};

// One run of the ladder; returns (u_{s*} / u*, T).  s* = the last candidate that passed; when none
// passed the fidelity is counted as 0 (no selection).
std::pair<double, double> ladder(const std::vector<double>& u, double g, double b_thr, double b_q,
                                 bool one_break, double top, dptune::RandomBitGenerator& rng) {
  const double u_star = *std::max_element(u.begin(), u.end());
  double level = 0;
  long long step = 1;
  long selected = -1;
  std::size_t t = 0;
  while (step != 0 && t < 100000) {
    ++t;
    const double thr = level + double(step) * g + (b_thr > 0 ? dptune::laplace(rng, b_thr) : 0.0);
    bool passed = false;
    for (std::size_t s = 0; s < u.size() && !passed; ++s) {
      const double noisy = u[s] + (b_q > 0 ? dptune::laplace(rng, b_q) : 0.0);
      if (noisy >= thr) {
        selected = long(s);
        level += double(step) * g;
        step *= 2;
        passed = true;
      }
    }
    if (!passed) step /= 2;
    if (one_break && level >= top) break;
  }
  return {selected < 0 ? 0.0 : u[std::size_t(selected)] / u_star, double(t)};
}

Outcome run(const Reading& r, double legend, int runs, dptune::RandomBitGenerator& rng) {
  const double ke = legend * r.ke_factor;
  const double b_thr = r.threshold_noise ? 2 / ke : 0, b_q = r.query_noise ? 4 / ke : 0;
  std::vector<double> a;
  double iters = 0;
  for (int i = 0; i < runs; ++i) {
    std::vector<double> u(100);
    for (double& x : u) {
      if (r.averaged) {
        double m = 0;
        for (int p = 0; p < 10; ++p) m += dptune::uniform_open01(rng);
        x = m / 10;
      } else {
        x = dptune::uniform_open01(rng);
      }
      x *= r.scale;
    }
    if (r.order > 0) std::sort(u.begin(), u.end(), std::greater<>());
    if (r.order < 0) std::sort(u.begin(), u.end());
    const auto [alpha, t] = ladder(u, 0.01 * r.scale, b_thr, b_q, r.one_break, r.scale, rng);
    a.push_back(alpha);
    iters += t;
  }
  Outcome o;
  o.alpha = std::accumulate(a.begin(), a.end(), 0.0) / runs;
  double v = 0;
  for (double x : a) v += (x - o.alpha) * (x - o.alpha);
  o.alpha_sd = std::sqrt(v / std::max(1, runs - 1));
  o.iterations = iters / runs;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 2000;
  const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  dptune::Xoshiro256 rng(seed);
  const double legends[] = {0.5, 5, 10};

  std::vector<Reading> readings;
  readings.push_back({"literal"});
  {
    Reading r{"no-break"};
    r.one_break = false;
    readings.push_back(r);
  }
  {
    Reading r{"eps-legend (k=10)"};
    r.ke_factor = 10;
    readings.push_back(r);
  }
  {
    Reading r{"total budget /32 iters"};  // kϵ the total, split over the default T_max = 32
    r.ke_factor = 1.0 / 32;
    readings.push_back(r);
  }
  {
    Reading r{"percent (0..100, g=1)"};
    r.scale = 100;
    readings.push_back(r);
  }
  {
    Reading r{"sorted-desc"};
    r.order = 1;
    readings.push_back(r);
  }
  {
    Reading r{"sorted-asc"};
    r.order = -1;
    readings.push_back(r);
  }
  {
    Reading r{"no-query-noise"};
    r.query_noise = false;
    readings.push_back(r);
  }
  {
    Reading r{"averaged (10 parts)"};
    r.averaged = true;
    readings.push_back(r);
  }

  std::printf("Ding et al. Fig. 3 readings: |S| = 100, g = 0.01, u0 = 0, %d runs each, seed %llu\n",
              runs, seed);
  std::printf("%-24s", "reading \\ legend kϵ");
  for (double l : legends) std::printf("  %6.1f: α_T (sd)    T  ", l);
  std::printf("\n");
  for (const auto& r : readings) {
    std::printf("%-24s", r.name.c_str());
    for (double l : legends) {
      const Outcome o = run(r, l, runs, rng);
      std::printf("  %6.3f (%5.3f) %6.1f   ", o.alpha, o.alpha_sd, o.iterations);
    }
    std::printf("\n");
  }

  // The closed form of the literal reading and the noise scale that near-1 fidelity needs.
  std::printf(
      "\nexponential-mechanism limit, utilities U(0,1): mean u_s* = 1/(1-exp(-1/b)) - b, "
      "b = query scale; E[u*] = 100/101\n");
  std::printf("%10s %10s %14s %12s\n", "b", "kϵ=4/b", "closed form α", "simulated α");
  for (double b : {8.0, 0.8, 0.4, 0.2, 0.1, 0.08, 0.05, 0.04, 0.02}) {
    const double mean = 1 / (1 - std::exp(-1 / b)) - b;
    Reading r{"b"};
    const Outcome o = run(r, 4 / b, runs, rng);
    std::printf("%10.3f %10.2f %14.3f %12.3f\n", b, 4 / b, mean / (100.0 / 101.0), o.alpha);
  }
  return 0;
}
