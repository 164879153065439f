// DP-HyPO (Wang, Gao, Zhang, Su & Shen 2023, "DP-HyPO: An Adaptive Private Hyperparameter
// Optimization Framework", NeurIPS): private selection by random repetition (Papernot & Steinke
// 2022) whose runs draw their candidates adaptively.  T, the number of runs, is drawn once from a
// truncated negative binomial; run j draws its candidate from a distribution that the GP sampler
// (dp_hypo/sampler.hpp, Algorithm 3) computes from the runs before it, kept within [c, C] times a
// data-independent prior (the band, dp_hypo/band.hpp); only the best run is released.  The
// guarantee is the accountant's price of adaptive_repeat_and_select(base, E[T], η, C/c) (Theorems
// 1 and 2); with c = C = 1 the tuner is the repetition tuner's grid variant, draw for draw.
//
// The candidates are a finite set fixed before any run from the space and the seed only: the
// search space's grid, or scrambled Halton points of its unit cube (continuous and mixed spaces;
// the paper's App. C.2 discretises Λ the same way).  The prior gives each the same mass.  The base
// event is the worst over all of them (Lemma A.4 takes the supremum over λ), and every run's
// reported event is checked against them.
//
// What leaves the tuner: the best run's candidate, its noisy score and its model, under the
// guarantee.  T, the sequence of candidates, the sampling distributions, the GP and the other
// scores are not released: they go only into the sensitive per-run trials (opt-in), and nothing
// public (notes, progress) depends on them.  The sampler reads only released (noisy) scores.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dp_hypo/band.hpp"
#include "dp_hypo/sampler.hpp"
#include "dpareto/halton.hpp"
#include "dptune/dptune.hpp"
#include "dptune/helpers/events.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/helpers/tuning.hpp"
#include "repetition/selection.hpp"

namespace {

using dptune::DpEvent;
using dptune::InvalidArgument;
using dptune::Params;
using dptune::RepetitionDistribution;

using dptune::repetition::fmt;

/// The finite candidate set, its base event, and how each run's score is released.
struct Setup {
  std::vector<Params> candidates;
  std::vector<DpEvent> events;          // distinct events of the candidates
  DpEvent base;                         // one_of(events) composed with the scoring event
  dptune::repetition::Scoring scoring;  // how each run's score is released
  std::vector<std::string> notes;
};

class DpHypo final : public dptune::Tuner {
 public:
  explicit DpHypo(const Params& p)
      : distribution_(p.get_string("distribution")),
        eta_(p.get_double("eta")),
        mean_(p.get_double("mean")),
        gamma_(p.get_double("gamma")),
        lower_(p.get_double("lower")),
        upper_(p.get_double("upper")),
        candidates_(p.get_string("candidates")),
        points_(static_cast<std::size_t>(p.get_int("points_per_dimension"))),
        grid_points_(static_cast<std::size_t>(p.get_int("grid_points"))),
        private_scoring_(p.get_string("scoring") == "private"),
        score_epsilon_(p.get_double("score_epsilon")),
        secure_noise_(p.get_string("noise") == "secure") {
    options_.tau = p.get_double("tau");
    options_.beta = p.get_double("beta");
    options_.warm_start = static_cast<std::size_t>(p.get_int("warm_start"));
    if (mean_ > 0 && gamma_ > 0)
      throw InvalidArgument("dp_hypo: give mean or gamma, not both (mean = " + fmt(mean_) +
                            ", gamma = " + fmt(gamma_) + ")");
    if (mean_ > 0 && mean_ <= 1)
      throw InvalidArgument(
          "dp_hypo: the truncated negative binomial needs mean > 1 (T >= 1 always), got " +
          fmt(mean_));
  }

  // Private (Wang et al. 2023, Theorem 1): the guarantee covers the selected run's model.
  static dptune::TunerTraits traits() {
    return {.outputs = dptune::TunerOutputs::Private, .releases_model = true};
  }

  static dptune::ParamSchema schema();

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    Setup setup = candidates(context);
    scoring(context, setup);
    const RepetitionDistribution dist = distribution();
    const dptune::dp_hypo::Band band(
        std::vector<double>(setup.candidates.size(),
                            1.0 / static_cast<double>(setup.candidates.size())),
        lower_, upper_);
    // Density ratio 1: every run draws from the prior, which is repeat_and_select itself.
    const DpEvent total = band.ratio() == 1
                              ? DpEvent::repeat_and_select(setup.base, dist.mean(), dist.shape())
                              : DpEvent::adaptive_repeat_and_select(setup.base, dist.mean(),
                                                                    dist.shape(), band.ratio());
    const std::string why = context.accountant().unsupported_reason(total);
    if (!why.empty())
      throw dptune::ConfigError("dp_hypo: the accountant cannot price " + total.to_string() + ": " +
                                why);
    dptune::TuningResult result;
    result.notes = setup.notes;
    result.guarantee = context.accountant().epsilon(total, context.delta());
    result.event = total;
    result.notes.push_back(
        "T, the number of runs, is drawn once before any run from " + dist.describe() +
        "; each run draws its candidate from a distribution within [" + fmt(lower_) + ", " +
        fmt(upper_) +
        "] times the uniform prior over the candidates, adapted to the earlier "
        "runs' released scores (GP, UCB with tau " +
        fmt(options_.tau) + ", softmax with beta " + fmt(options_.beta) +
        "); guarantee: the accountant's cost of " + total.to_string() +
        " (Wang et al. 2023, Theorems 1 and 2); T, the runs, their candidates and times are not "
        "released");
    context.progress().start("dp_hypo", 0);
    context.progress().message(
        "dp_hypo: running; the number of runs is private, so no progress count is shown");
    const std::int64_t t = dist.sample(context.rng());  // never published
    std::vector<dptune::Evaluation> runs;
    std::vector<double> scores;
    if (band.ratio() == 1)
      prior_runs(context, setup, t, runs, scores);
    else
      adaptive_runs(context, setup, band, t, runs, scores);
    release(result, runs, scores);
    if (result.selected) result.selected->privacy = *result.guarantee;
    return result;
  }

 private:
  std::string distribution_;
  double eta_, mean_, gamma_, lower_, upper_;
  std::string candidates_;
  std::size_t points_, grid_points_;
  bool private_scoring_;
  double score_epsilon_;
  bool secure_noise_;
  dptune::dp_hypo::SamplerOptions options_;

  RepetitionDistribution distribution() const {
    return dptune::repetition::RunCountParams{distribution_, eta_, mean_, gamma_}.law();
  }

  // ---- the candidates ------------------------------------------------------------------------
  Setup candidates(dptune::TunerContext& context) const {
    const auto& space = context.space();
    Setup setup;
    if (candidates_ == "grid") {
      setup.candidates = space.grid(points_);
      setup.notes.push_back("candidates: the " + std::to_string(setup.candidates.size()) +
                            "-point grid of the search space, uniform prior");
    } else {
      // Scrambled Halton points of the unit cube, mapped into the space (log dimensions in log
      // space, categoricals by interval): drawn from the tuner's seed before any run.
      const Eigen::MatrixXd unit =
          dptune::dpareto::scrambled_halton(grid_points_, space.size(), context.rng());
      for (Eigen::Index i = 0; i < unit.rows(); ++i)
        setup.candidates.push_back(space.from_unit(
            std::vector<double>(unit.row(i).data(), unit.row(i).data() + unit.cols())));
      setup.notes.push_back("candidates: " + std::to_string(grid_points_) +
                            " scrambled Halton points of the search space (drawn from the seed "
                            "before any run), uniform prior");
    }
    std::vector<DpEvent> events;
    events.reserve(setup.candidates.size());
    for (const auto& c : setup.candidates)
      events.push_back(context.evaluator().event_of(c, dptune::DataScope::whole()));
    setup.events = dptune::distinct_events(events);
    // Halton candidates come from the seed: list their events in a fixed order (by text), so that
    // the declared event and the notes do not depend on the draw.
    if (candidates_ != "grid")
      std::sort(setup.events.begin(), setup.events.end(),
                [](const DpEvent& a, const DpEvent& b) { return a.to_string() < b.to_string(); });
    setup.base = dptune::one_of_distinct(setup.events);
    setup.notes.push_back("the base event is the worst of the candidates' " +
                          std::to_string(setup.events.size()) +
                          " distinct event(s) (Wang et al. 2023, Lemma A.4: the supremum over "
                          "the candidates)");
    return setup;
  }

  // ---- scoring: as the repetition tuner (Papernot & Steinke 2022, Sec. 3.1) --------------------
  void scoring(dptune::TunerContext& context, Setup& setup) const;

  static double released_score(dptune::TunerContext& context, const Setup& s,
                               const dptune::Evaluation& run) {
    return dptune::repetition::released_score(context, s.scoring, run);
  }

  static dptune::EvaluationRequest run_of(const Params& candidate) {
    return dptune::repetition::private_run(candidate, dptune::DataScope::whole(), true);
  }

  static void check_run_event(const dptune::Evaluation& e, const Setup& setup) {
    if (std::find(setup.events.begin(), setup.events.end(), e.event) == setup.events.end())
      throw dptune::PrivacyError(
          "dp_hypo: a run reported the event " + e.event.to_string() +
          ", which is not among the candidates' declared events; the trainer's event() and "
          "train() disagree, and no guarantee can be given");
  }

  // ---- the runs ------------------------------------------------------------------------------
  /// Density ratio 1: the repetition tuner's grid variant, in its order of draws (every candidate
  /// drawn uniformly before the first run, runs evaluated in chunks of 8, then every score's
  /// noise), so that a seed gives the same runs and the same release.
  void prior_runs(dptune::TunerContext& context, const Setup& setup, std::int64_t t,
                  std::vector<dptune::Evaluation>& runs, std::vector<double>& scores) const {
    std::vector<dptune::EvaluationRequest> requests;
    for (std::int64_t i = 0; i < t; ++i)
      requests.push_back(
          run_of(setup.candidates[dptune::uniform_index(context.rng(), setup.candidates.size())]));
    runs = dptune::repetition::evaluate_in_chunks(
        context, requests, [&](const dptune::Evaluation& e) { check_run_event(e, setup); });
    for (const auto& run : runs) scores.push_back(released_score(context, setup, run));
  }

  /// Density ratio > 1: one run at a time, each drawn from the sampler's distribution, which is
  /// checked against the band before the draw (AdaptiveSampler::next_distribution).
  void adaptive_runs(dptune::TunerContext& context, const Setup& setup,
                     const dptune::dp_hypo::Band& band, std::int64_t t,
                     std::vector<dptune::Evaluation>& runs, std::vector<double>& scores) const {
    Eigen::MatrixXd units(static_cast<Eigen::Index>(setup.candidates.size()),
                          static_cast<Eigen::Index>(context.space().size()));
    for (std::size_t i = 0; i < setup.candidates.size(); ++i) {
      const std::vector<double> u = context.space().to_unit(setup.candidates[i]);
      for (std::size_t d = 0; d < u.size(); ++d)
        units(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(d)) = u[d];
    }
    dptune::dp_hypo::AdaptiveSampler sampler(units, band, options_);
    for (std::int64_t j = 0; j < t; ++j) {
      const std::vector<double> f = sampler.next_distribution(context.rng());
      const std::size_t pick = dptune::dp_hypo::draw_index(f, context.rng());
      auto evaluated = context.evaluator().evaluate({run_of(setup.candidates[pick])});
      check_run_event(evaluated.front(), setup);
      runs.push_back(std::move(evaluated.front()));
      scores.push_back(released_score(context, setup, runs.back()));
      sampler.observe(pick, scores.back());
    }
  }

  /// Releases the run with the highest released score (ties: the earlier run), with no run index,
  /// run time or count; every run goes to the sensitive trials (opt-in).
  static void release(dptune::TuningResult& result, const std::vector<dptune::Evaluation>& runs,
                      const std::vector<double>& scores) {
    if (runs.empty()) return;  // T ≥ 1 for the truncated negative binomial
    dptune::repetition::release_run(result, runs, scores, dptune::repetition::best_run(scores));
  }
};

void DpHypo::scoring(dptune::TunerContext& context, Setup& setup) const {
  // The scoring event is stated for the trainers' relation, as the repetition tuner states it (so
  // that density ratio 1 gives its event bit for bit).
  setup.scoring = dptune::repetition::scoring(
      context, {private_scoring_, score_epsilon_, secure_noise_}, setup.base, "dp_hypo");
  const dptune::repetition::Scoring& s = setup.scoring;
  if (!s.noisy) {
    setup.notes.push_back(
        "scoring: public_validation: every run is scored exactly on the held-out split; assumes "
        "the validation split is public (declared by the user): its records are not protected by "
        "this guarantee");
    return;
  }
  setup.base = DpEvent::composed({setup.base, s.event});
  setup.notes.push_back(
      "scoring: private: every run's score on the held-out split (" +
      std::to_string(s.scored_rows) + " rows) gets Laplace noise of scale " + fmt(s.scale) +
      " (sensitivity " + fmt(s.sensitivity) + ": " + s.derivation + "; score_epsilon " +
      fmt(score_epsilon_) +
      "); the sampler and the selection see only the noisy scores, and the scoring event is "
      "composed into the base event");
}

dptune::ParamSchema DpHypo::schema() {
  dptune::ParamSchema schema =
      dptune::ParamSchema{}
          .add_string("distribution",
                      "number of runs T: logarithmic (eta = 0), geometric (eta = 1), "
                      "negative_binomial (any eta > -1); Poisson is not covered by the paper's "
                      "theorems")
          .one_of({"logarithmic", "geometric", "negative_binomial"})
          .default_to(std::string("geometric"));
  dptune::repetition::add_run_count_params(schema, "T");
  schema
      .add_float("upper",
                 "C: every sampling distribution is at most C times the prior (the paper's "
                 "experiments: 2); C = c = 1 is the repetition tuner")
      .min(1)
      .default_to(2.0)
      .add_float("lower", "c: every sampling distribution is at least c times the prior (0.75)")
      .min_exclusive(0)
      .max(1)
      .default_to(0.75)
      .add_string("candidates",
                  "grid: the search space's grid; space: grid_points scrambled Halton points of "
                  "the space (continuous and mixed spaces)")
      .one_of({"grid", "space"})
      .default_to(std::string("space"))
      .add_int("points_per_dimension", "grid points per continuous dimension (candidates: grid)")
      .min(1)
      .default_to(std::int64_t{5})
      .add_int("grid_points", "Halton candidates (candidates: space)")
      .min(1)
      .max(20000)
      .default_to(std::int64_t{1024})
      .add_float("tau", "UCB exploration weight: s = mean + tau * stddev (Algorithm 3)")
      .min(0)
      .default_to(0.1)
      .add_float("beta", "softmax inverse temperature: pi proportional to exp(beta * s)")
      .min(0)
      .default_to(1.0)
      .add_int("warm_start", "runs drawn from the prior before the GP is used (0: 2 x dimensions)")
      .min(0)
      .default_to(std::int64_t{0});
  dptune::repetition::add_scoring_params(schema);
  return schema;
}

}  // namespace

DPTUNE_PLUGIN(tuner, dp_hypo, DpHypo, "1.0.0",
              "DP-HyPO (Wang et al. 2023): private selection by random repetition whose runs draw "
              "their candidates adaptively (GP) within a density-ratio band of a prior")
