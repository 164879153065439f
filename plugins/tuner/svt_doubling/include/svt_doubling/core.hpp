// SVT doubling (Ding et al., Algorithm 1, with Ding & Wu's `u >= 1` termination break):
// the selection loop, its iteration bounds and its noise scales.  Plain functions on the SDK only,
// so that the tuner plugin, tests/svt_doubling, the benchmark and dptune-figures (the simulation of
// Ding et al. §4.2, tools/figures) share exactly one implementation.  The noise is injected
// (two callables), so a test can zero it (Ding et al. Definition 5, the "non-randomized world") or
// script it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dptune {
class Params;
class RandomBitGenerator;
class SearchSpace;
class TunerContext;
}  // namespace dptune

namespace dptune::svt_doubling {

/// One draw of the threshold noise Lap(2Δ/ϵ) or of a query noise Lap(4Δ/ϵ).
using NoiseFn = std::function<double()>;

struct LoopOptions {
  double u0 = 0;          // utility lower bound u0 in [0, 1)
  double g = 0.01;        // utility granularity g in (0, 1)
  std::size_t t_max = 0;  // iteration cap (>= 1)
  /// Record s* after every iteration (for the fidelity-over-iterations curve, Ding et al. Fig. 3).
  bool trace = false;
  /// > 0 (a power of two): the secure path.  Every utility and every threshold level is rounded
  /// to a multiple of noise_grid before its noise is added, and the noise functions return exact
  /// multiples of it, so each sum is an integer number of grid steps held exactly in a double and
  /// every comparison is exact (no floating-point rounding can depend on the private value).
  double noise_grid = 0;
};

enum class Stop {
  StepZero,    // step reached 0 (Algorithm 1, line 14)
  ReachedOne,  // u >= 1 (Ding & Wu Algorithm 1, lines 29-31)
  Cap,         // the iteration cap T_max was reached
  Optimizer,   // the adaptive optimiser proposed no more candidates (Ding et al. §4.1)
};
const char* to_string(Stop stop);

struct LoopResult {
  /// s*: index of the last candidate that passed; empty when none ever passed.
  std::optional<std::size_t> selected;
  std::size_t iterations = 0;  // T
  std::int64_t units = 0;      // the ladder level: u = u0 + units * g
  double u = 0;
  std::int64_t step = 1;  // step when the loop stopped
  std::size_t passes = 0;
  Stop stop = Stop::StepZero;
  /// With LoopOptions::trace: s* after iteration t = 1..T (empty optional: none yet).
  std::vector<std::optional<std::size_t>> selected_after;
};

/// Ding et al. Algorithm 1 lines 12-34 with Ding & Wu's break: u <- u0, step <- 1; each iteration
/// proposes u_hat = u + step g + threshold_noise(), scans the candidates in their (public) order
/// and takes the first s with utilities[s] + query_noise() >= u_hat (s* <- s, u += step g, step *=
/// 2); when none passes, step <- floor(step / 2).  Stops when step = 0, u >= 1 or after t_max
/// iterations.  u is kept as the integer ladder level `units` (u = u0 + units g), so it does not
/// drift with rounding and the noise-free loop is exactly the integer doubling of Lemma 1. Query
/// noise is drawn lazily, one per candidate examined (AboveThreshold stops at the first pass, so
/// the noise of unexamined candidates never influences the output).
LoopResult run_loop(std::span<const double> utilities, const LoopOptions& options,
                    const NoiseFn& threshold_noise, const NoiseFn& query_noise);

// ---- Ding et al. §4.1: compatibility with adaptive optimisation ---------------------------------
/// What the adaptive optimiser O is told before each iteration: only the released transcript of the
/// previous iterations (s* so far and whether the last iteration passed), never a utility.  Both
/// are outputs of ϵ-DP AboveThreshold iterations, so every batch O proposes is post-processing and
/// the T_max iterations compose adaptively exactly as with a fixed candidate list.
struct Feedback {
  std::size_t iteration = 0;            // iterations done (0 before the first)
  std::optional<std::size_t> selected;  // s* so far (the caller's candidate id)
  bool passed = false;                  // the last iteration accumulated
};
/// One iteration's candidates (the caller's ids, in the order to scan) and their u_s.  An empty
/// batch means O terminates.
struct Batch {
  std::vector<std::size_t> ids;
  std::vector<double> utilities;
};
using BatchFn = std::function<Batch(const Feedback&)>;

/// Algorithm 1's loop with the candidate set of each iteration chosen by O (Ding et al. §4.1, Fig.
/// 2: O sends a subset, the loop runs one iteration and sends back s*).  Same ladder, noise, stops
/// and cap as run_loop; `selected` holds the caller's id.  run_loop is this with a fixed batch.
LoopResult run_adaptive_loop(const LoopOptions& options, const BatchFn& batch,
                             const NoiseFn& threshold_noise, const NoiseFn& query_noise);

/// A simple O that needs only the binary feedback: a local search in the search space's unit cube.
/// The first batch (and every batch until something passes) is `batch` uniform draws; afterwards
/// batch - 1 Gaussian perturbations of the incumbent s* (coordinate-wise sd `radius`, clamped to
/// the cube) followed by s* itself, last (AboveThreshold takes the first that passes).  The radius
/// doubles (up to 0.5) after a pass and halves (down to 1/1024) after a fail, mirroring the
/// ladder's step.
class LocalSearch {
 public:
  LocalSearch(const dptune::SearchSpace& space, std::size_t batch, double radius);
  /// The next candidates given the incumbent (empty before the first pass) and the last outcome.
  std::vector<dptune::Params> propose(const dptune::Params* incumbent, bool passed, bool first,
                                      dptune::RandomBitGenerator& rng);
  double radius() const { return radius_; }

 private:
  const dptune::SearchSpace& space_;
  std::size_t batch_;
  double radius_;
};

/// M: the smallest ladder level with u0 + M g >= 1, evaluated exactly as the loop's break test.
std::int64_t levels_to_one(double u0, double g);

/// The most iterations the loop can ever run, whatever the data and the noise: 2M - 1.
/// Every pass raises the level by step >= 1 and the M-th level breaks the loop (Ding & Wu), so
/// there are at most M passes; step is a power of two 2^(passes - fails) and the loop ends at the
/// fail that takes it to 0, so fails <= passes + 1, and a run ending by that fail has at most M - 1
/// passes.  Either way T <= 2M - 1, within the 2 ceil((1 - u0) / g) + 1.
std::size_t worst_case_iterations(double u0, double g);

/// The noise-free worst case of Ding et al., Lemma 1 over every u* < 1: with N = floor((u* - u0) /
/// g) and K = floor(log2(N + 1)), the integer doubling takes K passes up, one fail at step 2^K,
/// then one iteration per lower bit and two more per set bit of N - 2^K + 1: T = 2K + 1 + 2
/// popcount. Over N <= M - 1 this is at most 4 floor(log2 M) + 1.
std::size_t noise_free_worst_iterations(double u0, double g);

/// Default cap: the noise-free worst case (Lemma 1) plus a slack of ceil(log2 M) iterations for the
/// noise (Theorem 2: T = O(log n) w.h.p.), never above worst_case_iterations.  For g = 0.01,
/// u0 = 0: 4 * 6 + 1 + 7 = 32 (the noise-free loop needs at most 25, Fig. 4's ~3 log n).
std::size_t default_t_max(double u0, double g);

/// Sensitivity of u_s and the two Laplace scales of Algorithm 1 (lines 16 and 20) for per-iteration
/// ϵ.  Lemma 2: one training record changes one part's score by at most 1, so u_s by 1/k.  With a
/// protected validation set of n_val rows, one validation record changes every part's score by at
/// most Δ_util(n_val), the utility's per-record sensitivity (1/n_val for accuracy; the host states
/// it: TunerContext::utility_sensitivity), so u_s, a mean of part scores, by Δ_util too; a
/// neighbour differs in one record of train ∪ validation, so Δ = max(1/k, Δ_util(n_val)).
/// AboveThreshold with query sensitivity Δ is ϵ-DP with threshold noise Lap(2Δ/ϵ) and query noise
/// Lap(4Δ/ϵ) (Dwork & Roth Thm 3.23; Ding et al. eq. 17 with Δ = 1/k).
struct Scales {
  double sensitivity = 0;
  double threshold = 0;  // 2Δ/ϵ
  double query = 0;      // 4Δ/ϵ
};
/// validation_sensitivity = 0: the validation set is public (Ding et al.'s threat model).
Scales laplace_scales(std::size_t k, double epsilon, double validation_sensitivity = 0);

/// The loop's two noise sources for per-iteration ϵ and the given scales.  The pipeline's mechanism
/// (TunerContext::mechanism with noise_multiplier 2/ϵ and 4/ϵ, released with L1 sensitivity Δ) when
/// its event is Laplace with exactly that noise multiplier; otherwise (no mechanism, a Gaussian
/// one, one that ignores the override) the SDK sampler dptune::laplace(scale) on context.rng(),
/// which is the cryptographic generator unless the run is seeded.  `description` says which, and
/// why the mechanism was not used.  The callables hold references to `context`.
struct Noise {
  NoiseFn threshold, query;
  bool from_mechanism = false;
  /// The secure path's grid step (LoopOptions::noise_grid); 0 for floating-point noise.
  double grid = 0;
  std::string description;
};
Noise make_noise(dptune::TunerContext& context, const Scales& scales, double epsilon);

/// The secure path (`noise: secure`, the default): AboveThreshold on a power-of-two grid g with
/// exact discrete Laplace noise (Canonne, Kamath & Steinke 2020, through dptune::grid_laplace).
/// Rounding moves a utility by at most g/2, so the rounded query's sensitivity is at most Δ + g,
/// one grid step more than Δ, in grid units Δ/g + 1; the noise is scaled to exactly that (scales
/// 2/ϵ and 4/ϵ times Δ/g + 1 grid steps).  Discrete Laplace noise satisfies the same shift
/// inequalities for integer shifts as the continuous one, so each iteration is ϵ-DP exactly as in
/// Lyu, Su & Li 2017 (Algorithm 1's proof, with integer shifts of at most Δ/g + 1 steps).  g is the
/// grid of dptune::laplace_grid for the threshold's multiplier 2/ϵ: about 2^-30 of the noise.
/// The pipeline's mechanism is not used on this path.
Noise make_secure_noise(dptune::TunerContext& context, const Scales& scales, double epsilon);

/// Ding et al. Theorem 3's δ' = O(n^(-g k ϵ / 4) log n), with the hidden constant taken as 1 and
/// the natural log: nominal only.
double nominal_delta_prime(double n, double g, double k_epsilon);

/// A candidate list written in YAML as one string, candidates separated by ';', each a
/// comma-separated list of name=value for every dimension of `space`, e.g.
/// "learning_rate=0.1, clipping_norm=1; learning_rate=0.01, clipping_norm=1".  Values take their
/// dimension's type (float, int, or one of the categorical choices as written); every candidate
/// must lie in the space.  Throws InvalidArgument naming the candidate (1-based) and the problem.
std::vector<dptune::Params> parse_candidate_list(const std::string& text,
                                                 const dptune::SearchSpace& space);

}  // namespace dptune::svt_doubling
