#include "svt_doubling_simulation.hpp"

#include <algorithm>
#include <cmath>

#include "dptune/errors.hpp"
#include "svt_doubling/core.hpp"

namespace dptune::svt_doubling {

SimulationResult simulate(const SimulationOptions& o, dptune::RandomBitGenerator& rng) {
  if (o.candidates == 0) throw dptune::InvalidArgument("svt_doubling: sim_candidates must be >= 1");
  SimulationResult out;
  std::vector<double> u(o.candidates);
  auto draw_utilities = [&] {
    for (double& x : u) x = dptune::uniform_open01(rng);  // Ding et al. §4.2: uniform on (0, 1)
    return *std::max_element(u.begin(), u.end());
  };
  for (double ke : o.k_epsilons) {
    if (!(ke > 0) || !std::isfinite(ke))
      throw dptune::InvalidArgument("svt_doubling: every k*epsilon must be finite and > 0");
    // Scales for Δ = 1/k and ϵ = kϵ / k: 2/(kϵ) and 4/(kϵ), whatever k is (Algorithm 1).
    const double b_threshold = 2 / ke, b_query = 4 / ke;
    const NoiseFn threshold = [&] { return dptune::laplace(rng, b_threshold); };
    const NoiseFn query = [&] { return dptune::laplace(rng, b_query); };

    // Figure 4: iterations against n = (u* - u0) / g.  The utilities stay uniform on (0, 1) as in
    // the paper; n is varied through u0 = u* - n g with n log-uniform on [1, u*/g].
    for (std::size_t rep = 0; rep < o.repetitions; ++rep) {
      const double u_star = draw_utilities();
      const double log_max = std::max(0.0, std::log(u_star / o.g));
      SimulationRun run;
      run.k_epsilon = ke;
      run.u_star = u_star;
      run.u0 = std::max(0.0, u_star - std::exp(dptune::uniform01(rng) * log_max) * o.g);
      run.n = (u_star - run.u0) / o.g;
      LoopOptions lo;
      lo.u0 = run.u0;
      lo.g = o.g;
      lo.t_max = o.t_max ? o.t_max : worst_case_iterations(run.u0, o.g);
      const LoopResult r = run_loop(u, lo, threshold, query);
      run.iterations = r.iterations;
      run.selected = r.selected.has_value();
      run.fidelity = u[r.selected.value_or(0)] / u_star;
      run.default_cap = default_t_max(run.u0, o.g);
      out.runs.push_back(run);
    }

    // Figure 3: fidelity α_t after each iteration, u0 = 0.
    std::vector<std::vector<double>> curves;
    std::size_t longest = 0;
    for (std::size_t rep = 0; rep < o.trace_repetitions; ++rep) {
      const double u_star = draw_utilities();
      LoopOptions lo;
      lo.u0 = 0;
      lo.g = o.g;
      lo.t_max = o.t_max ? o.t_max : worst_case_iterations(0, o.g);
      lo.trace = true;
      const LoopResult r = run_loop(u, lo, threshold, query);
      std::vector<double> alpha;
      for (const auto& s : r.selected_after) alpha.push_back(s ? u[*s] / u_star : 0.0);
      longest = std::max(longest, alpha.size());
      curves.push_back(std::move(alpha));
    }
    std::vector<double> mean(longest, 0.0);
    for (const auto& c : curves)
      for (std::size_t t = 0; t < longest; ++t)
        mean[t] += (t < c.size() ? c[t] : c.back()) / static_cast<double>(curves.size());
    out.fidelity_by_iteration.push_back(std::move(mean));
  }
  return out;
}

double exponential_mechanism_fidelity(double k_epsilon, std::size_t candidates) {
  const double b = 4 / k_epsilon;
  const double m = static_cast<double>(candidates);
  // -expm1(-1/b) = 1 - e^(-1/b), exact for small and large b.
  return (1 / -std::expm1(-1 / b) - b) / (m / (m + 1));
}

}  // namespace dptune::svt_doubling
