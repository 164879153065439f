// What the private selection tuners that repeat a random number of private runs and release the
// best (Papernot & Steinke 2022; the tuners repetition, dp_hypo and subsampled) share: the law of
// the number of runs K read from the parameters, the Laplace noise on every run's held-out score
// (Sec. 3.1) fixed with its event before any run, the noisy score a run releases to the selection,
// the release of the best run with K hidden, and, for candidates drawn from the search space
// rather than its grid, the probe that finds the dimensions that change their cost.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dptune/dptune.hpp"
#include "dptune/helpers/repetition.hpp"

namespace dptune::repetition {

/// A number in the tuners' notes and messages: 6 significant digits.
std::string fmt(double x);

/// Declares the parameters of the truncated negative binomial law the tuners share (eta, mean,
/// gamma; RunCountParams reads them), `count` naming the number of runs in the texts (K or T).
void add_run_count_params(ParamSchema& schema, std::string_view count);

/// Declares the scoring parameters the tuners share: scoring (private or public_validation),
/// score_epsilon and noise, read by ScoringOptions.
void add_scoring_params(ParamSchema& schema);

/// The truncated negative binomial's parameters as the tuners read them.
struct RunCountParams {
  std::string distribution;  // logarithmic, geometric, negative_binomial, poisson (others: caller)
  double eta = 0.5, mean = 0, gamma = 0;

  /// Reads distribution, eta, mean and gamma.
  static RunCountParams read(const Params& p);
  /// K's law: Poisson(mean, 10 if unset), or the truncated negative binomial of shape 0
  /// (logarithmic), 1 (geometric) or eta, with the given mean, or the mean of the given γ, or 10.
  /// The sampler uses the accountant's own γ (solved from the mean), so the K that is drawn has
  /// exactly the distribution the guarantee is computed for.
  RepetitionDistribution law() const;
};

/// How the runs' scores are released: fixed, with its event, before any run.
struct Scoring {
  bool noisy = false;
  bool secure = true;      // grid release with exact discrete Laplace (noise: secure)
  double scale = 0;        // Laplace scale b = Δ / ε_score (noisy)
  double sensitivity = 0;  // Δ, the utility's sensitivity to one scored record (noisy)
  DpEvent event;           // laplace(b / Δ) = laplace(1 / ε_score), or NoOp
  std::size_t scored_rows = 0;
  std::string derivation;  // how the host derived Δ (noisy)
  std::string statement;   // what the guarantee assumes about the scored split (the tuner's words)
};

struct ScoringOptions {
  bool private_scoring = true;  // false: scoring: public_validation
  double score_epsilon = 0.1;
  bool secure_noise = true;
};

/// laplace(multiplier), stated for the relation of `trainer_base` (replace_one when the trainers'
/// guarantee is replace-one, e.g. sampling without replacement; add/remove otherwise).  The host's
/// Δ bounds a replaced, added or removed record alike, so the leaf holds for either relation:
/// stated for the trainers' relation, it composes with them without a group-privacy conversion.
DpEvent scoring_event(double multiplier, const DpEvent& trainer_base);

/// The scoring of `tuner`'s runs; refuses (ConfigError) a private scoring whose utility has no
/// known sensitivity, naming `tuner`.
Scoring scoring(TunerContext& context, const ScoringOptions& options, const DpEvent& trainer_base,
                std::string_view tuner);

/// The score a run releases to the selection: its (single) utility, noised when private.
double released_score(TunerContext& context, const Scoring& s, const Evaluation& run);

/// The events one candidate costs the tuner, in a fixed order (repetition: its training on the
/// whole data; subsampled: its training on the subsample, then its extrapolation's training on
/// the whole data).
using CandidateEvents = std::function<std::vector<DpEvent>(const Params& candidate)>;

/// Candidates drawn from the search space rather than its grid.  The base algorithm's privacy must
/// hold for every candidate it may draw (Papernot & Steinke 2022, Sec. 3), so the dimensions that
/// change a candidate's events must be finite: `relevant` enumerates their product, every other
/// dimension at the centre of the space.
struct SpaceCandidates {
  Params centre;                   // the data-independent default candidate
  std::vector<Params> relevant;    // the product of the privacy-relevant dimensions' values
  std::vector<std::string> names;  // the privacy-relevant dimensions
  std::string note;                // what the summary says about the draw
};

/// Finds which dimensions change `events` (each varied alone around the centre: all values of a
/// finite one, 17 probes of a continuous one) and enumerates the finite ones' product.  Refuses
/// (InvalidArgument, naming `tuner`) a continuous dimension that changes them, and a product of
/// more than 4096 combinations.
SpaceCandidates probe_space(const SearchSpace& space, const CandidateEvents& events,
                            std::string_view tuner);

/// Refuses (InvalidArgument, naming `tuner`) a drawn candidate whose i-th event is not among
/// `declared[i]`: the probe missed a dimension that changes the cost only with another.
void check_drawn(const Params& candidate, const std::vector<DpEvent>& events,
                 const std::vector<std::vector<DpEvent>>& declared, std::string_view tuner);

/// One private training of `candidate` on `scope`, scored (one training: R would cost R-fold).
EvaluationRequest private_run(const Params& candidate, const DataScope& scope, bool keep_output);

/// Evaluates every request, in order, in chunks of 8 (the evaluator may run a chunk's trainings in
/// parallel), calls `check` on each evaluation as it comes back (a tuner refuses a run whose event
/// is not the one it priced), and returns them in request order.
std::vector<Evaluation> evaluate_in_chunks(TunerContext& context,
                                           const std::vector<EvaluationRequest>& requests,
                                           const std::function<void(const Evaluation&)>& check);

/// The run with the highest released score; ties: the earlier run (a fixed order).
std::size_t best_run(const std::vector<double>& scores);

/// Releases run `id` (candidate, released score, model description) as the selected trial with no
/// run index, run time or count (Theorems 2 and 6 cover the best output with K hidden), and keeps
/// every run as a per-run result (keep_runs).
void release_run(TuningResult& result, const std::vector<Evaluation>& runs,
                 const std::vector<double>& scores, std::size_t id);

/// Per-run results (indices, run times, and the score each run released to the selection), in run
/// order: sensitive, written on opt-in only.  The host finds the released run's model by its
/// position here.
void keep_runs(TuningResult& result, const std::vector<Evaluation>& runs,
               const std::vector<double>& scores);

}  // namespace dptune::repetition
