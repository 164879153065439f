// The number-of-runs distributions of Papernot & Steinke 2022: PMFs, means, PGFs and exact
// samplers.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "accounting_helpers.hpp"
#include "dptune/errors.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/rng.hpp"

using dptune::RepetitionDistribution;

namespace {

using dptune_test::kInf;

// Pearson chi-square of `draws` samples against the PMF, cells k = lo..hi−1 plus the two tails.
double chi_square(const RepetitionDistribution& d, int draws, std::int64_t lo, std::int64_t hi,
                  std::uint64_t seed) {
  dptune::Xoshiro256 rng(seed, 0);
  std::vector<double> observed(static_cast<std::size_t>(hi - lo + 1), 0.0);
  for (int i = 0; i < draws; ++i) {
    const auto k = d.sample(rng);
    const auto cell = k < lo ? 0 : (k >= hi ? hi - lo : k - lo);
    observed[static_cast<std::size_t>(cell)] += 1;
  }
  double expected_mass_inside = 0, stat = 0;
  std::vector<double> p(observed.size(), 0.0);
  for (std::int64_t k = lo; k < hi; ++k) {
    p[static_cast<std::size_t>(k - lo)] = d.pmf(k);
    expected_mass_inside += d.pmf(k);
  }
  double below = 0;
  for (std::int64_t k = 0; k < lo; ++k) below += d.pmf(k);
  // Cell 0 collects k < lo together with lo itself only when lo is the support's start.
  p.back() = std::max(0.0, 1 - expected_mass_inside - below);
  p[0] += below;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double e = p[i] * draws;
    if (e > 0) stat += (observed[i] - e) * (observed[i] - e) / e;
  }
  return stat;
}
}  // namespace

TEST_CASE("truncated negative binomial: PMF sums to one and has the stated mean") {
  for (double eta : {-0.5, -0.9, 0.0, 0.5, 1.0, 5.0})
    for (double gamma : {0.01, 0.1, 0.5, 0.9}) {
      const auto d = RepetitionDistribution::truncated_negative_binomial(eta, gamma);
      double mass = 0, mean = 0;
      for (std::int64_t k = 1; k < 200000; ++k) {
        const double p = d.pmf(k);
        mass += p;
        mean += static_cast<double>(k) * p;
        if (p < 1e-20 && k > 100) break;
      }
      INFO("eta=" << eta << " gamma=" << gamma);
      CHECK(mass == doctest::Approx(1.0).epsilon(1e-9));
      CHECK(mean == doctest::Approx(d.mean()).epsilon(1e-7));
      CHECK(d.pmf(0) == 0);
    }
}

TEST_CASE("named cases: geometric and logarithmic closed forms") {
  const double gamma = 0.2;
  const auto geo = RepetitionDistribution::truncated_negative_binomial(1.0, gamma);
  for (std::int64_t k = 1; k < 10; ++k)
    CHECK(geo.pmf(k) == doctest::Approx(gamma * std::pow(1 - gamma, static_cast<double>(k - 1))));
  CHECK(geo.mean() == doctest::Approx(1 / gamma));
  const auto log = RepetitionDistribution::truncated_negative_binomial(0.0, gamma);
  for (std::int64_t k = 1; k < 10; ++k)
    CHECK(log.pmf(k) ==
          doctest::Approx(std::pow(1 - gamma, static_cast<double>(k)) / (k * std::log(1 / gamma))));
  CHECK(log.mean() == doctest::Approx((1 / gamma - 1) / std::log(1 / gamma)));
}

TEST_CASE("gamma solved from the mean") {
  for (double eta : {-0.5, 0.0, 0.5, 1.0, 5.0})
    for (double mean : {1.01, 2.0, 10.0, 1000.0}) {
      const auto d = RepetitionDistribution::from_mean(mean, eta);
      CHECK(d.mean() == doctest::Approx(mean).epsilon(1e-10));
    }
  CHECK(RepetitionDistribution::from_mean(7.5, kInf).is_poisson());
  CHECK_THROWS_AS(RepetitionDistribution::from_mean(1.0, 0.0), dptune::InvalidArgument);
  CHECK_THROWS_AS(RepetitionDistribution::from_mean(0.5, 1.0), dptune::InvalidArgument);
  CHECK_THROWS_AS(RepetitionDistribution::from_mean(10, -1.0), dptune::InvalidArgument);
}

TEST_CASE("PGF: closed form against the PMF series") {
  for (double eta : {-0.5, 0.0, 1.0, 3.0}) {
    const auto d = RepetitionDistribution::from_mean(6.0, eta);
    for (double x : {0.0, 0.3, 0.9, 1.0}) {
      double series = 0;
      for (std::int64_t k = 1; k < 5000; ++k)
        series += d.pmf(k) * std::pow(x, static_cast<double>(k));
      CHECK(d.pgf(x) == doctest::Approx(series).epsilon(1e-9));
    }
  }
  const auto p = RepetitionDistribution::poisson(3.0);
  CHECK(p.pgf(0.5) == doctest::Approx(std::exp(-1.5)));
  CHECK(p.pmf(2) == doctest::Approx(std::exp(-3.0) * 9 / 2));
}

TEST_CASE("samplers match their PMFs (chi-square, fixed seeds)") {
  // Critical values at p = 0.001 for the degrees of freedom used (cells − 1).
  struct Case {
    RepetitionDistribution d;
    std::int64_t lo, hi;
    double critical;
  };
  const std::vector<Case> cases{
      {RepetitionDistribution::from_mean(5.0, 0.0), 1, 15, 36.1},  // 15 cells, 14 dof
      {RepetitionDistribution::from_mean(5.0, 1.0), 1, 15, 36.1},
      {RepetitionDistribution::from_mean(5.0, -0.5), 1, 15, 36.1},
      {RepetitionDistribution::from_mean(5.0, 3.0), 1, 15, 36.1},
      {RepetitionDistribution::poisson(4.0), 0, 14, 36.1},
  };
  std::uint64_t seed = 11;
  for (const auto& c : cases) {
    const double stat = chi_square(c.d, 50000, c.lo, c.hi, seed++);
    INFO(c.d.describe() << " chi2=" << stat);
    CHECK(stat < c.critical);
  }
}

TEST_CASE("sample mean agrees with E[K]") {
  dptune::Xoshiro256 rng(5, 1);
  for (double eta : {-0.5, 0.0, 1.0}) {
    const auto d = RepetitionDistribution::from_mean(20.0, eta);
    double sum = 0, sum2 = 0;
    const int n = 40000;
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<double>(d.sample(rng));
      sum += k;
      sum2 += k * k;
    }
    const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
    CHECK(std::abs(mean - 20.0) < 5 * sd / std::sqrt(n));
  }
}

TEST_CASE("planner quantities: expected best quantile and success probability, closed forms") {
  // ∫₀¹ f(x) dx in closed form: η ∉ {0, 1}: [(1 − γ^{1−η})/((1−γ)(1−η)) − 1]/(γ^{−η} − 1);
  // η = 1: −log γ/(1 − γ) ... divided by (γ^{−1} − 1); η = 0: −(γ log γ + 1 − γ)/((1−γ) log γ);
  // Poisson: (1 − e^{−μ})/μ.
  for (double eta : {-0.5, 0.0, 0.5, 1.0, 5.0})
    for (double mean : {1.5, 10.0, 300.0}) {
      const auto d = RepetitionDistribution::from_mean(mean, eta);
      const double g = d.gamma();
      double integral = 0;
      if (eta == 0)
        integral = -(g * std::log(g) + 1 - g) / ((1 - g) * std::log(g));
      else if (eta == 1)
        integral = (-std::log(g) / (1 - g) - 1) / (1 / g - 1);
      else
        integral =
            ((1 - std::pow(g, 1 - eta)) / ((1 - g) * (1 - eta)) - 1) / (std::pow(g, -eta) - 1);
      INFO("eta=" << eta << " mean=" << mean);
      CHECK(d.expected_best_quantile() == doctest::Approx(1 - integral).epsilon(1e-8));
      const double m = 20;
      CHECK(d.success_probability(20) == doctest::Approx(1 - d.pgf(1 - 1 / m)));
    }
  const auto p = RepetitionDistribution::poisson(7.0);
  CHECK(p.expected_best_quantile() ==
        doctest::Approx(1 - (1 - std::exp(-7.0)) / 7.0).epsilon(1e-9));
  CHECK(p.success_probability(10) == doctest::Approx(1 - std::exp(-0.7)));
  // Geometric with mean 1/γ: success probability for m candidates = (1/m)/(γ + (1−γ)/m)... via PGF
  const auto geo = RepetitionDistribution::truncated_negative_binomial(1.0, 0.1);
  const double x = 1 - 1.0 / 10;
  CHECK(geo.success_probability(10) == doctest::Approx(1 - 0.1 * x / (1 - 0.9 * x)));
}
