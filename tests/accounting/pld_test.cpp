// The PLD accountant (plugins/accountant/pld) against closed forms: the analytic Gaussian (Balle &
// Wang 2018) alone and under k-fold composition, the Laplace mechanism's δ(ε), randomised response;
// its invariants (pessimistic ≥ optimistic bracketing the exact value, commutative and monotone
// composition); and dp_accounting's PLD values for two DP-SGD settings.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/helpers/repetition.hpp"
#include "pld/calculator.hpp"
#include "selection/profile.hpp"

using dptune::DpEvent;
namespace pld = dptune::pld;

namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

/// Balle & Wang 2018, Theorem 8: δ(ε) of a Gaussian with μ = sensitivity / noise stddev.
double gaussian_delta(double mu, double epsilon) {
  return normal_cdf(-epsilon / mu + mu / 2) -
         std::exp(epsilon) * normal_cdf(-epsilon / mu - mu / 2);
}

/// Smallest ε with gaussian_delta ≤ delta, by bisection (δ decreases in ε).
double gaussian_epsilon(double mu, double delta) {
  double lo = 0, hi = 1;
  while (gaussian_delta(mu, hi) > delta) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (gaussian_delta(mu, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

/// δ(ε) of the Laplace mechanism, scale b, sensitivity 1: 1 − e^{(ε − 1/b)/2} below 1/b, else 0.
double laplace_delta(double b, double epsilon) {
  return epsilon >= 1 / b ? 0.0 : -std::expm1((epsilon - 1 / b) / 2);
}

/// δ(ε) of two Laplace releases (scale b) by quadrature, independent of the PLD code.  Under
/// P = Lap(1, b) the loss log(p/q)(o) against Q = Lap(0, b) is +1/b on o ≥ 1 (mass 1/2), −1/b on
/// o ≤ 0 (mass e^{−1/b}/2), and (2o − 1)/b on (0, 1) with density e^{(o−1)/b}/(2b).
double two_laplace_delta(double b, double epsilon) {
  const int n = 2000;
  std::vector<std::pair<double, double>> points;  // (loss, P-mass)
  points.emplace_back(1 / b, 0.5);
  points.emplace_back(-1 / b, 0.5 * std::exp(-1 / b));
  for (int i = 0; i < n; ++i) {
    const double o = (i + 0.5) / n;
    points.emplace_back((2 * o - 1) / b, std::exp((o - 1) / b) / (2 * b) / n);
  }
  double delta = 0;
  for (const auto& [l1, p1] : points)
    for (const auto& [l2, p2] : points)
      if (l1 + l2 > epsilon) delta += p1 * p2 * -std::expm1(epsilon - l1 - l2);
  return delta;
}

double worse_delta(const pld::Directions& d, double h, double epsilon) {
  return std::max(d.remove.delta(h, epsilon), d.add_or_remove().delta(h, epsilon));
}

const pld::Options kDefaults{};
constexpr double kH = 1e-4;

}  // namespace

TEST_CASE("pld: one Gaussian matches the analytic Gaussian, bracketed by the two estimates") {
  for (const double sigma : {0.5, 1.0, 2.0, 5.0}) {
    const auto pess = pld::gaussian(sigma, kDefaults, pld::Estimate::Pessimistic);
    const auto opt = pld::gaussian(sigma, kDefaults, pld::Estimate::Optimistic);
    for (const double eps : {0.0, 0.3, 1.0, 2.0, 4.0}) {
      const double exact = gaussian_delta(1 / sigma, eps);
      INFO("sigma " << sigma << " eps " << eps << " exact " << exact);
      const double p = pess.remove.delta(kH, eps), o = opt.remove.delta(kH, eps);
      CHECK(p >= exact - 1e-14);
      CHECK(o <= exact + 1e-14);
      CHECK(p - exact <= 1e-6 * std::max(exact, 1e-3));
    }
  }
}

TEST_CASE(
    "pld: k-fold FFT composition of a Gaussian matches the analytic Gaussian with mu = "
    "sqrt(k)/sigma") {
  // Self-composition by FFT directly (the accountant itself merges Gaussians exactly).
  for (const auto& setting : {std::pair{2.0, 16}, std::pair{5.0, 100}, std::pair{10.0, 1000}}) {
    const double sigma = setting.first;
    const int k = setting.second;
    const auto one = pld::gaussian(sigma, kDefaults, pld::Estimate::Pessimistic);
    const auto one_opt = pld::gaussian(sigma, kDefaults, pld::Estimate::Optimistic);
    const pld::Pld pess = pld::self_compose(one.remove, k, kDefaults, pld::Estimate::Pessimistic);
    const pld::Pld opt = pld::self_compose(one_opt.remove, k, kDefaults, pld::Estimate::Optimistic);
    const double mu = std::sqrt(static_cast<double>(k)) / sigma;
    for (const double eps : {0.5, 1.0, 2.0, 3.0}) {
      const double exact = gaussian_delta(mu, eps);
      INFO("sigma " << sigma << " k " << k << " eps " << eps << " exact " << exact);
      CHECK(pess.delta(kH, eps) >= exact - 1e-14);
      CHECK(opt.delta(kH, eps) <= exact + 1e-14);
      CHECK(pess.delta(kH, eps) - exact <= 1e-6 * std::max(exact, 1e-3));
    }
    for (const double delta : {1e-5, 1e-8}) {
      const double exact = gaussian_epsilon(mu, delta);
      INFO("sigma " << sigma << " k " << k << " delta " << delta << " exact eps " << exact);
      CHECK(pess.epsilon(kH, delta) >= exact - 1e-9);
      CHECK(pess.epsilon(kH, delta) <= exact * (1 + 1e-5));
      CHECK(opt.epsilon(kH, delta) <= exact + 1e-9);
    }
  }
}

TEST_CASE("pld: the fast profile is never below the defining sum, and within 1e-9 of it") {
  // pld::FastProfile answers δ(ε) = P(L = ∞) + Σ_{l_i > ε} m_i (1 − e^{ε − l_i}) from suffix sums
  // plus a rounding allowance; here against that sum in long double, at grid points, between
  // them, below the lowest loss and above the highest, for a Gaussian composed by FFT and for a
  // Poisson-sampled Gaussian (both directions, with mass at +∞ after composition).
  const auto gaussian = pld::gaussian(2.0, kDefaults, pld::Estimate::Pessimistic);
  const auto sampled =
      pld::poisson_sampled(0.05, 0.9, false, kDefaults, pld::Estimate::Pessimistic);
  const std::vector<pld::Pld> plds{
      pld::self_compose(gaussian.remove, 16, kDefaults, pld::Estimate::Pessimistic),
      pld::self_compose(sampled.remove, 50, kDefaults, pld::Estimate::Pessimistic),
      pld::self_compose(*sampled.add, 50, kDefaults, pld::Estimate::Pessimistic)};
  for (const pld::Pld& loss : plds) {
    const pld::FastProfile fast(loss, kH);
    auto reference = [&](double eps) {
      long double sum = loss.infinity;
      for (std::size_t i = 0; i < loss.mass.size(); ++i) {
        const long double l =
            static_cast<long double>(loss.offset + static_cast<std::int64_t>(i)) * kH;
        if (l > eps) sum += loss.mass[i] * -std::expm1(static_cast<long double>(eps) - l);
      }
      return std::min(1.0L, sum);
    };
    const double lowest = static_cast<double>(loss.offset) * kH;
    const double highest = lowest + static_cast<double>(loss.mass.size()) * kH;
    std::vector<double> points{lowest - 1, lowest, highest, highest + 1};
    for (int i = 0; i <= 40; ++i) {
      const double eps = lowest + (highest - lowest) * i / 40.0;
      points.push_back(eps);
      points.push_back(eps + 0.37 * kH);  // between grid points
    }
    for (const double eps : points) {
      const long double exact = reference(eps);
      INFO("eps " << eps << " exact " << static_cast<double>(exact));
      CHECK(static_cast<long double>(fast(eps)) >= exact);
      CHECK(static_cast<long double>(fast(eps)) <= exact * (1 + 1e-9L) + 1e-300L);
    }
  }
}

TEST_CASE("pld: the accountant prices Gaussian compositions exactly by Gaussian DP") {
  const pld::Calculator acc(kDefaults);
  const auto composed = DpEvent::composed(
      {DpEvent::self_composed(DpEvent::gaussian(3.0), 4), DpEvent::gaussian(2.0)});
  const double mu = std::sqrt(4 / 9.0 + 1 / 4.0);
  const auto g = acc.epsilon(composed, 1e-6);
  CHECK(g.epsilon >= gaussian_epsilon(mu, 1e-6) - 1e-9);
  CHECK(g.epsilon == doctest::Approx(gaussian_epsilon(mu, 1e-6)).epsilon(1e-6));
  CHECK(g.accountant == "pld");
  CHECK(g.derivation.find("value_discretization_interval 0.0001,") != std::string::npos);
  CHECK(g.derivation.find("tail_mass_truncation 1e-15") != std::string::npos);
  CHECK(g.derivation.find("Doroshenko") != std::string::npos);
}

TEST_CASE("pld: the Laplace mechanism matches its closed form, alone and composed") {
  for (const double b : {0.5, 1.0, 3.0}) {
    const auto pess = pld::laplace(b, kDefaults, pld::Estimate::Pessimistic);
    const auto opt = pld::laplace(b, kDefaults, pld::Estimate::Optimistic);
    for (const double eps : {0.0, 0.1, 0.25, 0.9 / b, 1 / b, 2 / b}) {
      const double exact = laplace_delta(b, eps);
      INFO("b " << b << " eps " << eps << " exact " << exact);
      CHECK(pess.remove.delta(kH, eps) >= exact - 1e-14);
      CHECK(opt.remove.delta(kH, eps) <= exact + 1e-14);
      // 1/3 is not on the grid: its atom is split between the grid points around it.
      CHECK(pess.remove.delta(kH, eps) - exact <= (b == 3.0 ? 2e-5 : 1e-6));
    }
    // ε(0) is the pure-DP ε = 1/b, or the next grid point.
    CHECK(pess.remove.epsilon(kH, 0) >= 1 / b - 1e-12);
    CHECK(pess.remove.epsilon(kH, 0) <= 1 / b + kH);
  }
  // Two Laplace releases, against an independent quadrature of E_P[(1 − e^{ε − L₁ − L₂})₊].
  const double b = 1.0;
  const pld::Calculator acc(kDefaults);
  for (const double eps : {0.0, 0.5, 1.0, 1.5}) {
    const double exact = two_laplace_delta(b, eps);
    const double d = acc.delta(DpEvent::self_composed(DpEvent::laplace(b), 2), eps).delta;
    INFO("eps " << eps << " quadrature " << exact);
    CHECK(d >= exact - 1e-7);
    CHECK(d - exact <= 2e-6);
  }
  CHECK(acc.epsilon(DpEvent::self_composed(DpEvent::laplace(b), 2), 0).epsilon ==
        doctest::Approx(2.0).epsilon(1e-9));
}

TEST_CASE("pld: pure DP and (epsilon, delta) are randomised response, exactly") {
  const pld::Calculator acc(kDefaults);
  const double e = 1.0;
  for (const double eps : {0.0, 0.25, 0.5, 0.99}) {
    const double exact = (std::exp(e) - std::exp(eps)) / (1 + std::exp(e));
    CHECK(acc.delta(DpEvent::pure_dp(e), eps).delta == doctest::Approx(exact).epsilon(1e-12));
    const double with_delta = 1e-3 + (1 - 1e-3) * exact;
    CHECK(acc.delta(DpEvent::approx_dp(e, 1e-3), eps).delta ==
          doctest::Approx(with_delta).epsilon(1e-12));
  }
  CHECK(acc.delta(DpEvent::pure_dp(e), 1.0).delta == 0);
  CHECK(acc.epsilon(DpEvent::pure_dp(e), 0).epsilon == doctest::Approx(1.0).epsilon(1e-12));
  // 3-fold: loss 3ε − 2jε with binomial weights; δ(0) = Σ_{L>0} p(L)(1 − e^{−L}).
  const double p = std::exp(e) / (1 + std::exp(e));
  const double exact3 =
      p * p * p * (1 - std::exp(-3 * e)) + 3 * p * p * (1 - p) * (1 - std::exp(-e));
  CHECK(acc.delta(DpEvent::self_composed(DpEvent::pure_dp(e), 3), 0).delta ==
        doctest::Approx(exact3).epsilon(1e-10));
  CHECK(acc.epsilon(DpEvent::approx_dp(e, 1e-3), 1e-4).epsilon ==
        std::numeric_limits<double>::infinity());
}

TEST_CASE("pld: composition commutes and is monotone") {
  const pld::Calculator acc(kDefaults);
  const auto a = DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.0));
  const auto b = DpEvent::laplace(4.0);
  const auto c = DpEvent::pure_dp(0.3);
  const double abc = acc.epsilon(DpEvent::composed({a, b, c}), 1e-6).epsilon;
  const double cba = acc.epsilon(DpEvent::composed({c, b, a}), 1e-6).epsilon;
  const double bac = acc.epsilon(DpEvent::composed({b, a, c}), 1e-6).epsilon;
  CHECK(abc == doctest::Approx(cba).epsilon(1e-9));
  CHECK(abc == doctest::Approx(bac).epsilon(1e-9));
  const double ab = acc.epsilon(DpEvent::composed({a, b}), 1e-6).epsilon;
  CHECK(ab < abc);
  CHECK(acc.epsilon(a, 1e-6).epsilon < ab);
  double last = 0;
  for (const int k : {1, 10, 100, 1000}) {
    const double eps = acc.epsilon(DpEvent::self_composed(a, k), 1e-6).epsilon;
    CHECK(eps > last);
    last = eps;
  }
  double previous = std::numeric_limits<double>::infinity();
  for (const double sigma : {0.6, 0.8, 1.0, 2.0, 10.0}) {
    const double eps =
        acc.epsilon(DpEvent::self_composed(DpEvent::poisson_sampled(0.05, DpEvent::gaussian(sigma)),
                                           200),
                    1e-5)
            .epsilon;
    CHECK(eps < previous);
    previous = eps;
  }
}

TEST_CASE("pld: pessimistic is never below optimistic") {
  const pld::Calculator acc(kDefaults);
  const std::vector<DpEvent> events{
      DpEvent::poisson_sampled(0.1, DpEvent::gaussian(1.0)),
      DpEvent::self_composed(DpEvent::poisson_sampled(0.02, DpEvent::laplace(2.0)), 50),
      DpEvent::composed({DpEvent::laplace(1.0), DpEvent::pure_dp(0.5), DpEvent::gaussian(3.0)}),
      DpEvent::self_composed(DpEvent::laplace(5.0), 30),
  };
  for (const auto& e : events) {
    INFO(e.to_string());
    for (const double delta : {1e-3, 1e-6}) {
      const double pess = acc.epsilon(e, delta).epsilon;
      const double opt = acc.epsilon(e, delta, pld::Estimate::Optimistic).epsilon;
      CHECK(pess >= opt);
      CHECK(pess - opt <= 0.05 * pess + 0.01);
    }
  }
}

TEST_CASE("pld: the Poisson-sampled Gaussian reproduces dp_accounting's DP-SGD values") {
  const pld::Calculator acc(kDefaults);
  // q = 256/60000, sigma 1.1, 60 epochs (14063 steps), delta 1e-5: dp_accounting's PLD 2.382.
  const auto mnist = DpEvent::self_composed(
      DpEvent::poisson_sampled(256.0 / 60000, DpEvent::gaussian(1.1)), 14063);
  const auto g = acc.epsilon(mnist, 1e-5);
  CHECK(g.epsilon == doctest::Approx(2.382).epsilon(1e-3));
  CHECK(g.derivation.find("remove direction") != std::string::npos);
  // The optimistic estimate is a lower bound.
  CHECK(acc.epsilon(mnist, 1e-5, pld::Estimate::Optimistic).epsilon <= g.epsilon);
  // q = 0.1, sigma 0.8, 1000 steps, delta 1e-5: dp_accounting's PLD 39.9.
  const auto heavy =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.1, DpEvent::gaussian(0.8)), 1000);
  CHECK(acc.epsilon(heavy, 1e-5).epsilon == doctest::Approx(39.9).epsilon(1.5e-3));
}

TEST_CASE("pld: Poisson sampling's two directions differ and the worse one is taken") {
  const pld::Calculator acc(kDefaults);
  const auto e = DpEvent::poisson_sampled(0.2, DpEvent::gaussian(0.7));
  const auto d = acc.directions(e);
  REQUIRE(d.add.has_value());
  const double remove = d.remove.epsilon(kH, 1e-5), add = d.add->epsilon(kH, 1e-5);
  CHECK(remove != doctest::Approx(add));
  CHECK(acc.epsilon(e, 1e-5).epsilon == std::max(remove, add));
  CHECK(acc.delta(e, 1.0).delta == doctest::Approx(worse_delta(d, kH, 1.0)).epsilon(1e-15));
  // Sampling amplifies: never worse than the unsampled Gaussian, and equal at q = 1.
  CHECK(acc.epsilon(e, 1e-5).epsilon < acc.epsilon(DpEvent::gaussian(0.7), 1e-5).epsilon);
  CHECK(acc.epsilon(DpEvent::poisson_sampled(1.0, DpEvent::gaussian(0.7)), 1e-5).epsilon ==
        doctest::Approx(acc.epsilon(DpEvent::gaussian(0.7), 1e-5).epsilon).epsilon(1e-12));
}

TEST_CASE("pld: one_of dominates each alternative, and a replace_one leaf is its restatement") {
  const pld::Calculator acc(kDefaults);
  const auto a = DpEvent::poisson_sampled(0.05, DpEvent::gaussian(1.0));
  const auto b = DpEvent::laplace(2.0);
  const auto either = DpEvent::self_composed(DpEvent::one_of({a, b}), 20);
  const double both = acc.epsilon(either, 1e-6).epsilon;
  const double only_a = acc.epsilon(DpEvent::self_composed(a, 20), 1e-6).epsilon;
  const double only_b = acc.epsilon(DpEvent::self_composed(b, 20), 1e-6).epsilon;
  CHECK(both >= std::max(only_a, only_b));
  CHECK(both <= only_a + only_b);
  // One alternative only: the chord construction loses almost nothing.
  const double single = acc.epsilon(DpEvent::one_of({b}), 1e-6).epsilon;
  CHECK(single == doctest::Approx(acc.epsilon(b, 1e-6).epsilon).epsilon(1e-3));
  CHECK(single >= acc.epsilon(b, 1e-6).epsilon - 1e-12);

  // replace_one(gaussian(s)) holds for replace-one neighbours with multiplier s; an add/remove
  // Gaussian composed with it is restated with half its multiplier (group privacy of size 2).
  const double r = acc.epsilon(DpEvent::replace_one(DpEvent::gaussian(2.0)), 1e-5).epsilon;
  CHECK(r == doctest::Approx(acc.epsilon(DpEvent::gaussian(2.0), 1e-5).epsilon).epsilon(1e-12));
  const auto mixed =
      DpEvent::composed({DpEvent::replace_one(DpEvent::gaussian(2.0)), DpEvent::gaussian(4.0)});
  CHECK(acc.epsilon(mixed, 1e-5).epsilon ==
        doctest::Approx(gaussian_epsilon(std::sqrt(0.25 + 0.25), 1e-5)).epsilon(1e-6));
  CHECK(acc.epsilon(mixed, 1e-5).derivation.find("replace-one") != std::string::npos);
}

TEST_CASE("pld: events without a PLD here are refused with a reason") {
  const pld::Calculator acc(kDefaults);
  const std::vector<std::pair<DpEvent, std::string>> refused{
      {DpEvent::sampled_without_replacement(1000, 10, DpEvent::laplace(1.0)),
       "without replacement"},
      {DpEvent::composed(
           {DpEvent::repeat_and_select(DpEvent::gaussian(1.0), 10, 1.0), DpEvent::gaussian(2.0)}),
       "repeat-and-select"},
      {DpEvent::repeat_and_select(DpEvent::zcdp(0.1), 10, 1.0), "zCDP"},
      {DpEvent::repeat_until_accepted(DpEvent::gaussian(1.0), 0.1), "repeat-until-accepted"},
      {DpEvent::zcdp(0.1), "zCDP"},
      {DpEvent::non_private(), "non-private"},
      {DpEvent::poisson_sampled(0.1, DpEvent::pure_dp(1.0)), "Gaussian or Laplace inner"},
      // Only partly priceable: refused as a whole, never underpriced.
      {DpEvent::composed({DpEvent::gaussian(1.0), DpEvent::zcdp(0.1)}), "zCDP"},
      {DpEvent::composed({DpEvent::poisson_sampled(0.1, DpEvent::gaussian(1.0)),
                          DpEvent::replace_one(DpEvent::gaussian(1.0))}),
       "poisson"},
  };
  for (const auto& item : refused) {
    const DpEvent& event = item.first;
    const std::string& phrase = item.second;
    INFO(event.to_string());
    const std::string why = acc.unsupported_reason(event);
    CHECK(why.find(phrase) != std::string::npos);
    CHECK_THROWS_AS(acc.epsilon(event, 1e-5), dptune::PrivacyError);
    CHECK_THROWS_AS(acc.delta(event, 1.0), dptune::PrivacyError);
  }
  CHECK(acc.unsupported_reason(DpEvent::gaussian(1.0)).empty());
  CHECK_THROWS_AS(pld::Calculator(pld::Options{0, 1e-15}), dptune::InvalidArgument);
  CHECK_THROWS_AS(pld::Calculator(pld::Options{1e-4, 0.5}), dptune::InvalidArgument);
  CHECK_THROWS_AS(acc.epsilon(DpEvent::gaussian(1.0), 1.5), dptune::InvalidArgument);
}

TEST_CASE("pld: a whole repeat-and-select is priced from the base's PLD privacy profile") {
  const pld::Calculator acc(kDefaults);
  const double sigma = 2.0, mean = 10;
  const auto event = DpEvent::repeat_and_select(DpEvent::gaussian(sigma), mean, 1.0);
  REQUIRE(acc.unsupported_reason(event).empty());
  const auto g = acc.epsilon(event, 1e-6);
  // The same selection bound from the exact (analytic Gaussian) profile: the PLD profile is above
  // it by at most ~1e-6, so the two agree closely and the PLD one is not below.
  const auto runs =
      dptune::selection::Runs::from(dptune::RepetitionDistribution::from_mean(mean, 1.0));
  const auto exact = dptune::selection::epsilon(
      [sigma](double eps) { return gaussian_delta(1 / sigma, eps); }, runs, 1e-6);
  CHECK(g.epsilon >= exact.value - 1e-6);
  CHECK(g.epsilon == doctest::Approx(exact.value).epsilon(1e-3));
  CHECK(g.epsilon > acc.epsilon(DpEvent::gaussian(sigma), 1e-6).epsilon);
  CHECK(g.derivation.find("privacy loss distribution") != std::string::npos);
  // delta() inverts epsilon(): at the reported epsilon the bound is at most the delta asked.
  CHECK(acc.delta(event, g.epsilon).delta <= 1e-6 * (1 + 1e-6));
  // K = 1 (mean 1, finite shape) is the base itself.
  CHECK(acc.epsilon(DpEvent::repeat_and_select(DpEvent::gaussian(sigma), 1, 1.0), 1e-6).epsilon ==
        acc.epsilon(DpEvent::gaussian(sigma), 1e-6).epsilon);
}

TEST_CASE("pld: losses beyond the double range of e^L keep their true bounds") {
  // Laplace with b = 0.01 is 100-DP, and Poisson-sampled with rate q it is
  // log(1 − q + q e^{1/b})-DP (the largest loss); e^100 is fine but e^{1/b} for b = 1e-3 is not,
  // and that case must be vacuous (too wide a grid), never a finite ε below 1000.
  const pld::Calculator acc(kDefaults);
  CHECK(acc.epsilon(DpEvent::laplace(0.01), 0).epsilon == doctest::Approx(100).epsilon(1e-9));
  for (const double b : {0.01, 0.1}) {
    const double exact = std::log(0.7 + 0.3 * std::exp(1 / b));
    const double eps = acc.epsilon(DpEvent::poisson_sampled(0.3, DpEvent::laplace(b)), 0).epsilon;
    CHECK(eps >= exact - 1e-9);
    CHECK(eps <= exact + kH);
  }
  CHECK(acc.epsilon(DpEvent::laplace(1e-3), 1e-5).epsilon >= 1000);
  CHECK(acc.epsilon(DpEvent::pure_dp(1000), 1e-5).epsilon >= 1000);
}

TEST_CASE("pld: a grid too wide answers vacuously, saying why") {
  const pld::Calculator acc(kDefaults);
  const std::vector<DpEvent> wide{
      DpEvent::self_composed(DpEvent::pure_dp(0.1), 100000000000000),
      DpEvent::self_composed(DpEvent::poisson_sampled(0.5, DpEvent::gaussian(0.01)), 100),
  };
  for (const auto& e : wide) {
    INFO(e.to_string());
    const auto g = acc.epsilon(e, 1e-5);
    CHECK(std::isinf(g.epsilon));
    CHECK(g.derivation.find("raise value_discretization_interval") != std::string::npos);
    CHECK(acc.delta(e, 1.0).delta == 1);
  }
}

TEST_CASE("pld: the transform agrees with the own FFT and with direct sums") {
  // fourier() runs FFTW when built with DPTUNE_PLD_FFTW (else it is fourier_own, the own one).
  // Both must agree on random data, invert each other, and convolve as the O(n^2) sum does.
  const std::string backend = pld::fourier_uses_fftw() ? "FFTW" : "the own radix-4 FFT";
  MESSAGE("fourier() uses " << backend);
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const std::size_t n :
       {std::size_t{2}, std::size_t{64}, std::size_t{4096}, std::size_t{1} << 18}) {
    std::vector<std::complex<double>> x(n);
    for (auto& z : x) z = {unit(rng), unit(rng) - 0.5};
    auto fast = x, own = x;
    pld::fourier(fast, false);
    pld::fourier_own(own.data(), own.size(), false);
    double scale = 0, diff = 0;
    for (std::size_t j = 0; j < n; ++j) {
      scale = std::max(scale, std::abs(own[j]));
      diff = std::max(diff, std::abs(fast[j] - own[j]));
    }
    CHECK(diff <= 1e-12 * scale);
    // The DC term is the plain sum.
    std::complex<double> sum = 0;
    for (const auto& z : x) sum += z;
    CHECK(std::abs(fast[0] - sum) <= 1e-12 * std::abs(sum));
    pld::fourier(fast, true);
    double back = 0;
    for (std::size_t j = 0; j < n; ++j)
      back = std::max(back, std::abs(fast[j] / static_cast<double>(n) - x[j]));
    CHECK(back <= 1e-12);
  }
  // A random convolution large enough for the FFT path, against the direct sum.
  std::vector<double> a(3001), b(1777);
  for (auto& v : a) v = unit(rng);
  for (auto& v : b) v = unit(rng);
  const std::vector<double> c = pld::convolve(a, b);
  REQUIRE(c.size() == a.size() + b.size() - 1);
  double worst = 0;
  for (std::size_t i = 0; i < c.size(); i += 97) {
    double direct = 0;
    for (std::size_t j = 0; j < a.size(); ++j)
      if (i >= j && i - j < b.size()) direct += a[j] * b[i - j];
    worst = std::max(worst, std::abs(c[i] - direct) / std::max(direct, 1.0));
  }
  CHECK(worst <= 1e-12);
}

TEST_CASE("pld: the own FFT matches the defining sum") {
  // X_j = sum_m x_m e^{-2 pi i j m / n}, summed directly (in long double) at sampled frequencies;
  // n = 8 and 2^17 end on a radix-2 level, n = 2^12 takes the tiled bit reversal, n = 2^17 also
  // the cache-blocked wide levels.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const std::size_t n : {std::size_t{8}, std::size_t{1} << 12, std::size_t{1} << 17}) {
    std::vector<std::complex<double>> x(n);
    for (auto& z : x) z = {unit(rng), unit(rng)};
    for (const bool inverse : {false, true}) {
      auto y = x;
      pld::fourier_own(y.data(), n, inverse);
      const long double sign = inverse ? 1 : -1;
      const long double tau = 2 * std::acos(-1.0L);
      double worst = 0;
      for (std::size_t j = 0; j < n; j += std::max<std::size_t>(1, n / 23) + (j % 3)) {
        long double re = 0, im = 0;
        for (std::size_t m = 0; m < n; ++m) {
          const long double angle = sign * tau * static_cast<long double>((j * m) % n) / n;
          const long double c = std::cos(angle), s = std::sin(angle);
          re += x[m].real() * c - x[m].imag() * s;
          im += x[m].real() * s + x[m].imag() * c;
        }
        worst =
            std::max(worst, static_cast<double>(std::hypot(y[j].real() - re, y[j].imag() - im)));
      }
      CHECK(worst <= 1e-12 * std::sqrt(static_cast<double>(n)));
    }
  }
}

namespace {

/// The defining sum X_j = sum_m x_m e^{-2 pi i j m / n} in long double.
std::complex<double> direct_dft(const std::vector<std::complex<double>>& x, std::size_t j) {
  const std::size_t n = x.size();
  const long double tau = 2 * std::acos(-1.0L);
  long double re = 0, im = 0;
  for (std::size_t m = 0; m < n; ++m) {
    const long double angle = -tau * static_cast<long double>((j * m) % n) / n;
    const long double c = std::cos(angle), s = std::sin(angle);
    re += x[m].real() * c - x[m].imag() * s;
    im += x[m].real() * s + x[m].imag() * c;
  }
  return {static_cast<double>(re), static_cast<double>(im)};
}

}  // namespace

TEST_CASE("pld: the spectrum-order transform is the DFT at its stated positions, mirrors paired") {
  // spectrum_forward leaves X_j at spectrum_position(j) (bit-reversed for the own transform),
  // spectrum_inverse brings n x back in natural order, and spectrum_mirror pairs X_j with
  // X_{n-j}, which for a real input is its conjugate.  Sizes from 2 up past the cache block
  // (2^15), with odd and even log2 n (a radix-2 level or not).
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const std::size_t n : {std::size_t{2}, std::size_t{4}, std::size_t{8}, std::size_t{32},
                              std::size_t{1} << 10, std::size_t{1} << 16, std::size_t{1} << 17}) {
    CAPTURE(n);
    std::vector<std::complex<double>> x(n), real_only(n);
    for (std::size_t m = 0; m < n; ++m) {
      x[m] = {unit(rng), unit(rng)};
      real_only[m] = {x[m].real(), 0.0};
    }
    auto y = x, r = real_only;
    pld::spectrum_forward(y.data(), n);
    pld::spectrum_forward(r.data(), n);
    double worst = 0, mirror_gap = 0;
    const std::size_t step = std::max<std::size_t>(1, n / 61);
    for (std::size_t j = 0; j < n; j += step + (j % 2)) {
      const std::size_t p = pld::spectrum_position(j, n);
      REQUIRE(p < n);
      worst = std::max(worst, std::abs(y[p] - direct_dft(x, j)));
      const std::size_t pm = pld::spectrum_mirror(p, n);
      CHECK(pm == pld::spectrum_position((n - j) % n, n));
      CHECK(pld::spectrum_mirror(pm, n) == p);
      mirror_gap = std::max(mirror_gap, std::abs(r[pm] - std::conj(r[p])));
    }
    CHECK(worst <= 1e-12 * std::sqrt(static_cast<double>(n)));
    CHECK(mirror_gap <= 1e-12 * std::sqrt(static_cast<double>(n)));
    // for_each_mirror_pair visits every position exactly once, with its mirror.
    std::vector<int> seen(n, 0);
    bool paired = true;
    pld::for_each_mirror_pair(n, [&](std::size_t p, std::size_t pm) {
      paired = paired && pm == pld::spectrum_mirror(p, n);
      ++seen[p];
      if (pm != p) ++seen[pm];
    });
    CHECK(paired);
    CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
    pld::spectrum_inverse(y.data(), n);
    double back = 0;
    for (std::size_t m = 0; m < n; ++m)
      back = std::max(back, std::abs(y[m] / static_cast<double>(n) - x[m]));
    CHECK(back <= 1e-13);
  }
}

TEST_CASE("pld: the AVX2 copy of the own FFT gives the baseline copy's results bit for bit") {
  // Without FMA each output is the same sequence of IEEE operations in both copies; where the CPU
  // has no AVX2 both runs take the baseline copy and the check holds trivially (said below).
  if (pld::fourier_uses_fftw()) return;
  const bool avx2 = pld::fourier_allow_avx2(true);
  const std::string which = avx2 ? "in use" : "not available: both runs are the baseline copy";
  MESSAGE("AVX2 copy " << which);
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const std::size_t n :
       {std::size_t{2}, std::size_t{8}, std::size_t{1} << 12, std::size_t{1} << 17}) {
    std::vector<std::complex<double>> x(n);
    for (auto& z : x) z = {unit(rng), unit(rng)};
    std::vector<std::vector<std::complex<double>>> out;
    for (const bool allow : {true, false}) {
      pld::fourier_allow_avx2(allow);
      auto y = x;
      pld::spectrum_forward(y.data(), n);
      out.push_back(y);
      pld::spectrum_inverse(y.data(), n);
      out.push_back(y);
    }
    pld::fourier_allow_avx2(true);
    CHECK(std::memcmp(out[0].data(), out[2].data(), n * sizeof(x[0])) == 0);
    CHECK(std::memcmp(out[1].data(), out[3].data(), n * sizeof(x[0])) == 0);
  }
  // And a whole accountant query.
  const pld::Calculator acc(kDefaults);
  const auto e =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.05, DpEvent::gaussian(1.0)), 300);
  const double with = acc.epsilon(e, 1e-6).epsilon;
  pld::fourier_allow_avx2(false);
  const double without = acc.epsilon(e, 1e-6).epsilon;
  pld::fourier_allow_avx2(true);
  CHECK(std::bit_cast<std::uint64_t>(with) == std::bit_cast<std::uint64_t>(without));
}

TEST_CASE("pld: the radix-4 spectrum-order path gives the radix-2 path's eps up to FFT rounding") {
  // The values of the previous transform (radix-2, natural order; commit 7d1fa34), printed at full
  // precision.  Both transforms round differently, and negative rounding noise in the composed
  // bins is clamped to 0, so long compositions move by up to ~2e-8 relative (FFTW differs from
  // either by as much); the bound below is that noise floor, far below the 1e-3 of the comparison
  // with dp_accounting and the discretisation error (~1e-5 relative at h = 1e-4).
  const pld::Calculator acc(kDefaults);
  const auto sampled = [](double q, double sigma, std::int64_t k) {
    return DpEvent::self_composed(DpEvent::poisson_sampled(q, DpEvent::gaussian(sigma)), k);
  };
  struct Case {
    DpEvent event;
    double delta, before;
  };
  const std::vector<Case> cases{
      {sampled(256.0 / 60000, 1.1, 14063), 1e-5, 2.3817789398181657},
      {sampled(0.1, 0.8, 1000), 1e-5, 39.88008838950249},
      {sampled(256.0 / 50000, 1.1, 19532), 1e-5, 3.5096737764541204},
      {sampled(0.01, 1.0, 10000), 1e-5, 6.1877452529521069},
      {sampled(0.05, 1.0, 300), 1e-6, 6.6085020259082494},
      {sampled(0.2, 2.0, 50), 1e-6, 3.9744063645860517},
      {DpEvent::self_composed(DpEvent::laplace(4.0), 30), 1e-6, 6.1441289461996593},
      {DpEvent::self_composed(DpEvent::poisson_sampled(0.1, DpEvent::laplace(2.0)), 200), 1e-6,
       3.1346810044659663},
      {DpEvent::composed({sampled(0.02, 1.2, 400),
                          DpEvent::self_composed(DpEvent::laplace(5.0), 10),
                          DpEvent::approx_dp(0.3, 1e-7)}),
       1e-5, 3.1438025680346415},
  };
  for (const auto& c : cases) {
    const double now = acc.epsilon(c.event, c.delta).epsilon;
    INFO(c.event.to_string() << " at delta " << c.delta << ": " << now << " against " << c.before);
    CHECK(std::abs(now - c.before) <= 3e-8 * c.before);
  }
}
