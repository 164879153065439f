// DP-Hype (Liebenow et al. 2025) §IV-B: the Monte Carlo simulation behind Figure 2 (simulated local
// losses, no training, no private data).  Not part of a federated run, so it lives with
// dptune-figures, out of the tuner plugin; it uses the plugin's core library (the parallel-for
// type).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dp_hype/secagg.hpp"

namespace dptune::dp_hype {

// ---- simulation (Liebenow et al. 2025 §IV-B, Figure 2) ------------------------------------------
struct SimulationSetting {
  std::size_t clients = 250;
  std::size_t candidates = 100;  // |H|
  std::size_t good = 5;          // |H_good|: candidates 0..good-1
  double sigma_loss = 0.2;
  std::size_t repetitions = 5000;
  std::vector<std::size_t> ks{5};
  std::vector<double> sigmas{
      1.0};  // aggregated noise standard deviations (from ε: calibrate_sigma)
  /// Optional: one σ list per entry of `ks` (σ depends on k through the sensitivity √(2k)), all of
  /// the same length; replaces `sigmas` when non-empty, so every k shares the same losses.
  std::vector<std::vector<double>> sigmas_per_k;
};
struct SimulationCell {
  std::size_t k = 0;
  double sigma = 0;
  double accuracy = 0;    // fraction of repetitions that picked a good candidate
  double mean_bound = 0;  // mean over repetitions of the Theorem IV.1 bound at the realised γ
  double mean_gap = 0;    // mean realised γ (Equation 3)
};
/// Each client draws |H_good| losses from N(0, σ_loss²) and the rest from N(1, σ_loss²) and votes
/// for its k smallest; the aggregate gets N(0, σ²) per entry (the sum of the clients' N(0, σ²/n)
/// shares, equal in distribution); success when the argmax is good.  All (k, σ) cells share each
/// repetition's losses (common random numbers).  Repetitions run in blocks on `parallel_for`, each
/// block with its own stream derived from `seed`, so results do not depend on the thread count.
/// Cells in the order ks × sigmas (sigma fastest).
std::vector<SimulationCell> simulate(const SimulationSetting& setting, std::uint64_t seed,
                                     const secagg::ParallelFor& parallel_for);

}  // namespace dptune::dp_hype
