// The repetition tuner: the released guarantee is exactly the accountant's RepeatAndSelect (or
// Corollary 16, or the k-fold composition) of the worst candidate's event composed with the
// scoring event; K is drawn once and the number of runs equals it; only the best run is released,
// and nothing published depends on K; scores are noised unless the user
// declares the scored split public (finding 6); the threshold variant checks every candidate
// before its first run (finding 8); privacy-relevant continuous dimensions are refused before
// anything runs.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <regex>

#include "build_paths.hpp"
#include "dptune/dptune.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/testing.hpp"
#include "tuner_fixtures.hpp"

using dptune::DpEvent;
using dptune::Params;

namespace {

// A trainer whose event depends on sigma (privacy-relevant) and whose score depends on lr only.
DpEvent event_for(double sigma) { return dptune_test::sgd_event_for(sigma); }
double score_for(double lr) { return 1 - std::abs(std::log10(lr) + 1) / 4; }  // best at lr = 0.1

/// An event that depends on the candidate only (every run here is on the whole data).
dptune::testing::ScriptedEvaluator::EventFn by_candidate(std::function<DpEvent(const Params&)> f) {
  return [f = std::move(f)](const Params& c, const dptune::DataScope&) { return f(c); };
}

/// What the repetition tuner asks: private whole-data runs, scored by lr (the runs of one request
/// differ: the second scores 0.01 lower, the third 0.02).
double run_score(const dptune::EvaluationRequest& r, std::size_t run) {
  CHECK(r.private_run);
  CHECK(r.scope.kind == dptune::DataScope::Kind::Whole);
  return score_for(r.candidate.get_double("lr")) - 0.01 * double(run % 3);
}

/// Every call the tuner makes to the progress display, as text.
class RecordingProgress final : public dptune::ProgressSink {
 public:
  void start(std::string_view phase, std::size_t total) override {
    calls.push_back("start " + std::string(phase) + " " + std::to_string(total));
  }
  void advance(std::size_t done, std::optional<double> best) override {
    CHECK(!best.has_value());
    calls.push_back("advance " + std::to_string(done));
  }
  void message(std::string_view text) override { calls.push_back("message " + std::string(text)); }
  std::vector<std::string> calls;
};

class FakeContext final : public dptune_test::RdpTunerContext {
 public:
  FakeContext(std::uint64_t seed, dptune::SearchSpace space,
              std::optional<dptune::rdp::Options> options = std::nullopt)
      : RdpTunerContext(seed, std::move(space), run_score, 3, std::move(options)) {
    evaluator_.event =
        by_candidate([](const Params& c) { return event_for(c.get_double("sigma")); });
    evaluator_.seconds_per_run = 1.5;  // a run time that differs from run to run
  }
  const dptune::Accountant& accountant() const override {
    return accountant_override ? *accountant_override : accountant_;
  }
  dptune::ProgressSink& progress() override { return progress_; }
  RecordingProgress progress_;
  const dptune::Accountant* accountant_override = nullptr;
};

dptune::SearchSpace grid_space() { return dptune_test::lr_sigma_space(); }

struct Loaded : dptune_test::LoadedTuners {
  explicit Loaded(std::string tuner = "repetition",
                  const char* library = dptune_test::build_paths::repetition_plugin)
      : LoadedTuners(std::move(tuner), {library}) {}
};

const DpEvent kBase = DpEvent::one_of({event_for(1.0), event_for(2.0)});
// The default scoring: Laplace with noise multiplier 1 / score_epsilon = 1 / 0.1.
const DpEvent kPrivateBase = DpEvent::composed({kBase, DpEvent::laplace(10.0)});
// The tuner prices RepeatAndSelect(base, E[K] of its distribution, η): that E[K] is recomputed
// from the γ solved for the requested mean, so it differs from it in the last bits, and the
// selection bound, whose ε is a bisection to 1e-6 relative on the base's (PLD) profile, answers
// to that precision, not to the bit.
const std::string kPublicDeclaration =
    "assumes the validation split is public (declared by the user)";

Params with_public_scoring(Params p) {
  p.set("scoring", std::string("public_validation"));
  return p;
}

bool any_note_contains(const dptune::TuningResult& r, const std::string& text) {
  for (const auto& n : r.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("repetition: logarithmic K, the guarantee is RepeatAndSelect of the base and its score") {
  Loaded plugin;
  FakeContext context(7, grid_space());
  auto tuner = plugin.tuner({{"mean", 5.0}});
  const auto r = tuner->tune(context);
  REQUIRE(r.guarantee.has_value());
  const double want =
      context.accountant_.epsilon(DpEvent::repeat_and_select(kPrivateBase, 5.0, 0.0), 1e-5).epsilon;
  CHECK(r.guarantee->epsilon == doctest::Approx(want).epsilon(1e-6));
  // The score's event costs something: more than the trainers' base alone would give ...
  CHECK(want >
        context.accountant_.epsilon(DpEvent::repeat_and_select(kBase, 5.0, 0.0), 1e-5).epsilon);
  // ... and the worst candidate (sigma = 1) sets the base: more than sigma = 2 alone.
  CHECK(want >
        context.accountant_
            .epsilon(DpEvent::repeat_and_select(
                         DpEvent::composed({event_for(2.0), DpEvent::laplace(10.0)}), 5.0, 0.0),
                     1e-5)
            .epsilon);
  CHECK(r.guarantee->derivation.find("scoring: private") != std::string::npos);
  // K runs of one training each (the per-run results: sensitive); the best run is released with
  // the whole guarantee.
  CHECK(context.evaluator_.runs() == r.trials.size());
  CHECK(r.trials.size() > 0);
  CHECK(r.trials_sensitive);
  REQUIRE(r.selected.has_value());
  CHECK(r.selected->privacy.epsilon == doctest::Approx(want).epsilon(1e-6));
  bool ran = false;
  for (const auto& t : r.trials) ran |= t.params == r.selected->params;
  CHECK(ran);
}

TEST_CASE("repetition: the scoring event is stated for the trainers' neighbouring relation") {
  // A replace-one trainer (sampling without replacement): the host's utility sensitivity bounds a
  // replaced record too, so the Laplace leaf is stated for replace-one, not converted by group
  // privacy (which would double its epsilon).
  Loaded plugin;
  FakeContext context(7, grid_space());
  const auto wor = [](const Params& c) {
    return DpEvent::self_composed(
        DpEvent::sampled_without_replacement(1000, 100, DpEvent::gaussian(c.get_double("sigma"))),
        20);
  };
  context.evaluator_.event = by_candidate(wor);
  const auto r = plugin.tuner({{"mean", 5.0}})->tune(context);
  Params one, two;
  one.set("sigma", 1.0);
  two.set("sigma", 2.0);
  const DpEvent trainers = DpEvent::one_of({wor(one), wor(two)});
  const double want =
      context.accountant_
          .epsilon(DpEvent::repeat_and_select(
                       DpEvent::composed({trainers, DpEvent::replace_one(DpEvent::laplace(10.0))}),
                       5.0, 0.0),
                   1e-5)
          .epsilon;
  CHECK(r.guarantee->epsilon == doctest::Approx(want).epsilon(1e-6));
  CHECK(want < context.accountant_
                   .epsilon(DpEvent::repeat_and_select(
                                DpEvent::composed({trainers, DpEvent::laplace(10.0)}), 5.0, 0.0),
                            1e-5)
                   .epsilon);
}

TEST_CASE("repetition: public_validation scores exactly and says what it assumes") {
  Loaded plugin;
  FakeContext context(7, grid_space());
  const auto r = plugin.tuner(with_public_scoring({{"mean", 5.0}}))->tune(context);
  CHECK(r.guarantee->epsilon ==
        doctest::Approx(
            context.accountant_.epsilon(DpEvent::repeat_and_select(kBase, 5.0, 0.0), 1e-5).epsilon)
            .epsilon(1e-6));
  CHECK(r.guarantee->derivation.find(kPublicDeclaration) != std::string::npos);
  CHECK(any_note_contains(r, kPublicDeclaration));
  REQUIRE(r.selected.has_value());
  double best = 0;
  for (const auto& t : r.trials) best = std::max(best, t.utility_mean);
  CHECK(r.selected->utility_mean == best);
  CHECK(r.selected->utility_min == best);
  CHECK(r.selected->utility_max == best);
}

TEST_CASE("repetition: no published text claims that held-out scoring is free") {
  Loaded plugin;
  for (const std::string scoring : {"private", "public_validation"}) {
    FakeContext context(7, grid_space());
    const auto r = plugin.tuner({{"mean", 5.0}, {"scoring", scoring}})->tune(context);
    CHECK(!any_note_contains(r, "costs no privacy"));
    CHECK(r.guarantee->derivation.find("costs no privacy") == std::string::npos);
    CHECK(r.guarantee->derivation.find("scoring: " + scoring) != std::string::npos);
  }
}

TEST_CASE("repetition: private scores carry Laplace noise of scale sensitivity / score_epsilon") {
  // One run per search (fixed K = 1, one candidate): the released score minus the candidate's
  // exact score is one Laplace draw of scale b = (1/200) / 0.5 = 0.01, so E|noise| = b.
  Loaded plugin;
  dptune::SearchSpace s;
  s.add_categorical("lr", {dptune::Value{0.1}});
  s.add_categorical("sigma", {dptune::Value{1.0}});
  const double b = (1.0 / 200) / 0.5;
  double sum_abs = 0, sum = 0;
  int exact = 0;
  const int searches = 1000;
  dptune::rdp::Options coarse;  // a short order grid keeps 1000 guarantees cheap
  coarse.orders = {2, 4, 8, 16, 32};
  for (int t = 0; t < searches; ++t) {
    FakeContext context(100 + t, s, coarse);
    const auto r = plugin
                       .tuner({{"distribution", std::string("fixed")},
                               {"runs", std::int64_t{1}},
                               {"score_epsilon", 0.5}})
                       ->tune(context);
    REQUIRE(r.selected.has_value());
    const double noise = r.selected->utility_mean - score_for(0.1);
    exact += noise == 0;
    sum_abs += std::abs(noise);
    sum += noise;
    if (t == 0)
      CHECK(r.guarantee->epsilon ==
            doctest::Approx(
                context.accountant_
                    .epsilon(DpEvent::composed({event_for(1.0), DpEvent::laplace(2.0)}), 1e-5)
                    .epsilon)
                .epsilon(1e-6));
  }
  CHECK(exact == 0);
  // |Laplace(b)| is exponential with mean b and sd b: the mean of 1000 has sd b / 31.6; 5 sd.
  CHECK(std::abs(sum_abs / searches - b) < 5 * b / std::sqrt(double(searches)));
  // The noise has mean 0 (sd sqrt(2) b / 31.6).
  CHECK(std::abs(sum / searches) < 5 * std::sqrt(2.0) * b / std::sqrt(double(searches)));
}

TEST_CASE("repetition: private scoring with an unknown utility sensitivity is a ConfigError") {
  Loaded plugin;
  FakeContext context(1, grid_space());
  context.known_sensitivity = false;
  auto tuner = plugin.tuner({{"mean", 5.0}});
  try {
    tuner->tune(context);
    FAIL("expected a ConfigError");
  } catch (const dptune::ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find("unknown for utility 'mystery'") != std::string::npos);
    CHECK(m.find("scoring: public_validation") != std::string::npos);
  }
  CHECK(context.evaluator_.runs() == 0);
  // The declaration needs no sensitivity.
  FakeContext declared(1, grid_space());
  declared.known_sensitivity = false;
  CHECK(plugin.tuner(with_public_scoring({{"mean", 5.0}}))->tune(declared).guarantee.has_value());
}

// Theorems 2 and 6 (and Corollary 16) cover the best output with the number
// of runs hidden.  Searches with different K must publish the same notes, guarantee and progress
// calls; only the released candidate and score may differ.
namespace {
struct Published {
  std::vector<std::string> notes, progress;
  std::string derivation;
  double epsilon = 0;
  std::size_t runs = 0;
  std::optional<dptune::Trial> selected;
};
Published publish(Loaded& plugin, const Params& params, std::uint64_t seed,
                  dptune::SearchSpace space = grid_space()) {
  FakeContext context(seed, std::move(space));
  const auto r = plugin.tuner(params)->tune(context);
  // Notes declared as DP output (a function of the released output) may differ; no other.
  std::vector<std::string> notes;
  for (const auto& n : r.notes)
    if (n.rfind(dptune::kDpOutputNote, 0) != 0) notes.push_back(n);
  return {notes,
          context.progress_.calls,
          r.guarantee->derivation,
          r.guarantee->epsilon,
          context.evaluator_.runs(),
          r.selected};
}
void check_k_independent(Loaded& plugin, const Params& params) {
  std::map<std::size_t, Published> by_runs;  // one search per distinct number of runs
  for (std::uint64_t seed = 1; seed < 60 && by_runs.size() < 3; ++seed) {
    Published p = publish(plugin, params, seed);
    if (p.selected) by_runs.emplace(p.runs, std::move(p));
  }
  REQUIRE(by_runs.size() >= 2);
  const Published& first = by_runs.begin()->second;
  for (const auto& [count, p] : by_runs) {
    const std::size_t runs = count;  // CAPTURE cannot name a structured binding
    CAPTURE(runs);
    CHECK(p.notes == first.notes);
    CHECK(p.progress == first.progress);
    CHECK(p.derivation == first.derivation);
    CHECK(p.epsilon == first.epsilon);
    // The released trial: no run index, run time or count.
    CHECK(p.selected->id == 0);
    CHECK(p.selected->seconds == 0);
    CHECK(p.selected->repetitions == 1);
    CHECK(p.selected->privacy.epsilon == p.epsilon);
  }
  // The display shows no count: total 0 and no advance() at all.
  for (const auto& call : first.progress) {
    CHECK(call.rfind("advance", 0) != 0);
    if (call.rfind("start", 0) == 0) CHECK(call.substr(call.size() - 2) == " 0");
  }
}
}  // namespace

/// rdp, except that it refuses every event with a Laplace part (a mechanism it does not know).
class NoLaplaceAccountant final : public dptune::Accountant {
 public:
  std::string unsupported_reason(const DpEvent& event) const override {
    return event.to_string().find("laplace") != std::string::npos ? "no Laplace here"
                                                                  : rdp_.unsupported_reason(event);
  }
  dptune::PrivacyGuarantee epsilon(const DpEvent& event, double delta) const override {
    return rdp_.epsilon(event, delta);
  }
  dptune::PrivacyGuarantee delta(const DpEvent& event, double epsilon) const override {
    return rdp_.delta(event, epsilon);
  }

 private:
  dptune::rdp::AccountantAdapter rdp_{dptune::rdp::Options{}};
};

TEST_CASE("repetition: an accountant that cannot price the noisy score is a ConfigError") {
  Loaded plugin;
  const NoLaplaceAccountant refusing;
  FakeContext context(1, grid_space());
  context.accountant_override = &refusing;
  try {
    plugin.tuner({{"mean", 5.0}})->tune(context);
    FAIL("expected a ConfigError");
  } catch (const dptune::ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find("cannot price one run of the base algorithm with its noisy score") !=
          std::string::npos);
    CHECK(m.find("no Laplace here") != std::string::npos);
  }
  CHECK(context.evaluator_.runs() == 0);
  // Declared-public scores add no Laplace part: the same accountant prices the run.
  FakeContext declared(1, grid_space());
  declared.accountant_override = &refusing;
  CHECK(plugin.tuner(with_public_scoring({{"mean", 5.0}}))->tune(declared).guarantee.has_value());
}

TEST_CASE("repetition: nothing published depends on K (finding 2)") {
  Loaded plugin;
  SUBCASE("logarithmic, private scoring") { check_k_independent(plugin, {{"mean", 5.0}}); }
  SUBCASE("Poisson, public validation") {
    check_k_independent(
        plugin, with_public_scoring({{"distribution", std::string("poisson")}, {"mean", 4.0}}));
  }
  SUBCASE("threshold: the accepted run's index is not published") {
    check_k_independent(plugin, {{"distribution", std::string("threshold")},
                                 {"threshold", 0.85},
                                 {"stop_probability", 0.01}});
  }
}

TEST_CASE("repetition: geometric, negative binomial by gamma, Poisson, fixed") {
  Loaded plugin;
  SUBCASE("geometric (Liu-Talwar)") {
    FakeContext context(3, grid_space());
    const auto r =
        plugin.tuner({{"distribution", std::string("geometric")}, {"mean", 4.0}})->tune(context);
    CHECK(r.guarantee->epsilon ==
          doctest::Approx(
              context.accountant_.epsilon(DpEvent::repeat_and_select(kPrivateBase, 4.0, 1.0), 1e-5)
                  .epsilon)
              .epsilon(1e-6));
  }
  SUBCASE("negative binomial set by gamma: the accountant sees the matching mean") {
    FakeContext context(3, grid_space());
    const auto r =
        plugin
            .tuner(with_public_scoring({{"distribution", std::string("negative_binomial")},
                                        {"eta", -0.5},
                                        {"gamma", 0.05}}))
            ->tune(context);
    const double mean = dptune::RepetitionDistribution::tnb_mean(-0.5, 0.05);
    CHECK(r.guarantee->epsilon ==
          doctest::Approx(
              context.accountant_.epsilon(DpEvent::repeat_and_select(kBase, mean, -0.5), 1e-5)
                  .epsilon)
              .epsilon(1e-9));
  }
  SUBCASE("Poisson: Theorem 6, and E[K] over many searches") {
    double total_runs = 0;
    const int searches = 300;
    for (int s = 0; s < searches; ++s) {
      // A short order grid keeps 300 guarantees cheap (also under the sanitizers).
      dptune::rdp::Options coarse;
      coarse.orders = {2, 4, 8, 16, 32};
      FakeContext context(1000 + s, grid_space(), coarse);
      const auto r =
          plugin.tuner({{"distribution", std::string("poisson")}, {"mean", 3.0}})->tune(context);
      if (s == 0)
        CHECK(r.guarantee->epsilon ==
              doctest::Approx(
                  context.accountant_
                      .epsilon(DpEvent::repeat_and_select(kPrivateBase, 3.0, INFINITY), 1e-5)
                      .epsilon)
                  .epsilon(1e-6));
      total_runs += static_cast<double>(context.evaluator_.runs());
      if (context.evaluator_.runs() == 0) {
        CHECK(!r.selected.has_value());
        CHECK(any_note_contains(r, "data-independent default candidate"));
      }
    }
    // Poisson(3): the sample mean of 300 draws has sd 0.1; 4 sd.
    CHECK(std::abs(total_runs / searches - 3.0) < 0.4);
  }
  SUBCASE("fixed K: k-fold composition, labelled not recommended") {
    FakeContext context(3, grid_space());
    const auto r =
        plugin.tuner({{"distribution", std::string("fixed")}, {"runs", std::int64_t{6}}})
            ->tune(context);
    CHECK(context.evaluator_.runs() == 6);
    CHECK(r.guarantee->epsilon ==
          doctest::Approx(
              context.accountant_.epsilon(DpEvent::self_composed(kPrivateBase, 6), 1e-5).epsilon)
              .epsilon(1e-6));
    CHECK(any_note_contains(r, "NOT RECOMMENDED"));
  }
}

TEST_CASE("repetition: threshold variant (Corollary 16)") {
  Loaded plugin;
  SUBCASE(
      "a reachable threshold: the first accepted run, its released score at least the threshold") {
    FakeContext context(5, grid_space());
    const auto r = plugin
                       .tuner(with_public_scoring({{"distribution", std::string("threshold")},
                                                   {"threshold", 0.9},
                                                   {"stop_probability", 0.001}}))
                       ->tune(context);
    CHECK(
        r.guarantee->epsilon ==
        doctest::Approx(
            context.accountant_.epsilon(DpEvent::repeat_until_accepted(kBase, 0.001), 1e-5).epsilon)
            .epsilon(1e-6));
    REQUIRE(r.selected.has_value());
    CHECK(r.selected->utility_mean >= 0.9);
    for (std::size_t i = 0; i + 1 < r.trials.size(); ++i) CHECK(r.trials[i].utility_mean < 0.9);
  }
  SUBCASE("private scoring: the noisy score is compared and released; the base includes it") {
    FakeContext context(5, grid_space());
    const auto r = plugin
                       .tuner({{"distribution", std::string("threshold")},
                               {"threshold", 0.9},
                               {"stop_probability", 0.001}})
                       ->tune(context);
    CHECK(r.guarantee->epsilon ==
          doctest::Approx(
              context.accountant_.epsilon(DpEvent::repeat_until_accepted(kPrivateBase, 0.001), 1e-5)
                  .epsilon)
              .epsilon(1e-6));
    REQUIRE(r.selected.has_value());
    CHECK(r.selected->utility_mean >= 0.9);
    CHECK(r.selected->utility_mean != score_for(r.selected->params.get_double("lr")));
  }
  SUBCASE("an unreachable threshold stops with the default after about 1/p attempts") {
    FakeContext context(5, grid_space());
    const auto r = plugin
                       .tuner(with_public_scoring({{"distribution", std::string("threshold")},
                                                   {"threshold", 1.0 + 0.0},
                                                   {"stop_probability", 0.2}}))
                       ->tune(context);
    CHECK(!r.selected.has_value());
    CHECK(any_note_contains(r, std::string(dptune::kDpOutputNote) +
                                   "the output is the data-independent default candidate"));
    CHECK(context.evaluator_.runs() < 60);  // geometric with mean 4: P[> 60] = 0.8^60 ~ 1.5e-6
  }
}

// a candidate whose event the probe of the space missed aborts the search;
// the abort must come before the first run, or it would depend on the earlier runs' scores.
TEST_CASE("repetition: threshold over the space checks every attempt before the first run") {
  Loaded plugin;
  // x and y change the event only together (x = y = 2): varying each alone around the centre
  // (x = y = 1) finds nothing, so the probe declares no privacy-relevant dimension.
  dptune::SearchSpace s;
  s.add_float("lr", 0.001, 1.0, true);
  s.add_int("x", 0, 2);
  s.add_int("y", 0, 2);
  const auto event = [](const Params& c) {
    return event_for(c.get_int("x") == 2 && c.get_int("y") == 2 ? 1.0 : 2.0);
  };
  std::size_t refused = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    FakeContext context(seed, s);
    context.evaluator_.event = by_candidate(event);
    auto tuner = plugin.tuner(with_public_scoring({{"distribution", std::string("threshold")},
                                                   {"candidates", std::string("space")},
                                                   {"threshold", 1.0},
                                                   {"stop_probability", 0.05}}));
    try {
      tuner->tune(context);
    } catch (const std::exception& e) {
      CHECK(std::string(e.what()).find("Nothing was run") != std::string::npos);
      CHECK(context.evaluator_.runs() == 0);
      ++refused;
    }
  }
  // About 20 attempts per search, each x = y = 2 with probability 1/9: most searches refuse.
  CHECK(refused >= 10);
  // p = 0 would need unboundedly many attempts drawn up front: refused when configured.
  CHECK_THROWS_WITH_AS(plugin.tuner({{"distribution", std::string("threshold")},
                                     {"candidates", std::string("space")},
                                     {"threshold", 0.5},
                                     {"stop_probability", 0.0}}),
                       doctest::Contains("needs stop_probability > 0"), std::exception);
}

TEST_CASE("repetition: candidates drawn from the search space") {
  Loaded plugin;
  SUBCASE("a continuous privacy-relevant dimension is refused before anything runs") {
    dptune::SearchSpace s;
    s.add_float("lr", 0.001, 1.0, true);
    s.add_float("sigma", 1.0, 2.0);
    FakeContext context(1, s);
    auto tuner = plugin.tuner({{"candidates", std::string("space")}});
    try {
      tuner->tune(context);
      FAIL("expected a refusal");
    } catch (const std::exception& e) {
      const std::string m = e.what();
      CHECK(m.find("'sigma' changes the privacy cost") != std::string::npos);
      CHECK(m.find("make it finite") != std::string::npos);
    }
    CHECK(context.evaluator_.runs() == 0);
  }
  SUBCASE("a finite privacy-relevant dimension is enumerated; continuous lr is drawn freely") {
    FakeContext context(9, grid_space());
    const auto r =
        plugin.tuner({{"candidates", std::string("space")}, {"mean", 3.0}})->tune(context);
    CHECK(r.guarantee->epsilon ==
          doctest::Approx(
              context.accountant_.epsilon(DpEvent::repeat_and_select(kPrivateBase, 3.0, 0.0), 1e-5)
                  .epsilon)
              .epsilon(1e-6));
    CHECK(any_note_contains(r, "privacy-relevant dimensions (finite, enumerated): sigma"));
  }
}

TEST_CASE("repetition: bad parameters") {
  Loaded plugin;
  FakeContext context(1, grid_space());
  CHECK_THROWS_WITH_AS(plugin.tuner({{"mean", 5.0}, {"gamma", 0.1}}), doctest::Contains("not both"),
                       std::exception);
  CHECK_THROWS_WITH_AS(plugin.tuner({{"distribution", std::string("threshold")}}),
                       doctest::Contains("needs threshold"), std::exception);
  CHECK_THROWS_WITH_AS(plugin.tuner({{"mean", 1.0}}), doctest::Contains("mean > 1"),
                       std::exception);
  CHECK_THROWS(plugin.tuner({{"scoring", std::string("exact")}}));
  CHECK_THROWS(plugin.tuner({{"score_epsilon", 0.0}}));
}

// Papernot & Steinke 2022 Fig. 7 is dptune-figures' module repetition_fig7 (tools/figures), not the
// repetition tuner's: the same replay, on the same fake context.
TEST_CASE("repetition: simulation of Papernot & Steinke 2022 Fig. 7 (dptune-figures module)") {
  Loaded plugin("repetition_fig7", dptune_test::build_paths::repetition_fig7_module);
  FakeContext context(2, grid_space());
  const auto r = plugin
                     .tuner({{"points_per_dimension", std::int64_t{4}},
                             {"pool_runs", std::int64_t{3}},
                             {"searches", std::int64_t{200}},
                             {"means", std::string("2, 5, 20")}})
                     ->tune(context);
  CHECK(r.trusted_analyst_only);
  REQUIRE(r.series.size() == 5);
  for (std::size_t f = 0; f < 4; ++f) {
    const auto& s = r.series[f];
    REQUIRE(s.x.size() == 3);
    // ε grows with E[K]; so does the mean best utility (more runs, better best).
    CHECK(s.x[0] < s.x[1]);
    CHECK(s.x[1] < s.x[2]);
    CHECK(s.y[0] < s.y[2]);
    CHECK(s.y[2] <= 1.0);
    CHECK(s.x[0] == context.accountant_
                        .epsilon(DpEvent::repeat_and_select(kBase, 2.0,
                                                            f == 0   ? 0.0
                                                            : f == 1 ? 0.5
                                                            : f == 2 ? 1.0
                                                                     : INFINITY),
                                 1e-5)
                        .epsilon);
  }
  // The pool: 4 x 2 grid candidates, 3 runs each.
  CHECK(context.evaluator_.runs() == 8 * 3);
}
