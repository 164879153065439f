#include "dp_hypo/sampler.hpp"

#include <algorithm>
#include <cmath>

#include "dptune/errors.hpp"

namespace dptune::dp_hypo {

namespace {
dpareto::GpOptions gp_options() {
  dpareto::GpOptions o;
  o.learn_noise = true;  // the released scores carry the selection's Laplace noise
  o.noise = 0.01;
  return o;
}
}  // namespace

AdaptiveSampler::AdaptiveSampler(Eigen::MatrixXd units, Band band, SamplerOptions options)
    : units_(std::move(units)),
      band_(std::move(band)),
      options_(options),
      gp_(static_cast<std::size_t>(units_.cols()), gp_options()) {
  require(static_cast<std::size_t>(units_.rows()) == band_.prior().size(),
          "dp_hypo: one unit-cube row per candidate of the prior");
  if (options_.warm_start == 0) options_.warm_start = 2 * static_cast<std::size_t>(units_.cols());
  options_.warm_start = std::max<std::size_t>(options_.warm_start, 2);
}

void AdaptiveSampler::observe(std::size_t candidate, double released_score) {
  require(candidate < band_.prior().size(), "dp_hypo: observed candidate out of range");
  seen_.push_back(candidate);
  scores_.push_back(released_score);
}

std::vector<double> AdaptiveSampler::softmax_ucb(RandomBitGenerator& rng) {
  const Eigen::Index n = static_cast<Eigen::Index>(seen_.size());
  Eigen::MatrixXd X(n, units_.cols());
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    X.row(i) = units_.row(static_cast<Eigen::Index>(seen_[static_cast<std::size_t>(i)]));
    y(i) = scores_[static_cast<std::size_t>(i)];
  }
  // The GP has a zero mean: centre and scale the targets, so the prior fits scores of any range.
  const double mean = y.mean();
  const double spread = std::sqrt((y.array() - mean).square().mean());
  const double scale = spread > 1e-12 ? spread : 1.0;
  gp_.set_data(X, (y.array() - mean) / scale);
  gp_.fit(rng, options_.gp_starts);
  Eigen::VectorXd mu, var;
  gp_.predict(units_, mu, &var);
  // UCB in the scores' own units (Algorithm 3: s = μ + τσ), then π ∝ exp(β(s − max s)).
  const Eigen::VectorXd ucb =
      (mu.array() * scale + mean) + options_.tau * scale * var.array().sqrt();
  const double top = ucb.maxCoeff();
  std::vector<double> weights(static_cast<std::size_t>(ucb.size()));
  for (Eigen::Index i = 0; i < ucb.size(); ++i)
    weights[static_cast<std::size_t>(i)] = std::exp(options_.beta * (ucb(i) - top));
  return weights;
}

std::vector<double> AdaptiveSampler::next_distribution(RandomBitGenerator& rng) {
  std::vector<double> f;
  if (seen_.size() < options_.warm_start || band_.ratio() == 1) {
    f = band_.prior();
  } else {
    const std::vector<double> weights = softmax_ucb(rng);
    f = projection_for_tests ? projection_for_tests(weights) : band_.project(weights);
  }
  if (!band_.contains(f))
    throw PrivacyError(
        "dp_hypo: the sampling distribution left the density-ratio band [c, C] of the prior, so "
        "Wang et al. 2023, Theorem 1 would not cover the next run; stopped before drawing it");
  return f;
}

}  // namespace dptune::dp_hypo
