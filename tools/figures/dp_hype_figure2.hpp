// Liebenow et al. 2025 (DP-Hype), §IV-B and Figure 2: the accuracy of private top-k voting
// (the probability that a good candidate wins) from simulated local losses, with the aggregate's
// noise σ calibrated per (k, ε) exactly as a federated run calibrates it.
#pragma once

#include <cstddef>
#include <vector>

#include "dp_hype/secagg.hpp"
#include "dptune/privacy.hpp"
#include "dptune/rng.hpp"
#include "figure.hpp"

namespace dptune::figures {

/// Every list is swept: one setting per (|H|, |H_good|, σ_loss), each with every k and ε.
struct Figure2Options {
  std::size_t clients = 250;
  std::size_t repetitions = 5000;  // per setting
  std::vector<double> epsilons{0.25, 1};
  std::vector<std::size_t> ks{1, 5, 10};
  std::vector<double> sigma_losses{0.2};
  std::vector<std::size_t> goods{5};    // |H_good|
  std::vector<std::size_t> sizes{100};  // |H|
  /// σ by the analytic Gaussian (Balle & Wang 2018) instead of the accountant's calibration.
  bool analytic_gaussian = false;
};

/// Throws dptune::InvalidArgument naming the option when a list is empty or a value is out of
/// range.
void check(const Figure2Options& options);

/// The simulation (dp_hype_simulation.hpp) for every setting, one seed per setting from `rng`;
/// the table holds one row per (setting, k, ε) with the accountant's ε for the calibrated σ.
Figure dp_hype_figure2(const Figure2Options& options, const dptune::Accountant& accountant,
                       double delta, dptune::RandomBitGenerator& rng,
                       const dp_hype::secagg::ParallelFor& parallel_for);

}  // namespace dptune::figures
