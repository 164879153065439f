// Utility-first private tuning with an ex-post guarantee (the idea of Ghazi, Kamath, Knop, Kumar,
// Manurangsi & Zhang 2025, "Private Hyperparameter Tuning with Ex-Post Guarantee", whose abstract
// only could be read; the construction and its analysis here are the PROJECT'S OWN, written out in
// docs/tuners/expost.md).
//
//  * The user gives a utility target u* and an ε cap.  A public ladder of privacy levels
//    ε_ℓ = ε_1 · ratio^(ℓ-1), each run once per candidate (level-major), is fixed before any data
//    is read: as many levels as fit the cap by basic composition.
//  * Step j trains its candidate privately at level ε_j (the trainer's target-ε parameter, or a
//    noise parameter calibrated to it) and scores it privately (Laplace, a share of ε_j); the walk
//    stops at the first step whose private score is ≥ u* and releases that step (index, model,
//    score); when none does, the best-scoring step (the cap's release).
//  * Ex ante (always): the released output is a post-processing of running every step, so the
//    accountant's price of composed(all steps) is an ordinary (ε, δ) guarantee, ≤ the cap; it is
//    what the tuner returns, and what the ledger is charged.
//  * Ex post (pure steps only): by the chain rule the release after t steps is
//    ℰ(t) = Σ_{j ≤ t} ε_j -ex-post private (Ligett et al. 2017's definition; < 2 ε_t for ratio 2).
//    It is reported as a DP output beside the cap.  With approximate-DP steps (DP-SGD) the
//    realised figure is reported labelled "not a guarantee".
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "dptune/dptune.hpp"
#include "dptune/helpers/format.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "expost/core.hpp"

namespace dptune::expost {
namespace {

using dptune::DpEvent;
using dptune::Params;

std::string fmt(double x, int digits = 6) { return dptune::significant_digits(x, digits); }

// The default ladder has six levels: ε_1 = cap / (Σ_{ℓ<6} ratio^ℓ) per candidate (63 for ratio 2).
constexpr std::size_t kDefaultLevels = 6;

class Expost final : public dptune::Tuner {
 public:
  explicit Expost(const Params& p) : p_(p) {
    if (p.get_string("privacy_parameter").empty())
      throw dptune::InvalidArgument(
          "expost: privacy_parameter must name the algorithm parameter that sets a step's "
          "privacy (e.g. target_epsilon)");
    const double start = p.get_double("epsilon_start"), cap = p.get_double("epsilon_cap");
    if (start > cap)
      throw dptune::InvalidArgument("expost: epsilon_start " + fmt(start) +
                                    " is above epsilon_cap " + fmt(cap) +
                                    ": not even one level fits the cap");
  }

  // Private: the guarantee covers the released step's model, trained on the whole training split,
  // its noisy score and the stopping step.
  static dptune::TunerTraits traits() {
    return {.outputs = dptune::TunerOutputs::Private, .releases_model = true};
  }

  static dptune::ParamSchema schema() {
    using std::int64_t;
    return dptune::ParamSchema{}
        .add_float("target",
                   "the utility u* to reach, on the utility's [0, 1] scale: the first step whose "
                   "private score is >= target is released")
        .min_exclusive(0)
        .max(1)
        .add_float("epsilon_cap",
                   "the cap on epsilon: the ladder's levels, composed, fit it (the ex-ante "
                   "guarantee, charged to the ledger)")
        .min_exclusive(0)
        .add_float("epsilon_start",
                   "epsilon of the first level (0: the cap / (candidates * (1 + ratio + ... + "
                   "ratio^5)), six levels filling the cap)")
        .min(0)
        .default_to(0.0)
        .add_float("ratio",
                   "ratio of successive levels (>= 2 gives the ex-post epsilon < 2 x the last "
                   "level's; any ratio >= 1 is sound)")
        .min(1)
        .default_to(2.0)
        .add_string("candidates",
                    "centre: one candidate, the centre of the search space; grid: the search "
                    "space grid, every candidate run at each level in row-major order")
        .one_of({"centre", "grid"})
        .default_to(std::string("centre"))
        .add_int("points_per_dimension", "grid points per float dimension (candidates: grid)")
        .min(1)
        .default_to(int64_t{3})
        .add_string("privacy_parameter",
                    "the algorithm parameter that sets a step's privacy (target_epsilon of the "
                    "bundled trainers, or a noise parameter with privacy_parameter_kind: noise)")
        .default_to(std::string("target_epsilon"))
        .add_string("privacy_parameter_kind",
                    "epsilon: the parameter is set to the step's training epsilon; noise: the "
                    "smallest value whose event prices at most that epsilon (calibrated)")
        .one_of({"epsilon", "noise"})
        .default_to(std::string("epsilon"))
        .add_string("scoring",
                    "private: Laplace noise on every step's held-out score, score_fraction of the "
                    "step's epsilon; public_validation: exact scores, the scored split declared "
                    "public (its records are then not protected)")
        .one_of({"private", "public_validation"})
        .default_to(std::string("private"))
        .add_float("score_fraction",
                   "scoring: private: the share of a step's epsilon for its score")
        .min_exclusive(0)
        .max_exclusive(1)
        .default_to(0.1)
        .add_string("noise",
                    "scoring noise: secure (exact discrete Laplace on a power-of-two grid) or fast "
                    "(floating-point inversion: insecure, Mironov 2012)")
        .one_of({"secure", "fast"})
        .default_to(std::string("secure"));
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    Run run(p_, context);
    return run.execute();
  }

 private:
  /// One run: what is fixed before any data is read (candidates, ladder, every step's event and
  /// the ex-ante price), the walk, and the release.
  class Run {
   public:
    Run(const Params& p, dptune::TunerContext& context)
        : p_(p),
          context_(context),
          private_scoring_(p.get_string("scoring") == "private"),
          fraction_(private_scoring_ ? p.get_double("score_fraction") : 0.0) {}

    dptune::TuningResult execute() {
      choose_candidates();
      fix_ladder();
      fix_scoring();
      fix_steps();
      price_ex_ante();
      // No count and no per-step line: where the walk is would show the stopping step before the
      // release states it.
      context_.progress().start("expost", 0);
      context_.progress().message("expost: walking the ladder");
      walk_ = walk_ladder(ladder_.steps(), p_.get_double("target"),
                          [this](std::size_t j) { return run_step(j); });
      return make_result();
    }

   private:
    void choose_candidates() {
      const auto& space = context_.space();
      if (p_.get_string("candidates") == "grid") {
        candidates_ = space.grid(static_cast<std::size_t>(p_.get_int("points_per_dimension")));
        how_ = "the search space grid (" + std::to_string(candidates_.size()) +
               " candidates, row-major)";
      } else {
        candidates_ = {space.from_unit(std::vector<double>(space.size(), 0.5))};
        how_ = "one candidate, the centre of the search space";
      }
      if (candidates_.empty()) throw dptune::ConfigError("expost: no candidates");
    }

    void fix_ladder() {
      const double cap = p_.get_double("epsilon_cap"), ratio = p_.get_double("ratio");
      double start = p_.get_double("epsilon_start");
      if (start == 0) start = default_epsilon_start(cap, ratio, candidates_.size(), kDefaultLevels);
      try {
        ladder_ = make_ladder(start, ratio, cap, candidates_.size());
      } catch (const dptune::InvalidArgument& e) {
        throw dptune::ConfigError(std::string(e.what()) +
                                  " (lower epsilon_start or raise "
                                  "epsilon_cap)");
      }
    }

    /// The score's Laplace noise: scale Δ / ε_score, Δ the utility's sensitivity to one scored
    /// record (from the host), as the repetition tuner scores (Papernot & Steinke 2022, Sec. 3.1).
    void fix_scoring() {
      if (!private_scoring_) return;
      const dptune::DataSizes sizes = context_.data_sizes();
      const dptune::UtilitySensitivity sens = context_.utility_sensitivity(sizes.scored);
      if (!sens.per_record)
        throw dptune::ConfigError(
            "expost: scoring: private (the default) needs the utility's sensitivity to one scored "
            "record, unknown for utility '" +
            sens.utility + "' (" + sens.derivation +
            "); use a utility with a known sensitivity, or scoring: public_validation");
      sensitivity_ = *sens.per_record;
      if (!(sensitivity_ > 0 && std::isfinite(sensitivity_)))
        throw dptune::PluginError("expost: the host gave utility sensitivity " + fmt(sensitivity_) +
                                  ", not a positive number");
      check_secure_scales();
      scoring_statement_ = "scoring: private: each step's held-out score (" +
                           std::to_string(sizes.scored) +
                           " rows) gets Laplace noise of scale sensitivity / (score_fraction x "
                           "the step's epsilon), sensitivity " +
                           fmt(sensitivity_) + " (" + sens.derivation + ")";
    }

    /// Every step's score noise on the exact grid sampler, asked before any step runs: a scale
    /// the sampler cannot hold (b above 2^28, dptune/helpers/grid_noise.hpp) is refused whatever
    /// the score, so here (the host's preflight meets it) and not after the ledger was charged.
    void check_secure_scales() const {
      if (p_.get_string("noise") == "fast") return;
      for (std::size_t j = 0; j < ladder_.steps(); ++j) {
        const double multiplier = 1 / (fraction_ * ladder_.step_epsilon(j));
        try {
          const double grid = dptune::laplace_grid(sensitivity_, multiplier, 1);
          (void)dptune::grid_laplace_scale(sensitivity_, multiplier, grid, 1);
        } catch (const dptune::Error& e) {
          throw dptune::ConfigError("expost: noise: secure: step " + std::to_string(j) +
                                    "'s score noise (epsilon " + fmt(ladder_.step_epsilon(j)) +
                                    " x score_fraction " + fmt(fraction_) +
                                    ") cannot be drawn by the exact grid sampler (" + e.what() +
                                    "); raise epsilon_start or score_fraction, or use noise: fast");
        }
      }
    }

    /// The candidate of step j with its privacy parameter, and the step's event (training, then
    /// the noisy score), all before any data is read.
    void fix_steps() {
      const std::string name = p_.get_string("privacy_parameter");
      const bool noise_kind = p_.get_string("privacy_parameter_kind") == "noise";
      for (std::size_t j = 0; j < ladder_.steps(); ++j) {
        const double step_eps = ladder_.step_epsilon(j);
        const double train_eps = step_eps * (1 - fraction_);
        Params candidate = candidates_[ladder_.candidate_of(j)];
        candidate.set(name, noise_kind ? calibrated_noise(candidate, name, train_eps) : train_eps);
        DpEvent train = context_.evaluator().event_of(candidate, dptune::DataScope::whole());
        step_trainings_.push_back(train);
        std::vector<DpEvent> parts{train};
        if (private_scoring_) {
          // DpEvent::laplace takes b / Δ = 1 / ε_score; stated for the training's relation (the
          // host's Δ bounds a replaced, added or removed record alike).
          const DpEvent leaf = DpEvent::laplace(1 / (fraction_ * step_eps));
          parts.push_back(dptune::neighbouring_of(train) == dptune::Neighbouring::ReplaceOne
                              ? DpEvent::replace_one(leaf)
                              : leaf);
        }
        step_candidates_.push_back(std::move(candidate));
        step_events_.push_back(DpEvent::composed(std::move(parts)));
      }
    }

    /// Privacy of an event: its pure ε when it is pure, else the accountant's ε at the
    /// pipeline's δ.
    double epsilon_of(const DpEvent& event) const {
      if (is_pure(event)) return pure_epsilon(event, dptune::neighbouring_of(event));
      return context_.accountant().epsilon(event, context_.delta()).epsilon;
    }

    /// The smallest value of the noise parameter whose training event costs ≤ target: bisection
    /// in log space (the cost falls as the noise grows), returning the bracket's upper end, so
    /// the result always meets the target.
    double calibrated_noise(Params candidate, const std::string& name, double target) const {
      auto cost = [&](double s) {
        candidate.set(name, s);
        return epsilon_of(context_.evaluator().event_of(candidate, dptune::DataScope::whole()));
      };
      double lo = 1e-6, hi = 1e8;
      if (cost(hi) > target)
        throw dptune::ConfigError("expost: no value of " + name + " up to " + fmt(hi) +
                                  " gives a step epsilon of " + fmt(target));
      for (int i = 0; i < 200 && hi / lo > 1 + 1e-10; ++i) {
        const double mid = std::sqrt(lo * hi);
        (cost(mid) <= target ? hi : lo) = mid;
      }
      return hi;
    }

    /// The ex-ante guarantee: the accountant's price of every step composed (the release is a
    /// post-processing of running them all); it must fit the cap.  For pure steps, each step's
    /// pure ε must be within its level (the chain-rule bound's premise).
    void price_ex_ante() {
      total_ = DpEvent::composed(step_events_);
      const std::string why = context_.accountant().unsupported_reason(total_);
      if (!why.empty())
        throw dptune::ConfigError("expost: the accountant cannot price the ladder: " + why);
      ex_ante_ = context_.accountant().epsilon(total_, context_.delta());
      const double cap = p_.get_double("epsilon_cap");
      if (ex_ante_.epsilon > cap * (1 + 1e-9))
        throw dptune::ConfigError(
            "expost: the accountant prices the whole ladder (" + std::to_string(ladder_.steps()) +
            " steps) at epsilon " + fmt(ex_ante_.epsilon) + " > epsilon_cap " + fmt(cap) +
            " (a step costs more than its level, or approximate-DP steps, each calibrated at "
            "delta, compose above the sum of their epsilons); lower epsilon_start or raise "
            "epsilon_cap");
      pure_ = is_pure(total_);
      if (!pure_) return;
      relation_ = dptune::neighbouring_of(total_);
      for (std::size_t j = 0; j < ladder_.steps(); ++j) {
        const double e = pure_epsilon(step_events_[j], relation_);
        if (e > ladder_.step_epsilon(j) * (1 + 1e-9))
          throw dptune::PluginError("expost: step " + std::to_string(j) + "'s event " +
                                    step_events_[j].to_string() + " is " + fmt(e) +
                                    "-DP, above its level " + fmt(ladder_.step_epsilon(j)));
        step_pure_.push_back(e);
      }
    }

    /// Trains and privately scores step j; returns its released (noisy) score.
    double run_step(std::size_t j) {
      dptune::EvaluationRequest request;
      request.candidate = step_candidates_[j];
      request.scope = dptune::DataScope::whole();
      request.private_run = true;
      request.repetitions = 1;
      request.keep_output = true;
      auto runs = context_.evaluator().evaluate({request});
      if (runs.size() != 1)
        throw dptune::PluginError("expost: the evaluator returned " + std::to_string(runs.size()) +
                                  " evaluations for 1 request");
      const DpEvent& expected = step_trainings_[j];
      if (!(runs[0].event == expected))
        throw dptune::PluginError("expost: step " + std::to_string(j) + "'s run reports event " +
                                  runs[0].event.to_string() + ", not event_of()'s " +
                                  expected.to_string());
      const double score = noisy(runs[0].utility_mean, ladder_.step_epsilon(j));
      runs_.push_back(std::move(runs[0]));
      released_scores_.push_back(score);
      return score;
    }

    double noisy(double value, double step_eps) {
      if (!private_scoring_) return value;
      const double multiplier = 1 / (fraction_ * step_eps);  // b / Δ
      if (p_.get_string("noise") == "fast")
        return value + dptune::laplace(context_.rng(), sensitivity_ * multiplier);
      const double values[] = {value};
      return dptune::grid_laplace(values, sensitivity_, multiplier,
                                  dptune::laplace_grid(sensitivity_, multiplier, 1),
                                  context_.rng())[0];
    }

    /// What ran: the steps 0..t-1, composed (the realised event).
    DpEvent realised_event() const {
      return DpEvent::composed(std::vector<DpEvent>(
          step_events_.begin(), step_events_.begin() + static_cast<long>(walk_.steps_run)));
    }

    dptune::TuningResult make_result() const {
      dptune::PrivacyGuarantee guarantee = ex_ante_;
      guarantee.derivation =
          "expost ladder: ex-ante guarantee of all " + std::to_string(ladder_.steps()) +
          " steps composed (the release is a post-processing of running them all); the ex-post "
          "epsilon, which depends on where the walk stopped, is reported as a DP output; event " +
          total_.to_string() + "; " + ex_ante_.derivation;
      dptune::TuningResult result;
      dptune::Trial selected;
      selected.id = walk_.released;
      selected.params = step_candidates_[walk_.released];
      selected.privacy = guarantee;
      selected.repetitions = 1;
      selected.utility_mean = selected.utility_min = selected.utility_max =
          released_scores_[walk_.released];
      result.selected = selected;
      result.guarantee = guarantee;
      result.event = total_;
      result.trials_sensitive = true;
      for (std::size_t j = 0; j < walk_.steps_run; ++j) {
        dptune::Trial t;
        t.id = j;
        t.params = step_candidates_[j];
        t.privacy = runs_[j].privacy;
        t.utility_mean = t.utility_min = t.utility_max = released_scores_[j];
        t.repetitions = 1;
        t.seconds = runs_[j].seconds;
        result.trials.push_back(std::move(t));
      }
      add_notes(result);
      return result;
    }

    std::string ladder_text() const {
      std::string levels;
      for (std::size_t l = 0; l < ladder_.level_epsilon.size(); ++l)
        levels += (l ? ", " : "") + fmt(ladder_.level_epsilon[l], 4);
      return std::to_string(ladder_.level_epsilon.size()) + " levels of epsilon (" + levels +
             "), ratio " + fmt(p_.get_double("ratio")) + ", each run for " + how_ + "; cap " +
             fmt(p_.get_double("epsilon_cap")) + "; target " + fmt(p_.get_double("target"));
    }

    void add_notes(dptune::TuningResult& result) const {
      const std::string dp = dptune::kDpOutputNote;
      const double cap = p_.get_double("epsilon_cap");
      const std::string stop =
          "stopped after step " + std::to_string(walk_.steps_run) + " of " +
          std::to_string(ladder_.steps()) +
          (walk_.met_target ? " (its private score met the target)"
                            : " (no private score met the target: the cap's best step released)");
      if (pure_) {
        const double realised = chain_rule_epsilon_of_run();
        result.notes.push_back(dp + "ex-post guarantee: epsilon = " + fmt(realised) +
                               " (depends on where the tuner stopped; pure, for " +
                               dptune::to_string(relation_) +
                               " neighbours; ex-ante cap epsilon = " + fmt(cap) +
                               ", ex-ante guarantee of the tuning " + fmt(ex_ante_.epsilon) +
                               ", what the ledger is charged for it); " + stop);
      } else {
        const dptune::PrivacyGuarantee realised =
            context_.accountant().epsilon(realised_event(), context_.delta());
        result.notes.push_back(
            dp + "realised epsilon = " + fmt(realised.epsilon) + " at delta " +
            fmt(realised.delta) +
            " of the steps run (NOT a guarantee: the steps are not pure DP, and the ex-post bound "
            "is proved for pure steps only; the guarantee is the ex-ante one: ex-ante cap epsilon "
            "= " +
            fmt(cap) + ", ex-ante guarantee of the tuning " + fmt(ex_ante_.epsilon) +
            ", what the ledger is charged for it); " + stop);
      }
      result.notes.push_back("expost ladder (public, fixed before any data is read): " +
                             ladder_text());
      result.notes.push_back(
          pure_ ? "ex-post: every step is pure DP, so the release after t steps is "
                  "(sum of the first t steps' epsilons)-ex-post private by the chain rule "
                  "(project's own derivation, docs/tuners/expost.md; Ghazi et al. 2025's theorem "
                  "was not read); the ledger is charged the ex-ante cap"
                : "ex-post: the steps are approximate DP (e.g. DP-SGD): no ex-post guarantee is "
                  "claimed; the realised epsilon is what the steps run would cost, for "
                  "information only; the guarantee and the ledger charge are the ex-ante cap");
      if (private_scoring_)
        result.notes.push_back(scoring_statement_);
      else
        result.notes.push_back(
            "scoring: public_validation: each step scored exactly; assumes the validation split "
            "is public (declared by the user): its records are not protected by this guarantee");
    }

    double chain_rule_epsilon_of_run() const {
      double sum = 0;
      for (std::size_t j = 0; j < walk_.steps_run; ++j) sum += step_pure_[j];
      return sum;
    }

    const Params& p_;
    dptune::TunerContext& context_;
    const bool private_scoring_;
    const double fraction_;
    double sensitivity_ = 0;
    std::string how_, scoring_statement_;
    std::vector<Params> candidates_;
    Ladder ladder_;
    std::vector<Params> step_candidates_;
    std::vector<DpEvent> step_trainings_, step_events_;  // step j's training; with its score
    std::vector<double> step_pure_;
    DpEvent total_;
    dptune::PrivacyGuarantee ex_ante_;
    bool pure_ = false;
    dptune::Neighbouring relation_ = dptune::Neighbouring::AddRemove;
    Walk walk_;
    std::vector<dptune::Evaluation> runs_;
    std::vector<double> released_scores_;
  };

  Params p_;
};

}  // namespace
}  // namespace dptune::expost

DPTUNE_PLUGIN(tuner, expost, dptune::expost::Expost, "1.0.0",
              "expost: utility-first private tuning on a doubling ladder of privacy levels, "
              "releasing the first model whose private score meets a target, with an ex-post "
              "guarantee for pure-DP steps")
