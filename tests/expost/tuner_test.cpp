// The expost tuner plugin, loaded through the host's registry and driven by a scripted evaluator
// whose training event is a function of the step's privacy parameter, with the project's real rdp
// accountant core: which steps it runs, what it releases, the ex-ante guarantee it returns (the
// event the ledger is charged), and the ex-post figure it reports.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>
#include <string>

#include "build_paths.hpp"
#include "dptune/testing.hpp"
#include "expost/core.hpp"
#include "rdp/calculator.hpp"
#include "tuner_fixtures.hpp"

namespace {

using dptune::DpEvent;

// Overspend: a trainer whose pure event costs `overspend` times the target_epsilon it was given.
enum class Training { Pure, Approx, LaplaceNoise, Overspend };

/// The utility of a step trained at privacy ε: 0.5 + ε, at most 0.95 (more privacy budget, a
/// better model), so with target 0.9 the first level with ε ≥ 0.4 passes.
double utility_at(double epsilon) { return std::min(0.95, 0.5 + epsilon); }

class FakeContext final : public dptune::testing::StubTunerContext {
 public:
  explicit FakeContext(Training training, std::int64_t candidates = 1, double overspend = 1)
      : StubTunerContext(dptune::testing::integer_choices("c", candidates), 5),
        evaluator_(
            [training](const dptune::EvaluationRequest& r, std::size_t) {
              return utility_at(training == Training::LaplaceNoise
                                    ? 1 / r.candidate.get_double("b")
                                    : r.candidate.get_double("target_epsilon"));
            },
            1) {
    evaluator_.event = [training, overspend](const dptune::Params& c, const dptune::DataScope&) {
      switch (training) {
        case Training::Pure:
          return DpEvent::pure_dp(c.get_double("target_epsilon"));
        case Training::Approx:
          return DpEvent::approx_dp(c.get_double("target_epsilon"), 1e-7);
        case Training::LaplaceNoise:
          return DpEvent::laplace(c.get_double("b"));
        case Training::Overspend:
          return DpEvent::pure_dp(overspend * c.get_double("target_epsilon"));
      }
      return DpEvent::non_private();
    };
    evaluator_.accountant = &rdp;
  }
  dptune::Evaluator& evaluator() override { return evaluator_; }
  const dptune::Accountant& accountant() const override { return rdp; }
  dptune::DataSizes data_sizes() const override {
    dptune::DataSizes s;
    s.train = 400;
    s.validation = s.scored = 100;
    return s;
  }
  dptune::UtilitySensitivity utility_sensitivity(std::size_t rows) const override {
    return {"accuracy", 1.0 / static_cast<double>(rows), "accuracy: 1 / n"};
  }

  dptune::rdp::AccountantAdapter rdp;
  dptune::testing::ScriptedEvaluator evaluator_;
};

struct Loaded : dptune_test::LoadedTuners {
  Loaded() : LoadedTuners("expost", {dptune_test::build_paths::expost_plugin}) {}
};

std::string note_with(const dptune::TuningResult& r, const std::string& text) {
  for (const auto& n : r.notes)
    if (n.find(text) != std::string::npos) return n;
  return {};
}

const dptune::Params kLadder{{"target", 0.9},
                             {"epsilon_cap", 4.0},
                             {"epsilon_start", 0.25},
                             {"scoring", std::string("public_validation")}};

}  // namespace

TEST_CASE("expost tuner: pure steps stop at the first level meeting the target, ex-post 0.75") {
  Loaded plugin;
  FakeContext context(Training::Pure);
  const dptune::TuningResult r = plugin.tuner(kLadder)->tune(context);

  // Levels 0.25, 0.5, 1, 2; utilities 0.75, 0.95: the walk stops at the second step.
  const auto& batches = context.evaluator_.batches;
  REQUIRE(batches.size() == 2);
  CHECK(batches[0][0].candidate.get_double("target_epsilon") == 0.25);
  CHECK(batches[1][0].candidate.get_double("target_epsilon") == 0.5);
  for (const auto& b : batches) {
    REQUIRE(b.size() == 1);
    CHECK(b[0].private_run);
    CHECK(b[0].keep_output);
    CHECK(b[0].scope.kind == dptune::DataScope::Kind::Whole);
  }
  REQUIRE(r.selected.has_value());
  CHECK(r.selected->params.get_double("target_epsilon") == 0.5);
  CHECK(r.selected->utility_mean == 0.95);  // public_validation: the exact score

  // The returned event and guarantee are the ex-ante ones: every step composed, whatever the stop.
  const DpEvent all = DpEvent::composed(
      {DpEvent::composed({DpEvent::pure_dp(0.25)}), DpEvent::composed({DpEvent::pure_dp(0.5)}),
       DpEvent::composed({DpEvent::pure_dp(1)}), DpEvent::composed({DpEvent::pure_dp(2)})});
  REQUIRE(r.event.has_value());
  CHECK(*r.event == all);
  REQUIRE(r.guarantee.has_value());
  CHECK(r.guarantee->epsilon == context.rdp.epsilon(all, 1e-5).epsilon);
  CHECK(r.guarantee->epsilon <= 3.75 + 1e-12);  // never above basic composition, nor the cap
  CHECK(r.guarantee->derivation.find("ex-ante") != std::string::npos);

  // The ex-post figure: E(2) = 0.25 + 0.5, a declared DP output, beside the cap.
  const std::string expost = note_with(r, "ex-post guarantee: epsilon = ");
  CHECK(expost.rfind(dptune::kDpOutputNote, 0) == 0);
  CHECK(expost.find("ex-post guarantee: epsilon = 0.75 (depends on where the tuner stopped; "
                    "pure, for add/remove neighbours; ex-ante cap epsilon = 4") !=
        std::string::npos);
  CHECK(expost.find("stopped after step 2 of 4") != std::string::npos);
  CHECK_FALSE(note_with(r, "4 levels of epsilon (0.25, 0.5, 1, 2)").empty());
  // The public notes name no step of the walk.
  for (const auto& n : r.notes)
    if (n.rfind(dptune::kDpOutputNote, 0) != 0) CHECK(n.find("stopped") == std::string::npos);
}

TEST_CASE("expost tuner: no level meets the target -> the cap's best step, E = the whole sum") {
  Loaded plugin;
  FakeContext context(Training::Pure);
  dptune::Params p = kLadder;
  p.set("target", 0.99);  // utilities top out at 0.95
  const dptune::TuningResult r = plugin.tuner(p)->tune(context);
  CHECK(context.evaluator_.batches.size() == 4);
  // Utilities 0.75, 0.95, 0.95, 0.95: the best, earliest on a tie, is step 2 (ε 0.5).
  CHECK(r.selected->params.get_double("target_epsilon") == 0.5);
  CHECK(note_with(r, "ex-post guarantee: epsilon = 3.75").size() > 0);
  CHECK(note_with(r, "no private score met the target").size() > 0);
}

TEST_CASE("expost tuner: private scoring spends score_fraction of each level on Laplace noise") {
  Loaded plugin;
  FakeContext context(Training::Pure);
  dptune::Params p = kLadder;
  p.set("scoring", std::string("private"));
  p.set("score_fraction", 0.2);
  const dptune::TuningResult r = plugin.tuner(p)->tune(context);
  // Step ℓ trains at 0.8 ε_ℓ and scores with laplace(1 / (0.2 ε_ℓ)) (b / Δ): pure ε_ℓ in all.
  const auto& first = context.evaluator_.batches.front().front();
  CHECK(first.candidate.get_double("target_epsilon") == doctest::Approx(0.2));
  REQUIRE(r.event.has_value());
  REQUIRE(r.event->events().size() == 4);
  CHECK(r.event->events()[1] ==
        DpEvent::composed({DpEvent::pure_dp(0.8 * 0.5), DpEvent::laplace(1 / (0.2 * 0.5))}));
  CHECK(dptune::expost::pure_epsilon(r.event->events()[1], dptune::Neighbouring::AddRemove) ==
        doctest::Approx(0.5));
  // The ex-post figure is the pure sum of the steps run, whichever step the noise stopped at.
  const std::regex steps("stopped after step ([0-9]+) of 4");
  std::smatch m;
  const std::string note = note_with(r, "ex-post guarantee");
  REQUIRE(std::regex_search(note, m, steps));
  const auto t = static_cast<std::size_t>(std::stoul(m[1]));
  CHECK(t == context.evaluator_.batches.size());
  const dptune::expost::Ladder ladder = dptune::expost::make_ladder(0.25, 2, 4, 1);
  std::ostringstream want;
  want.precision(6);
  want << "ex-post guarantee: epsilon = " << dptune::expost::chain_rule_epsilon(ladder, t) << " ";
  CHECK(note.find(want.str()) != std::string::npos);
}

TEST_CASE("expost tuner: approximate-DP steps claim no ex-post guarantee") {
  Loaded plugin;
  FakeContext context(Training::Approx);
  const dptune::TuningResult r = plugin.tuner(kLadder)->tune(context);
  CHECK(note_with(r, "ex-post guarantee: epsilon").empty());
  const std::string realised = note_with(r, "realised epsilon = ");
  REQUIRE_FALSE(realised.empty());
  CHECK(realised.find("NOT a guarantee") != std::string::npos);
  // The realised figure is the accountant's price of the two steps run.
  const DpEvent ran = DpEvent::composed({DpEvent::composed({DpEvent::approx_dp(0.25, 1e-7)}),
                                         DpEvent::composed({DpEvent::approx_dp(0.5, 1e-7)})});
  std::ostringstream want;
  want.precision(6);
  want << "realised epsilon = " << context.rdp.epsilon(ran, 1e-5).epsilon << " at delta";
  CHECK(realised.find(want.str()) != std::string::npos);
  CHECK(r.guarantee->epsilon > context.rdp.epsilon(ran, 1e-5).epsilon);
}

TEST_CASE("expost tuner: a noise parameter is calibrated to each level") {
  Loaded plugin;
  FakeContext context(Training::LaplaceNoise);
  dptune::Params p = kLadder;
  p.set("privacy_parameter", std::string("b"));
  p.set("privacy_parameter_kind", std::string("noise"));
  const dptune::TuningResult r = plugin.tuner(p)->tune(context);
  // laplace(b) is (1/b)-DP: the smallest b meeting ε is 1/ε, to the bisection's 1e-10.
  const auto& batches = context.evaluator_.batches;
  REQUIRE(batches.size() == 2);
  CHECK(batches[0][0].candidate.get_double("b") == doctest::Approx(4).epsilon(1e-9));
  CHECK(batches[1][0].candidate.get_double("b") == doctest::Approx(2).epsilon(1e-9));
  CHECK(batches[1][0].candidate.get_double("b") >= 2);  // never below: the step meets its level
  CHECK(note_with(r, "ex-post guarantee: epsilon = 0.75").size() > 0);
}

TEST_CASE("expost tuner: refusals before any run") {
  Loaded plugin;
  dptune::Params p = kLadder;
  p.set("epsilon_start", 5.0);
  CHECK_THROWS_AS(plugin.tuner(p), dptune::Error);  // above the cap: not even one level
  // Two candidates (the grid of two choices) at epsilon_start 3 cost 6 > the cap 4: refused when
  // the ladder is fixed, before any run.
  dptune::Params many = kLadder;
  many.set("epsilon_start", 3.0);
  many.set("candidates", std::string("grid"));
  FakeContext one(Training::Pure);
  CHECK_NOTHROW(plugin.tuner(many)->tune(one));  // one candidate at 3 fits the cap
  FakeContext two(Training::Pure, 2);
  CHECK_THROWS_AS(plugin.tuner(many)->tune(two), dptune::ConfigError);
  CHECK(two.evaluator_.batches.empty());
}

TEST_CASE("expost tuner: a trainer that overspends its target is refused before any run") {
  Loaded plugin;
  // Twice the target: the ladder (0.25 + 0.5 + 1 + 2 = 3.75) then costs 7.5 by basic composition
  // (the rdp accountant's conversion: just below) > the cap 4.
  FakeContext twice(Training::Overspend, 1, 2.0);
  CHECK(twice.rdp.epsilon(DpEvent::pure_dp(7.5), 1e-5).epsilon > 7.4);
  CHECK_THROWS_WITH_AS(plugin.tuner(kLadder)->tune(twice),
                       doctest::Contains("prices the whole ladder (4 steps) at epsilon 7.4"),
                       dptune::ConfigError);
  CHECK(twice.evaluator_.batches.empty());
  // 5 % over: the ladder's 3.9375 still fits the cap, but every step is above its level, which the
  // ex-post bound's premise needs: refused too.
  FakeContext over(Training::Overspend, 1, 1.05);
  CHECK_THROWS_WITH_AS(plugin.tuner(kLadder)->tune(over), doctest::Contains("above its level 0.25"),
                       dptune::PluginError);
  CHECK(over.evaluator_.batches.empty());
}
