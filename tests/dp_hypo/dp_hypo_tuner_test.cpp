// The dp_hypo tuner through the host's registry with a scripted evaluator and the rdp accountant:
// with c = C = 1 it is the repetition tuner draw for draw (same seed: same ε, event, runs and
// release); with a band it releases only the best run under the accountant's price of
// adaptive_repeat_and_select; nothing public depends on T; continuous and mixed spaces run.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "build_paths.hpp"
#include "dptune/dptune.hpp"
#include "dptune/testing.hpp"
#include "test_size.hpp"
#include "tuner_fixtures.hpp"

using dptune::DpEvent;
using dptune::Params;

namespace {

DpEvent event_for(double sigma) { return dptune_test::sgd_event_for(sigma); }

double run_score(const dptune::EvaluationRequest& r, std::size_t) {
  CHECK(r.private_run);
  return 1 - std::abs(std::log10(r.candidate.get_double("lr")) + 1) / 4;  // best at lr = 0.1
}

class FakeContext final : public dptune_test::RdpTunerContext {
 public:
  FakeContext(std::uint64_t seed, dptune::SearchSpace space)
      : RdpTunerContext(seed, std::move(space), run_score) {
    evaluator_.event = [](const Params& c, const dptune::DataScope&) {
      return event_for(c.contains("sigma") ? c.get_double("sigma") : 1.0);
    };
  }
};

dptune::SearchSpace grid_space() { return dptune_test::lr_sigma_space(); }

struct Loaded : dptune_test::LoadedTuners {
  Loaded()
      : LoadedTuners("dp_hypo", {dptune_test::build_paths::repetition_plugin,
                                 dptune_test::build_paths::dp_hypo_plugin}) {}
};

/// Every public note (not a DP-output declaration).
std::vector<std::string> public_notes(const dptune::TuningResult& r) {
  std::vector<std::string> out;
  for (const auto& n : r.notes)
    if (n.rfind(dptune::kDpOutputNote, 0) != 0) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("dp_hypo: with c = C = 1 it is the repetition tuner, draw for draw") {
  Loaded loaded;
  // Five seeds, two in the quick set.
  const std::uint64_t seeds = dptune_test::full_or_light<std::uint64_t>(5, 2);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    for (const char* distribution : {"geometric", "logarithmic"}) {
      CAPTURE(seed);
      CAPTURE(distribution);
      Params common;
      common.set("distribution", std::string(distribution));
      common.set("mean", 6.0);
      common.set("candidates", std::string("grid"));
      common.set("points_per_dimension", std::int64_t{7});
      Params hypo = common;
      hypo.set("upper", 1.0);
      hypo.set("lower", 1.0);
      FakeContext a(seed, grid_space()), b(seed, grid_space());
      const auto rep = loaded.tuner("repetition", common)->tune(a);
      const auto hyp = loaded.tuner("dp_hypo", hypo)->tune(b);
      REQUIRE(rep.guarantee);
      REQUIRE(hyp.guarantee);
      CHECK(hyp.guarantee->epsilon == rep.guarantee->epsilon);
      CHECK(hyp.guarantee->delta == rep.guarantee->delta);
      REQUIRE(rep.event);
      REQUIRE(hyp.event);
      CHECK(*hyp.event == *rep.event);
      REQUIRE(rep.trials.size() == hyp.trials.size());
      for (std::size_t i = 0; i < rep.trials.size(); ++i) {
        CHECK(hyp.trials[i].params == rep.trials[i].params);
        CHECK(hyp.trials[i].utility_mean == rep.trials[i].utility_mean);
      }
      REQUIRE(rep.selected);
      REQUIRE(hyp.selected);
      CHECK(hyp.selected->params == rep.selected->params);
      CHECK(hyp.selected->utility_mean == rep.selected->utility_mean);
    }
  }
}

TEST_CASE("dp_hypo: a band releases the best run under adaptive_repeat_and_select's price") {
  Loaded loaded;
  dptune::rdp::AccountantAdapter rdp;
  std::set<std::size_t> run_counts;
  std::vector<std::string> notes_seen;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    Params p;
    p.set("mean", 8.0);
    p.set("grid_points", std::int64_t{64});
    FakeContext context(seed, grid_space());
    const auto result = loaded.tuner("dp_hypo", p)->tune(context);
    REQUIRE(result.event);
    REQUIRE(result.event->kind() == DpEvent::Kind::AdaptiveRepeatAndSelect);
    CHECK(result.event->density_ratio() == doctest::Approx(2 / 0.75).epsilon(1e-15));
    CHECK(result.event->shape() == 1.0);  // geometric by default
    // The base: the worst candidate's event composed with the noisy score's Laplace leaf.
    const DpEvent& base = result.event->inner();
    REQUIRE(base.kind() == DpEvent::Kind::Composed);
    // (listed in a fixed order, whatever the Halton draw: sorted by text)
    CHECK(base.events().front() == DpEvent::one_of({event_for(1.0), event_for(2.0)}));
    CHECK(base.events().back().kind() == DpEvent::Kind::Laplace);
    REQUIRE(result.guarantee);
    CHECK(result.guarantee->epsilon == rdp.epsilon(*result.event, 1e-5).epsilon);
    // Released: the best run, with no index or time; every run in the sensitive trials.
    REQUIRE(result.selected);
    CHECK(result.trials_sensitive);
    double best = -1e300;
    for (const auto& t : result.trials) best = std::max(best, t.utility_mean);
    CHECK(result.selected->utility_mean == best);
    CHECK(result.selected->id == 0);
    CHECK(result.selected->seconds == 0);
    CHECK(context.evaluator_.runs() == result.trials.size());
    run_counts.insert(result.trials.size());
    // Nothing public depends on T: the notes are the same for every seed.
    const auto notes = public_notes(result);
    std::string joined;
    for (const auto& n : notes) joined += n + "\n";
    if (!notes_seen.empty()) CHECK(joined == notes_seen.front());
    notes_seen.push_back(joined);
  }
  CHECK(run_counts.size() > 1);  // T varied over the seeds, and the notes did not
}

TEST_CASE("dp_hypo: continuous and mixed spaces, candidates from the space") {
  Loaded loaded;
  dptune::SearchSpace space;
  space.add_float("lr", 0.001, 1.0, /*log=*/true);
  space.add_float("momentum", 0.0, 0.9);
  space.add_int("epochs", 1, 5);
  space.add_categorical("sigma", {dptune::Value{1.0}, dptune::Value{2.0}});
  Params p;
  p.set("mean", 12.0);
  p.set("grid_points", std::int64_t{128});
  p.set("upper", 1.5);
  p.set("lower", 0.8);
  FakeContext context(42, space);
  const auto result = loaded.tuner("dp_hypo", p)->tune(context);
  REQUIRE(result.selected);
  const Params& chosen = result.selected->params;
  CHECK(chosen.get_double("lr") >= 0.001);
  CHECK(chosen.get_double("lr") <= 1.0);
  CHECK(chosen.get_double("momentum") >= 0.0);
  CHECK(chosen.get_double("momentum") <= 0.9);
  CHECK(chosen.get_int("epochs") >= 1);
  CHECK(chosen.get_int("epochs") <= 5);
  REQUIRE(result.event);
  CHECK(result.event->density_ratio() == doctest::Approx(1.5 / 0.8).epsilon(1e-15));
}

TEST_CASE("dp_hypo: Poisson and unknown parameters are refused by the schema") {
  Loaded loaded;
  const auto* schema = loaded.registry.schema(dptune::host::ComponentKind::Tuner, "dp_hypo");
  REQUIRE(schema != nullptr);
  Params poisson;
  poisson.set("distribution", std::string("poisson"));
  CHECK_THROWS(schema->complete(poisson));
  Params below;
  below.set("lower", 1.5);
  CHECK_THROWS(schema->complete(below));
  Params both;
  both.set("mean", 5.0);
  both.set("gamma", 0.1);
  CHECK_THROWS(loaded.tuner("dp_hypo", both));
}
