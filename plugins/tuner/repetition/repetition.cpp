// Private hyperparameter selection by random repetition (Papernot & Steinke 2022; Liu &
// Talwar 2019).  The base algorithm Q draws a candidate uniformly at random, trains it privately
// with the pipeline's trainer and scores the model on held-out data; the tuner runs Q a random
// number of times K, drawn once before any run, and releases only the best run.  The guarantee
// is the accountant's cost of RepeatAndSelect(base, E[K], η) (Theorems 2 and 6), of the fixed-K
// composition (the naive baseline, §3.2), or, for the threshold variant, of RepeatUntilAccepted
// (Appendix C, Corollary 16).
//
// K is hidden: Theorems 2 and 6 and Corollary 16 cover the best output only, with the number of
// runs unobserved.  So nothing the tuner returns for publication (notes, `selected`, the
// guarantee's text, the progress display) depends on K, the run count, a run's index or the run
// times; per-run results go only into the trial list, which the host writes on opt-in only.
//
// The score is part of Q's output, and the held-out split is private data too: Papernot & Steinke
// 2022, Sec. 3.1, "this may require allocating some privacy budget to this evaluation" (footnote 2:
// the held-out records are fresh, so the budget need not be *split*, but they still need
// protecting). `scoring: private` (default) adds Laplace noise to every run's score and composes
// its event into the base; `scoring: public_validation` is the user's explicit declaration that the
// scored split is public, and the guarantee then says it assumes so.
//
// Why the base event is a one_of: Q picks its candidate without looking at the data, and its
// output includes the pick, so Q's RDP curve is at most the pointwise maximum of the candidates'
// curves.  That maximum must range over every candidate Q may draw, so a dimension that changes
// the privacy cost must be finite.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

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

/// The candidates Q may draw and the worst-case (base) event over them.
struct CandidateSet {
  bool from_grid = true;
  std::vector<Params> grid;     // from_grid
  std::vector<DpEvent> events;  // distinct events of the candidates Q may draw
  DpEvent base;                 // one_of(events), or the single event
  Params fallback;              // the data-independent default (K = 0, or ⊥)
  std::vector<std::string> notes;

  bool covers(const DpEvent& e) const {
    return std::find(events.begin(), events.end(), e) != events.end();
  }
};

class Repetition final : public dptune::Tuner {
 public:
  explicit Repetition(const Params& p)
      : distribution_(p.get_string("distribution")),
        eta_(p.get_double("eta")),
        mean_(p.get_double("mean")),
        gamma_(p.get_double("gamma")),
        runs_(p.get_int("runs")),
        threshold_(p.get_double("threshold")),
        stop_probability_(p.get_double("stop_probability")),
        candidates_(p.get_string("candidates")),
        points_(static_cast<std::size_t>(p.get_int("points_per_dimension"))),
        private_scoring_(p.get_string("scoring") == "private"),
        score_epsilon_(p.get_double("score_epsilon")),
        secure_noise_(!p.contains("noise") || p.get_string("noise") == "secure") {
    if (mean_ > 0 && gamma_ > 0)
      throw InvalidArgument("repetition: give mean or gamma, not both (mean = " + fmt(mean_) +
                            ", gamma = " + fmt(gamma_) + ")");
    if (distribution_ == "threshold" && !(threshold_ >= 0 && threshold_ <= 1))
      throw InvalidArgument(
          "repetition: distribution 'threshold' needs threshold, the score in [0, 1] a run must "
          "reach to be accepted");
    if (distribution_ == "poisson" && gamma_ > 0)
      throw InvalidArgument(
          "repetition: gamma belongs to the truncated negative binomial; give "
          "the Poisson distribution's mean");
    if (mean_ > 0 && mean_ <= 1 && distribution_ != "poisson" && distribution_ != "fixed" &&
        distribution_ != "threshold")
      throw InvalidArgument(
          "repetition: the truncated negative binomial needs mean > 1 (K >= 1 "
          "always), got " +
          fmt(mean_));
    // Finding 8 of every check that can abort must run before the first run, or the
    // abort itself tells which runs came before.  Drawn from the space, a candidate is checked
    // against the base event when drawn, so the threshold variant draws all of its attempts up
    // front; that needs a bounded number of attempts, i.e. stop_probability > 0.
    if (distribution_ == "threshold" && candidates_ == "space" && stop_probability_ == 0)
      throw InvalidArgument(
          "repetition: distribution 'threshold' with candidates: space needs stop_probability > "
          "0: every candidate the search may try is drawn and checked before the first run, "
          "which needs a bounded number of attempts (or use candidates: grid)");
  }

  // Private (Papernot & Steinke 2022): its guarantee covers the selected run's model, trained on
  // the whole training split.
  static dptune::TunerTraits traits() {
    return {.outputs = dptune::TunerOutputs::Private, .releases_model = true};
  }

  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema =
        dptune::ParamSchema{}
            .add_string(
                "distribution",
                "number of runs K: logarithmic (eta = 0), geometric (eta = 1, Liu-Talwar), "
                "negative_binomial (any eta > -1), poisson, fixed (naive k-fold composition, "
                "not recommended), threshold (run until a score reaches `threshold`)")
            .one_of(
                {"logarithmic", "geometric", "negative_binomial", "poisson", "fixed", "threshold"})
            .default_to(std::string("logarithmic"));
    dptune::repetition::add_run_count_params(schema, "K");
    schema.add_int("runs", "K for distribution: fixed")
        .min(1)
        .default_to(std::int64_t{10})
        .add_float("threshold",
                   "distribution: threshold: accept the first run scoring at least this")
        .default_to(-1.0)
        .add_float("stop_probability",
                   "distribution: threshold: before each run stop with the default output with "
                   "this probability; bounds the run time (mean at most 1/p runs) and the privacy "
                   "(Corollary 16); 0 only for a pure-DP base")
        .min(0)
        .max_exclusive(1)
        .default_to(0.01)
        .add_string("candidates",
                    "grid: draw uniformly from the search space's grid; space: draw from the "
                    "search space (dimensions that change the privacy cost must be finite)")
        .one_of({"grid", "space"})
        .default_to(std::string("grid"))
        .add_int("points_per_dimension", "grid points per continuous dimension (candidates: grid)")
        .min(1)
        .default_to(std::int64_t{5});
    dptune::repetition::add_scoring_params(schema);
    return schema;
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    CandidateSet set = candidate_set(context);
    // Everything that can refuse (the scored utility's sensitivity, the accountant) is settled
    // here, before the first run.
    const Scoring score = scoring(context, set.base);
    if (score.noisy) {
      set.base = DpEvent::composed({set.base, score.event});
      const std::string why = context.accountant().unsupported_reason(set.base);
      if (!why.empty())
        throw dptune::ConfigError(
            "repetition: the accountant cannot price one run of the base algorithm with its "
            "noisy score: " +
            why);
    }
    set.notes.push_back(score.statement);
    // The display shows no count: with total 0 the host draws no done/total line, and the
    // tuner never calls advance(), so neither the number of runs nor their pace is shown.
    context.progress().start("repetition", 0);
    context.progress().message(
        "repetition: running; the number of runs is private, so no progress count is shown");
    dptune::TuningResult result = distribution_ == "threshold"
                                      ? threshold_search(context, set, score)
                                      : repeated_search(context, set, score);
    result.guarantee->derivation += "; " + score.statement;
    if (result.selected) result.selected->privacy = *result.guarantee;
    return result;
  }

 private:
  std::string distribution_;
  double eta_, mean_, gamma_;
  std::int64_t runs_;
  double threshold_, stop_probability_;
  std::string candidates_;
  std::size_t points_;
  bool private_scoring_;
  double score_epsilon_;
  bool secure_noise_;

  // ---- scoring (the shared core: repetition/selection.hpp) ----------------------------------
  using Scoring = dptune::repetition::Scoring;

  Scoring scoring(dptune::TunerContext& context, const DpEvent& trainer_base) const {
    Scoring s = dptune::repetition::scoring(
        context, {private_scoring_, score_epsilon_, secure_noise_}, trainer_base, "repetition");
    if (!s.noisy) {
      s.statement =
          "scoring: public_validation: every run is scored exactly on the held-out split; assumes "
          "the validation split is public (declared by the user): its records are not protected "
          "by this guarantee";
      return s;
    }
    s.statement =
        "scoring: private: every run's score on the held-out split (" +
        std::to_string(s.scored_rows) + " rows) gets Laplace noise of scale " + fmt(s.scale) +
        " = " + fmt(s.sensitivity) + " / " + fmt(score_epsilon_) +
        " (the utility's sensitivity to one record: " + s.derivation + "; score_epsilon " +
        fmt(score_epsilon_) +
        "); selection is on the noisy scores, the released score is the noisy one, and "
        "the scoring event is composed into the base event (Papernot & Steinke 2022, Sec. 3.1)";
    return s;
  }

  static double released_score(dptune::TunerContext& context, const Scoring& s,
                               const dptune::Evaluation& run) {
    return dptune::repetition::released_score(context, s, run);
  }

  // ---- the candidates and the base event ---------------------------------------------------
  CandidateSet candidate_set(dptune::TunerContext& context) const {
    const auto& space = context.space();
    const auto& evaluator = context.evaluator();
    const auto whole = dptune::DataScope::whole();
    CandidateSet set;
    set.from_grid = candidates_ == "grid";
    if (set.from_grid) {
      set.grid = space.grid(points_);
      std::vector<DpEvent> grid_events;
      grid_events.reserve(set.grid.size());
      for (const auto& c : set.grid) grid_events.push_back(evaluator.event_of(c, whole));
      set.events = dptune::distinct_events(grid_events);
      set.fallback = set.grid.front();
      set.notes.push_back("candidates: uniform over the " + std::to_string(set.grid.size()) +
                          "-point grid of the search space; the base event is the worst of its " +
                          std::to_string(set.events.size()) + " distinct event(s)");
    } else {
      // The probe of the space and its privacy-relevant product: the shared core, as subsampled.
      const auto drawn = dptune::repetition::probe_space(
          space,
          [&](const Params& c) { return std::vector<DpEvent>{evaluator.event_of(c, whole)}; },
          "repetition");
      set.fallback = drawn.centre;
      std::vector<DpEvent> product_events;
      product_events.reserve(drawn.relevant.size());
      for (const auto& c : drawn.relevant) product_events.push_back(evaluator.event_of(c, whole));
      set.events = dptune::distinct_events(product_events);
      set.notes.push_back(drawn.note);
    }
    set.base = dptune::one_of_distinct(set.events);
    const std::string why = context.accountant().unsupported_reason(set.base);
    if (!why.empty())
      throw dptune::ConfigError(
          "repetition: the accountant cannot price one run of the base "
          "algorithm: " +
          why);
    return set;
  }

  Params draw(dptune::TunerContext& context, const CandidateSet& set) const {
    if (set.from_grid) return set.grid[dptune::uniform_index(context.rng(), set.grid.size())];
    return context.space().sample(context.rng());
  }

  /// All candidates are drawn (and checked) before any private run.
  std::vector<Params> draw_all(dptune::TunerContext& context, const CandidateSet& set,
                               std::int64_t count) const {
    std::vector<Params> out;
    for (std::int64_t i = 0; i < count; ++i) {
      Params c = draw(context, set);
      if (!set.from_grid)
        dptune::repetition::check_drawn(
            c, {context.evaluator().event_of(c, dptune::DataScope::whole())}, {set.events},
            "repetition");
      out.push_back(std::move(c));
    }
    return out;
  }

  static dptune::EvaluationRequest run_of(const Params& candidate) {
    return dptune::repetition::private_run(candidate, dptune::DataScope::whole(), true);
  }

  void check_run_event(const dptune::Evaluation& e, const CandidateSet& set) const {
    if (!set.covers(e.event))
      throw dptune::PrivacyError(
          "repetition: a run reported the event " + e.event.to_string() +
          ", which is not among the candidates' declared events; the trainer's event() and "
          "train() disagree, and no guarantee can be given");
  }

  /// K's distribution for the repeat-and-select variants (not fixed, not threshold).
  RepetitionDistribution distribution() const {
    return dptune::repetition::RunCountParams{distribution_, eta_, mean_, gamma_}.law();
  }

  static std::size_t best_run(const std::vector<double>& scores) {
    return dptune::repetition::best_run(scores);
  }
  static void release(dptune::TuningResult& result, const std::vector<dptune::Evaluation>& runs,
                      const std::vector<double>& scores, std::size_t id) {
    dptune::repetition::release_run(result, runs, scores, id);
  }
  static void keep_runs(dptune::TuningResult& result, const std::vector<dptune::Evaluation>& runs,
                        const std::vector<double>& scores) {
    dptune::repetition::keep_runs(result, runs, scores);
  }

  /// The output ⊥ (K = 0, or the threshold variant stopped): which output was released is itself
  /// the DP output, declared as such; it names no count.
  static std::string default_output_note(const CandidateSet& set) {
    return std::string(dptune::kDpOutputNote) +
           "the output is the data-independent default candidate " + set.fallback.to_string() +
           " (no run is released; Papernot & Steinke 2022, Theorem 6 and Appendix C: the default "
           "does not depend on the data)";
  }

  // ---- repeat and select (Theorems 2 and 6; fixed K: composition) ---------------------------
  dptune::TuningResult repeated_search(dptune::TunerContext& context, const CandidateSet& set,
                                       const Scoring& score) {
    dptune::TuningResult result;
    result.notes = set.notes;
    std::int64_t k = 0;
    DpEvent total;
    if (distribution_ == "fixed") {
      k = runs_;  // a configured, public number
      total = DpEvent::self_composed(set.base, k);
      result.notes.push_back(
          "K = " + std::to_string(k) + " fixed: the guarantee is the " + std::to_string(k) +
          "-fold composition of the base, which grows linearly with K; NOT RECOMMENDED "
          "(Papernot & Steinke 2022, Sec. 3.2 and Appendix D.1): a random K gives a bound "
          "almost independent of E[K]");
    } else {
      const auto dist = distribution();
      k = dist.sample(context.rng());  // drawn once, before any run; never published
      total = DpEvent::repeat_and_select(set.base, dist.mean(), dist.shape());
      result.notes.push_back(
          "K, the number of runs, is drawn once before any run from " + dist.describe() +
          "; the guarantee covers the best run with K hidden (Papernot & Steinke 2022, "
          "Theorems 2 and 6), so K, the runs and their times are not released (per-run results "
          "go to the sensitive trials file only on opt-in)");
    }
    result.guarantee = context.accountant().epsilon(total, context.delta());
    result.event = total;
    result.notes.push_back("guarantee: the accountant's cost of " + total.to_string());
    result.notes.push_back(
        "each run trains one candidate once on the whole training data and scores it on the "
        "held-out split; only the best run (candidate, score, model) is released");
    if (k == 0) {  // Theorem 6: K = 0 outputs the default; the output, not K, is published
      result.notes.push_back(default_output_note(set));
      return result;
    }
    const std::vector<Params> candidates = draw_all(context, set, k);
    std::vector<dptune::EvaluationRequest> requests;
    requests.reserve(candidates.size());
    for (const auto& c : candidates) requests.push_back(run_of(c));
    const std::vector<dptune::Evaluation> runs = dptune::repetition::evaluate_in_chunks(
        context, requests, [&](const dptune::Evaluation& e) { check_run_event(e, set); });
    std::vector<double> scores;
    scores.reserve(runs.size());
    for (const auto& run : runs) scores.push_back(released_score(context, score, run));
    release(result, runs, scores, best_run(scores));
    return result;
  }

  // ---- threshold variant (Appendix C, Corollary 16) ------------------------------------------
  /// The attempts of the threshold variant, decided without the data: before each attempt a stop
  /// coin (probability p), then a candidate.  Drawn from the space, candidates are checked against
  /// the base event, and a failed check aborts; so that no abort can follow a run (its timing
  /// would tell which runs failed the threshold), all attempts are drawn and checked before the
  /// first run.  Grid candidates need no check and are drawn as the search goes (p may be 0).
  class Attempts {
   public:
    Attempts(const Repetition& tuner, dptune::TunerContext& context, const CandidateSet& set)
        : tuner_(tuner), context_(context), set_(set) {
      if (set.from_grid) return;
      while (!dptune::bernoulli(context.rng(), tuner.stop_probability_))
        planned_.push_back(tuner.draw_all(context, set, 1).front());
    }
    /// The next attempt's candidate, or nothing when the stop coin came up.
    std::optional<Params> next() {
      if (!set_.from_grid) {
        if (at_ == planned_.size()) return std::nullopt;
        return planned_[at_++];
      }
      if (dptune::bernoulli(context_.rng(), tuner_.stop_probability_)) return std::nullopt;
      return tuner_.draw(context_, set_);
    }

   private:
    const Repetition& tuner_;
    dptune::TunerContext& context_;
    const CandidateSet& set_;
    std::vector<Params> planned_;
    std::size_t at_ = 0;
  };

  dptune::TuningResult threshold_search(dptune::TunerContext& context, const CandidateSet& set,
                                        const Scoring& score) {
    dptune::TuningResult result;
    result.notes = set.notes;
    const DpEvent total = DpEvent::repeat_until_accepted(set.base, stop_probability_);
    result.guarantee = context.accountant().epsilon(total, context.delta());
    result.event = total;
    result.notes.push_back(
        "threshold variant (Papernot & Steinke 2022, Appendix C; Liu & Talwar 2019): runs until a "
        "released score reaches " +
        fmt(threshold_) + "; before each run, stop with the default output with probability " +
        fmt(stop_probability_) + "; guarantee: the accountant's cost of " + total.to_string() +
        " (Corollary 16), which covers the accepted run with the number of attempts hidden, so "
        "neither it nor the runs' times are released");
    if (stop_probability_ == 0)
      result.notes.push_back(
          "stop_probability 0: the run time is unbounded when no candidate "
          "reaches the threshold");
    Attempts attempts(*this, context, set);  // every check that can abort happens here
    std::vector<dptune::Evaluation> runs;
    std::vector<double> scores;
    // Runs are evaluated in batches for parallelism; the first accepted run in order is released
    // and the rest of its batch is discarded unseen (no score drawn), so the output is that of the
    // sequential algorithm.
    constexpr std::size_t kBatch = 4;
    for (;;) {
      std::vector<dptune::EvaluationRequest> batch;
      bool stopped = false;
      while (batch.size() < kBatch) {
        const std::optional<Params> candidate = attempts.next();
        if (!candidate) {
          stopped = true;
          break;
        }
        batch.push_back(run_of(*candidate));
      }
      for (auto& e : context.evaluator().evaluate(batch)) {
        check_run_event(e, set);
        runs.push_back(std::move(e));
        scores.push_back(released_score(context, score, runs.back()));
        if (scores.back() >= threshold_) {
          release(result, runs, scores, runs.size() - 1);
          break;
        }
      }
      if (result.selected) break;
      if (stopped) {
        result.notes.push_back(default_output_note(set) +
                               "; no run reached the threshold before the stop coin");
        keep_runs(result, runs, scores);
        break;
      }
    }
    return result;
  }
};

}  // namespace

DPTUNE_PLUGIN(tuner, repetition, Repetition, "1.0.0",
              "private selection by random repetition (Papernot & Steinke 2022; Liu & Talwar "
              "2019): releases the best of K private runs, K random")
