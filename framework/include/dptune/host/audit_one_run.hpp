// dptune host: `dptune audit trainer PIPELINE`, an empirical lower bound on a trainer's ε from ONE
// training run (Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS
// 2023: SNJ below).
//
// The game.  m canaries c_1..c_m; each S_i ∈ {−1, +1} is drawn uniformly and independently, and
// canary i is in the training data iff S_i = +1 (add/remove neighbours), or, for a trainer whose
// event is stated for replace-one neighbours (fixed n), slot i holds c_i when S_i = +1 and a twin
// canary c'_i otherwise.  The trainer trains once; every canary gets a score from the trained model
// (higher: more likely in); the auditor guesses "in" for the k highest scores and abstains on the
// rest; v of its r = k guesses are right.  If the trainer is (ε, δ)-DP for one canary's inclusion,
// v is at most a Binomial(r, e^ε / (1 + e^ε)) up to SNJ's δ term, so an unlikely v rejects (ε, δ).
// The largest rejected ε is a lower bound on the trainer's true ε, valid at the stated confidence.
//
// This header: the statistics of the one-run test (the game's analysis), which need no trainer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/rng.hpp"

namespace dptune::host {

// ---- SNJ's one-run test -------------------------------------------------------------------------

/// SNJ's p-value of r guesses of which v are right, out of m canaries, under the null "(ε, δ)-DP":
///   q = e^ε / (1 + e^ε),  β = P[Binomial(r, q) ≥ v],
///   α = max_{i = 1..v} P[v − i ≤ Binomial(r, q) < v] / i,
///   p = min(1, β + 2 m δ α),
/// rounded up (relative 1e-9) so that a rejection p ≤ level is never an artefact of rounding.  The
/// 2 m δ α term is SNJ's correction for approximate DP (kept as in their published code and
/// jax_privacy's; dropping it is unsound for δ > 0).  p = 1 when r = 0.
double one_run_p_value(std::size_t m, std::size_t r, std::size_t v, double epsilon, double delta);

/// The largest ε ≥ 0 that one_run_p_value rejects at `level` (p ≤ level), by bracketing and 100
/// bisection steps, returning the bracket's lower (rejected) end: conservative.  0 when even ε = 0
/// is not rejected; capped at 100.
double one_run_epsilon_lower_bound(std::size_t m, std::size_t r, std::size_t v, double delta,
                                   double level);

/// How many guesses the auditor makes.  A fixed k chosen before training costs nothing; otherwise
/// the public ladder k = ⌊m / 2^j⌋ (j = 1, 2, ... while k ≥ 4) is tried, each test at level / (its
/// length) (Bonferroni), and the largest bound is reported: valid whatever k turns out best.
std::vector<std::size_t> guess_ladder(std::size_t m);

// ---- Mahloujifar, Melis & Chaudhuri's f-DP test (ICML 2025) ------------------------------------

/// A hypothesis "M is f-DP" for the trade-off curve whose complement is
///   f̄(x) = min(1, min_j e^{ε_j} x + δ_j)
/// over the points (ε_j, δ_j): a mechanism that is (ε_j, δ_j)-DP for every j is f-DP for it
/// (MMC, Proposition 2.3, and the intersection of the regions).  One point is the (ε, δ)-DP
/// hypothesis; an accountant's ε(δ) at many δ is the claimed profile, stated from above (each
/// ε_j an upper bound), so the test of it stays valid.
struct ProfilePoint {
  double epsilon = 0, delta = 0;
};

/// MMC's Algorithm 3 (membership game, k = 2) with the two guards of jax_privacy's
/// implementation (h never decreases, r ≤ 1), which only make it more conservative: true when
/// `correct` right guesses out of `guesses` among m canaries are so unlikely under the hypothesis
/// that it is rejected at `level` (their Theorem 3.2: P[≥ correct right] ≤ level for every
/// f-DP mechanism).
bool fdp_one_run_rejects(const std::vector<ProfilePoint>& hypothesis, std::size_t m,
                         std::size_t guesses, std::size_t correct, double level);

/// The largest ε such that MMC's test rejects "(ε, δ)-DP" at `level` (bracketing and bisection,
/// the rejected end); 0 when ε = 0 is not rejected; capped at 100.
double fdp_one_run_epsilon_lower_bound(std::size_t m, std::size_t guesses, std::size_t correct,
                                       double delta, double level);

/// One guessing analysis of a score vector: canary i scored scores[i] (higher: more likely in),
/// included[i] its true S_i.
struct OneRunBound {
  std::size_t m = 0;
  std::size_t guesses = 0;  // r of the k that gave the reported bound
  std::size_t correct = 0;  // v
  double epsilon_lower = 0;
  double level = 0;       // the level of that one test (confidence 1 − level per test)
  std::size_t tests = 0;  // 1 for a fixed k, else the ladder's length
};
/// Ranks the canaries by score (ties broken uniformly at random with `rng`, before ranking: part of
/// the guess, so valid), guesses "in" for the top k of each k of `ks` (one-sided guessing), and
/// returns the largest lower bound over them, each test at confidence / |ks| (Bonferroni).
OneRunBound one_run_bound(const std::vector<double>& scores, const std::vector<bool>& included,
                          const std::vector<std::size_t>& ks, double delta, double confidence,
                          dptune::RandomBitGenerator& rng);

/// Canary indices from the highest score down, ties in uniformly random order (drawn with `rng`
/// before ranking, so the tie-break is part of the guess and independent of the inclusions).
std::vector<std::size_t> rank_canaries(const std::vector<double>& scores,
                                       dptune::RandomBitGenerator& rng);

/// Both analyses of one ranking, each at half the level (two looks at the same guesses,
/// Bonferroni), each over the k of `ks` (Bonferroni again):
///  * SNJ's (ε, δ) bound at the pipeline's δ;
///  * MMC's: the largest ε whose (ε, δ)-DP hypothesis Algorithm 3 rejects, and whether it rejects
///    the claimed profile itself.
struct OneRunAnalysis {
  OneRunBound snj;
  OneRunBound fdp;  // epsilon_lower: MMC's bound; guesses, correct: its best k
  bool fdp_rejects_claim = false;
  std::size_t rejecting_guesses = 0, rejecting_correct = 0;  // the k that rejected the claim
  double epsilon_lower() const { return std::max(snj.epsilon_lower, fdp.epsilon_lower); }
};
OneRunAnalysis analyse_one_run(const std::vector<std::size_t>& ranking,
                               const std::vector<bool>& included,
                               const std::vector<std::size_t>& ks, double delta, double confidence,
                               const std::vector<ProfilePoint>& claim);

/// The split strategy: the canaries are split into two halves uniformly at random (with `rng`,
/// independently of the scores and inclusions); on the first, the k of its ladder with the largest
/// Steinke et al. bound is chosen, using that half's inclusions; the same fraction of guesses is
/// then made on the second half, where both analyses run at the full level with m = its size and
/// no Bonferroni over k.  Valid because, with the first half's inclusions fixed, the trainer is
/// still (ε, δ)-DP in each canary of the second, and the choice depends on nothing else of it.
OneRunAnalysis analyse_one_run_split(const std::vector<double>& scores,
                                     const std::vector<bool>& included, double delta,
                                     double confidence, const std::vector<ProfilePoint>& claim,
                                     dptune::RandomBitGenerator& rng);

}  // namespace dptune::host
