// The two events of the repetition tuner: one_of (a data-independent choice, costed as the worst)
// and repeat_until_accepted (Papernot & Steinke 2022, Appendix C, Corollary 16), against
// hand-computed values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "accounting_helpers.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/event_yaml.hpp"
#include "rdp/calculator.hpp"

using dptune::DpEvent;
namespace rdp = dptune::rdp;

namespace {

using dptune_test::kInf;
using dptune_test::with_orders;

}  // namespace

TEST_CASE("one_of: the pointwise maximum of the children's curves") {
  const auto acc = with_orders({1.5, 2, 4, 8, 32});
  // Gaussian σ = 2: α/8; zCDP ρ = 0.2: 0.2α; Laplace b = 1 (pure ε = 1, RDP bounded by 1): the
  // maximum is zCDP's at low orders and Laplace's at high ones.
  const std::vector<DpEvent> kids{DpEvent::gaussian(2), DpEvent::zcdp(0.2), DpEvent::laplace(1)};
  const auto c = acc.cost(DpEvent::one_of(kids));
  for (std::size_t i = 0; i < 5; ++i) {
    double want = 0;
    for (const auto& k : kids) want = std::max(want, acc.cost(k).rdp[i]);
    CHECK(c.rdp[i] == want);
    CHECK(c.rdp[i] >= acc.cost(DpEvent::gaussian(2)).rdp[i]);
  }
  CHECK(c.pure_epsilon == kInf);  // Gaussian and zCDP have no pure bound
  // One child: the child itself.
  const auto single = acc.cost(DpEvent::one_of({DpEvent::gaussian(3)}));
  CHECK(single.rdp == acc.cost(DpEvent::gaussian(3)).rdp);
  // Pure children: the largest ε, and the guarantee at δ = 0 is exactly that ε.
  CHECK(acc.epsilon(DpEvent::one_of({DpEvent::pure_dp(0.5), DpEvent::pure_dp(1.25)}), 0).epsilon ==
        doctest::Approx(1.25));
  // approx_dp children: (max ε, max δ).
  const auto a =
      acc.cost(DpEvent::one_of({DpEvent::approx_dp(1, 1e-6), DpEvent::approx_dp(0.5, 1e-5)}));
  CHECK(a.has_approx);
  CHECK(a.approx_epsilon == 1);
  CHECK(a.approx_delta == 1e-5);
  // Mixing approx_dp with an RDP child is refused with the reason.
  CHECK(acc.unsupported_reason(DpEvent::one_of({DpEvent::approx_dp(1, 1e-6), DpEvent::gaussian(1)}))
            .find("one_of") != std::string::npos);
  // Equal children: the choice costs one of them, whatever the count.
  const DpEvent step =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.1)), 500);
  CHECK(acc.epsilon(DpEvent::one_of({step, step, step}), 1e-5).epsilon ==
        doctest::Approx(acc.epsilon(step, 1e-5).epsilon).epsilon(1e-12));
  CHECK_THROWS_AS(DpEvent::one_of({}), dptune::InvalidArgument);
}

TEST_CASE("one_of of Gaussians: the analytic Gaussian accountant takes the worst multiplier") {
  rdp::Options o;
  o.analytic_gaussian = true;
  const rdp::Calculator acc(o);
  const double worst = acc.epsilon(DpEvent::gaussian(0.9), 1e-5).epsilon;
  CHECK(
      acc.epsilon(DpEvent::one_of({DpEvent::gaussian(2), DpEvent::gaussian(0.9)}), 1e-5).epsilon ==
      doctest::Approx(worst).epsilon(1e-12));
}

TEST_CASE("repeat_until_accepted: Corollary 16 by hand") {
  const std::vector<double> orders{1.5, 2, 3, 4, 6, 11};
  const auto acc = with_orders(orders);
  SUBCASE("pure base: 2 eps (Liu & Talwar), whatever p") {
    for (double p : {0.0, 0.01, 0.5})
      CHECK(acc.epsilon(DpEvent::repeat_until_accepted(DpEvent::pure_dp(0.4), p), 0).epsilon ==
            doctest::Approx(0.8));
  }
  SUBCASE("Gaussian base: (ii) eps(l) + (l-2)/(l-1) eps(l-1) + 2 log(1/p)/(l-1)") {
    const double sigma = 3, p = 0.05;
    const auto c = acc.cost(DpEvent::repeat_until_accepted(DpEvent::gaussian(sigma), p));
    auto g = [&](double a) { return a / (2 * sigma * sigma); };
    for (std::size_t i = 0; i < orders.size(); ++i) {
      const double l = orders[i];
      // ε(λ−1) comes from the smallest grid order >= λ−1: 1.5 for λ = 2 (term dropped), 2 for
      // λ = 3, 3 for λ = 4, 6 for λ = 6 (λ−1 = 5), 11 for λ = 11 (λ−1 = 10).
      double lower = 0;
      if (l == 3) lower = 0.5 * g(2);
      if (l == 4) lower = 2.0 / 3 * g(3);
      if (l == 6) lower = 0.8 * g(6);
      if (l == 11) lower = 0.9 * g(11);
      CHECK(c.rdp[i] == doctest::Approx(g(l) + lower + 2 * std::log(1 / p) / (l - 1)));
    }
    CHECK(c.pure_epsilon == kInf);
  }
  SUBCASE("Laplace base: (iii) and the pure route compete") {
    const double p = 0.1;
    const auto base = acc.cost(DpEvent::laplace(2));  // ε∞ = 0.5
    const auto c = acc.cost(DpEvent::repeat_until_accepted(DpEvent::laplace(2), p));
    CHECK(c.pure_epsilon == doctest::Approx(1.0));
    for (std::size_t i = 0; i < orders.size(); ++i) {
      const double l = orders[i];
      double lower = 0;
      if (l > 2)
        for (std::size_t j = 0; j < orders.size(); ++j)
          if (orders[j] >= l - 1) {
            lower = (l - 2) / (l - 1) * base.rdp[j];
            break;
          }
      const double ii = base.rdp[i] + lower + 2 * std::log(1 / p) / (l - 1);
      const double iii = 0.5 + lower + std::log(1 / p) / (l - 1);
      const double pure_route = rdp::pure_dp_rdp(1.0, l);
      CHECK(c.rdp[i] == doctest::Approx(std::min({ii, iii, pure_route})));
      CHECK(c.rdp[i] <= pure_route);
    }
  }
  SUBCASE("invariants: more stopping, less privacy loss; never below the base") {
    const auto base =
        DpEvent::self_composed(DpEvent::poisson_sampled(0.02, DpEvent::gaussian(1.0)), 300);
    double last = kInf;
    for (double p : {0.001, 0.01, 0.1, 0.5}) {
      const double e = acc.epsilon(DpEvent::repeat_until_accepted(base, p), 1e-5).epsilon;
      CHECK(e < last);
      CHECK(e > acc.epsilon(base, 1e-5).epsilon);
      last = e;
    }
  }
  SUBCASE("refusals") {
    CHECK(acc.unsupported_reason(DpEvent::repeat_until_accepted(DpEvent::gaussian(1), 0))
              .find("stop_probability") != std::string::npos);
    CHECK(acc.unsupported_reason(DpEvent::repeat_until_accepted(DpEvent::approx_dp(1, 1e-6), 0.1))
              .find("approx_dp") != std::string::npos);
    CHECK_THROWS_AS(DpEvent::repeat_until_accepted(DpEvent::gaussian(1), 1.0),
                    dptune::InvalidArgument);
    CHECK_THROWS_AS(DpEvent::repeat_until_accepted(DpEvent::gaussian(1), -0.1),
                    dptune::InvalidArgument);
  }
}

TEST_CASE("the new kinds round-trip through the YAML syntax") {
  const DpEvent e = DpEvent::repeat_until_accepted(
      DpEvent::one_of({DpEvent::gaussian(1.5), DpEvent::laplace(2)}), 0.05);
  CHECK(e.to_string() ==
        "{repeat_until_accepted: {stop_probability: 0.05, event: {one_of: {events: [{gaussian: "
        "{noise_multiplier: 1.5}}, {laplace: {noise_multiplier: 2.0}}]}}}}");
  CHECK(dptune::host::parse_event(e.to_string(), "x.yaml", {}, nullptr) == e);
}
