// The analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8); declared in calibration.hpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "dptune/errors.hpp"
#include "dptune/helpers/calibration.hpp"
#include "dptune/params.hpp"

namespace dptune {

namespace {

std::string num(double x) { return to_string(Value{x}); }

/// log Φ(x), Φ the standard normal CDF, for every real x.  Φ(x) = ½ erfc(−x/√2); below
/// x = −25√2, where erfc nears the end of the double range, the asymptotic series
/// Φ(x) = φ(x)/|x| · (1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − 945/x¹⁰ + …) (Abramowitz & Stegun
/// 26.2.12).  It alternates, so the error is below the first omitted term, 10395/x¹² < 3e-15.
double log_normal_cdf(double x) {
  constexpr double kSeriesBelow = -25 * std::numbers::sqrt2;
  if (x > kSeriesBelow) return std::log(0.5 * std::erfc(-x / std::numbers::sqrt2));
  const double r = 1 / (x * x);
  return -0.5 * x * x - std::log(-x) - 0.5 * std::log(2 * std::numbers::pi) +
         std::log1p(r * (-1 + r * (3 + r * (-15 + r * (105 - r * 945)))));
}

}  // namespace

double analytic_gaussian_delta(double noise_multiplier, double epsilon) {
  const double s = noise_multiplier;
  require(s > 0, "analytic gaussian: noise multiplier must be > 0, got " + num(s));
  require(epsilon >= 0, "analytic gaussian: epsilon must be >= 0, got " + num(epsilon));
  // Balle & Wang 2018, Theorem 8 with sensitivity 1 and noise stddev s.
  const double a = 1 / (2 * s) - epsilon * s, b = -1 / (2 * s) - epsilon * s;
  const double first = std::exp(log_normal_cdf(a));
  const double second = std::exp(epsilon + log_normal_cdf(b));
  return std::clamp(first - second, 0.0, 1.0);
}

double analytic_gaussian_epsilon(double noise_multiplier, double delta) {
  require(delta > 0 && delta < 1, "analytic gaussian: delta must be in (0, 1), got " + num(delta));
  if (analytic_gaussian_delta(noise_multiplier, 0) <= delta) return 0;
  // δ(ε) falls as ε grows: double until it meets δ, then bisect.
  double lo = 0, hi = 1;
  while (analytic_gaussian_delta(noise_multiplier, hi) > delta) {
    lo = hi;
    hi *= 2;
    if (hi > 1e6) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (analytic_gaussian_delta(noise_multiplier, mid) > delta ? lo : hi) = mid;
  }
  return hi;  // the end that meets δ: never rounded down
}

double analytic_gaussian_noise_multiplier(double epsilon, double delta) {
  require(epsilon > 0 && std::isfinite(epsilon),
          "analytic gaussian: epsilon must be a finite number > 0, got " + num(epsilon));
  require(delta > 0 && delta < 1, "analytic gaussian: delta must be in (0, 1), got " + num(delta));
  double lo = std::log(1e-6), hi = std::log(1e7);
  if (analytic_gaussian_delta(std::exp(hi), epsilon) > delta)
    throw PrivacyError("analytic gaussian: no noise multiplier up to 1e7 reaches the target (" +
                       num(epsilon) + ", " + num(delta) + ")");
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (analytic_gaussian_delta(std::exp(mid), epsilon) > delta ? lo : hi) = mid;
  }
  return std::exp(hi);  // the end that meets δ
}

}  // namespace dptune
