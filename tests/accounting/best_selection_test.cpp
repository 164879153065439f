// The `best` accountant's own route for private selection: Papernot & Steinke 2022's Theorem 6
// (Poisson number of runs) on the base's RDP curve from rdp, with the base's δ̂ from whichever
// member bounds it lowest (pld on a DP-SGD base).  The expected values are recomputed here from
// the rdp core's curve and the pld core's profile, order by order, with the conversion written out.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "best/accountant.hpp"
#include "cli_support.hpp"
#include "dptune/errors.hpp"
#include "pld/calculator.hpp"
#include "rdp/calculator.hpp"

using dptune::DpEvent;

namespace {

constexpr double kPoisson = std::numeric_limits<double>::infinity();  // the shape of Poisson runs

struct Trio {
  std::shared_ptr<dptune::rdp::AccountantAdapter> rdp =
      std::make_shared<dptune::rdp::AccountantAdapter>();
  std::shared_ptr<dptune::pld::AccountantAdapter> pld =
      std::make_shared<dptune::pld::AccountantAdapter>();
  dptune::best::Accountant best{{{"rdp", rdp}, {"pld", pld}}};
};

DpEvent dp_sgd(double q, double sigma, std::int64_t steps) {
  return DpEvent::self_composed(DpEvent::poisson_sampled(q, DpEvent::gaussian(sigma)), steps);
}

/// min over the rdp grid of Canonne–Kamath–Steinke's conversion of
/// ε(α) + μ δ̂(log(α/(α−1))) + log(μ)/(α−1), with δ̂ = `profile`.
template <typename Profile>
double theorem6_epsilon(const Trio& t, const DpEvent& base, double mu, double delta,
                        Profile profile) {
  const auto orders = t.rdp->core().options().orders;
  const auto cost = t.rdp->core().cost(base);
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i];
    const double tau = cost.rdp[i] + mu * profile(std::log(a / (a - 1))) + std::log(mu) / (a - 1);
    const double eps = tau + std::log((a - 1) / a) - (std::log(delta) + std::log(a)) / (a - 1);
    best = std::min(best, eps);
  }
  return best;
}

}  // namespace

TEST_CASE("best: Theorem 6 with the PLD's delta^ on a DP-SGD base beats rdp, as recomputed") {
  const Trio t;
  // Many runs on average: there Theorem 6 beats the selection privacy profile route (whose shift
  // grows with the mean), and pld's delta^ is far below rdp's.
  const double mu = 30, delta = 1e-6;
  const DpEvent base = dp_sgd(0.01, 1.0, 200);
  const DpEvent event = DpEvent::repeat_and_select(base, mu, kPoisson);
  const auto r = t.rdp->epsilon(event, delta);
  const auto p = t.pld->epsilon(event, delta);
  const auto b = t.best.epsilon(event, delta);
  // pld's profile of the base from its two directions' PLDs, composed once.
  const auto pld_of_base = t.pld->core().directions(base);
  const double h = t.pld->core().options().value_discretization_interval;
  const double with_pld = theorem6_epsilon(t, base, mu, delta, [&](double e) {
    return std::max(pld_of_base.remove.delta(h, e), pld_of_base.add_or_remove().delta(h, e));
  });
  const double with_rdp =
      theorem6_epsilon(t, base, mu, delta, [&](double e) { return t.rdp->delta(base, e).delta; });
  MESSAGE("rdp ", r.epsilon, ", pld ", p.epsilon, ", best ", b.epsilon, "; Theorem 6 with pld's ",
          with_pld, ", with rdp's ", with_rdp);
  // The pld profile is the tighter one here, so its Theorem 6 value is below rdp's own.
  CHECK(with_pld < with_rdp - 0.05);
  CHECK(r.epsilon <= with_rdp * (1 + 1e-12));
  // best is the recomputed value, and strictly below both members.
  CHECK(b.epsilon == doctest::Approx(with_pld).epsilon(1e-9));
  CHECK(b.epsilon < r.epsilon - 0.05);
  CHECK(b.epsilon < p.epsilon);
  CHECK(b.accountant == "best");
  CHECK(b.derivation.find("Theorem 6 with the smallest delta^ wins") != std::string::npos);
  CHECK(b.derivation.find("RDP curve from rdp") != std::string::npos);
  CHECK(b.derivation.find("from pld") != std::string::npos);
  CHECK(b.order > 1);
  // Its partial RDP curve (the orders searched) converts back to the same ε at the winning order.
  REQUIRE_FALSE(b.rdp_curve.empty());
  double from_curve = std::numeric_limits<double>::infinity();
  for (const auto& [a, tau] : b.rdp_curve)
    from_curve = std::min(from_curve,
                          tau + std::log((a - 1) / a) - (std::log(delta) + std::log(a)) / (a - 1));
  CHECK(from_curve == doctest::Approx(b.epsilon).epsilon(1e-12));
  // delta() agrees: at the reported ε the bound is δ, and below rdp's δ there.
  const auto bd = t.best.delta(event, b.epsilon);
  CHECK(bd.delta <= delta * (1 + 1e-9));
  CHECK(bd.delta < t.rdp->delta(event, b.epsilon).delta);
  CHECK(bd.derivation.find("Theorem 6 with the smallest delta^") != std::string::npos);
}

TEST_CASE(
    "best: the Theorem 6 route never loses to rdp's own and stays out where it cannot apply") {
  const Trio t;
  // A Gaussian base with a small mean: whatever wins, best is not above either member.
  for (const double mu : {0.5, 30.0}) {
    const DpEvent event = DpEvent::repeat_and_select(DpEvent::gaussian(3.0), mu, kPoisson);
    const double b = t.best.epsilon(event, 1e-5).epsilon;
    CHECK(b <= t.rdp->epsilon(event, 1e-5).epsilon);
    CHECK(b <= t.pld->epsilon(event, 1e-5).epsilon);
  }
  // Truncated negative binomial runs (Theorem 2, no delta^): no such candidate.
  const DpEvent tnb = DpEvent::repeat_and_select(dp_sgd(0.01, 1.0, 100), 10, 1.0);
  CHECK(t.best.epsilon(tnb, 1e-6).derivation.find("Theorem 6 with") == std::string::npos);
  // A base with an (eps, delta) leaf has no complete RDP curve: no such candidate either.
  const DpEvent approx = DpEvent::repeat_and_select(
      DpEvent::composed({DpEvent::gaussian(3.0), DpEvent::approx_dp(0.1, 1e-7)}), 5, kPoisson);
  const auto g = t.best.epsilon(approx, 1e-5);
  CHECK(std::isfinite(g.epsilon));
  CHECK(g.derivation.find("Theorem 6 with") == std::string::npos);
  // δ = 0 has no RDP answer; best falls back to its members.
  CHECK(t.best.epsilon(DpEvent::repeat_and_select(DpEvent::pure_dp(1), 5, kPoisson), 0)
            .derivation.find("Theorem 6 with") == std::string::npos);
}

TEST_CASE("dptune privacy --accountant best: the Theorem 6 route through the plugins") {
  // The same event as above through the host's registry (rdp and pld as loaded plugins, the RDP
  // curve crossing the plugin boundary in PrivacyGuarantee::rdp_curve): the same ε.
  const std::string event =
      "'{repeat_and_select: {mean: 30, shape: .inf, event: {self_composed: {count: 200, event: "
      "{poisson_sampled: {rate: 0.01, event: {gaussian: {noise_multiplier: 1.0}}}}}}}}'";
  const auto r = dptune_test::run_dptune(
      "privacy --event " + event + " --delta 1e-6 --accountant best", "best_theorem6");
  REQUIRE(r.exit_code == 0);
  const Trio t;
  const double in_process =
      t.best.epsilon(DpEvent::repeat_and_select(dp_sgd(0.01, 1.0, 200), 30, kPoisson), 1e-6)
          .epsilon;
  CHECK(r.out.find("Theorem 6 with the smallest delta^ wins") != std::string::npos);
  const auto at = r.out.find("\nepsilon:");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(r.out.substr(at + 9)) == doctest::Approx(in_process).epsilon(1e-12));
}
