// expost: utility-first private tuning with an ex-post guarantee.  The public ladder of privacy
// levels, the walk that stops at the first step whose private score meets the target, the
// chain-rule bound of the realised guarantee, and an exact instance (randomized response on each
// step) whose stopping distribution is known in closed form.  Plain functions on the SDK only, so
// that the plugin, tests/expost and tests/adversarial share one implementation.
//
// The construction and its analysis are the PROJECT'S OWN (docs/tuners/expost.md): Ghazi et al.
// 2025 ("Private Hyperparameter Tuning with Ex-Post Guarantee", arXiv 2508.15183) could be read in
// its abstract only.  The bound used is the chain rule: a transcript of adaptively run steps,
// step j being ε_j-DP for every fixed past, has a log likelihood ratio of at most Σ_j ε_j between
// neighbours, and the released (stop index, model, score) is a marginal of the transcript whose
// ratio bound depends on it through the stop index only (Ligett et al. 2017, Definition of ex-post
// privacy; the sum is the project's derivation).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "dptune/dp_event.hpp"

namespace dptune::expost {

/// The data-independent ladder: levels ε_ℓ = ε_1 · ratio^(ℓ-1), each run once per candidate
/// (level-major), as many levels as fit the cap by basic composition.
struct Ladder {
  std::vector<double> level_epsilon;  // ε_1 ≤ ε_2 ≤ ...
  std::size_t candidates = 1;         // steps per level
  std::size_t steps() const { return level_epsilon.size() * candidates; }
  std::size_t level_of(std::size_t step) const { return step / candidates; }
  std::size_t candidate_of(std::size_t step) const { return step % candidates; }
  double step_epsilon(std::size_t step) const { return level_epsilon.at(level_of(step)); }
};

/// ε_1 such that `levels` levels of `candidates` steps fill `cap` exactly:
/// cap / (candidates · Σ_{ℓ<levels} ratio^ℓ).  Throws InvalidArgument on a bad argument.
double default_epsilon_start(double cap, double ratio, std::size_t candidates, std::size_t levels);

/// The ladder of the largest number of levels k with candidates · Σ_{ℓ≤k} ε_ℓ ≤ cap (a relative
/// slack of 1e-12 absorbs the rounding of a cap filled exactly).  Throws InvalidArgument when not
/// even one level fits, or on a bad argument (ε_1 ≤ 0, ratio < 1, cap ≤ 0, no candidate).
Ladder make_ladder(double epsilon_start, double ratio, double cap, std::size_t candidates);

/// ℰ(t): the ex-post (chain-rule) bound after `steps_run` steps, Σ_{j < steps_run} ε_step(j).
/// The release after the cap is reached has ℰ(steps()).
double chain_rule_epsilon(const Ladder& ladder, std::size_t steps_run);

struct Walk {
  std::size_t steps_run = 0;   // steps whose score was read (1..steps)
  bool met_target = false;     // the last step run met the target
  std::size_t released = 0;    // the released step: the first that met the target, or the
                               // best-scoring one (the earliest on a tie) when none did
  std::vector<double> scores;  // the private score of every step run
};

/// Runs steps 0, 1, ... (score_of_step(j) trains and privately scores step j) until a score is ≥
/// target or every step has run.  Reads nothing but the released scores.
Walk walk_ladder(std::size_t steps, double target,
                 const std::function<double(std::size_t)>& score_of_step);

/// Whether every leaf of `event` is pure DP (PureDp, Laplace or NoOp) under Composed,
/// SelfComposed and ReplaceOne nodes only.  Anything else (Gaussian, approx_dp, zCDP, sampling,
/// selection events) is not pure.
bool is_pure(const DpEvent& event);
/// The pure ε of `event` for neighbouring relation `relation` by basic composition, its leaves
/// first restated for the relation (dptune::restated_for: group privacy of size 2 for an
/// add/remove leaf stated for replace-one).  Throws InvalidArgument unless is_pure(event).
double pure_epsilon(const DpEvent& event, Neighbouring relation);

/// The exact instance of the test suite (docs/tuners/expost.md, "Adversarial instances"): step j
/// releases one bit by ε_j-randomized response (the true bit with probability e^ε/(1+e^ε)); its
/// score is 1 when the released bit equals pass_bit[j], else 0; the target is 1.  Returns the
/// probability of each released outcome of the walk on a dataset whose bit is `true_bit`:
/// index t < k: stopped at step t; index k: no step passed (the cap's release).
std::vector<double> rr_ladder_outcomes(std::span<const double> step_epsilons,
                                       std::span<const int> pass_bit, int true_bit);

}  // namespace dptune::expost
