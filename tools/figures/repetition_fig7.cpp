// Papernot & Steinke 2022, Figure 7 on the pipeline's data: the best utility of a private search by
// random repetition against its privacy budget, for the logarithmic, η = 0.5, geometric and Poisson
// distributions of the number of runs K.  Unlike the other figures it trains (privately, through
// the host's evaluator), so it is a module the host loads, named by a pipeline's `tuner: use:
// repetition_fig7`; it is built beside dptune-figures (lib/dptune/figures), not among the plugins,
// and `dptune run` finds it only with `--plugin-path` (tools/figures/README.md).  It releases
// nothing private: every run is per-run output for trusted analysts.
//
// Every grid candidate is trained privately `pool_runs` times; then `searches` whole searches per
// (distribution, E[K]) are replayed from that pool: draw K, draw K (candidate, run) pairs, keep the
// best score.  The x value of each point is the accountant's RepeatAndSelect ε (Theorems 2 and 6)
// of the worst candidate's event.
#include <algorithm>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "dptune/dptune.hpp"
#include "dptune/helpers/events.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/helpers/tuning.hpp"

namespace {

using dptune::DpEvent;
using dptune::Params;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

// The distributions of Figure 7: the truncated negative binomial's η (Poisson: ∞).
struct Family {
  const char* name;
  double shape;
};
constexpr Family kFamilies[] = {{"logarithmic", 0.0},
                                {"negative_binomial_eta_0.5", 0.5},
                                {"geometric", 1.0},
                                {"poisson", kInf}};

class RepetitionFig7 final : public dptune::Tuner {
 public:
  explicit RepetitionFig7(const Params& p)
      : points_(static_cast<std::size_t>(p.get_int("points_per_dimension"))),
        pool_runs_(static_cast<std::size_t>(p.get_int("pool_runs"))),
        searches_(static_cast<std::size_t>(p.get_int("searches"))),
        means_(dptune::parse_number_list(p.get_string("means"), "repetition_fig7: means")) {
    for (double m : means_)
      if (!(m > 1))
        throw dptune::InvalidArgument("repetition_fig7: means must all be > 1, got " + fmt(m));
  }

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_int("points_per_dimension", "grid points per continuous dimension")
        .min(1)
        .default_to(std::int64_t{5})
        .add_int("pool_runs", "private runs per grid candidate")
        .min(1)
        .default_to(std::int64_t{16})
        .add_int("searches", "searches replayed per distribution and mean")
        .min(1)
        .default_to(std::int64_t{500})
        .add_string("means", "the E[K] values, comma-separated, each > 1")
        .default_to(std::string("1.5, 2, 3, 5, 10, 20, 50, 100"));
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    dptune::TuningResult result;
    result.trusted_analyst_only = true;
    result.trials_sensitive = true;
    const std::vector<Params> grid = context.space().grid(points_);
    const DpEvent base = base_event(context, grid, result.notes);
    std::vector<dptune::EvaluationRequest> requests;
    for (const auto& c : grid) {
      dptune::EvaluationRequest r;
      r.candidate = c;
      r.scope = dptune::DataScope::whole();
      r.private_run = true;
      r.repetitions = pool_runs_;
      r.keep_output = false;
      requests.push_back(std::move(r));
    }
    context.progress().start("repetition simulation pool", requests.size());
    const auto pool = context.evaluator().evaluate(requests);
    context.progress().advance(pool.size(), std::nullopt);
    double best_mean = 0;
    for (std::size_t i = 0; i < pool.size(); ++i) {
      result.trials.push_back(dptune::to_trial(pool[i], i));
      best_mean = std::max(best_mean, pool[i].utility_mean);
    }
    replay(context, base, pool, best_mean, result);
    return result;
  }

 private:
  std::size_t points_, pool_runs_, searches_;
  std::vector<double> means_;

  // One run of the base algorithm draws a grid candidate uniformly, so its event is the worst of
  // the candidates' distinct events (Papernot & Steinke 2022, Sec. 3).
  static DpEvent base_event(dptune::TunerContext& context, const std::vector<Params>& grid,
                            std::vector<std::string>& notes) {
    std::vector<DpEvent> events;
    events.reserve(grid.size());
    for (const auto& c : grid)
      events.push_back(context.evaluator().event_of(c, dptune::DataScope::whole()));
    const std::size_t distinct = dptune::distinct_events(events).size();
    notes.push_back("candidates: uniform over the " + std::to_string(grid.size()) +
                    "-point grid of the search space; the base event is the worst of its " +
                    std::to_string(distinct) + " distinct event(s)");
    DpEvent base = dptune::one_of_distinct(events);
    const std::string why = context.accountant().unsupported_reason(base);
    if (!why.empty())
      throw dptune::ConfigError(
          "repetition_fig7: the accountant cannot price one run of the base algorithm: " + why);
    return base;
  }

  // The mean best score of `searches_` searches replayed from the pool (K = 0 counts as 0).
  double replayed_best(dptune::TunerContext& context, const dptune::RepetitionDistribution& dist,
                       const std::vector<dptune::Evaluation>& pool, double& runs) const {
    double sum = 0;
    for (std::size_t t = 0; t < searches_; ++t) {
      const std::int64_t k = dist.sample(context.rng());
      runs += static_cast<double>(k);
      double best = 0;
      for (std::int64_t j = 0; j < k; ++j) {
        const auto& e = pool[dptune::uniform_index(context.rng(), pool.size())];
        best =
            std::max(best, e.utilities[dptune::uniform_index(context.rng(), e.utilities.size())]);
      }
      sum += best;
    }
    return sum / static_cast<double>(searches_);
  }

  void replay(dptune::TunerContext& context, const DpEvent& base,
              const std::vector<dptune::Evaluation>& pool, double best_mean,
              dptune::TuningResult& result) const {
    double x_min = kInf, x_max = 0;
    std::ostringstream table;
    table << "csv: distribution,mean,epsilon,mean_best_utility,runs_per_search";
    for (const auto& family : kFamilies) {
      dptune::Series s{std::string("fig7.") + family.name,
                       "epsilon at delta = " + fmt(context.delta()),
                       "mean best utility over " + std::to_string(searches_) + " searches",
                       {},
                       {}};
      for (double mean : means_) {
        const auto dist = dptune::RepetitionDistribution::from_mean(mean, family.shape);
        const double eps =
            context.accountant()
                .epsilon(DpEvent::repeat_and_select(base, mean, family.shape), context.delta())
                .epsilon;
        double runs = 0;
        const double best = replayed_best(context, dist, pool, runs);
        s.x.push_back(eps);
        s.y.push_back(best);
        x_min = std::min(x_min, eps);
        x_max = std::max(x_max, eps);
        table << "\ncsv: " << family.name << "," << fmt(mean) << "," << fmt(eps) << "," << fmt(best)
              << "," << fmt(runs / static_cast<double>(searches_));
      }
      result.series.push_back(std::move(s));
    }
    result.series.push_back({"fig7.non_private_best",
                             "epsilon",
                             "best candidate's mean utility",
                             {x_min, x_max},  // across the plotted budgets (a log axis)
                             {best_mean, best_mean}});
    result.notes.push_back(
        "simulation of Papernot & Steinke 2022, Fig. 7: every grid candidate was trained "
        "privately " +
        std::to_string(pool_runs_) +
        " times; each search draws K, then K (candidate, run) pairs from that pool and keeps the "
        "best score; " +
        std::to_string(searches_) +
        " searches per point; K = 0 counts as utility 0.  The epsilons are the accountant's "
        "RepeatAndSelect guarantees; the pool itself is per-run output for trusted analysts");
    result.notes.push_back(
        "the replayed searches select on exact scores, so their epsilons assume the validation "
        "split is public (as the repetition tuner's scoring: public_validation); a search with "
        "scoring: private costs more (dptune plan repetition --score-epsilon)");
    result.notes.push_back(table.str());
  }
};

}  // namespace

DPTUNE_PLUGIN(tuner, repetition_fig7, RepetitionFig7, "1.0.0",
              "Papernot & Steinke 2022 Figure 7 on the pipeline's data (dptune-figures; trusted "
              "analysts only): best utility of replayed repetition searches against their epsilon")
