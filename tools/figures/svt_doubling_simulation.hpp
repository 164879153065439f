// Ding, Wu, Xu & Pan, §4.2: the Monte Carlo behind Figures 3 and 4 — Algorithm 1 (the tuner core's
// run_loop, with Ding & Wu's `u >= 1` break) on |S| utilities drawn uniformly from (0, 1), no data.
// It lives with dptune-figures, out of the tuner plugin; svt_doubling_figures.hpp turns its runs
// into the figures.
#pragma once

#include <cstddef>
#include <vector>

#include "dptune/rng.hpp"

namespace dptune::svt_doubling {

struct SimulationOptions {
  std::size_t candidates = 100;  // |S|, utilities i.i.d. uniform on (0, 1)
  double g = 0.01;
  std::vector<double> k_epsilons = {0.5, 5, 10};
  std::size_t repetitions = 300;        // runs per kϵ for the iterations/fidelity-against-n curves
  std::size_t trace_repetitions = 100;  // runs per kϵ at u0 = 0 for the fidelity-over-t curve
  /// Cap used in the simulation: 0 = the worst case (the loop runs to its natural end).
  std::size_t t_max = 0;
};

struct SimulationRun {
  double k_epsilon = 0;
  double u0 = 0, u_star = 0;
  double n = 0;  // (u* - u0) / g
  std::size_t iterations = 0;
  /// u_{s*} / u*; with no s*, the tuner's data-independent fallback (the first candidate).
  double fidelity = 0;
  bool selected = false;
  std::size_t default_cap = 0;  // default_t_max(u0, g): would the tuner's cap have bound?
};

struct SimulationResult {
  std::vector<SimulationRun> runs;  // the n-sweep (u0 = u* - n g, n log-uniform in [1, u*/g])
  /// Per kϵ: mean α_t = u_{s*}^{(t)} / u* after iteration t = 1, 2, ... at u0 = 0 (α_t = 0 before
  /// the first pass, and α_T after the loop stopped), as in Figure 3.
  std::vector<std::vector<double>> fidelity_by_iteration;
};

SimulationResult simulate(const SimulationOptions& options, dptune::RandomBitGenerator& rng);

/// Why Figure 3 is not reproduced at the paper's kϵ (docs/tuners/svt_doubling.md): near the end of
/// a run the threshold lies above most u_s and the first candidate (in a utility-independent order)
/// whose u_s + Lap(b) reaches it is drawn with probability close to proportional to exp(u_s / b),
/// an exponential mechanism of scale b = 4/(kϵ).  Over |S| utilities uniform on (0, 1) its mean is
/// 1/(1 - e^(-1/b)) - b and E[u*] = |S| / (|S| + 1); this returns their ratio, the limit of the
/// final fidelity α_T (0.52, 0.61, 0.70 for kϵ = 0.5, 5, 10; 0.93, 0.97 for kϵ = 50, 100).  Valid
/// while b is well above g (not at kϵ = 1000, where it exceeds 1).
double exponential_mechanism_fidelity(double k_epsilon, std::size_t candidates);

}  // namespace dptune::svt_doubling
