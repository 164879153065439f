// The simulation of Ding et al. §4.2 (tools/figures/svt_doubling_simulation.hpp, dptune-figures'
// Figures 3 and 4) on the tuner core's loop: where the figures reproduce and where they do not.
// These were tests/svt_doubling's while the simulation lived in the tuner's core.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "dptune/rng.hpp"
#include "svt_doubling/core.hpp"
#include "svt_doubling_simulation.hpp"
#include "test_size.hpp"

TEST_CASE("simulation: Figures 3 and 4 where they reproduce, and where they do not") {
  dptune::Xoshiro256 rng(8);
  dptune::svt_doubling::SimulationOptions o;
  o.k_epsilons = {0.5, 5, 10, 100, 1000};
  o.repetitions = 200;
  o.trace_repetitions = 40;
  const auto sim = dptune::svt_doubling::simulate(o, rng);
  REQUIRE(sim.runs.size() == 5 * 200);
  REQUIRE(sim.fidelity_by_iteration.size() == 5);
  std::vector<double> ratio(5, 0), fidelity(5, 0);
  for (std::size_t e = 0; e < 5; ++e) {
    int counted = 0, all = 0;
    for (const auto& r : sim.runs) {
      if (r.k_epsilon != o.k_epsilons[e]) continue;
      CHECK(r.n == doctest::Approx((r.u_star - r.u0) / 0.01));
      CHECK(r.iterations <= dptune::svt_doubling::worst_case_iterations(r.u0, 0.01));
      fidelity[e] += r.fidelity;
      ++all;
      if (r.n >= 8) {
        ratio[e] += static_cast<double>(r.iterations) / std::log2(r.n);
        ++counted;
      }
    }
    ratio[e] /= counted;
    fidelity[e] /= all;
    MESSAGE("k eps = " << o.k_epsilons[e] << ": mean T / log2 n (n >= 8) = " << ratio[e]
                       << ", mean fidelity " << fidelity[e]);
  }
  // Figure 4: "the multiplier is sandwiched between 1 and 5, and approximately equal to 3" holds in
  // the low-noise regime (k eps = 1000: the noise-free Lemma 1 count, about 2.8 log2 n).
  CHECK(ratio[4] >= 2);
  CHECK(ratio[4] <= 4);
  CHECK(ratio[3] >= 1);
  CHECK(ratio[3] <= 5);
  // With k eps <= 10 the query noise (scale 4/(k eps) >= 0.4) lets many candidates pass, u races to
  // 1 and the u >= 1 break ends the run: fewer iterations, about 1.1 log2 n.
  CHECK(ratio[0] < 1.5);
  CHECK(ratio[2] < 1.5);
  // Figure 3: fidelity grows with k eps; k eps = 0.5 gives no reasonable fidelity (as the paper
  // says).  NOT reproduced: the paper's fidelity near 1 at k eps = 5 and 10; with these scales we
  // get about 0.6-0.7 and need k eps of order 100 for >= 0.9 (docs/tuners/svt_doubling.md).
  CHECK(fidelity[0] < 0.6);
  CHECK(fidelity[0] < fidelity[2]);
  CHECK(fidelity[2] < 0.8);
  CHECK(fidelity[3] >= 0.9);
  CHECK(fidelity[4] >= 0.98);
  CHECK(sim.fidelity_by_iteration[0].back() < sim.fidelity_by_iteration[3].back());
  CHECK(sim.fidelity_by_iteration[4].back() >= 0.98);
}

// Ding et al. Figure 3, explained (docs/tuners/svt_doubling.md).  In the last iterations the
// threshold sits above most u_s, and the first candidate (in a utility-independent order) whose
// u_s + Lap(b) reaches it is drawn with probability close to proportional to
// Pr[Lap(b) >= t - u_s] ∝ exp(u_s / b): an exponential mechanism of scale b = 4/(kϵ).  Over
// utilities uniform on (0, 1) its mean is 1/(1 - e^(-1/b)) - b, and E[u*] = |S| / (|S| + 1), so the
// final fidelity α_T is about that ratio: 0.52, 0.61, 0.70 for the paper's kϵ = 0.5, 5, 10 (the
// paper's "close to 1" is impossible with these scales), and 0.93, 0.97 for kϵ = 50, 100 -- the
// paper's legend read as ϵ with k = 10, which does give its curve.
TEST_CASE(
    "Figure 3 explained: final fidelity = the exponential-mechanism limit of scale 4/(k eps)") {
  dptune::Xoshiro256 rng(2024);
  dptune::svt_doubling::SimulationOptions o;
  o.k_epsilons = {0.5, 5, 10, 50, 100};
  o.repetitions = 1;
  o.trace_repetitions = dptune_test::full_or_light(1500, 400);
  const auto sim = dptune::svt_doubling::simulate(o, rng);
  REQUIRE(sim.fidelity_by_iteration.size() == o.k_epsilons.size());
  std::vector<double> final_alpha;
  for (std::size_t e = 0; e < o.k_epsilons.size(); ++e) {
    const double b = 4 / o.k_epsilons[e];
    const double limit = (1 / (1 - std::exp(-1 / b)) - b) / (100.0 / 101.0);
    const double alpha = sim.fidelity_by_iteration[e].back();
    final_alpha.push_back(alpha);
    CHECK(dptune::svt_doubling::exponential_mechanism_fidelity(o.k_epsilons[e], 100) ==
          doctest::Approx(limit));
    MESSAGE("k eps = " << o.k_epsilons[e] << ": final alpha " << alpha << ", limit " << limit);
    // sd of one α_T is <= 0.3, so the standard error is <= 0.015 (400 runs); the limit itself is
    // 0.01-0.015 above the first-in-order selection (bench_svt_doubling_fig3: 0.594 vs 0.608).
    CHECK(std::abs(alpha - limit) <= 0.05);
  }
  // The paper's own values of kϵ cannot give fidelity near 1 ...
  CHECK(final_alpha[1] < 0.7);
  CHECK(final_alpha[2] < 0.78);
  // ... ten times larger ones do (k = 10, legend = per-iteration ϵ): 0.5 poor, 5 and 10 near 1.
  CHECK(final_alpha[0] < 0.6);
  CHECK(final_alpha[3] > 0.88);
  CHECK(final_alpha[4] > 0.93);
}
