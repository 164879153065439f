// The private test score of the released model (output.test_score): the noise is Laplace of scale
// sensitivity/epsilon on the exact grid path, checked on the parameter and by a seeded statistical
// check of the real scoring path; its epsilon composes with the tuning's guarantee as closed forms
// say (pure DP: the sum; RDP: the curves added, Mironov 2017 Prop. 6 for Laplace, converted by
// Canonne, Kamath & Steinke 2020 Prop. 12).
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "built_plugins.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/rng.hpp"
#include "run/test_score.hpp"

namespace host = dptune::host;

namespace {

/// The utility section as the config loader makes it: what the built plugin declares for `params`
/// (its sensitivity bound), nothing for a name no plugin has.
void declare_utility(host::PipelineConfig& c, const dptune::Params& params = {}) {
  const auto& registry = dptune_test::built_plugins();
  const dptune::ParamSchema* schema = registry.schema(host::ComponentKind::Utility, c.utility.use);
  c.utility.params = schema ? schema->complete(params) : params;
  c.utility.traits = registry.traits(host::ComponentKind::Utility, c.utility.use, c.utility.params);
}

host::PipelineConfig private_config(const std::string& utility, double epsilon) {
  host::PipelineConfig c;
  c.utility.use = utility;
  declare_utility(c);
  host::TestScoreConfig t;
  t.epsilon = epsilon;
  c.output.test_score = t;
  return c;
}

/// A model that predicts class 0 for every row, and a utility that ignores the predictions: the
/// noiseless score is known exactly.
class ZeroModel final : public dptune::Model {
 public:
  dptune::Predictions predict(const dptune::Dataset& data) const override {
    dptune::Predictions p;
    p.values.assign(data.rows, 0.0);
    p.num_classes = 2;
    return p;
  }
  std::string describe() const override { return "zero"; }
};

class FixedUtility final : public dptune::Utility {
 public:
  double score(std::span<const double>, const dptune::Predictions&) const override { return 0.25; }
};

dptune::Dataset rows(std::size_t n) {
  dptune::Dataset d;
  d.rows = n;
  d.cols = 1;
  d.features.assign(n, 0.0);
  d.labels.assign(n, 0.0);
  d.num_classes = 2;
  return d;
}

/// Canonne, Kamath & Steinke 2020, Proposition 12, minimised over the orders.
double convert(const std::vector<dptune::RdpPoint>& curve, double delta) {
  double best = INFINITY;
  for (const auto& [a, e] : curve)
    best = std::min(best, e + std::log1p(-1 / a) - (std::log(delta) + std::log(a)) / (a - 1));
  return std::max(0.0, best);
}

/// Mironov 2017, Proposition 6: Laplace of scale b / sensitivity, order a > 1.
double laplace_rdp(double a, double b) {
  return std::log(a / (2 * a - 1) * std::exp((a - 1) / b) +
                  (a - 1) / (2 * a - 1) * std::exp(-a / b)) /
         (a - 1);
}

}  // namespace

TEST_CASE("test score noise: the sampler's Laplace scale is the sensitivity over epsilon") {
  // accuracy on 200 rows: sensitivity 1/200 (Dwork & Roth 2014 for a mean of {0,1} scores).
  const auto accuracy = host::test_score_noise(private_config("accuracy", 0.5), 200);
  CHECK(accuracy.sensitivity == doctest::Approx(1.0 / 200).epsilon(1e-15));
  CHECK(accuracy.multiplier() == 2.0);
  CHECK(accuracy.event() == dptune::DpEvent::laplace(2.0));
  // The grid inflates the sensitivity by one grid step (grid_noise.hpp): above Δ/ε, by < 2^-20.
  const double ideal = (1.0 / 200) / 0.5;
  CHECK(accuracy.scale() >= ideal);
  CHECK(accuracy.scale() <= ideal * (1 + std::ldexp(1.0, -20)));
  // f1: sensitivity 1 whatever the size; log_loss_score: min(1, ln(1/floor)/n).
  const auto f1 = host::test_score_noise(private_config("f1", 2.0), 50);
  CHECK(f1.sensitivity == 1.0);
  CHECK(f1.scale() == doctest::Approx(0.5).epsilon(1e-6));
  auto log_loss = private_config("log_loss_score", 1.0);
  declare_utility(log_loss, dptune::Params{{"floor", 1e-4}});
  CHECK(host::test_score_noise(log_loss, 1000).sensitivity ==
        doctest::Approx(std::log(1e4) / 1000).epsilon(1e-12));
  // No bound (an unknown utility) or no rows: refused, naming the key.
  CHECK_THROWS_WITH_AS(host::test_score_noise(private_config("my_score", 1.0), 100),
                       doctest::Contains("output.test_score.epsilon"), host::ConfigDiagnostic);
  CHECK_THROWS_AS(host::test_score_noise(private_config("accuracy", 1.0), 0),
                  host::ConfigDiagnostic);
}

TEST_CASE("test score: the released value is the score plus Laplace noise of that scale") {
  // 20000 seeded releases of a known score 0.25 on 200 test rows at epsilon 1: the noise X is
  // discrete Laplace on the grid with scale b = 1/200 (to 2^-20): E|X| = b, Var|X| = b²,
  // P(|X| > b) = 1/e.  Tolerances: 5 standard errors.
  const auto config = private_config("accuracy", 1.0);
  host::DataSplits splits;
  splits.train = rows(600);
  splits.test = rows(200);
  ZeroModel model;
  FixedUtility utility;
  dptune::Xoshiro256 rng(20261126, 0);
  const std::size_t n = 20000;
  const double b = 1.0 / 200;
  double sum = 0, sum_abs = 0;
  std::size_t beyond = 0;
  double grid = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const host::TestScore s =
        host::score_released_model(config, utility, splits, host::Preprocessing{}, &model, rng);
    REQUIRE(s.value.has_value());
    REQUIRE(s.noise.has_value());
    grid = s.noise->grid();
    const double x = *s.value - 0.25;
    REQUIRE(std::fmod(*s.value, grid) == 0.0);  // exact multiples of the grid step
    sum += x;
    sum_abs += std::abs(x);
    beyond += std::abs(x) > b;
  }
  const double se = b / std::sqrt(static_cast<double>(n));
  CHECK(std::abs(sum / n) < 5 * std::sqrt(2.0) * se);
  CHECK(std::abs(sum_abs / n - b) < 5 * se);
  const double p = std::exp(-1.0);
  CHECK(std::abs(static_cast<double>(beyond) / n - p) < 5 * std::sqrt(p * (1 - p) / n));
  // No released model: no value, the noise still stated (its ε is spent all the same).
  const host::TestScore none =
      host::score_released_model(config, utility, splits, host::Preprocessing{}, nullptr, rng);
  CHECK_FALSE(none.value.has_value());
  CHECK(none.statement("accuracy").find("none (no model is released") != std::string::npos);
  CHECK(none.method("accuracy").find("test split (200 rows)") != std::string::npos);
}

TEST_CASE("test score composition: pure DP adds the epsilons (a guarantee without its event)") {
  const auto accountant =
      dptune_test::built_plugins().create_accountant("pure_dp", dptune::Params{});
  dptune::PrivacyGuarantee tuning;
  tuning.epsilon = 1.2;
  tuning.delta = 0;
  tuning.accountant = "pure_dp";
  const auto noise = host::test_score_noise(private_config("accuracy", 0.3), 100);
  const auto g = host::compose_test_score(tuning, std::nullopt, noise, *accountant, 0);
  CHECK(g.epsilon == doctest::Approx(1.5).epsilon(1e-12));
  CHECK(g.delta == 0);
  CHECK(g.derivation.find("laplace") != std::string::npos);
}

TEST_CASE("test score composition: RDP adds the tuning's curve and Laplace's closed form") {
  const auto* schema = dptune_test::built_plugins().schema(host::ComponentKind::Accountant, "rdp");
  REQUIRE(schema != nullptr);
  const auto accountant = dptune_test::built_plugins().create_accountant(
      "rdp", schema->complete(dptune::Params{{"orders", std::string("2,3,4,8,16,32")}}));
  const double delta = 1e-5;
  // The tuning: ten Gaussian releases of multiplier 3, ε(α) = 10 α / (2 · 9).
  dptune::PrivacyGuarantee tuning;
  for (double a : {2.0, 3.0, 4.0, 8.0, 16.0, 32.0}) tuning.rdp_curve.push_back({a, 10 * a / 18});
  tuning.epsilon = convert(tuning.rdp_curve, delta);
  tuning.delta = delta;
  tuning.accountant = "rdp";
  const auto noise = host::test_score_noise(private_config("accuracy", 0.5), 400);  // b = 2
  std::vector<dptune::RdpPoint> sum;
  for (const auto& [a, e] : tuning.rdp_curve) sum.push_back({a, e + laplace_rdp(a, 2.0)});
  const double rdp_route = convert(sum, delta);
  const double basic = tuning.epsilon + 0.5;
  REQUIRE(rdp_route < basic);  // 5.631 against 5.810: the RDP route must win here
  const auto g = host::compose_test_score(tuning, std::nullopt, noise, *accountant, delta);
  CHECK(g.epsilon == doctest::Approx(rdp_route).epsilon(1e-9));
  CHECK(g.delta == delta);
  REQUIRE(g.rdp_curve.size() == sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i)
    CHECK(g.rdp_curve[i].epsilon == doctest::Approx(sum[i].epsilon).epsilon(1e-9));
  // Without a curve (a PLD- or basic-composition guarantee) only basic composition is sound.
  tuning.rdp_curve.clear();
  CHECK(host::compose_test_score(tuning, std::nullopt, noise, *accountant, delta).epsilon ==
        doctest::Approx(basic).epsilon(1e-9));
}

TEST_CASE("test score composition: the tuner's event and the score's are priced together") {
  // A tuner that returns its event (TuningResult::event): the accountant prices the composition
  // of both events once.  With rdp this is the closed-form RDP route of the case above (ten
  // Gaussian releases of multiplier 3 and Laplace of b = 2), which is also what the guarantee-only
  // route gives: the printed epsilon does not depend on the route.
  const auto* schema = dptune_test::built_plugins().schema(host::ComponentKind::Accountant, "rdp");
  REQUIRE(schema != nullptr);
  const auto rdp = dptune_test::built_plugins().create_accountant(
      "rdp", schema->complete(dptune::Params{{"orders", std::string("2,3,4,8,16,32")}}));
  const double delta = 1e-5;
  const dptune::DpEvent tuning_event =
      dptune::DpEvent::self_composed(dptune::DpEvent::gaussian(3.0), 10);
  const dptune::PrivacyGuarantee tuning = rdp->epsilon(tuning_event, delta);
  const auto noise = host::test_score_noise(private_config("accuracy", 0.5), 400);  // b = 2
  std::vector<dptune::RdpPoint> sum;
  for (double a : {2.0, 3.0, 4.0, 8.0, 16.0, 32.0})
    sum.push_back({a, 10 * a / 18 + laplace_rdp(a, 2.0)});
  const auto by_event = host::compose_test_score(tuning, tuning_event, noise, *rdp, delta);
  CHECK(by_event.epsilon == doctest::Approx(convert(sum, delta)).epsilon(1e-9));
  CHECK(by_event.delta == delta);
  CHECK(by_event.epsilon ==
        doctest::Approx(host::compose_test_score(tuning, std::nullopt, noise, *rdp, delta).epsilon)
            .epsilon(1e-12));
  CHECK(by_event.derivation.find("laplace") != std::string::npos);
  // An event that prices below the guarantee its tuner states contradicts it: refused, never
  // taken as the smaller answer.
  dptune::PrivacyGuarantee overstated = tuning;
  overstated.epsilon = tuning.epsilon + 1;
  CHECK_THROWS_AS(host::compose_test_score(overstated, tuning_event, noise, *rdp, delta),
                  dptune::PluginError);

  // pure_dp: the event route adds the epsilons exactly, as the guarantee route does.
  const auto pure = dptune_test::built_plugins().create_accountant("pure_dp", dptune::Params{});
  const dptune::DpEvent pure_event = dptune::DpEvent::pure_dp(1.2);
  const auto pure_sum = host::compose_test_score(
      pure->epsilon(pure_event, 0), pure_event,
      host::test_score_noise(private_config("accuracy", 0.3), 100), *pure, 0);
  CHECK(pure_sum.epsilon == doctest::Approx(1.5).epsilon(1e-12));
  CHECK(pure_sum.delta == 0);
}
