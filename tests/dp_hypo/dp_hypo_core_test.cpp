// DP-HyPO's core (plugins/tuner/dp_hypo): the projection onto the density-ratio band against an
// independent exact solver, the sampler's draws against their distribution (χ²), the guard that
// refuses a distribution outside the band before any draw, and the GP sampler's adaptation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "dp_hypo/band.hpp"
#include "dp_hypo/sampler.hpp"
#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

using dptune::dp_hypo::AdaptiveSampler;
using dptune::dp_hypo::Band;

namespace {

std::vector<double> uniform_prior(std::size_t n) {
  return std::vector<double>(n, 1.0 / static_cast<double>(n));
}

/// The L² projection onto {lo ≤ f ≤ hi, Σf = 1} solved exactly by another route: Σ clip(π + ν) is
/// piecewise linear in ν with breakpoints lo_i − π_i and hi_i − π_i; find the segment where it
/// crosses 1 and interpolate.
std::vector<double> exact_projection(const std::vector<double>& pi, const std::vector<double>& lo,
                                     const std::vector<double>& hi) {
  std::vector<double> nus;
  for (std::size_t i = 0; i < pi.size(); ++i) {
    nus.push_back(lo[i] - pi[i]);
    nus.push_back(hi[i] - pi[i]);
  }
  std::sort(nus.begin(), nus.end());
  const auto total = [&](double nu) {
    double s = 0;
    for (std::size_t i = 0; i < pi.size(); ++i) s += std::clamp(pi[i] + nu, lo[i], hi[i]);
    return s;
  };
  double nu = nus.back();
  for (std::size_t k = 1; k < nus.size(); ++k) {
    const double a = total(nus[k - 1]), b = total(nus[k]);
    if (a <= 1 && b >= 1) {
      nu = b == a ? nus[k] : nus[k - 1] + (1 - a) / (b - a) * (nus[k] - nus[k - 1]);
      break;
    }
  }
  std::vector<double> f(pi.size());
  for (std::size_t i = 0; i < pi.size(); ++i) f[i] = std::clamp(pi[i] + nu, lo[i], hi[i]);
  return f;
}

std::vector<double> random_weights(std::mt19937_64& rng, std::size_t n) {
  std::vector<double> w(n);
  std::exponential_distribution<double> e(1.0);
  for (auto& x : w) x = e(rng);
  // Zeros and huge spikes.
  w[rng() % n] = 0;
  w[rng() % n] *= 1e6;
  return w;
}

}  // namespace

TEST_CASE("dp_hypo band: the projection lies in the band, is idempotent and optimal") {
  std::mt19937_64 rng(3);
  for (std::size_t n : {1u, 7u, 1024u})
    for (const auto& [lower, upper] :
         {std::pair{0.75, 2.0}, std::pair{0.5, 1.0}, std::pair{1.0, 3.0}, std::pair{0.1, 10.0}}) {
      const Band band(uniform_prior(n), lower, upper);
      for (int trial = 0; trial < 20; ++trial) {
        CAPTURE(n);
        CAPTURE(lower);
        CAPTURE(upper);
        const std::vector<double> w = random_weights(rng, n);
        const std::vector<double> f = band.project(w);
        REQUIRE(band.contains(f));
        double sum = 0;
        for (double x : f) sum += x;
        CHECK(sum == doctest::Approx(1).epsilon(1e-12));
        // Projecting the projection changes nothing (to the band's narrowing, 1e-12).
        const std::vector<double> again = band.project(f);
        for (std::size_t i = 0; i < n; ++i) CHECK(again[i] == doctest::Approx(f[i]).epsilon(1e-10));
        if (n == 1) CHECK(f[0] == 1.0);
        if (n == 7) {
          double total = 0;
          for (double x : w) total += x;
          std::vector<double> pi(n), lo(n), hi(n);
          for (std::size_t i = 0; i < n; ++i) {
            pi[i] = w[i] / total;
            lo[i] = lower / 7.0;
            hi[i] = upper / 7.0;
          }
          const std::vector<double> exact = exact_projection(pi, lo, hi);
          for (std::size_t i = 0; i < n; ++i)
            CHECK(f[i] == doctest::Approx(exact[i]).epsilon(1e-9));
        }
      }
    }
  // An input inside the band comes back unchanged.
  const Band band(uniform_prior(4), 0.5, 2.0);
  const std::vector<double> inside{0.3, 0.2, 0.25, 0.25};
  const std::vector<double> f = band.project(inside);
  for (std::size_t i = 0; i < 4; ++i) CHECK(f[i] == doctest::Approx(inside[i]).epsilon(1e-12));
  // A non-uniform prior: the band is relative to each mass.
  const Band skewed({0.1, 0.2, 0.3, 0.4}, 0.5, 2.0);
  const std::vector<double> g = skewed.project({1, 0, 0, 0});
  REQUIRE(skewed.contains(g));
  CHECK(g[0] == doctest::Approx(0.2));  // raised to C·p_0, the rest lowered to c·p_i + ν
  // Nothing outside the band is ever returned: garbage weights give the prior.
  const Band two(uniform_prior(2), 0.5, 2.0);
  CHECK(two.project({std::nan(""), -1.0}) == uniform_prior(2));
}

TEST_CASE("dp_hypo band: draws follow the distribution (chi-square, 1e5 draws)") {
  dptune::Xoshiro256 rng(11);
  const std::vector<double> f{0.05, 0.1, 0.2, 0.3, 0.15, 0.15, 0.05};
  std::vector<double> count(f.size(), 0.0);
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) count[dptune::dp_hypo::draw_index(f, rng)] += 1;
  double chi2 = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double expected = kDraws * f[i];
    chi2 += (count[i] - expected) * (count[i] - expected) / expected;
  }
  // 6 degrees of freedom: P[χ² > 22.46] = 0.001.
  CHECK(chi2 < 22.46);
  CHECK(chi2 > 0);
}

TEST_CASE("dp_hypo sampler: a distribution outside the band is refused before any draw") {
  Eigen::MatrixXd units(5, 1);
  units << 0.0, 0.25, 0.5, 0.75, 1.0;
  dptune::dp_hypo::SamplerOptions options;
  options.warm_start = 5;
  AdaptiveSampler sampler(units, Band(uniform_prior(5), 0.75, 2.0), options);
  sampler.projection_for_tests = [](const std::vector<double>&) {
    return std::vector<double>{1.0, 0.0, 0.0, 0.0, 0.0};  // far outside [0.15, 0.4]
  };
  dptune::Xoshiro256 rng(5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(sampler.next_distribution(rng) == uniform_prior(5));  // warm start: the prior
    sampler.observe(i, 0.1 * static_cast<double>(i));
  }
  CHECK_THROWS_WITH_AS(sampler.next_distribution(rng),
                       doctest::Contains("left the density-ratio band"), dptune::PrivacyError);
}

TEST_CASE("dp_hypo sampler: after the warm start the GP moves mass towards good candidates") {
  constexpr int kCandidates = 41;
  Eigen::MatrixXd units(kCandidates, 1);
  for (int i = 0; i < kCandidates; ++i) units(i, 0) = i / 40.0;
  dptune::dp_hypo::SamplerOptions options;
  options.beta = 20;  // scores in [0, 1]: a sharp softmax, so the band binds
  options.warm_start = 4;
  AdaptiveSampler sampler(units, Band(uniform_prior(kCandidates), 0.5, 2.0), options);
  dptune::Xoshiro256 rng(17);
  for (int i : {0, 10, 20, 30, 40, 35}) {
    const std::vector<double> f = sampler.next_distribution(rng);
    REQUIRE(sampler.band().contains(f));
    sampler.observe(static_cast<std::size_t>(i), units(i, 0));  // score = position: best at 1
  }
  const std::vector<double> f = sampler.next_distribution(rng);
  REQUIRE(sampler.band().contains(f));
  double upper_half = 0;
  for (int i = 21; i < kCandidates; ++i) upper_half += f[static_cast<std::size_t>(i)];
  CHECK(upper_half > 20.0 / 41.0 + 0.1);  // the prior puts 20/41 there
  // Its most likely candidate is at the band's top; the L² projection (eq. 3.1) lifts the
  // unlikely ones by the same ν, so the worst candidate is the least likely, inside the band.
  CHECK(*std::max_element(f.begin(), f.end()) == doctest::Approx(2.0 / 41).epsilon(1e-9));
  CHECK(f.front() == *std::min_element(f.begin(), f.end()));
  CHECK(f.front() >= 0.5 / 41);
  CHECK(f.front() < 1.0 / 41);
}
