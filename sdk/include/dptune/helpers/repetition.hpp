// dptune helpers: the distribution of the number of runs K of a repeat-and-select tuner (Papernot &
// Steinke 2022, §3). Shared by the accountant (γ from the mean), the repetition tuner (the sampler)
// and the planner (PGF).
//
//  * shape η > −1 finite: the truncated negative binomial D_{η,γ} on {1, 2, …} (Papernot & Steinke
//  2022, Definition 1):
//      P[K = k] = (1 − γ)^k / (γ^{−η} − 1) · Π_{ℓ=0}^{k−1} (ℓ + η)/(ℓ + 1)      (η ≠ 0)
//      P[K = k] = (1 − γ)^k / (k · log(1/γ))                                   (η = 0, logarithmic)
//    η = 1 is the geometric distribution (Liu–Talwar).
//  * shape = +∞: Poisson(μ) on {0, 1, …} (Papernot & Steinke 2022, Theorem 6).
#pragma once

#include <boost/config.hpp>
#include <cstdint>
#include <string>

namespace dptune {

class RandomBitGenerator;

class BOOST_SYMBOL_VISIBLE RepetitionDistribution {
 public:
  /// D_{η,γ}; throws InvalidArgument unless η > −1 and γ ∈ (0, 1).
  static RepetitionDistribution truncated_negative_binomial(double eta, double gamma);
  /// Poisson(μ), μ > 0.
  static RepetitionDistribution poisson(double mean);
  /// D_{η,γ} with γ solved from E[K] = mean (mean > 1; bisection in log γ), or Poisson(mean) when
  /// shape is +∞.  Throws InvalidArgument when no γ gives the mean.
  static RepetitionDistribution from_mean(double mean, double shape);

  bool is_poisson() const { return poisson_; }
  /// η (+∞ for Poisson).
  double shape() const { return eta_; }
  /// γ of D_{η,γ} (NaN for Poisson).
  double gamma() const { return gamma_; }
  /// E[K] (Papernot & Steinke 2022, Definition 1; μ for Poisson).
  double mean() const { return mean_; }
  /// P[K = k].
  double pmf(std::int64_t k) const;
  /// The probability generating function f(x) = E[x^K], x ∈ [0, 1].
  double pgf(double x) const;
  /// E[quantile of the best of K runs] when each run's score quantile is uniform on [0, 1]:
  /// 1 − ∫₀¹ f(x) dx (Papernot & Steinke 2022, eq. 8); K = 0 counts as quantile 0.  Composite
  /// Simpson on 2^14 panels after the substitution x = 1 − t², which tames f's steep rise near 1.
  double expected_best_quantile() const;
  /// Probability that the best of m equally likely candidates is among the K runs: 1 − f(1 − 1/m)
  /// (Papernot & Steinke 2022, Appendix A.2.1 / D.4).
  double success_probability(std::int64_t candidates) const;
  /// An exact draw (inversion on the PMF recursion; counting unit-rate arrivals for Poisson).
  std::int64_t sample(RandomBitGenerator& rng) const;
  /// e.g. "truncated negative binomial (eta = 0, gamma = 0.0123, E[K] = 10)".
  std::string describe() const;

  /// E[K] of D_{η,γ}, in a form stable near γ = 1.
  static double tnb_mean(double eta, double gamma);

 private:
  RepetitionDistribution() = default;
  bool poisson_ = false;
  double eta_ = 0, gamma_ = 0, mean_ = 0;
};

}  // namespace dptune
