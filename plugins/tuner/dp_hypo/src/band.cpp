#include "dp_hypo/band.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune::dp_hypo {

namespace {
constexpr double kNarrowing = 1e-12;  // relative: clipping stays this far inside the band
constexpr double kSumTolerance = 1e-12;
}  // namespace

Band::Band(std::vector<double> prior, double lower, double upper)
    : prior_(std::move(prior)), lower_(lower), upper_(upper) {
  require(!prior_.empty(), "dp_hypo: the prior needs at least one candidate");
  double sum = 0;
  for (double p : prior_) {
    require(p > 0 && std::isfinite(p), "dp_hypo: every prior mass must be positive and finite");
    sum += p;
  }
  require(std::abs(sum - 1) <= 1e-9, "dp_hypo: the prior must sum to 1");
  require(lower > 0 && lower <= 1,
          "dp_hypo: lower (c) must be in (0, 1], got " + std::to_string(lower));
  require(upper >= 1 && std::isfinite(upper),
          "dp_hypo: upper (C) must be >= 1 and finite, got " + std::to_string(upper));
}

bool Band::contains(const std::vector<double>& f) const {
  if (f.size() != prior_.size()) return false;
  double sum = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (!(f[i] >= lower_ * prior_[i] && f[i] <= upper_ * prior_[i])) return false;
    sum += f[i];
  }
  return std::abs(sum - 1) <= kSumTolerance;
}

std::vector<double> Band::project(const std::vector<double>& weights) const {
  const std::size_t n = prior_.size();
  if (weights.size() != n) return prior_;
  // Normalise the weights first (eq. 3.1 projects a density): a flat vector projects to p only
  // when it sums to 1.
  double total = 0;
  for (double w : weights) total += std::isfinite(w) && w > 0 ? w : 0;
  if (!(total > 0) || !std::isfinite(total)) return prior_;
  std::vector<double> pi(n);
  for (std::size_t i = 0; i < n; ++i)
    pi[i] = std::isfinite(weights[i]) && weights[i] > 0 ? weights[i] / total : 0;
  std::vector<double> lo(n), hi(n);
  for (std::size_t i = 0; i < n; ++i) {
    lo[i] = std::min(lower_ * prior_[i] * (1 + kNarrowing), prior_[i]);
    hi[i] = std::max(upper_ * prior_[i] * (1 - kNarrowing), prior_[i]);
  }
  const auto clipped_sum = [&](double nu) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += std::clamp(pi[i] + nu, lo[i], hi[i]);
    return s;
  };
  // Σ clip(π + ν) is 1 somewhere in [−1, 1]: at ν = −1 every term sits at its lower bound (π ≤ 1)
  // and at ν = 1 at its upper one, and Σ lo ≤ 1 ≤ Σ hi.
  double a = -1, b = 1;
  for (int step = 0; step < 200 && b - a > 0; ++step) {
    const double mid = 0.5 * (a + b);
    if (mid == a || mid == b) break;
    (clipped_sum(mid) < 1 ? a : b) = mid;
  }
  std::vector<double> f(n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += (f[i] = std::clamp(pi[i] + b, lo[i], hi[i]));
  for (auto& x : f) x /= sum;
  return contains(f) ? f : prior_;
}

std::size_t draw_index(const std::vector<double>& f, RandomBitGenerator& rng) {
  const double total = std::accumulate(f.begin(), f.end(), 0.0);
  const double u = uniform01(rng) * total;
  double cumulative = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    cumulative += f[i];
    if (u < cumulative) return i;
  }
  // u·Σf rounded up to the last partial sum: the last cell with positive mass.
  for (std::size_t i = f.size(); i-- > 0;)
    if (f[i] > 0) return i;
  return 0;
}

}  // namespace dptune::dp_hypo
