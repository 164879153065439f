// DP-HyPO core: the GP instantiation of the adaptive sampler (Wang et al. 2023, Sec. 4.1,
// Algorithm 3).  After each run the tuner hands the sampler the run's candidate and its released
// (noisy) score; the sampler fits DPareto's Matérn 5/2 GP (dpareto/gp.hpp, linked, not copied) to
// the released records, scores every candidate by the upper confidence bound s = μ + τσ, turns the
// scores into the softmax density π ∝ exp(β s), and projects π onto the density-ratio band of the
// prior (band.hpp).  The sampler sees nothing but the released records, so everything it does is
// post-processing of outputs the guarantee already covers; the band is what Theorem 1 prices.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <functional>
#include <vector>

#include "dp_hypo/band.hpp"
#include "dpareto/gp.hpp"

namespace dptune {
class RandomBitGenerator;
}

namespace dptune::dp_hypo {

struct SamplerOptions {
  double tau = 0.1;  // UCB exploration weight (the paper's App. E)
  double beta = 1;   // softmax inverse temperature (the paper's App. E)
  /// Runs observed before the GP is used; until then every run draws from the band's prior
  /// (0: the dimension count times 2).
  std::size_t warm_start = 0;
  int gp_starts = 3;  // restarts of the GP's hyperparameter fit per update
};

class AdaptiveSampler {
 public:
  /// `units`: each candidate's position in the unit cube (rows), the GP's inputs; `band`: the
  /// prior over the same candidates and the band [c, C].
  AdaptiveSampler(Eigen::MatrixXd units, Band band, SamplerOptions options);

  /// The distribution the next run draws its candidate from: the prior before the warm start,
  /// then the projection of the GP's softmax-UCB density.  Always inside the band (Band::project
  /// falls back to the prior); checked again here, throwing PrivacyError if not, before any draw.
  std::vector<double> next_distribution(RandomBitGenerator& rng);
  /// Records run `candidate`'s released score.
  void observe(std::size_t candidate, double released_score);

  /// A test hook: replaces the projection (to check that a distribution outside the band is
  /// refused before any draw).  Empty: Band::project.
  std::function<std::vector<double>(const std::vector<double>&)> projection_for_tests;

  const Band& band() const { return band_; }
  std::size_t observed() const { return scores_.size(); }

 private:
  std::vector<double> softmax_ucb(RandomBitGenerator& rng);

  Eigen::MatrixXd units_;
  Band band_;
  SamplerOptions options_;
  dpareto::Gp gp_;
  std::vector<std::size_t> seen_;
  std::vector<double> scores_;
};

}  // namespace dptune::dp_hypo
