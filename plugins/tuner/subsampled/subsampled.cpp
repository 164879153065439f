// Tuning on a subsample, extrapolated to the full data (after Koskela & Kulkarni 2023, NeurIPS,
// arXiv 2301.11989; the final model on the full data, not on the rest of it).  Papernot & Steinke
// 2022's random-stopping tuner runs on a subsample of public size m = ⌊qn⌋, for any public
// q in (0, 1], that the data layout draws uniformly without replacement from its own seed, without
// looking at the data (DataScope::subsample); the best run's
// candidate is mapped to the full data by a public rule (subsampled/subsample.hpp: the named
// hyperparameters scale with n/m, the others are kept); one model is trained with it on the full
// data, scored, and released.  Nothing of the tuning itself is released (K, the runs, the best
// run's candidate before extrapolation).
//
// The guarantee is the smallest of three sound prices of composed([tuning, final])
// (subsampled::prices, docs/tuners/subsampled.md): the tuning amplified as a whole by sampling
// without replacement, in RDP (Wang, Balle & Kasiviswanathan 2019, Theorem 9) or as (ε, δ) from
// its privacy profile (Balle, Barthe & Gaboardi 2018), or not amplified at all; a record of the
// scored split, which every run's score sees, priced apart.  The final training is priced at the
// worst of the extrapolated candidates, since the one chosen depends on the data.  The paper's own
// bounds (its Equations (3.1) and (3.2)) could not be read and are not used.
#include <algorithm>
#include <string>
#include <vector>

#include "dptune/dptune.hpp"
#include "dptune/helpers/events.hpp"
#include "dptune/helpers/repetition.hpp"
#include "repetition/selection.hpp"
#include "subsampled/subsample.hpp"

namespace {

using dptune::DpEvent;
using dptune::Params;
namespace core = dptune::repetition;
namespace sub = dptune::subsampled;

using dptune::repetition::fmt;

/// Everything fixed before the first run: the candidates, their events on the subsample and,
/// extrapolated, on the full data, the scoring, and the event of the whole procedure.
struct Plan {
  sub::Extrapolation rule;
  dptune::DataScope scope;  // the subsample
  bool from_grid = true;
  std::vector<Params> grid;  // from_grid: the grid; else the privacy-relevant product (priced)
  Params fallback;           // the data-independent candidate when K = 0
  std::string candidates_note;
  std::vector<DpEvent> tuning_events, final_events;  // distinct
  core::Scoring scoring;
  DpEvent final_score;              // the final score's event (scoring: private)
  std::vector<sub::Priced> prices;  // every sound price of the whole procedure
  sub::Priced chosen;               // the smallest
};

class Subsampled final : public dptune::Tuner {
 public:
  explicit Subsampled(const Params& p)
      : run_count_(core::RunCountParams::read(p)),
        fraction_(p.get_double("fraction")),
        scaled_(sub::split_names(p.get_string("scale_with_data"))),
        from_grid_(p.get_string("candidates") == "grid"),
        points_(static_cast<std::size_t>(p.get_int("points_per_dimension"))),
        scoring_options_{p.get_string("scoring") == "private", p.get_double("score_epsilon"),
                         p.get_string("noise") == "secure"} {
    if (run_count_.mean > 0 && run_count_.gamma > 0)
      throw dptune::InvalidArgument("subsampled: give mean or gamma, not both");
    if (run_count_.distribution == "poisson" && run_count_.gamma > 0)
      throw dptune::InvalidArgument(
          "subsampled: gamma belongs to the truncated negative binomial; give the Poisson "
          "distribution's mean");
    if (run_count_.mean > 0 && run_count_.mean <= 1 && run_count_.distribution != "poisson")
      throw dptune::InvalidArgument(
          "subsampled: the truncated negative binomial needs mean > 1 (K >= 1 always), got " +
          fmt(run_count_.mean));
    sub::SubsampleSize::check_fraction(fraction_);
  }

  // Private: the guarantee covers the final model trained on the full training split, its
  // extrapolated candidate and its score.  It evaluates on the whole data and on the subsample
  // (DataScope::subsample).
  static dptune::TunerTraits traits() {
    return {.outputs = dptune::TunerOutputs::Private,
            .releases_model = true,
            .scopes = {dptune::DataScope::Kind::Whole, dptune::DataScope::Kind::Subsample}};
  }

  static dptune::ParamSchema schema();

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    const Plan plan = make_plan(context);  // everything that can refuse, before any run
    dptune::TuningResult result;
    notes(context, plan, result);
    result.guarantee = plan.chosen.guarantee;
    result.event = plan.chosen.event;
    context.progress().start("subsampled", 0);
    context.progress().message(
        "subsampled: tuning on the subsample; the number of runs is private, so no progress "
        "count is shown");
    const dptune::RepetitionDistribution law = run_count_.law();
    const std::int64_t k = law.sample(context.rng());  // drawn once, before any run; never shown
    std::vector<dptune::Evaluation> runs;
    std::vector<double> scores;
    tuning_runs(context, plan, k, runs, scores);
    const Params tuned =
        runs.empty() ? plan.fallback : runs[core::best_run(scores)].request.candidate;
    release_final(context, plan, plan.rule.apply(tuned), runs, scores, result);
    result.selected->privacy = *result.guarantee;
    return result;
  }

 private:
  core::RunCountParams run_count_;
  double fraction_;
  std::vector<std::string> scaled_;
  bool from_grid_;
  std::size_t points_;
  core::ScoringOptions scoring_options_;

  Plan make_plan(dptune::TunerContext& context) const {
    const dptune::DataSizes sizes = context.data_sizes();
    if (sizes.varies_per_run)
      throw dptune::ConfigError(
          "subsampled: the data are drawn afresh for every run (a synthetic workload); tuning on "
          "a subsample needs one training split to draw the subsample from");
    Plan plan;
    try {
      plan.rule = {scaled_, sub::SubsampleSize::of(sizes.train, fraction_)};
    } catch (const dptune::InvalidArgument& e) {
      throw dptune::ConfigError(e.what());  // "fraction: ...": the host points at the parameter
    }
    plan.scope = plan.rule.size.whole() ? dptune::DataScope::whole()
                                        : dptune::DataScope::subsample(plan.rule.size.sample_rows);
    const auto& evaluator = context.evaluator();
    candidates(context, plan);
    std::vector<DpEvent> tuning, final;
    for (const auto& c : plan.grid) {
      tuning.push_back(evaluator.event_of(c, plan.scope));
      final.push_back(evaluator.event_of(plan.rule.apply(c), dptune::DataScope::whole()));
    }
    plan.tuning_events = dptune::distinct_events(tuning);
    plan.final_events = dptune::distinct_events(final);
    const DpEvent tuning_base = dptune::one_of_distinct(plan.tuning_events);
    const DpEvent final_base = dptune::one_of_distinct(plan.final_events);
    plan.scoring = core::scoring(context, scoring_options_, tuning_base, "subsampled");
    const DpEvent* score = nullptr;
    const DpEvent* final_score = nullptr;
    DpEvent base = tuning_base;
    if (plan.scoring.noisy) {
      base = DpEvent::composed({tuning_base, plan.scoring.event});
      score = &plan.scoring.event;
      plan.final_score =
          core::scoring_event(plan.scoring.scale / plan.scoring.sensitivity, final_base);
      final_score = &plan.final_score;
    }
    const dptune::RepetitionDistribution law = run_count_.law();
    const sub::Procedure procedure{
        base,           score,      sub::final_event(final_base, final_score),
        plan.rule.size, law.mean(), law.shape()};
    try {
      plan.prices = sub::prices(context.accountant(), context.delta(), procedure);
    } catch (const dptune::PrivacyError& e) {
      throw dptune::ConfigError(
          std::string("subsampled: no price of the tuning and the final training: ") + e.what() +
          (plan.rule.size.whole() || std::string(e.what()).find("add/remove") == std::string::npos
               ? std::string()
               : std::string("; with fraction < 1 the guarantee must hold for replace-one "
                             "neighbours, so the trainer must state its event for them (DP-SGD: "
                             "sampling: without_replacement, the default, not poisson)")));
    }
    plan.chosen = plan.prices.front();
    for (const auto& p : plan.prices)
      if (p.guarantee.epsilon < plan.chosen.guarantee.epsilon) plan.chosen = p;
    return plan;
  }

  /// Public notes: functions of the configuration and the public sizes only.
  void notes(dptune::TunerContext& context, const Plan& plan, dptune::TuningResult& result) const {
    const sub::SubsampleSize& size = plan.rule.size;
    const dptune::RepetitionDistribution law = run_count_.law();
    result.notes.push_back(
        "subsample: " + std::to_string(size.sample_rows) + " of the " +
        std::to_string(size.full_rows) + " training rows (fraction " + fmt(size.fraction) +
        ", m = floor(q n)): drawn uniformly without replacement by the data layout from its own "
        "seed, never from the data, of a public size; runs on it are scored on the whole "
        "held-out split");
    result.notes.push_back(
        "tuning: K runs on the subsample, K drawn once before any run from " + law.describe() +
        ", each a candidate drawn " +
        (plan.from_grid ? "uniformly from the " + std::to_string(plan.grid.size()) +
                              "-point grid of the search space"
                        : std::string("from the search space")) +
        "; K, the runs and the best run's candidate are not released (Papernot & Steinke 2022, "
        "Theorems 2 and 6)");
    if (!plan.candidates_note.empty()) result.notes.push_back(plan.candidates_note);
    for (const auto& name : plan.rule.not_in(plan.fallback))
      result.notes.push_back(
          "scale_with_data: '" + name +
          "' is not a dimension of the search space: the final training keeps the value the "
          "pipeline fixes (its privacy is priced at its own event whatever the value)");
    result.notes.push_back(plan.rule.describe() +
                           "; one model is trained with the extrapolated candidate on the full "
                           "training split, scored on the held-out split, and released");
    if (plan.scoring.noisy)
      result.notes.push_back(
          "scoring: private: every tuning run's score and the final model's score on the "
          "held-out split (" +
          std::to_string(plan.scoring.scored_rows) + " rows) get Laplace noise of scale " +
          fmt(plan.scoring.scale) + " (sensitivity " + fmt(plan.scoring.sensitivity) + ": " +
          plan.scoring.derivation + "; score_epsilon " + fmt(scoring_options_.score_epsilon) +
          "); the selection and the release see only the noisy scores");
    else
      result.notes.push_back(
          "scoring: public_validation: scores are exact; assumes the validation split is public "
          "(declared by the user): its records are not protected by this guarantee");
    std::string routes;
    for (const auto& p : plan.prices)
      routes += (routes.empty() ? "" : ", ") + p.route + " " + fmt(p.guarantee.epsilon);
    result.notes.push_back(
        "guarantee: the smallest of the prices of the tuning composed with the final training at "
        "the worst extrapolated candidate (epsilon at delta " +
        fmt(context.delta()) + ": " + routes + "; docs/tuners/subsampled.md): the " +
        plan.chosen.route + " route, the accountant's cost of " + plan.chosen.event.to_string());
    const sub::Compute c = sub::expected_compute(size, law.mean());
    result.notes.push_back("compute (expected trainings x rows, from E[K] = " + fmt(law.mean()) +
                           "): tuning " + fmt(c.tuning) + " + final " + fmt(c.final) + " = " +
                           fmt(c.total()) + ", against " + fmt(c.full_data_repetition) +
                           " for the repetition tuner on the full data: " + fmt(c.saved()) +
                           " saved (" + fmt(100 * c.saved() / c.full_data_repetition) + " %)");
  }

  void tuning_runs(dptune::TunerContext& context, const Plan& plan, std::int64_t k,
                   std::vector<dptune::Evaluation>& runs, std::vector<double>& scores) const {
    // Every candidate is drawn (and, drawn from the space, checked) before any run.
    std::vector<dptune::EvaluationRequest> requests;
    for (std::int64_t i = 0; i < k; ++i) {
      Params c = plan.from_grid ? plan.grid[dptune::uniform_index(context.rng(), plan.grid.size())]
                                : context.space().sample(context.rng());
      if (!plan.from_grid)
        core::check_drawn(c, events_of(context, plan, c), {plan.tuning_events, plan.final_events},
                          "subsampled");
      requests.push_back(core::private_run(c, plan.scope, false));
    }
    runs = core::evaluate_in_chunks(context, requests, [&](const dptune::Evaluation& e) {
      check_event(e, plan.tuning_events);
    });
    for (const auto& run : runs) scores.push_back(core::released_score(context, plan.scoring, run));
  }

  /// Trains `candidate` on the full data, scores it, and releases it (candidate, score, model).
  void release_final(dptune::TunerContext& context, const Plan& plan, const Params& candidate,
                     std::vector<dptune::Evaluation>& runs, std::vector<double>& scores,
                     dptune::TuningResult& result) const {
    auto final = context.evaluator().evaluate(
        {core::private_run(candidate, dptune::DataScope::whole(), true)});
    check_event(final.front(), plan.final_events);
    const double score = core::released_score(context, plan.scoring, final.front());
    runs.push_back(std::move(final.front()));
    scores.push_back(score);
    // The released trial is the final run: the per-run trials (sensitive, opt-in) list the tuning
    // runs first, then it.
    core::release_run(result, runs, scores, runs.size() - 1);
  }

  /// A candidate's events: its training on the subsample, its extrapolation's on the full data.
  static std::vector<DpEvent> events_of(dptune::TunerContext& context, const Plan& plan,
                                        const Params& c) {
    return {context.evaluator().event_of(c, plan.scope),
            context.evaluator().event_of(plan.rule.apply(c), dptune::DataScope::whole())};
  }

  /// The candidates the tuning may draw, and those its price ranges over: the grid, or the
  /// search space with its privacy-relevant dimensions (for the subsample's training or the
  /// extrapolated final one) enumerated by the shared core, as the repetition tuner does.
  void candidates(dptune::TunerContext& context, Plan& plan) const {
    plan.from_grid = from_grid_;
    if (from_grid_) {
      plan.grid = context.space().grid(points_);
      plan.fallback = plan.grid.front();
      return;  // the tuning note names the grid
    }
    const auto drawn = core::probe_space(
        context.space(), [&](const Params& c) { return events_of(context, plan, c); },
        "subsampled");
    plan.grid = drawn.relevant;
    plan.fallback = drawn.centre;
    plan.candidates_note = drawn.note + "; the extrapolation rule is applied to the drawn values";
  }

  static void check_event(const dptune::Evaluation& e, const std::vector<DpEvent>& declared) {
    if (std::find(declared.begin(), declared.end(), e.event) == declared.end())
      throw dptune::PrivacyError(
          "subsampled: a run reported the event " + e.event.to_string() +
          ", which is not among the candidates' declared events; the trainer's event() and "
          "train() disagree, and no guarantee can be given");
  }
};

dptune::ParamSchema Subsampled::schema() {
  dptune::ParamSchema schema =
      dptune::ParamSchema{}
          .add_string("distribution",
                      "number of tuning runs K on the subsample: logarithmic (eta = 0), geometric "
                      "(eta = 1), negative_binomial (any eta > -1), poisson")
          .one_of({"logarithmic", "geometric", "negative_binomial", "poisson"})
          .default_to(std::string("logarithmic"));
  dptune::repetition::add_run_count_params(schema, "K");
  schema
      .add_float("fraction",
                 "q: the tuning subsample is m = floor(q n) of the n training rows, drawn "
                 "uniformly without replacement by the data layout from its own seed (1: tune "
                 "on the full data)")
      .min_exclusive(0)
      .max(1)
      .default_to(0.1)
      .add_string("scale_with_data",
                  "comma-separated hyperparameters multiplied by n/m when the tuned candidate is "
                  "extrapolated to the full data (integers rounded); every other one is kept "
                  "(docs/tuners/subsampled.md: the rules for DP-SGD)")
      .default_to(std::string("lot_size"))
      .add_string("candidates",
                  "grid: draw uniformly from the search space's grid; space: draw from the "
                  "search space itself (continuous values; the dimensions that change the "
                  "privacy cost must be finite)")
      .one_of({"grid", "space"})
      .default_to(std::string("grid"))
      .add_int("points_per_dimension", "grid points per continuous dimension (candidates: grid)")
      .min(1)
      .default_to(std::int64_t{5});
  dptune::repetition::add_scoring_params(schema);
  return schema;
}

}  // namespace

DPTUNE_PLUGIN(tuner, subsampled, Subsampled, "1.0.0",
              "tuning on a subsample, extrapolated to the full data (after Koskela & Kulkarni "
              "2023): repetition's random-stopping tuner on a public-size subsample, one final "
              "training on the full data")
