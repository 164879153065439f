// DP-HyPO core (Wang, Gao, Zhang, Su & Shen 2023, "DP-HyPO: An Adaptive Private Hyperparameter
// Optimization Framework"): the density-ratio band and the projection onto it.
//
// Over a finite set of candidates with prior masses p_i (a data-independent grid: the paper's App.
// C.2 discretises Λ and notes that "the privacy cost is independent of the size of parameter
// space"), the band is S = {f : c·p_i ≤ f_i ≤ C·p_i, Σ f_i = 1} (App. D), non-empty when c ≤ 1 ≤ C.
// The paper's eq. (3.1) projects a sampling distribution onto S in L²; on a finite set its KKT
// solution is f_i = clip(π_i + ν, c·p_i, C·p_i) with ν the root of Σ_i f_i(ν) = 1, which is
// continuous and non-decreasing in ν (from c − 1 ≤ 0 to C − 1 ≥ 0), so bisection finds it.
//
// Privacy needs only f ∈ S, not optimality (Theorem 1 bounds every member of S): the result is
// checked against the band in floating point after normalisation, and the prior (always in S) is
// returned when the check fails.
#pragma once

#include <cstddef>
#include <vector>

namespace dptune {
class RandomBitGenerator;
}

namespace dptune::dp_hypo {

/// The band [lower·p_i, upper·p_i] around the prior p; lower ∈ (0, 1], upper ∈ [1, ∞).
class Band {
 public:
  /// Throws InvalidArgument for an empty prior, a mass that is not positive and finite, a prior
  /// that does not sum to 1 (within 1e-9), or lower/upper out of range.
  Band(std::vector<double> prior, double lower, double upper);

  /// The L² projection of `weights` (any non-negative numbers; their sum need not be 1) onto the
  /// band, normalised; the prior itself when the projection would leave the band in floating
  /// point (never a distribution outside it).  The bisection clips to a band narrowed by a
  /// relative 1e-12 on each side, so that normalising the result keeps it inside.
  std::vector<double> project(const std::vector<double>& weights) const;
  /// True when every f_i lies in [lower·p_i, upper·p_i] exactly and Σ f_i is 1 within 1e-12.
  bool contains(const std::vector<double>& f) const;

  const std::vector<double>& prior() const { return prior_; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  /// C/c, the only quantity of the band the privacy theorems depend on.
  double ratio() const { return upper_ / lower_; }

 private:
  std::vector<double> prior_;
  double lower_, upper_;
};

/// Index i drawn with probability f_i (f a distribution): the first i whose cumulative sum exceeds
/// u·Σf, u uniform on [0, 1).
std::size_t draw_index(const std::vector<double>& f, RandomBitGenerator& rng);

}  // namespace dptune::dp_hypo
