#include "dptune/helpers/repetition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dptune/errors.hpp"
#include "dptune/params.hpp"
#include "dptune/rng.hpp"

namespace dptune {

namespace {
std::string num(double x) { return to_string(Value{x}); }
}  // namespace

double RepetitionDistribution::tnb_mean(double eta, double gamma) {
  // Papernot & Steinke 2022, Definition 1: E[K] = η(1 − γ) / (γ(1 − γ^η)) for η ≠ 0 and (1/γ −
  // 1)/log(1/γ) for η = 0.  Written with expm1 so that γ → 1 (E[K] → 1) does not cancel
  // catastrophically.
  const double log_gamma = std::log(gamma);
  if (eta == 0) return std::expm1(-log_gamma) / -log_gamma;
  return eta * -std::expm1(log_gamma) / (gamma * -std::expm1(eta * log_gamma));
}

RepetitionDistribution RepetitionDistribution::truncated_negative_binomial(double eta,
                                                                           double gamma) {
  require(eta > -1 && std::isfinite(eta),
          "truncated negative binomial: shape eta must be a finite number > -1, got " + num(eta));
  require(gamma > 0 && gamma < 1,
          "truncated negative binomial: gamma must be in (0, 1), got " + num(gamma));
  RepetitionDistribution d;
  d.eta_ = eta;
  d.gamma_ = gamma;
  d.mean_ = tnb_mean(eta, gamma);
  return d;
}

RepetitionDistribution RepetitionDistribution::poisson(double mean) {
  require(mean > 0 && std::isfinite(mean),
          "poisson: mean must be a finite number > 0, got " + num(mean));
  RepetitionDistribution d;
  d.poisson_ = true;
  d.eta_ = std::numeric_limits<double>::infinity();
  d.gamma_ = std::numeric_limits<double>::quiet_NaN();
  d.mean_ = mean;
  return d;
}

RepetitionDistribution RepetitionDistribution::from_mean(double mean, double shape) {
  if (std::isinf(shape) && shape > 0) return poisson(mean);
  require(shape > -1 && std::isfinite(shape),
          "repetition distribution: shape must be > -1 or inf, got " + num(shape));
  require(mean > 1 && std::isfinite(mean),
          "truncated negative binomial: the mean number of runs must be > 1 (K >= 1 always), got " +
              num(mean));
  // E[K] decreases from ∞ (γ → 0) to 1 (γ → 1): bisection on log γ.
  double lo = std::log(1e-300), hi = 0;
  if (tnb_mean(shape, 1e-300) < mean)
    throw InvalidArgument("truncated negative binomial with eta = " + num(shape) +
                          " cannot have mean " + num(mean) +
                          " (largest reachable: " + num(tnb_mean(shape, 1e-300)) + ")");
  for (int i = 0; i < 200 && hi - lo > 1e-15 * std::max(1.0, -lo); ++i) {
    const double mid = 0.5 * (lo + hi);
    if (tnb_mean(shape, std::exp(mid)) > mean)
      lo = mid;
    else
      hi = mid;
  }
  return truncated_negative_binomial(shape, std::exp(0.5 * (lo + hi)));
}

double RepetitionDistribution::pmf(std::int64_t k) const {
  if (poisson_) {
    if (k < 0) return 0;
    const auto kk = static_cast<double>(k);
    return std::exp(kk * std::log(mean_) - mean_ - std::lgamma(kk + 1));
  }
  if (k < 1) return 0;
  const auto kk = static_cast<double>(k);
  const double log1m_gamma = std::log1p(-gamma_);
  if (eta_ == 0) return std::exp(kk * log1m_gamma - std::log(kk) - std::log(-std::log(gamma_)));
  // |Π_{ℓ<k} (ℓ+η)/(ℓ+1)| = |Γ(k+η)/Γ(η)| / k!; std::lgamma is log|Γ|.  The signs of the product
  // and of γ^{−η} − 1 agree (both negative for η < 0), so the ratio is positive.
  const double log_product = std::lgamma(kk + eta_) - std::lgamma(eta_) - std::lgamma(kk + 1);
  const double log_norm = std::log(std::abs(std::expm1(-eta_ * std::log(gamma_))));
  return std::exp(kk * log1m_gamma + log_product - log_norm);
}

double RepetitionDistribution::pgf(double x) const {
  require(x >= 0 && x <= 1, "pgf: x must be in [0, 1], got " + num(x));
  if (poisson_) return std::exp(mean_ * (x - 1));
  // f(x) = ((1 − (1−γ)x)^{−η} − 1)/(γ^{−η} − 1) for η ≠ 0; log(1 − (1−γ)x)/log(γ) for η = 0.
  const double log_base = std::log1p(-(1 - gamma_) * x);
  if (eta_ == 0) return log_base / std::log(gamma_);
  return std::expm1(-eta_ * log_base) / std::expm1(-eta_ * std::log(gamma_));
}

double RepetitionDistribution::expected_best_quantile() const {
  // ∫₀¹ f(x) dx = ∫₀¹ f(1 − t²)·2t dt.
  const int panels = 1 << 14;
  const double h = 1.0 / panels;
  auto g = [this](double t) { return pgf(std::clamp(1 - t * t, 0.0, 1.0)) * 2 * t; };
  double sum = g(0) + g(1);
  for (int i = 1; i < panels; ++i) sum += (i % 2 ? 4 : 2) * g(i * h);
  return 1 - sum * h / 3;
}

double RepetitionDistribution::success_probability(std::int64_t candidates) const {
  require(candidates >= 1, "success probability: need at least one candidate");
  return 1 - pgf(1 - 1.0 / static_cast<double>(candidates));
}

std::int64_t RepetitionDistribution::sample(RandomBitGenerator& rng) const {
  if (poisson_) {
    // K = number of arrivals of a unit-rate Poisson process in [0, μ]: exact, O(μ) expected time.
    double t = 0;
    std::int64_t k = 0;
    while (true) {
      t += -std::log(uniform_open01(rng));
      if (t > mean_) return k;
      ++k;
    }
  }
  // Inversion: walk the CDF with the ratio P[k+1]/P[k] = (1 − γ)(k + η)/(k + 1).  Stops when the
  // remaining mass is below double resolution (returns the last k whose CDF reached u).
  const double u = uniform01(rng);
  double p = pmf(1), cdf = p;
  std::int64_t k = 1;
  while (cdf < u) {
    const double next =
        p * (1 - gamma_) * (static_cast<double>(k) + eta_) / static_cast<double>(k + 1);
    if (next <= 0 || cdf + next == cdf) break;  // the tail beyond here is < 1 ulp of the CDF
    p = next;
    cdf += p;
    ++k;
  }
  return k;
}

std::string RepetitionDistribution::describe() const {
  if (poisson_) return "Poisson (mean = " + num(mean_) + ")";
  std::string name = eta_ == 0   ? "logarithmic"
                     : eta_ == 1 ? "geometric"
                                 : "truncated negative binomial";
  return name + " (eta = " + num(eta_) + ", gamma = " + num(gamma_) + ", E[K] = " + num(mean_) +
         ")";
}

}  // namespace dptune
