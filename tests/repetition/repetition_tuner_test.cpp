// The repetition tuner: the released guarantee is exactly the accountant's RepeatAndSelect (or
// Corollary 16, or the k-fold composition) of the worst candidate's event; K is drawn once and
// the number of runs equals it; only the best run is released; privacy-relevant continuous
// dimensions are refused before anything runs.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <regex>

#include "dptune/dptune.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "rdp_core.hpp"

using dptune::DpEvent;
using dptune::Params;

namespace {

// A trainer whose event depends on sigma (privacy-relevant) and whose score depends on lr only.
DpEvent event_for(double sigma) {
  return DpEvent::self_composed(DpEvent::poisson_sampled(0.1, DpEvent::gaussian(sigma)), 20);
}
double score_for(double lr) { return 1 - std::abs(std::log10(lr) + 1) / 4; }  // best at lr = 0.1

class FakeEvaluator final : public dptune::Evaluator {
 public:
  std::vector<dptune::Evaluation> evaluate(
      const std::vector<dptune::EvaluationRequest>& requests) override {
    std::vector<dptune::Evaluation> out;
    for (const auto& r : requests) {
      CHECK(r.private_run);
      CHECK(r.scope.kind == dptune::DataScope::Kind::Whole);
      runs += r.repetitions;
      dptune::Evaluation e;
      e.request = r;
      const double u = score_for(r.candidate.get_double("lr"));
      for (std::size_t i = 0; i < r.repetitions; ++i)
        e.utilities.push_back(u - 0.01 * double(i % 3));
      e.utility_mean = e.utility_min = e.utility_max = e.utilities.front();
      e.event = event_of(r.candidate, r.scope);
      out.push_back(e);
    }
    return out;
  }
  DpEvent event_of(const Params& c, const dptune::DataScope&) const override {
    return event_for(c.get_double("sigma"));
  }
  std::size_t default_repetitions() const override { return 3; }
  std::size_t runs = 0;
};

class NullProgress final : public dptune::ProgressSink {
 public:
  void start(std::string_view, std::size_t) override {}
  void advance(std::size_t, std::optional<double> best) override { CHECK(!best.has_value()); }
  void message(std::string_view) override {}
};

class FakeContext final : public dptune::TunerContext {
 public:
  FakeContext(std::uint64_t seed, dptune::SearchSpace space, dptune::rdp::Options options = {})
      : accountant_(std::move(options)), space_(std::move(space)), rng_(seed) {}
  const dptune::SearchSpace& space() const override { return space_; }
  dptune::Evaluator& evaluator() override { return evaluator_; }
  const dptune::Accountant& accountant() const override { return accountant_; }
  double delta() const override { return 1e-5; }
  std::shared_ptr<const dptune::Mechanism> mechanism(const Params&) override { return nullptr; }
  dptune::ProgressSink& progress() override { return progress_; }
  dptune::RandomBitGenerator& rng() override { return rng_; }
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    for (std::size_t i = 0; i < n; ++i) body(i);
  }
  FakeEvaluator evaluator_;
  dptune::rdp::AccountantFace accountant_;

 private:
  dptune::SearchSpace space_;
  NullProgress progress_;
  dptune::Xoshiro256 rng_;
};

dptune::SearchSpace grid_space() {
  dptune::SearchSpace s;
  s.add_float("lr", 0.001, 1.0, /*log=*/true);
  s.add_categorical("sigma", {dptune::Value{1.0}, dptune::Value{2.0}});
  return s;
}

struct Loaded {
  dptune::host::PluginRegistry registry;
  Loaded() { registry.scan(DPTUNE_REPETITION_PLUGIN); }
  std::shared_ptr<dptune::Tuner> tuner(const Params& given) {
    const auto* schema = registry.schema(dptune::host::ComponentKind::Tuner, "repetition");
    REQUIRE(schema != nullptr);
    return registry.create_tuner("repetition", schema->complete(given));
  }
};

std::int64_t drawn_k(const dptune::TuningResult& r) {
  static const std::regex k_note("^K = ([0-9]+) ");
  for (const auto& n : r.notes) {
    std::smatch m;
    if (std::regex_search(n, m, k_note)) return std::stoll(m[1]);
  }
  FAIL("no K note");
  return -1;
}

const DpEvent kBase = DpEvent::one_of({event_for(1.0), event_for(2.0)});

}  // namespace

TEST_CASE("repetition: logarithmic K, the guarantee is the accountant's RepeatAndSelect") {
  Loaded plugin;
  FakeContext context(7, grid_space());
  auto tuner = plugin.tuner({{"mean", 5.0}});
  const auto r = tuner->tune(context);
  REQUIRE(r.guarantee.has_value());
  const double want =
      context.accountant_.epsilon(DpEvent::repeat_and_select(kBase, 5.0, 0.0), 1e-5).epsilon;
  CHECK(r.guarantee->epsilon == want);
  // The worst candidate (sigma = 1) sets the base: more than sigma = 2 alone would give.
  CHECK(want >
        context.accountant_.epsilon(DpEvent::repeat_and_select(event_for(2.0), 5.0, 0.0), 1e-5)
            .epsilon);
  // K runs of one training each; the best run is released with the whole guarantee.
  const std::int64_t k = drawn_k(r);
  CHECK(context.evaluator_.runs == static_cast<std::size_t>(k));
  CHECK(r.trials.size() == static_cast<std::size_t>(k));
  CHECK(r.trials_sensitive);
  REQUIRE(r.selected.has_value());
  double best = 0;
  for (const auto& t : r.trials) best = std::max(best, t.utility_mean);
  CHECK(r.selected->utility_mean == best);
  CHECK(r.selected->privacy.epsilon == want);
}

TEST_CASE("repetition: geometric, negative binomial by gamma, Poisson, fixed") {
  Loaded plugin;
  SUBCASE("geometric (Liu-Talwar)") {
    FakeContext context(3, grid_space());
    const auto r =
        plugin.tuner({{"distribution", std::string("geometric")}, {"mean", 4.0}})->tune(context);
    CHECK(r.guarantee->epsilon ==
          context.accountant_.epsilon(DpEvent::repeat_and_select(kBase, 4.0, 1.0), 1e-5).epsilon);
  }
  SUBCASE("negative binomial set by gamma: the accountant sees the matching mean") {
    FakeContext context(3, grid_space());
    const auto r = plugin
                       .tuner({{"distribution", std::string("negative_binomial")},
                               {"eta", -0.5},
                               {"gamma", 0.05}})
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
              context.accountant_.epsilon(DpEvent::repeat_and_select(kBase, 3.0, INFINITY), 1e-5)
                  .epsilon);
      total_runs += static_cast<double>(context.evaluator_.runs);
      if (context.evaluator_.runs == 0) CHECK(!r.selected.has_value());
    }
    // Poisson(3): the sample mean of 300 draws has sd 0.1; 4 sd.
    CHECK(std::abs(total_runs / searches - 3.0) < 0.4);
  }
  SUBCASE("fixed K: k-fold composition, labelled not recommended") {
    FakeContext context(3, grid_space());
    const auto r =
        plugin.tuner({{"distribution", std::string("fixed")}, {"runs", std::int64_t{6}}})
            ->tune(context);
    CHECK(context.evaluator_.runs == 6);
    CHECK(r.guarantee->epsilon ==
          context.accountant_.epsilon(DpEvent::self_composed(kBase, 6), 1e-5).epsilon);
    bool labelled = false;
    for (const auto& n : r.notes) labelled |= n.find("NOT RECOMMENDED") != std::string::npos;
    CHECK(labelled);
  }
}

TEST_CASE("repetition: threshold variant (Corollary 16)") {
  Loaded plugin;
  SUBCASE("a reachable threshold: the first accepted run, scoring at least the threshold") {
    FakeContext context(5, grid_space());
    const auto r = plugin
                       .tuner({{"distribution", std::string("threshold")},
                               {"threshold", 0.9},
                               {"stop_probability", 0.001}})
                       ->tune(context);
    CHECK(r.guarantee->epsilon ==
          context.accountant_.epsilon(DpEvent::repeat_until_accepted(kBase, 0.001), 1e-5).epsilon);
    REQUIRE(r.selected.has_value());
    CHECK(r.selected->utility_mean >= 0.9);
    for (std::size_t i = 0; i + 1 < r.trials.size(); ++i) CHECK(r.trials[i].utility_mean < 0.9);
  }
  SUBCASE("an unreachable threshold stops with the default after about 1/p attempts") {
    FakeContext context(5, grid_space());
    const auto r = plugin
                       .tuner({{"distribution", std::string("threshold")},
                               {"threshold", 1.0 + 0.0},
                               {"stop_probability", 0.2}})
                       ->tune(context);
    CHECK(!r.selected.has_value());
    CHECK(context.evaluator_.runs < 60);  // geometric with mean 4: P[> 60] = 0.8^60 ~ 1.5e-6
  }
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
    CHECK(context.evaluator_.runs == 0);
  }
  SUBCASE("a finite privacy-relevant dimension is enumerated; continuous lr is drawn freely") {
    FakeContext context(9, grid_space());
    const auto r =
        plugin.tuner({{"candidates", std::string("space")}, {"mean", 3.0}})->tune(context);
    CHECK(r.guarantee->epsilon ==
          context.accountant_.epsilon(DpEvent::repeat_and_select(kBase, 3.0, 0.0), 1e-5).epsilon);
    bool named = false;
    for (const auto& n : r.notes)
      named |=
          n.find("privacy-relevant dimensions (finite, enumerated): sigma") != std::string::npos;
    CHECK(named);
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
}

TEST_CASE("repetition: simulation of paper 004 Fig. 7") {
  Loaded plugin;
  FakeContext context(2, grid_space());
  const auto r = plugin
                     .tuner({{"simulate", true},
                             {"points_per_dimension", std::int64_t{4}},
                             {"sim_pool_runs", std::int64_t{3}},
                             {"sim_searches", std::int64_t{200}},
                             {"sim_means", std::string("2, 5, 20")}})
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
  CHECK(context.evaluator_.runs == 8 * 3);
}
