// Adversarial instances against the expost tuner's bounds (docs/tuners/expost.md), whose analysis
// is the PROJECT'S OWN (Ghazi et al. 2025 could be read in its abstract only):
//
// - the ex-post (chain-rule) bound E(t) = Σ_{j ≤ t} ε_j of a walk over pure ε_j-DP steps, against
//   exact output laws of walks whose steps are m-ary randomized response (the extremal ε-DP
//   mechanisms) with random pass sets, random scores for the cap's release, and any order of the
//   levels; and its tightness: for every t a binary instance attains E(t), so no smaller function
//   of the stop index (such as the last level's ε_t, what Laplace noise reduction pays) is a bound
//   for independent steps;
// - the ex-ante guarantee of a walk over Gaussian steps (the DP-SGD case, where no ex-post bound is
//   claimed): the exact privacy profile of the stopping index when each step post-processes one
//   Gaussian release by a random cut, against the rdp accountant's price of the composed steps.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "dptune/dp_event.hpp"
#include "exact_selection.hpp"
#include "expost/core.hpp"
#include "rdp/calculator.hpp"

using dptune::DpEvent;
namespace adv = adversarial;
namespace ex = dptune::expost;

namespace {

/// One pure step: m-ary randomized response with ε on the dataset's value (0 on D, 1 on D'):
/// P[y = value] = e^ε / (e^ε + m − 1), every other y 1 / (e^ε + m − 1).  Exactly ε-DP.
double rr_probability(double eps, std::size_t m, std::size_t y, std::size_t value) {
  const double norm = std::exp(eps) + static_cast<double>(m) - 1;
  return (y == value ? std::exp(eps) : 1.0) / norm;
}

struct PureInstance {
  std::vector<double> eps;                 // ε_j of step j, in walk order (any order)
  std::size_t m = 2;                       // outputs per step
  std::vector<std::vector<bool>> passes;   // passes[j][y]: y meets the target at step j
  std::vector<std::vector<double>> score;  // score[j][y], for the cap's best-step release
};

/// The released outcome (steps run, released step, its output) -> probability, on the dataset
/// whose value is `value`, by enumerating every output tuple of the steps.
std::map<std::tuple<std::size_t, std::size_t, std::size_t>, double> walk_law(
    const PureInstance& inst, std::size_t value) {
  const std::size_t k = inst.eps.size();
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, double> law;
  std::vector<std::size_t> y(k, 0);
  for (;;) {
    double p = 1;
    std::size_t run = k, released = 0;
    for (std::size_t j = 0; j < k; ++j) {
      p *= rr_probability(inst.eps[j], inst.m, y[j], value);
      if (inst.passes[j][y[j]]) {
        run = j + 1;
        released = j;
        break;
      }
    }
    if (run == k && !inst.passes[k - 1][y[k - 1]]) {  // the cap: best score, earliest on a tie
      for (std::size_t j = 1; j < k; ++j)
        if (inst.score[j][y[j]] > inst.score[released][y[released]]) released = j;
    }
    // Tuples that agree on the steps run give the same outcome: count each prefix once by adding
    // only when every later coordinate is 0.
    bool first_of_prefix = true;
    for (std::size_t j = run; j < k; ++j) first_of_prefix = first_of_prefix && y[j] == 0;
    if (first_of_prefix) law[{run, released, y[released]}] += p;
    std::size_t j = 0;
    while (j < k && ++y[j] == inst.m) y[j++] = 0;
    if (j == k) break;
  }
  return law;
}

PureInstance random_instance(std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> steps(1, 5), outputs(2, 4);
  std::uniform_real_distribution<double> eps(0.05, 2.0), unit(0, 1);
  PureInstance inst;
  const std::size_t k = steps(rng);
  inst.m = outputs(rng);
  for (std::size_t j = 0; j < k; ++j) {
    inst.eps.push_back(eps(rng));
    std::vector<bool> pass(inst.m);
    for (std::size_t y = 0; y < inst.m; ++y) pass[y] = unit(rng) < 0.5;
    inst.passes.push_back(pass);
    std::vector<double> s(inst.m);
    for (double& v : s) v = std::floor(unit(rng) * 3);  // ties happen
    inst.score.push_back(s);
  }
  return inst;
}

}  // namespace

TEST_CASE("expost: the chain-rule bound holds on every outcome of random pure walks") {
  std::mt19937_64 rng(20251129);
  double worst_slack = 1e9, worst_share = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const PureInstance inst = random_instance(rng);
    ex::Ladder as_run;  // the instance's ε_j as a ladder of one candidate, for chain_rule_epsilon
    as_run.level_epsilon = inst.eps;
    const auto d = walk_law(inst, 0), d2 = walk_law(inst, 1);
    double total = 0;
    for (const auto& [outcome, p] : d) {
      total += p;
      const double q = d2.at(outcome);
      const double bound = ex::chain_rule_epsilon(as_run, std::get<0>(outcome));
      const double loss = std::abs(std::log(p / q));
      CHECK(loss <= bound + 1e-9);
      worst_slack = std::min(worst_slack, bound - loss);
      worst_share = std::max(worst_share, loss / bound);
    }
    CHECK(total == doctest::Approx(1).epsilon(1e-12));
  }
  // The random search comes close to the bound (it is attained exactly below).
  CHECK(worst_share > 0.99);
  CHECK(worst_slack >= -1e-9);
}

TEST_CASE("expost: E(t) is attained for every t, so paying only the last level is unsound") {
  // Steps ε = 1, 1, 1 (ratio 1) and 0.25, 0.5, 1, 2 (ratio 2).  Passing at step t on a released 1
  // and at every earlier step on a released 0 makes every failure likelier on D (bit 1) and the
  // pass too: P_D / P_D' = Π_{j ≤ t} e^{ε_j}, i.e. log ratio E(t) exactly.
  for (const std::vector<double>& eps :
       {std::vector<double>{1, 1, 1}, std::vector<double>{0.25, 0.5, 1, 2}}) {
    ex::Ladder ladder;
    ladder.level_epsilon = eps;
    for (std::size_t t = 0; t < eps.size(); ++t) {
      std::vector<int> pass(eps.size(), 1);
      for (std::size_t j = 0; j < t; ++j) pass[j] = 0;
      const std::vector<double> d = ex::rr_ladder_outcomes(eps, pass, 1);
      const std::vector<double> d2 = ex::rr_ladder_outcomes(eps, pass, 0);
      const double loss = std::log(d[t] / d2[t]);
      CHECK(loss == doctest::Approx(ex::chain_rule_epsilon(ladder, t + 1)).epsilon(1e-12));
      if (t > 0) CHECK(loss > eps[t] + 0.2);  // the last level alone is exceeded
    }
  }
}

TEST_CASE(
    "expost: Gaussian steps cut at random points stay within the accountant's ex-ante price") {
  // Step j releases N(μ, σ_j²), μ = 0 on D and 1 on D' (gaussian(σ_j)), and passes when the value
  // is above a random cut c_j: P_D[pass] = Φ(−c_j/σ_j), P_D'[pass] = Φ((1 − c_j)/σ_j).  The walk's
  // stopping index (0..k−1, or k for the cap) is a post-processing of the k releases, so its exact
  // δ(ε) must stay below δ at the rdp accountant's ε for composed([gaussian(σ_j)]).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> sigma(0.6, 4.0), cut(-2.0, 3.0);
  std::uniform_int_distribution<std::size_t> steps(1, 6);
  const dptune::rdp::AccountantAdapter rdp;
  constexpr double kDelta = 1e-5;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t k = steps(rng);
    std::vector<DpEvent> events;
    adv::Dist d(k + 1), d2(k + 1);
    double fail = 1, fail2 = 1;
    for (std::size_t j = 0; j < k; ++j) {
      const double s = sigma(rng), c = cut(rng);
      events.push_back(DpEvent::gaussian(s));
      const double p = adv::normal_cdf(-c / s), p2 = adv::normal_cdf((1 - c) / s);
      d[j] = fail * p;
      d2[j] = fail2 * p2;
      fail *= 1 - p;
      fail2 *= 1 - p2;
    }
    d[k] = fail;
    d2[k] = fail2;
    const double eps = rdp.epsilon(DpEvent::composed(events), kDelta).epsilon;
    CHECK(adv::hockey_stick(d, d2, eps) <= kDelta);
    CHECK(adv::hockey_stick(d2, d, eps) <= kDelta);
  }
}
