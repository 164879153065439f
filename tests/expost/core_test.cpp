// The expost core: the ladder and the chain-rule bound against closed forms, the walk, the pure-DP
// reading of events, and the exact randomized-response instance (probabilities computed
// independently, in the comments, with Python's math module at double precision).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "dptune/errors.hpp"
#include "expost/core.hpp"

using dptune::DpEvent;
using dptune::Neighbouring;
namespace ex = dptune::expost;

TEST_CASE("ladder: epsilon_start 0.25, ratio 2, cap 4 -> 4 levels, E(t) = 0.25, 0.75, 1.75, 3.75") {
  // 0.25 + 0.5 + 1 + 2 = 3.75 <= 4; the next level (4) would make 7.75 > 4.
  const ex::Ladder ladder = ex::make_ladder(0.25, 2, 4, 1);
  REQUIRE(ladder.level_epsilon == std::vector<double>{0.25, 0.5, 1, 2});
  CHECK(ladder.steps() == 4);
  CHECK(ex::chain_rule_epsilon(ladder, 1) == 0.25);
  CHECK(ex::chain_rule_epsilon(ladder, 2) == 0.75);
  CHECK(ex::chain_rule_epsilon(ladder, 3) == 1.75);
  CHECK(ex::chain_rule_epsilon(ladder, 4) == 3.75);  // the ex-ante sum, never above the cap
  // Ratio 2: E(t) = ε_1 (2^t − 1) < 2 ε_t, the "at most doubling" of the last level.
  for (std::size_t t = 1; t <= 4; ++t) {
    CHECK(ex::chain_rule_epsilon(ladder, t) == doctest::Approx(0.25 * (std::pow(2, t) - 1)));
    CHECK(ex::chain_rule_epsilon(ladder, t) < 2 * ladder.step_epsilon(t - 1));
  }
  CHECK_THROWS_AS(ex::chain_rule_epsilon(ladder, 5), dptune::InvalidArgument);
}

TEST_CASE("ladder: the default epsilon_start fills the cap with six levels") {
  // cap 4, ratio 2, one candidate: ε_1 = 4 / 63 = 0.06349206349206349.
  const double start = ex::default_epsilon_start(4, 2, 1, 6);
  CHECK(start == doctest::Approx(0.06349206349206349).epsilon(1e-15));
  const ex::Ladder ladder = ex::make_ladder(start, 2, 4, 1);
  CHECK(ladder.level_epsilon.size() == 6);
  CHECK(ex::chain_rule_epsilon(ladder, 6) == doctest::Approx(4).epsilon(1e-14));
  // Three candidates: each level costs 3 ε_ℓ; ε_1 = 4 / (3 · 63).
  CHECK(ex::default_epsilon_start(4, 2, 3, 6) == doctest::Approx(4.0 / 189));
  // Ratio 1.5: 1 + 1.5 + 2.25 + 3.375 + 5.0625 + 7.59375 = 20.78125.
  CHECK(ex::default_epsilon_start(1, 1.5, 1, 6) == doctest::Approx(1 / 20.78125));
}

TEST_CASE("ladder: candidates are steps within a level, ratio 1, refusals") {
  // Levels 0.1, 0.2, 0.4 for 3 candidates: 0.3 + 0.6 + 1.2 = 2.1 <= 3; the next (0.8) makes 4.5.
  const ex::Ladder three = ex::make_ladder(0.1, 2, 3, 3);
  REQUIRE(three.level_epsilon.size() == 3);
  CHECK(three.steps() == 9);
  CHECK(three.level_of(4) == 1);
  CHECK(three.candidate_of(4) == 1);
  CHECK(three.step_epsilon(4) == 0.2);
  CHECK(ex::chain_rule_epsilon(three, 5) == doctest::Approx(0.1 * 3 + 0.2 * 2));
  CHECK(ex::make_ladder(0.5, 1, 2, 1).level_epsilon == std::vector<double>{0.5, 0.5, 0.5, 0.5});
  CHECK_THROWS_AS(ex::make_ladder(5, 2, 4, 1), dptune::InvalidArgument);    // nothing fits
  CHECK_THROWS_AS(ex::make_ladder(0.5, 2, 4, 0), dptune::InvalidArgument);  // no candidate
  CHECK_THROWS_AS(ex::make_ladder(0.5, 0.9, 4, 1), dptune::InvalidArgument);
  CHECK_THROWS_AS(ex::make_ladder(0, 2, 4, 1), dptune::InvalidArgument);
}

TEST_CASE("walk: stops at the first score >= target, else the best, earliest on a tie") {
  const std::vector<double> scores{0.2, 0.5, 0.9, 0.95};
  std::vector<std::size_t> asked;
  const ex::Walk stopped = ex::walk_ladder(4, 0.9, [&](std::size_t j) {
    asked.push_back(j);
    return scores[j];
  });
  CHECK(stopped.met_target);
  CHECK(stopped.steps_run == 3);
  CHECK(stopped.released == 2);
  CHECK(asked == std::vector<std::size_t>{0, 1, 2});  // step 3 never ran

  const std::vector<double> low{0.3, 0.6, 0.6, 0.1};
  const ex::Walk capped = ex::walk_ladder(4, 0.9, [&](std::size_t j) { return low[j]; });
  CHECK_FALSE(capped.met_target);
  CHECK(capped.steps_run == 4);
  CHECK(capped.released == 1);  // 0.6 first reached at step 1
  CHECK(capped.scores == low);
}

TEST_CASE("pure events: basic composition, restated for replace-one, approximate is not pure") {
  CHECK(ex::is_pure(DpEvent::laplace(2)));
  CHECK(ex::pure_epsilon(DpEvent::laplace(2), Neighbouring::AddRemove) == 0.5);
  const DpEvent step = DpEvent::composed({DpEvent::pure_dp(0.9), DpEvent::laplace(10)});
  CHECK(ex::pure_epsilon(step, Neighbouring::AddRemove) == doctest::Approx(1.0));
  CHECK(ex::pure_epsilon(DpEvent::self_composed(step, 3), Neighbouring::AddRemove) ==
        doctest::Approx(3.0));
  // An add/remove leaf priced for replace-one neighbours costs twice (group privacy of size 2);
  // a replace_one leaf keeps its ε.
  const DpEvent mixed =
      DpEvent::composed({DpEvent::replace_one(DpEvent::pure_dp(1)), DpEvent::pure_dp(0.5)});
  CHECK(ex::is_pure(mixed));
  CHECK(ex::pure_epsilon(mixed, Neighbouring::ReplaceOne) == doctest::Approx(1 + 2 * 0.5));
  CHECK_FALSE(ex::is_pure(DpEvent::gaussian(1)));
  CHECK_FALSE(ex::is_pure(DpEvent::approx_dp(1, 1e-6)));
  CHECK_FALSE(ex::is_pure(DpEvent::composed({DpEvent::pure_dp(1), DpEvent::gaussian(3)})));
  CHECK_FALSE(ex::is_pure(DpEvent::poisson_sampled(0.1, DpEvent::pure_dp(1))));
  CHECK_THROWS_AS(ex::pure_epsilon(DpEvent::gaussian(1), Neighbouring::AddRemove),
                  dptune::InvalidArgument);
}

TEST_CASE("exact instance: randomized response ladder, closed-form stopping distribution") {
  // ε = 0.25, 0.5, 1, 2; p_j = e^ε_j / (1 + e^ε_j) = 0.5621765008857981, 0.6224593312018546,
  // 0.7310585786300049, 0.8807970779778824.  Passing on a released 1:
  //   D (bit 1):  P[stop at t] = Π_{j<t} (1 − p_j) p_t = 0.5621765008857981, 0.2725273224430819,
  //               0.12084118797016317, 0.039155824149342565; none: 0.005299164551614276.
  //   D' (bit 0): Π_{j<t} p_j (1 − p_t) = 0.43782349911420193, 0.2122444921270254,
  //               0.0941112118184419, 0.030494586509314223; none: 0.22532621043101655.
  const std::vector<double> eps{0.25, 0.5, 1, 2};
  const std::vector<int> pass{1, 1, 1, 1};
  const std::vector<double> d = ex::rr_ladder_outcomes(eps, pass, 1);
  const std::vector<double> d2 = ex::rr_ladder_outcomes(eps, pass, 0);
  const std::vector<double> want_d{0.5621765008857981, 0.2725273224430819, 0.12084118797016317,
                                   0.039155824149342565, 0.005299164551614276};
  const std::vector<double> want_d2{0.43782349911420193, 0.2122444921270254, 0.0941112118184419,
                                    0.030494586509314223, 0.22532621043101655};
  REQUIRE(d.size() == 5);
  for (std::size_t t = 0; t < 5; ++t) {
    CHECK(d[t] == doctest::Approx(want_d[t]).epsilon(1e-14));
    CHECK(d2[t] == doctest::Approx(want_d2[t]).epsilon(1e-14));
  }
  // log(d / d') at a stop: ε_t − Σ_{j<t} ε_j = 0.25 each; no stop: −3.75, i.e. the reverse ratio
  // reaches E(4) = 3.75 exactly: the chain-rule bound is attained by the cap's release.
  for (std::size_t t = 0; t < 4; ++t) CHECK(std::log(d[t] / d2[t]) == doctest::Approx(0.25));
  CHECK(std::log(d2[4] / d[4]) == doctest::Approx(3.75).epsilon(1e-12));
}
