// The adaptive_repeat_and_select event (Wang, Gao, Zhang, Su & Shen 2023, DP-HyPO) as the rdp,
// pure_dp and pld accountants price it: Theorem 1 and Theorem 2 against values computed
// independently at 40 digits (mpmath; the script is in the comments), the reduction to Papernot &
// Steinke 2022 at density ratio 1 (bit for bit: the same code path), monotonicity and continuity in
// the ratio, and the refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/errors.hpp"
#include "pld/calculator.hpp"
#include "rdp/calculator.hpp"

using dptune::DpEvent;

namespace {

dptune::rdp::Options fixed_orders(std::vector<double> orders) {
  dptune::rdp::Options o;
  o.orders = std::move(orders);
  o.extend_beyond_grid = false;
  return o;
}

}  // namespace

TEST_CASE("dp_hypo accounting: Theorem 1 by hand, Gaussian base, geometric T, C = 2, c = 0.75") {
  // mpmath, 40 digits:
  //   L = log(2/0.75); theta = 1; gamma = 0.1 (geometric, E[T] = 10); eps(a) = a/2 (sigma = 1)
  //   hat = min(log(1/gamma), min over a^ in orders of (a^ - 1)/2 + log(1/gamma)/a^)  (a^ = 2)
  //   rdp(a) = a/2 + (1 + theta) hat + (a/(a - 1) + 1 + theta) L + log(10)/(a - 1)
  //   eps(delta) = min_a rdp(a) + log((a - 1)/a) - (log(delta) + log(a))/(a - 1)
  const std::vector<double> orders{1.5, 2, 3, 4, 8};
  const double expected_rdp[] = {13.561901544040768236, 10.528487198034996315, 9.386780025032110355,
                                 9.3395443006978150349, 10.71413204431576324};
  const dptune::rdp::Calculator rdp{fixed_orders(orders)};
  const DpEvent event = DpEvent::adaptive_repeat_and_select(DpEvent::gaussian(1), 10, 1, 2 / 0.75);
  const auto cost = rdp.cost(event);
  for (std::size_t i = 0; i < orders.size(); ++i) {
    CAPTURE(orders[i]);
    CHECK(cost.rdp[i] == doctest::Approx(expected_rdp[i]).epsilon(1e-13));
  }
  // The design note's hand value at a = a^ = 2: 10.528487.
  CHECK(cost.rdp[1] == doctest::Approx(10.528487).epsilon(1e-7));
  CHECK(std::isinf(cost.pure_epsilon));
  const auto g = rdp.epsilon(event, 1e-5);
  CHECK(g.epsilon == doctest::Approx(11.928241212161296688).epsilon(1e-12));
  CHECK(g.derivation.find("Wang et al. 2023 (DP-HyPO), Theorem 1") != std::string::npos);
}

TEST_CASE("dp_hypo accounting: Theorem 2 by hand, pure base") {
  // (2 + theta)(eps + log(C/c)) with eps = 1, theta = 1, C/c = 2/0.75: 5.9424877590351787106.
  const dptune::rdp::Calculator rdp{dptune::rdp::Options{}};
  const DpEvent event = DpEvent::adaptive_repeat_and_select(DpEvent::pure_dp(1), 10, 1, 2 / 0.75);
  CHECK(rdp.cost(event).pure_epsilon == doctest::Approx(5.9424877590351787106).epsilon(1e-14));
  dptune::rdp::Options pure;
  pure.pure_only = true;
  pure.name = "pure_dp";
  const dptune::rdp::Calculator pure_dp{pure};
  CHECK(pure_dp.unsupported_reason(event).empty());
  CHECK(pure_dp.epsilon(event, 0).epsilon == doctest::Approx(5.9424877590351787106).epsilon(1e-14));
  // theta = 0 (logarithmic): 2(eps + log R).
  const DpEvent log_event = DpEvent::adaptive_repeat_and_select(DpEvent::pure_dp(0.5), 5, 0, 1.5);
  CHECK(rdp.cost(log_event).pure_epsilon == doctest::Approx(2 * (0.5 + std::log(1.5))));
}

namespace {

/// Density ratio 1 against repeat_and_select, for each inner event and each (η, E[T]) given: the
/// same RDP curve, ε at each δ and derivation (rdp) and, for a Gaussian inner at the first
/// `pld_pairs` pairs, the same pld ε, bit for bit (the adaptive event at ratio 1 takes
/// repeat_and_select's code path).
void check_ratio_one_is_repeat_and_select(const std::vector<std::pair<double, double>>& eta_means,
                                          const std::vector<double>& deltas,
                                          std::size_t pld_pairs) {
  const dptune::rdp::Calculator rdp{dptune::rdp::Options{}};
  const dptune::pld::Calculator pld{dptune::pld::Options{}};
  const DpEvent dpsgd =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1)), 200);
  for (const DpEvent& inner : {DpEvent::gaussian(1), dpsgd, DpEvent::laplace(1)})
    for (std::size_t pair = 0; pair < eta_means.size(); ++pair) {
      const auto [eta, mean] = eta_means[pair];
      CAPTURE(inner.to_string());
      CAPTURE(eta);
      CAPTURE(mean);
      const DpEvent plain = DpEvent::repeat_and_select(inner, mean, eta);
      const DpEvent adaptive = DpEvent::adaptive_repeat_and_select(inner, mean, eta, 1);
      CHECK(rdp.cost(adaptive).rdp == rdp.cost(plain).rdp);
      for (double delta : deltas) {
        const auto a = rdp.epsilon(adaptive, delta), p = rdp.epsilon(plain, delta);
        CHECK(a.epsilon == p.epsilon);
        CHECK(a.derivation == p.derivation);
      }
      if (inner.kind() == DpEvent::Kind::Gaussian && pair < pld_pairs)
        CHECK(pld.epsilon(adaptive, 1e-5).epsilon == pld.epsilon(plain, 1e-5).epsilon);
    }
}

}  // namespace

// Every η and every mean once (η = 0, 1/2, 1 with E[T] = 3, 10, 30), pld at the first pair: each
// inner event through both code paths of each accountant.  The slow set repeats it over the whole
// grid of pairs and two δ, pld at every pair (pld's selection profile, about 3 s a price, is
// nearly all of the time).
TEST_CASE("dp_hypo accounting: density ratio 1 is repeat_and_select in every accountant") {
  check_ratio_one_is_repeat_and_select({{0.0, 3.0}, {0.5, 10.0}, {1.0, 30.0}}, {1e-5, 1e-6}, 1);
}

TEST_CASE("dp_hypo accounting: density ratio 1 is repeat_and_select, every (eta, mean) pair") {
  std::vector<std::pair<double, double>> pairs;
  for (double eta : {0.0, 0.5, 1.0})
    for (double mean : {3.0, 10.0, 30.0}) pairs.emplace_back(eta, mean);
  check_ratio_one_is_repeat_and_select(pairs, {1e-5, 1e-6}, pairs.size());
}

TEST_CASE("dp_hypo accounting: monotone in the density ratio, continuous as it falls to 1") {
  const dptune::rdp::Calculator rdp{dptune::rdp::Options{}};
  const DpEvent base = DpEvent::gaussian(2);
  for (double eta : {0.0, 1.0}) {
    // Just above 1 the RDP curve is Papernot & Steinke's Theorem 2 curve (no jump at 1).
    const auto near_one = rdp.cost(DpEvent::adaptive_repeat_and_select(base, 10, eta, 1 + 1e-12));
    const auto at_one = rdp.cost(DpEvent::repeat_and_select(base, 10, eta));
    for (std::size_t i = 0; i < at_one.rdp.size(); ++i)
      CHECK(near_one.rdp[i] == doctest::Approx(at_one.rdp[i]).epsilon(1e-9));
    double previous = 0;
    for (double ratio : {1.0, 1.1, 1.5, 2.0, 2.6667, 4.0, 10.0}) {
      const double eps =
          rdp.epsilon(DpEvent::adaptive_repeat_and_select(base, 10, eta, ratio), 1e-5).epsilon;
      CAPTURE(ratio);
      CHECK(eps >= previous);
      previous = eps;
    }
  }
}

TEST_CASE("dp_hypo accounting: Poisson runs, bad ratios and approx_dp bases are refused") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(DpEvent::adaptive_repeat_and_select(DpEvent::gaussian(1), 10, inf, 2),
                       doctest::Contains("no theorem covers Poisson runs"),
                       dptune::InvalidArgument);
  CHECK_THROWS_AS(DpEvent::adaptive_repeat_and_select(DpEvent::gaussian(1), 10, 1, 0.5),
                  dptune::InvalidArgument);
  CHECK_THROWS_AS(DpEvent::adaptive_repeat_and_select(DpEvent::gaussian(1), 10, 1, inf),
                  dptune::InvalidArgument);
  const dptune::rdp::Calculator rdp{dptune::rdp::Options{}};
  const DpEvent approx = DpEvent::adaptive_repeat_and_select(DpEvent::approx_dp(1, 1e-6), 10, 1, 2);
  CHECK(rdp.unsupported_reason(approx).find("Theorems 1 and 2") != std::string::npos);
  const dptune::pld::Calculator pld{dptune::pld::Options{}};
  CHECK(pld.unsupported_reason(DpEvent::adaptive_repeat_and_select(DpEvent::gaussian(1), 10, 1, 2))
            .find("use the rdp accountant") != std::string::npos);
  // The event prints and reads back through the kind table.
  const DpEvent e = DpEvent::adaptive_repeat_and_select(DpEvent::gaussian(1), 10, 1, 2.5);
  CHECK(e.to_string() ==
        "{adaptive_repeat_and_select: {mean: 10.0, shape: 1.0, density_ratio: 2.5, event: "
        "{gaussian: {noise_multiplier: 1.0}}}}");
  CHECK(e.density_ratio() == 2.5);
  CHECK_THROWS_AS((void)DpEvent::repeat_and_select(DpEvent::gaussian(1), 10, 1).density_ratio(),
                  dptune::InvalidArgument);
}
