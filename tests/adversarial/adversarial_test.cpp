// Adversarial instances against the privacy bounds of private selection (exact_selection.hpp):
// small randomised searches over instances whose exact privacy profile is computable, failing if
// any instance's exact ε at δ exceeds what the accountant prints for the event the tuner declares.
//
// - repeat_and_select (the repetition tuner): the rdp accountant's minimum of Papernot & Steinke
//   2022's Theorem 2 and the project's own privacy-profile route (docs/selection.md), and the pld
//   accountant's profile route.  Bases:
//   post-processings of one Gaussian mechanism (random cuts of the real line, random global quality
//   ranks), randomized response.
// - adaptive_repeat_and_select (the dp_hypo tuner): the rdp accountant's Wang et al. 2023 Theorem 1
//   (and Theorem 2 at δ = 0), against adversarial sampling rules that pick a vertex of the
//   density-ratio band from the current best output and the dataset, with uniform and non-uniform
//   priors (the non-uniform prior is the project's reading of the paper's App. D).
//
// bench/adversarial runs the same search with many more instances.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/helpers/repetition.hpp"
#include "exact_selection.hpp"
#include "pld/calculator.hpp"
#include "rdp/calculator.hpp"

using dptune::DpEvent;
using dptune::RepetitionDistribution;
namespace adv = adversarial;

namespace {

struct Setting {
  double eta, mean, ratio;
};

/// The selection event a tuner declares for `base` under `s` (density ratio 1: repetition's).
DpEvent selection_event(const DpEvent& base, const Setting& s) {
  if (s.ratio == 1) return DpEvent::repeat_and_select(base, s.mean, s.eta);
  return DpEvent::adaptive_repeat_and_select(base, s.mean, s.eta, s.ratio);
}

/// The band [c, C] with C/c = ratio, split at random around 1 (c ≤ 1 ≤ C).
std::pair<double, double> band(std::mt19937_64& rng, double ratio) {
  const double share = std::uniform_real_distribution<double>(0, 1)(rng);
  const double lower = std::pow(ratio, -share);
  return {lower, lower * ratio};
}

/// Attacks the event priced at `printed` (ε at δ) with `instances` random instances from `make`;
/// returns the largest exact ε found (a lower bound on the true exact ε of that instance).
template <class Make>
double attack(std::mt19937_64& rng, const Setting& s, double delta, double printed, int instances,
              Make make) {
  const double gamma = RepetitionDistribution::from_mean(s.mean, s.eta).gamma();
  const adv::Dist stopping = adv::stopping_law(s.eta, gamma);
  double worst = 0;
  for (int i = 0; i < instances; ++i) {
    adv::Instance inst = make(rng);
    inst.prior = adv::random_prior(rng, inst.candidates(), i % 2 == 0);
    const auto [lower, upper] = band(rng, s.ratio);
    const adv::Policy policy =
        s.ratio == 1 ? adv::prior_policy(inst)
                     : adv::adversarial_policy(rng, inst, lower, upper, /*greedy=*/i % 3 != 2);
    const double exact = adv::ExactPair(inst, policy, stopping).epsilon_lower(delta);
    worst = std::max(worst, exact);
  }
  CAPTURE(s.eta);
  CAPTURE(s.mean);
  CAPTURE(s.ratio);
  CAPTURE(delta);
  CAPTURE(worst);
  CHECK(worst <= printed * (1 + 1e-9));
  return worst;
}

}  // namespace

// The accountant's price is the slow part (the profile route of a repeat_and_select prices the
// base's PLD and searches its shift); the instances are cheap.  So the suite prices few settings
// and attacks each with many instances; bench/adversarial prices many.

TEST_CASE("adversarial: Gaussian post-processings never beat the repetition tuner's epsilon") {
  // Density ratio 1: repeat_and_select, priced by the rdp accountant as the smaller of Papernot &
  // Steinke's Theorem 2 and the project's privacy-profile route (docs/selection.md).
  std::mt19937_64 rng(20260101);
  const dptune::rdp::Calculator rdp{dptune::rdp::Options{}};
  double closest = 0;  // the largest exact/printed ratio met: the search's reach
  for (double sigma : {0.7, 1.5})
    for (double eta : {0.0, 0.5, 1.0})
      for (double mean : {3.0, 10.0})
        for (double delta : {1e-3, 1e-5}) {
          const Setting s{eta, mean, 1.0};
          const double printed =
              rdp.epsilon(selection_event(DpEvent::gaussian(sigma), s), delta).epsilon;
          REQUIRE(std::isfinite(printed));
          const double worst = attack(rng, s, delta, printed, 20, [&](std::mt19937_64& r) {
            return adv::gaussian_partitions(r, 1 + r() % 4, sigma, 4);
          });
          closest = std::max(closest, worst / printed);
        }
  MESSAGE("closest exact/printed ratio, repeat_and_select of Gaussians: " << closest);
  // The search must reach: an attack whose instances leak nothing would pass against any bound.
  CHECK(closest > 0.3);
}

TEST_CASE("adversarial: Gaussian post-processings never beat dp_hypo's epsilon (Theorem 1)") {
  std::mt19937_64 rng(20260102);
  const dptune::rdp::Calculator rdp{dptune::rdp::Options{}};
  double closest = 0;
  for (double sigma : {0.7, 1.5})
    for (double eta : {0.0, 0.5, 1.0})
      for (double mean : {3.0, 10.0})
        for (double ratio : {1.5, 2.6667, 4.0})
          for (double delta : {1e-3, 1e-5}) {
            const Setting s{eta, mean, ratio};
            const double printed =
                rdp.epsilon(selection_event(DpEvent::gaussian(sigma), s), delta).epsilon;
            REQUIRE(std::isfinite(printed));
            const double worst = attack(rng, s, delta, printed, 10, [&](std::mt19937_64& r) {
              return adv::gaussian_partitions(r, 1 + r() % 4, sigma, 4);
            });
            closest = std::max(closest, worst / printed);
          }
  MESSAGE("closest exact/printed ratio, adaptive_repeat_and_select of Gaussians: " << closest);
  CHECK(closest > 0.3);
}

TEST_CASE("adversarial: randomized-response bases never beat the printed epsilon, delta 0 too") {
  std::mt19937_64 rng(7);
  const dptune::rdp::Calculator rdp{dptune::rdp::Options{}};
  const std::vector<double> epsilons{0.3, 1.0};
  const DpEvent base = DpEvent::one_of({DpEvent::pure_dp(0.3), DpEvent::pure_dp(1.0)});
  const auto make = [&](std::mt19937_64& r) {
    std::vector<double> chosen{1.0};  // the worst candidate is always there (the base's one_of)
    for (std::size_t l = 0; l < 1 + r() % 3; ++l) chosen.push_back(epsilons[r() % 2]);
    return adv::randomized_response(r, chosen);
  };
  double closest = 0;
  for (double eta : {0.0, 1.0, 3.0})
    for (double ratio : {1.0, 2.0, 4.0})
      for (double delta : {0.0, 1e-5}) {
        const Setting s{eta, 10.0, ratio};
        const double printed = rdp.epsilon(selection_event(base, s), delta).epsilon;
        REQUIRE(std::isfinite(printed));
        const double worst = attack(rng, s, delta, printed, 20, make);
        closest = std::max(closest, worst / printed);
      }
  MESSAGE("closest exact/printed ratio over the randomized-response instances: " << closest);
  CHECK(closest > 0.3);
}

TEST_CASE("adversarial: the pld accountant's selection profile route against Gaussian instances") {
  std::mt19937_64 rng(99);
  const dptune::pld::Calculator pld{dptune::pld::Options{}};
  // Its price takes seconds (the base's PLD and the shift search): two settings here, more in
  // bench/adversarial.
  for (double sigma : {1.5})
    for (double eta : {0.0, 1.0})
      for (double delta : {1e-5}) {
        const Setting s{eta, 10.0, 1.0};
        const double printed =
            pld.epsilon(selection_event(DpEvent::gaussian(sigma), s), delta).epsilon;
        REQUIRE(std::isfinite(printed));
        attack(rng, s, delta, printed, 40, [&](std::mt19937_64& r) {
          return adv::gaussian_partitions(r, 1 + r() % 4, sigma, 4);
        });
      }
}

TEST_CASE("adversarial: the exact harness itself, on cases with known answers") {
  // One candidate, randomized response with ε, T = 1 (mean 1 is not a truncated negative binomial,
  // so a law concentrated on T = 1 is built by hand): the exact ε at δ = 0 is ε itself.
  std::mt19937_64 rng(1);
  adv::Instance rr = adv::randomized_response(rng, {0.8});
  rr.prior = {1.0};
  const adv::Dist one_run{0.0, 1.0};
  CHECK(adv::ExactPair(rr, adv::prior_policy(rr), one_run).epsilon_lower(0) ==
        doctest::Approx(0.8).epsilon(1e-8));
  // Best of two runs of randomized response (K = 2 fixed): the output is "best" unless both runs
  // said "worst", so the law is (1 − q², q²) with q the probability of the worst outcome; the
  // exact pure ε is the larger log-ratio of the two outcomes.
  const adv::Dist two_runs{0.0, 0.0, 1.0};
  const double e = std::exp(0.8), lo = 1 / (1 + e), hi = e / (1 + e);
  for (const double q_d : {lo, hi}) {
    const double q_d2 = q_d == lo ? hi : lo;
    const double expected = std::max(std::abs(std::log(q_d * q_d / (q_d2 * q_d2))),
                                     std::abs(std::log((1 - q_d * q_d) / (1 - q_d2 * q_d2))));
    CHECK(expected == doctest::Approx(1.6));
  }
  CHECK(adv::ExactPair(rr, adv::prior_policy(rr), two_runs).epsilon_lower(0) ==
        doctest::Approx(1.6).epsilon(1e-8));
  // The stopping law sums to 1 and has the mean the accountant's γ was solved for.
  for (double eta : {0.0, 0.5, 1.0, 3.0}) {
    const double gamma = RepetitionDistribution::from_mean(10, eta).gamma();
    const adv::Dist p = adv::stopping_law(eta, gamma);
    double sum = 0, mean = 0;
    for (std::size_t k = 0; k < p.size(); ++k) {
      sum += p[k];
      mean += static_cast<double>(k) * p[k];
    }
    CAPTURE(eta);
    CHECK(sum == doctest::Approx(1).epsilon(1e-12));
    CHECK(mean == doctest::Approx(10).epsilon(1e-9));
  }
  // A band vertex lies in the band and sums to 1.
  const adv::Dist prior{0.1, 0.2, 0.3, 0.4};
  const adv::Dist pi = adv::band_vertex(prior, 0.5, 2.0, {3, 1, 0, 2});
  double total = 0;
  for (std::size_t l = 0; l < 4; ++l) {
    CHECK(pi[l] >= 0.5 * prior[l] - 1e-15);
    CHECK(pi[l] <= 2.0 * prior[l] + 1e-15);
    total += pi[l];
  }
  CHECK(total == doctest::Approx(1).epsilon(1e-15));
}
