// The ziggurat of dptune/helpers/fast_normal.hpp (the gaussian plugin's `noise: fast`): the law of
// its draws against the standard normal, with fixed seeds, and its reproducibility.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dptune/helpers/fast_normal.hpp"
#include "dptune/rng.hpp"

using namespace dptune;

namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

std::vector<double> draws(std::uint64_t seed, std::size_t n) {
  Xoshiro256 rng(seed);
  std::vector<double> out(n, 0.0);
  ZigguratNormal::instance().add_to(rng, 1.0, out);
  return out;
}

}  // namespace

TEST_CASE("ziggurat normals: Kolmogorov-Smirnov against the normal cdf") {
  std::vector<double> x = draws(7, 1000000);
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = normal_cdf(x[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  // P(sqrt(n) D > 1.95) ≈ 1e-3 (Kolmogorov's limit law); a wrong layer table moves D far more.
  CHECK(std::sqrt(n) * d < 1.95);
}

TEST_CASE("ziggurat normals: moments, tail and wedge frequencies, symmetry") {
  const std::vector<double> x = draws(8, 2000000);
  const double n = static_cast<double>(x.size());
  double sum = 0, sum_sq = 0, sum_4 = 0;
  long beyond_r = 0, wedge_band = 0, negative = 0;
  for (double v : x) {
    sum += v;
    sum_sq += v * v;
    sum_4 += v * v * v * v;
    if (std::abs(v) > 3.6541528853610088) ++beyond_r;  // drawn by the tail method
    if (std::abs(v) > 1.0 && std::abs(v) < 1.05) ++wedge_band;
    if (v < 0) ++negative;
  }
  // Standard errors of the sample mean (1), second moment (sqrt 2) and fourth moment (sqrt 96).
  CHECK(std::abs(sum / n) <= 5.5 / std::sqrt(n));
  CHECK(std::abs(sum_sq / n - 1) <= 5.5 * std::sqrt(2 / n));
  CHECK(std::abs(sum_4 / n - 3) <= 5.5 * std::sqrt(96 / n));
  auto check_frequency = [n](long count, double p) {
    CHECK(std::abs(static_cast<double>(count) - n * p) <= 5.5 * std::sqrt(n * p * (1 - p)));
  };
  check_frequency(beyond_r, 2 * (1 - normal_cdf(3.6541528853610088)));
  check_frequency(wedge_band, 2 * (normal_cdf(1.05) - normal_cdf(1.0)));
  check_frequency(negative, 0.5);
}

TEST_CASE("ziggurat normals: the same seed gives the same draws, scaled by sd") {
  const std::vector<double> a = draws(9, 1000), b = draws(9, 1000);
  CHECK(a == b);
  Xoshiro256 rng(9);
  std::vector<double> scaled(1000, 5.0);
  ZigguratNormal::instance().add_to(rng, 2.5, scaled);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(scaled[i] == doctest::Approx(5.0 + 2.5 * a[i]));
}
