// The subsampled tuner through the host's registry with a fake context and the rdp accountant:
// the declared event is, field by field, the composition built by hand (tuning amplified by
// sampling without replacement, or the scored split's case; the final training at the worst
// extrapolated candidate); the runs go to the subsample, the final run to the whole data with the
// extrapolated candidate; nothing published depends on K; refusals come before any run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "build_paths.hpp"
#include "dptune/dptune.hpp"
#include "dptune/helpers/events.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/testing.hpp"
#include "test_size.hpp"
#include "tuner_fixtures.hpp"

using dptune::DpEvent;
using dptune::Params;

namespace {

constexpr std::size_t kTrainRows = 1000, kScoredRows = 200;

/// A DP-SGD-like event: `epochs` passes of fixed-size lots over the scope's rows.
DpEvent sgd_event(std::int64_t rows, std::int64_t lot, double sigma) {
  const std::int64_t steps = 2 * ((rows + lot - 1) / lot);
  return DpEvent::self_composed(
      DpEvent::sampled_without_replacement(rows, lot, DpEvent::gaussian(sigma)), steps);
}

std::int64_t rows_of(const dptune::DataScope& scope) {
  if (scope.kind == dptune::DataScope::Kind::Whole) return kTrainRows;
  REQUIRE((scope.kind == dptune::DataScope::Kind::Subsample));
  return static_cast<std::int64_t>(scope.index);
}

double run_score(const dptune::EvaluationRequest& r, std::size_t) {
  CHECK(r.private_run);
  CHECK(r.repetitions == 1);
  return 1 - std::abs(std::log10(r.candidate.get_double("lr")) + 1) / 4;
}

using RunScore = double (*)(const dptune::EvaluationRequest&, std::size_t);

class FakeContext final : public dptune_test::RdpTunerContext {
 public:
  FakeContext(std::uint64_t seed, dptune::SearchSpace space, RunScore score = run_score)
      : RdpTunerContext(seed, std::move(space), score) {
    evaluator_.event = [](const Params& c, const dptune::DataScope& scope) {
      return sgd_event(rows_of(scope), c.get_int("lot_size"), c.get_double("sigma"));
    };
    train_rows = kTrainRows;
    scored_rows = kScoredRows;
  }
};

dptune::SearchSpace space() {
  dptune::SearchSpace s;
  s.add_float("lr", 0.001, 1.0, /*log=*/true);
  s.add_categorical("lot_size", {dptune::Value{std::int64_t{8}}, dptune::Value{std::int64_t{16}}});
  s.add_categorical("sigma", {dptune::Value{1.0}, dptune::Value{2.0}});
  return s;
}

struct Loaded : dptune_test::LoadedTuners {
  Loaded() : LoadedTuners("subsampled", {dptune_test::build_paths::subsampled_plugin}) {}
};

/// The parts of the procedure for space() with a subsample of m rows, built by hand (the
/// candidates' events in the grid's order, as the tuner lists them).
struct HandBuilt {
  DpEvent base, score, final, selection;
  std::int64_t m = 0;
};

HandBuilt hand_built(std::int64_t m, double mean) {
  const auto law = dptune::RepetitionDistribution::from_mean(mean, 0.0);
  HandBuilt h;
  h.m = m;
  const double s = static_cast<double>(kTrainRows) / static_cast<double>(m);
  std::vector<DpEvent> tuning, final;
  for (const auto& c : space().grid(5)) {
    const std::int64_t lot = c.get_int("lot_size");
    tuning.push_back(sgd_event(h.m, lot, c.get_double("sigma")));
    // lot_size scaled by s = n/m, rounded.
    final.push_back(sgd_event(static_cast<std::int64_t>(kTrainRows),
                              std::llround(static_cast<double>(lot) * s), c.get_double("sigma")));
  }
  // laplace(b / Δ) with b = Δ / score_epsilon, Δ = 1/200 (accuracy on the scored rows): 1 / 0.1 as
  // the tuner computes it (9.999999999999998 in doubles).
  const double sensitivity = 1.0 / static_cast<double>(kScoredRows);
  h.score = DpEvent::replace_one(DpEvent::laplace(sensitivity / 0.1 / sensitivity));
  h.base = DpEvent::composed({dptune::one_of_distinct(tuning), h.score});
  h.final = DpEvent::composed({dptune::one_of_distinct(final), h.score});
  h.selection = DpEvent::repeat_and_select(h.base, law.mean(), law.shape());
  return h;
}

/// The three routes' events for m < n, built by hand: Theorem 9 on the whole tuning, the
/// accountant's profile price amplified as (ε, δ), and the tuning unamplified.
std::vector<DpEvent> routes(const HandBuilt& h, const dptune::Accountant& accountant, double delta,
                            double mean) {
  const auto law = dptune::RepetitionDistribution::from_mean(mean, 0.0);
  const auto n = static_cast<std::int64_t>(kTrainRows);
  const DpEvent scores = DpEvent::repeat_and_select(h.score, law.mean(), law.shape());
  const DpEvent theorem9 =
      DpEvent::one_of({DpEvent::sampled_without_replacement(n, h.m, h.selection), scores});
  const double q = static_cast<double>(h.m) / static_cast<double>(n);
  const auto inner = accountant.epsilon(h.selection, delta / (2 * q));
  const auto score_price = accountant.epsilon(scores, delta / 2);
  const DpEvent profile = DpEvent::one_of(
      {DpEvent::sampled_without_replacement(
           n, h.m, DpEvent::replace_one(DpEvent::approx_dp(inner.epsilon, delta / (2 * q)))),
       DpEvent::replace_one(DpEvent::approx_dp(score_price.epsilon, delta / 2))});
  return {DpEvent::composed({theorem9, h.final}), DpEvent::composed({profile, h.final}),
          DpEvent::composed({h.selection, h.final})};
}

}  // namespace

TEST_CASE("subsampled: the declared event is the cheapest of the hand-built routes") {
  Loaded plugin;
  FakeContext context(3, space());
  const auto r = plugin.tuner({{"mean", 5.0}, {"fraction", 0.1}})->tune(context);
  REQUIRE(r.event.has_value());
  REQUIRE(r.guarantee.has_value());
  const std::vector<DpEvent> want = routes(hand_built(100, 5.0), context.accountant_, 1e-5, 5.0);
  std::vector<double> eps;
  for (const auto& e : want) eps.push_back(context.accountant_.epsilon(e, 1e-5).epsilon);
  std::size_t cheapest = 0;
  for (std::size_t i = 1; i < eps.size(); ++i)
    if (eps[i] < eps[cheapest]) cheapest = i;
  CAPTURE(eps[0]);
  CAPTURE(eps[1]);
  CAPTURE(eps[2]);
  CHECK(*r.event == want[cheapest]);
  CHECK(r.guarantee->epsilon == eps[cheapest]);
  REQUIRE(r.selected.has_value());
  CHECK(r.selected->privacy.epsilon == r.guarantee->epsilon);
  // Every route is priced in the public note, the chosen one named.
  CHECK(dptune_test::has_note(r, "Theorem 9 "));
  CHECK(dptune_test::has_note(r, "profile "));
  CHECK(dptune_test::has_note(r, "unamplified "));
  // On this base the (ε, δ) amplification of the tuning's profile price is what pays.
  CHECK(cheapest == 1);
  // The final training is priced at the worst extrapolated candidate (lot 160, sigma 1 among
  // them), not at the one chosen.
  CHECK(r.event->events().at(1) == hand_built(100, 5.0).final);
}

TEST_CASE("subsampled: fraction 1 is the repetition tuner's selection composed with the final") {
  Loaded plugin;
  FakeContext context(3, space());
  const auto r =
      plugin.tuner({{"mean", 5.0}, {"fraction", 1.0}, {"scale_with_data", std::string("")}})
          ->tune(context);
  REQUIRE(r.event.has_value());
  const HandBuilt h = hand_built(1000, 5.0);
  CHECK(*r.event == DpEvent::composed({h.selection, h.final}));
  CHECK(r.guarantee->epsilon ==
        context.accountant_.epsilon(DpEvent::composed({h.selection, h.final}), 1e-5).epsilon);
  // Every run, tuning and final, on the whole data.
  CHECK(context.evaluator_.requests([](const dptune::EvaluationRequest& q) {
    return q.scope.kind != dptune::DataScope::Kind::Whole;
  }) == 0);
}

TEST_CASE(
    "subsampled: tuning runs on the subsample, one final run on the whole data, extrapolated") {
  Loaded plugin;
  // Four seeds, two in the quick set (tests/support/test_size.hpp).
  const std::uint64_t seeds = dptune_test::full_or_light<std::uint64_t>(4, 2);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    FakeContext context(seed, space());
    const auto r = plugin.tuner({{"mean", 5.0}, {"fraction", 0.25}})->tune(context);
    std::vector<dptune::EvaluationRequest> all;
    for (const auto& b : context.evaluator_.batches) all.insert(all.end(), b.begin(), b.end());
    REQUIRE(all.size() >= 2);  // K ≥ 1 for the logarithmic distribution, and the final run
    for (std::size_t i = 0; i + 1 < all.size(); ++i) {
      CHECK((all[i].scope.kind == dptune::DataScope::Kind::Subsample));
      CHECK(all[i].scope.index == 250);  // m = ⌊0.25 · 1000⌋ rows
      CHECK_FALSE(all[i].keep_output);   // no tuning run's model is ever released
    }
    const auto& last = all.back();
    CHECK(last.scope.kind == dptune::DataScope::Kind::Whole);
    CHECK(last.keep_output);
    REQUIRE(r.selected.has_value());
    CHECK(r.selected->params == last.candidate);
    // The extrapolated candidate: lot_size × n/m = × 4, the rest as some tuning run had it.
    bool from_a_run = false;
    for (std::size_t i = 0; i + 1 < all.size(); ++i) {
      Params scaled = all[i].candidate;
      scaled.set("lot_size", all[i].candidate.get_int("lot_size") * 4);
      from_a_run |= scaled == last.candidate;
    }
    CHECK(from_a_run);
    // The released score is the final model's noisy score, not a tuning run's.
    CHECK(r.selected->utility_mean == r.trials.back().utility_mean);
    CHECK(r.trials_sensitive);
    CHECK(r.trials.size() == all.size());
    CHECK(r.selected->id == 0);
    CHECK(r.selected->seconds == 0);
  }
}

TEST_CASE("subsampled: nothing published depends on K") {
  Loaded plugin;
  std::set<std::vector<std::string>> published;
  std::set<std::size_t> counts;
  // Six seeds, three in the quick set (K still varies over them).
  const std::uint64_t seeds = dptune_test::full_or_light<std::uint64_t>(6, 3);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    FakeContext context(seed, space());
    const auto r = plugin.tuner({{"mean", 5.0}, {"fraction", 0.1}})->tune(context);
    counts.insert(context.evaluator_.runs());
    std::vector<std::string> notes;
    for (const auto& n : r.notes)
      if (n.rfind(dptune::kDpOutputNote, 0) != 0) notes.push_back(n);
    notes.push_back(r.guarantee->derivation);
    published.insert(notes);
  }
  CHECK(counts.size() > 1);      // K varied over the seeds ...
  CHECK(published.size() == 1);  // ... and the public notes did not
}

TEST_CASE("subsampled: the summary's compute note, from E[K] and the public sizes") {
  Loaded plugin;
  FakeContext context(3, space());
  const auto r = plugin.tuner({{"mean", 5.0}, {"fraction", 0.1}})->tune(context);
  // E[K] = 5 (to the γ solved for it), m = 100, n = 1000: 500 + 1000 = 1500 against 5000.
  CHECK(dptune_test::has_note(r,
                              "tuning 500 + final 1000 = 1500, against 5000 for the repetition "
                              "tuner on the full data: 3500 saved (70 %)"));
  CHECK(dptune_test::has_note(r,
                              "subsample: 100 of the 1000 training rows (fraction 0.1, m = "
                              "floor(q n)): drawn uniformly without replacement by the data "
                              "layout from its own seed"));
  CHECK(dptune_test::has_note(r, "lot_size multiplied by s"));
}

TEST_CASE("subsampled: refusals come before any run") {
  Loaded plugin;
  CHECK_THROWS_WITH(plugin.tuner({{"fraction", 1.5}}), doctest::Contains("fraction"));
  {
    // m = ⌊0.0005 · 1000⌋ = 0: refused before any run, the text starting with the parameter's
    // name (the host locates it in the pipeline).
    FakeContext context(1, space());
    CHECK_THROWS_WITH_AS(plugin.tuner({{"fraction", 0.0005}})->tune(context),
                         doctest::Contains("fraction: 0.0005 of the 1000 training rows is a "
                                           "subsample of 0 rows"),
                         dptune::ConfigError);
    CHECK(context.evaluator_.runs() == 0);
  }
  {
    FakeContext context(1, space());
    // A scaled name that is not a dimension of the space is kept as the pipeline fixes it, and
    // the summary says so.
    const auto r =
        plugin.tuner({{"scale_with_data", std::string("batch, lot_size")}})->tune(context);
    CHECK(dptune_test::has_note(r,
                                "scale_with_data: 'batch' is not a dimension of the search space"));
    CHECK_FALSE(dptune_test::has_note(r, "'lot_size' is not a dimension"));
  }
  {
    FakeContext context(1, space());
    context.known_sensitivity = false;
    CHECK_THROWS_WITH_AS(plugin.tuner({})->tune(context),
                         doctest::Contains("scoring: public_validation"), dptune::ConfigError);
    CHECK(context.evaluator_.runs() == 0);
  }
  {
    // Poisson lots (add/remove) cannot be priced for replace-one neighbours, which the
    // subsample needs.
    FakeContext context(1, space());
    context.evaluator_.event = [](const Params& c, const dptune::DataScope&) {
      return DpEvent::self_composed(
          DpEvent::poisson_sampled(0.1, DpEvent::gaussian(c.get_double("sigma"))), 20);
    };
    CHECK_THROWS_WITH_AS(plugin.tuner({})->tune(context),
                         doctest::Contains("sampling: without_replacement"), dptune::ConfigError);
    CHECK(context.evaluator_.runs() == 0);
  }
  {
    FakeContext context(1, space());
    context.sizes_vary = true;
    CHECK_THROWS_WITH_AS(plugin.tuner({})->tune(context), doctest::Contains("afresh"),
                         dptune::ConfigError);
    CHECK(context.evaluator_.runs() == 0);
  }
}

TEST_CASE("subsampled: a run whose event is not the declared one is refused") {
  Loaded plugin;
  FakeContext context(1, space());
  auto declared = context.evaluator_.event;
  int calls = 0;
  // event_of answers as declared while planning (twice per grid point: 20 points); the runs then
  // report another event.
  context.evaluator_.event = [&](const Params& c, const dptune::DataScope& s) {
    return ++calls > 40 ? DpEvent::gaussian(100.0) : declared(c, s);
  };
  CHECK_THROWS_AS(plugin.tuner({{"mean", 5.0}})->tune(context), dptune::PrivacyError);
}

TEST_CASE("subsampled: any fraction: the tuning trains on floor(q n) rows, priced at m/n") {
  // q = 0.3 is not 1/k: m = 300 of 1000, lot_size scaled by s = 10/3 (8 → 27, 16 → 53).
  Loaded plugin;
  FakeContext context(3, space());
  const auto r = plugin.tuner({{"mean", 5.0}, {"fraction", 0.3}})->tune(context);
  REQUIRE(r.event.has_value());
  const HandBuilt h = hand_built(300, 5.0);
  const std::vector<DpEvent> want = routes(h, context.accountant_, 1e-5, 5.0);
  double cheapest = 1e300;
  for (const auto& e : want)
    cheapest = std::min(cheapest, context.accountant_.epsilon(e, 1e-5).epsilon);
  CHECK(r.guarantee->epsilon == cheapest);
  CHECK(r.event->events().at(1) == h.final);
  std::vector<dptune::EvaluationRequest> all;
  for (const auto& b : context.evaluator_.batches) all.insert(all.end(), b.begin(), b.end());
  REQUIRE(all.size() >= 2);
  for (std::size_t i = 0; i + 1 < all.size(); ++i) {
    CHECK((all[i].scope.kind == dptune::DataScope::Kind::Subsample));
    CHECK(all[i].scope.index == 300);
  }
  const std::int64_t lot = r.selected->params.get_int("lot_size");
  CHECK((lot == 27 || lot == 53));
  CHECK(dptune_test::has_note(r, "subsample: 300 of the 1000 training rows (fraction 0.3"));
}

namespace {
dptune::SearchSpace continuous_space() {
  dptune::SearchSpace s;
  s.add_float("lr", 0.001, 1.0, /*log=*/true);
  s.add_float("momentum", 0.0, 0.9);
  s.add_categorical("lot_size", {dptune::Value{std::int64_t{8}}, dptune::Value{std::int64_t{16}}});
  s.add_categorical("sigma", {dptune::Value{1.0}, dptune::Value{2.0}});
  return s;
}

/// Another dataset's scores: the best learning rate is elsewhere.
double other_score(const dptune::EvaluationRequest& r, std::size_t) {
  return (r.candidate.get_double("lr") + r.candidate.get_double("momentum")) / 2;
}
}  // namespace

TEST_CASE("subsampled: candidates: space draws continuous values, by a data-independent law") {
  Loaded plugin;
  const Params settings{{"mean", 5.0}, {"fraction", 0.3}, {"candidates", std::string("space")}};
  for (std::uint64_t seed : {1, 2, 3}) {
    // The same seed on two datasets (different scores): the same K and the same candidates, in
    // the same order; only the final, extrapolated choice may differ.
    FakeContext one(seed, continuous_space());
    FakeContext two(seed, continuous_space(), other_score);
    const auto r1 = plugin.tuner(settings)->tune(one);
    const auto r2 = plugin.tuner(settings)->tune(two);
    std::vector<Params> drawn1, drawn2;
    for (const auto& b : one.evaluator_.batches)
      for (const auto& q : b)
        if ((q.scope.kind == dptune::DataScope::Kind::Subsample)) drawn1.push_back(q.candidate);
    for (const auto& b : two.evaluator_.batches)
      for (const auto& q : b)
        if ((q.scope.kind == dptune::DataScope::Kind::Subsample)) drawn2.push_back(q.candidate);
    CAPTURE(seed);
    REQUIRE_FALSE(drawn1.empty());
    CHECK(drawn1 == drawn2);
    // Continuous values, not grid points: no drawn lr is one of the 5-point grid's.
    std::set<double> grid_lr;
    for (const auto& c : continuous_space().grid(5)) grid_lr.insert(c.get_double("lr"));
    for (const auto& c : drawn1) CHECK(grid_lr.count(c.get_double("lr")) == 0);
    // The release: the best run's candidate with lot_size × 10/3, the continuous values kept.
    bool extrapolated = false;
    for (const auto& c : drawn1) {
      Params scaled = c;
      scaled.set("lot_size", c.get_int("lot_size") == 8 ? std::int64_t{27} : std::int64_t{53});
      extrapolated |= scaled == r1.selected->params;
    }
    CHECK(extrapolated);
    // The price ranges over the privacy-relevant dimensions (lot_size, sigma) alone: the same as
    // the grid's, whose candidates have the same four events.
    FakeContext grid_context(seed, continuous_space());
    const auto on_grid = plugin.tuner({{"mean", 5.0}, {"fraction", 0.3}})->tune(grid_context);
    CHECK(r1.guarantee->epsilon == doctest::Approx(on_grid.guarantee->epsilon).epsilon(1e-12));
    CHECK(r2.guarantee->epsilon == r1.guarantee->epsilon);
    CHECK(dptune_test::has_note(r1,
                                "privacy-relevant dimensions (finite, enumerated): lot_size, "
                                "sigma"));
  }
}

TEST_CASE("subsampled: candidates: space refuses a continuous dimension that changes the cost") {
  Loaded plugin;
  dptune::SearchSpace s;
  s.add_float("lr", 0.001, 1.0, /*log=*/true);
  s.add_categorical("lot_size", {dptune::Value{std::int64_t{8}}});
  s.add_float("sigma", 1.0, 2.0);
  FakeContext context(1, s);
  // (An InvalidArgument of tune() reaches the caller as the host's attributed plugin error.)
  CHECK_THROWS_WITH(plugin.tuner({{"candidates", std::string("space")}})->tune(context),
                    doctest::Contains("subsampled: dimension 'sigma' changes the privacy cost"));
  CHECK(context.evaluator_.runs() == 0);
}
