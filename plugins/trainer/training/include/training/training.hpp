// dptune trainers: the training loops shared by the trainer plugins (sgd, dp_sgd, dp_adam,
// output_perturbation), their schedules and their DpEvents.  Eigen-free header (see network.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dptune/data.hpp"
#include "dptune/dp_event.hpp"
#include "dptune/gradient_canaries.hpp"
#include "dptune/plugin.hpp"
#include "dptune/rng.hpp"
#include "training/network.hpp"

namespace dptune::trainers {

/// model: logistic | svm | mlp; hidden2 = 0 means one hidden layer.  Inputs and classes come from
/// the data (at least 2 classes).
Architecture make_architecture(const std::string& model, std::size_t hidden1, std::size_t hidden2,
                               const Dataset& data);

/// A trained network as a dptune::Model.
class NetworkModel final : public Model {
 public:
  explicit NetworkModel(Network network) : network_(std::move(network)) {}
  Predictions predict(const Dataset& data) const override { return network_.predict(data); }
  std::string describe() const override { return network_.architecture().describe(); }
  /// ABI 2.2: the layers as stored (z = a W + b, ReLU between, identity output), output "sigmoid"
  /// / "hinge" for one output, "softmax" / "multiclass_hinge" for K.
  std::optional<ModelExport> export_model() const override;
  const Network& network() const { return network_; }

 private:
  Network network_;
};

// ---- non-private SGD ----------------------------------------------------------------------------

/// Mini-batch SGD with heavy-ball momentum and inverse-time learning-rate decay per epoch, as the
/// DP-Hype clients train (Liebenow et al. 2025 §V-B, Table III: learning rate × decay × momentum):
///   η_e = η / (1 + decay · e) in epoch e = 0, 1, ...;  v ← μ v + (ḡ + λ w);  w ← w − η_e v,
/// ḡ the batch-mean gradient, λ the L2 regularisation (weights and biases).  Each epoch visits a
/// fresh random permutation in batches of batch_size (the last batch may be smaller).
struct SgdOptions {
  std::size_t epochs = 10;
  std::size_t batch_size = 32;
  double learning_rate = 0.1;
  double momentum = 0.0;
  double lr_decay = 0.0;
  double l2 = 0.0;
};
void train_sgd(Network& network, const Dataset& data, const SgdOptions& options,
               RandomBitGenerator& rng);

// ---- DP-SGD / DP-Adam (Avent et al. 2020, Algorithms 3 and 4) -----------------------------------

enum class Sampling { WithoutReplacement, Poisson };
enum class Optimizer { Sgd, Adam };

struct DpSgdOptions {
  std::size_t epochs = 10;    // T
  std::size_t lot_size = 64;  // m
  double learning_rate = 0.05;
  double noise_multiplier = 1.0;  // σ
  double clipping_norm = 1.0;     // L
  Sampling sampling = Sampling::WithoutReplacement;
  Optimizer optimizer = Optimizer::Sgd;
  double beta1 = 0.9, beta2 = 0.999, adam_epsilon = 1e-8;  // Alg. 4's β1, β2, κ
};

/// What a DP-SGD run does on n examples: `steps` = T · ⌈n / m⌉ noisy steps (Alg. 3's inner loop
/// "for k ∈ [n/m]", rounded up so that an epoch draws at least n examples), each on a lot of
/// m_eff = min(m, n) examples sampled without replacement, or, for Poisson sampling (Abadi et al.
/// 2016), each example independently with q = m_eff / n.
struct DpSchedule {
  std::int64_t n = 0;
  std::int64_t lot = 0;  // m_eff
  std::int64_t steps = 0;
  double q = 0;  // m_eff / n
  Sampling sampling = Sampling::WithoutReplacement;
};
DpSchedule dp_schedule(std::size_t n, const DpSgdOptions& options);

/// SelfComposed(SampledWithoutReplacement(n, m, step), steps), or
/// SelfComposed(PoissonSampled(q, step), steps).
DpEvent dp_sgd_event(const DpSchedule& schedule, DpEvent step_event);

/// L2 scale of one step's noise on the sum of clipped gradients: the clipping norm L, for both
/// samplings, so that σ is noise stddev ÷ L everywhere (the Opacus / TF Privacy convention; the
/// Gaussian(σ) step event is stated for add/remove neighbours, dp_event.hpp).  With fixed-size lots
/// the neighbours are replace-one (one clipped gradient of norm ≤ L swapped for another, so the
/// sum moves by up to 2L: Avent et al. 2020 Alg. 3's "2L/m · N(0, σ² I)"); the accountant applies
/// that factor 2 when it prices sampled_without_replacement, so Avent et al. 2020's σ is
/// noise_multiplier / 2.
double dp_step_sensitivity(const DpSgdOptions& options);

/// The L2 sensitivity the noise of one step is actually scaled to: L widened by a proven bound on
/// the floating-point error of the clipped gradients and of their sum, so that the sums computed
/// for neighbouring lots differ by at most this much (the grid release's rounding analysis,
/// dptune/helpers/grid_noise.hpp, then holds of the numbers computed, not only of exact ones).
/// `rows`: the training rows n; `params`: the network's parameter count p; `capacity`: the chunk
/// size of the sums (at most 256).  The bound, with u = 2^-53 and γ_k = k u / (1 − k u)
/// (Higham 2002, Lemma 3.1):
///
///  1. One clipped gradient.  g_i = ⊕_l a_{i,l} ⊗ δ'_{i,l} with δ'_{i,l} = fl(f_i δ_{i,l}) in the
///     layers' precision (float: f_i rounded down to float first; relative rounding ≤ 2^-24),
///     f_i = fl(L / fl(√n2_i)) where n2_i, the ghost norm ‖a‖²‖δ‖² summed over layers, is a sum
///     of at most 2p + 8 rounded positive terms, so n2_i ≥ (1 − γ_{2p+8}) ‖g_i‖² (Higham 2002,
///     eq. 3.2 for positive summands).  Hence ‖x_i‖ ≤ L (1 + 2^-24)(1 + u)² / √(1 − γ_{2p+8})
///     ≤ L (1 + η) with η = 2^-24 + 8u + 2γ_{2p+8} (1/√(1 − γ) ≤ 1 + γ for γ ≤ 1/2);
///     unclipped examples (f_i = 1, n2_i ≤ L²) likewise.
///  2. Their sum.  Every coordinate is Σ_i x_i summed as the chunk's sum (a GEMM or a column
///     sum: any summation tree of c ≤ capacity terms, one product rounding each, exact for
///     float inputs) plus one addition per chunk into the lot's sum, K ≤ ⌈N / capacity⌉ chunks:
///     each term meets at most c + K roundings, so the computed sum is Σ_i x_i (1 + θ_i) with
///     |θ_i| ≤ γ_{c+K} (Higham 2002, Lemma 3.1 and eq. 3.4), and in L2 the error is at most
///     γ_{c+K} ‖Σ_i |x_i|‖ ≤ γ_{c+K} Σ_i ‖x_i‖ ≤ γ_{c+K} N L (1 + η), whatever the order.
///     N, the lot's size, is at most n (Poisson) or the fixed lot m: public bounds.
///  3. Neighbours.  Each x_i depends on its own row and the weights only, because every chunk is
///     padded to a whole number of kRowBlock rows (padded_rows): Eigen's GEMM computes the
///     rows of a block in SIMD lanes, identically, but remainder rows (and a one-row chunk, a
///     GEMV, or a small one, a coefficient-wise product) by other kernels whose results differ
///     in the last bits, so that without padding a row's clipped gradient changed with its
///     position and its chunk's size, i.e. with the other members of the lot (test "the clipped
///     gradient of a row does not depend on its chunk").  So the exact sums of neighbouring lots
///     differ by one x_z (add/remove) or x_z − x_z' (replace-one, where the accountant doubles
///     the sensitivity), and the computed sums by that plus the two error terms: at most
///     L(1 + η)(1 + 2 γ_{c+K} N) = dp_sum_sensitivity, per record.
/// The result is rounded up.  The relative widening is about 2^-24 (test "the private gradient
/// sum stays within the sensitivity the noise is scaled to").
double dp_sum_sensitivity(const DpSgdOptions& options, std::size_t rows, std::size_t params,
                          std::size_t capacity);

/// Rows of a private chunk come in whole blocks of kRowBlock: 48 is a multiple of the row
/// blocking of Eigen's float and double kernels on SSE, AVX2 and AVX-512 (the products of a
/// row-major chunk block its rows by 4; the register blocks are 3 packets of 4, 8 or 16
/// lanes) and of every packet, and it keeps a chunk above the size below which Eigen switches
/// to a coefficient-wise product.
inline constexpr std::size_t kRowBlock = 48;
/// `count` rounded up to a whole number of kRowBlock rows.
std::size_t padded_rows(std::size_t count);

/// The chunk size of a DP-SGD run's gradient sums (at most 256 rows, padded_rows): what
/// train_dp_sgd uses and dp_sum_sensitivity is given.
std::size_t dp_chunk_capacity(const DpSchedule& schedule);

/// What train_dp_sgd hands its NoiseFunction at every step on data of `shape`: the summed
/// gradient of the network's p parameters and its sensitivity dp_sum_sensitivity (p from the
/// architecture make_architecture(model, hidden1, hidden2) gives that shape).  Empty when the
/// shape has no row or no feature (the trainer refuses such data itself).
std::optional<std::pair<std::size_t, double>> dp_noisy_sum(const DpSgdOptions& options,
                                                           const std::string& model,
                                                           std::size_t hidden1, std::size_t hidden2,
                                                           const DataShape& shape);

/// Adds the mechanism's noise to the summed clipped gradient (in place), given the L2 sensitivity.
/// Empty: no noise (a non-private run of the same algorithm).
using NoiseFunction = std::function<void(std::vector<double>& sum, double l2_sensitivity)>;

/// Avent et al. 2020 Alg. 3 (optimizer Sgd) or Alg. 4 (Adam): for each step, sample a lot, clip
/// every example's gradient to L, add noise to the sum, divide by m (the nominal lot size, also for
/// Poisson lots, so that one example moves the update by at most sensitivity / m), and update.
/// `network` is trained in place from its current parameters.
/// `canaries` (an audit's only, dptune/gradient_canaries.hpp): the rows it names are canaries
/// whose clipped gradient replaces the row's in every lot they join, and every released noisy sum
/// is handed to its `observe`.  Null: a run without canaries (the loop is unchanged).
void train_dp_sgd(Network& network, const Dataset& data, const DpSgdOptions& options,
                  RandomBitGenerator& rng, const NoiseFunction& noise,
                  const GradientCanaries* canaries = nullptr);

// ---- output perturbation (Avent et al. 2020 §2.2; Wu et al. 2017, Algorithm 2) ------------------

/// Logistic regression trained by projected permutation SGD on the γ-strongly convex objective,
/// released with Gaussian noise of stddev σ · Δ₂ on the weights (Wu, Li, Kumar, Chaudhuri, Jha &
/// Naughton, "Bolt-on differential privacy for scalable stochastic gradient descent-based
/// analytics", SIGMOD 2017, Algorithm 2 "private strongly convex permutation-based SGD").
///
/// What Wu et al. state and what is used.  For a loss that is L-Lipschitz, β-smooth and
/// γ-strongly convex on the hypothesis set W, PSGD with step η_t = min(1/β, 1/(γ t)) run for any
/// number k of passes has L2 sensitivity Δ₂ = 2L / (γ n) (their strongly convex sensitivity
/// theorem; Algorithm 2 sets Δ₂ ← 2L/(γm), m their number of examples), under replace-one
/// neighbours.  The step of their proof, used here for mini-batches: a batch of c examples that
/// differ in one moves the two iterates apart by at most 2 L η_t / c, every other step contracts
/// the gap by (1 − γ η_t) (η_t ≤ 1/β ≤ 2/(β + γ)), and projection onto W does not expand it; with
/// this schedule η_t Π_{s>t} (1 − γ η_s) ≤ 1/(γ T) for every t ≤ T.  So with B batches per pass,
/// T = k B updates and the differing example in a batch of at least c_min examples in each of the
/// k passes, Δ₂ ≤ k · 2L / (c_min γ T) = 2L / (γ B c_min).  Batches are balanced (B = ⌈n / b⌉
/// batches of ⌊n/B⌋ or ⌈n/B⌉ examples), so c_min = ⌊n/B⌋ and Δ₂ = 2L / (γ n) exactly when B
/// divides n (b = 1, Avent et al. 2020's footnote 6, in particular).
///
/// Constants.  Each example's features are mapped (data-independently) to
///   x̃ = [x / max(1, ‖x‖), 1] / √2,  so ‖x̃‖ ≤ 1 (the intercept is the last weight);
/// the per-example loss f(w; x, y) = log(1 + exp(−t wᵀx̃)) + (γ/2)‖w‖² (t = ±1) is then
/// γ-strongly convex and β = 1/4 + γ smooth; iterates are projected onto W, the ball of radius
/// R = 1/γ, which contains the minimiser (‖w*‖ ≤ 1/γ since ‖∇ log(1+e^{−t wᵀx̃})‖ ≤ 1), and on it f
/// is L = 1 + γR = 2 Lipschitz.  Hence Δ₂ = 4 / (γ B c_min) per binary model.
///
/// Multiclass (K ≥ 3 classes): one-vs-rest, K binary models of the above, each trained on the same
/// examples with labels t_k = +1 for class k and −1 otherwise.  Replacing one example changes each
/// model's weights by at most Δ₂ (the bound above holds for any pair of differing examples, labels
/// included), so the concatenated K (d + 1) weights have L2 sensitivity √(K Δ₂²) = √K · Δ₂, and
/// one Gaussian release of stddev σ · √K Δ₂ on all of them is the Gaussian(σ) event relative to it.
struct OutputPerturbationOptions {
  double regularization = 0.01;  // γ
  std::size_t epochs = 10;       // Avent et al. 2020 footnote 6: T = 10
  std::size_t batch_size = 1;    // Avent et al. 2020 footnote 6: m = 1
};
/// Δ₂ of one binary model: 2L / (γ B c_min) with L = 2, B = ⌈n / batch⌉, c_min = ⌊n / B⌋.
double output_perturbation_sensitivity(std::size_t n, double regularization,
                                       std::size_t batch_size = 1);
/// Binary models trained: 1 for 2 classes, K for K ≥ 3 (one-vs-rest).
std::size_t output_perturbation_models(std::size_t classes);
/// L2 sensitivity of all released weights: √models · Δ₂.
double output_perturbation_joint_sensitivity(std::size_t n, double regularization,
                                             std::size_t batch_size, std::size_t classes);

class OutputPerturbationModel final : public Model {
 public:
  /// weights: models × (d + 1), model after model; classes ≥ 2 (models = 1 when classes = 2).
  OutputPerturbationModel(std::vector<double> weights, std::size_t classes);
  Predictions predict(const Dataset& data) const override;
  std::string describe() const override;
  /// ABI 2.2: input_map "unit_ball_intercept" (output_perturbation_features), one layer of
  /// (d + 1) × models weights with zero bias (the intercept is the last input), output "sigmoid"
  /// (binary) or "one_vs_rest".
  std::optional<ModelExport> export_model() const override;
  const std::vector<double>& weights() const { return weights_; }

 private:
  std::vector<double> weights_;  // per model: d feature weights, then the intercept's
  std::size_t classes_;
};

/// The non-noisy weights (models × (d + 1)) of the projected SGD runs.
std::vector<double> train_output_perturbation(const Dataset& data,
                                              const OutputPerturbationOptions& options,
                                              RandomBitGenerator& rng);
/// x̃ of one example, written to out (d + 1 values).
void output_perturbation_features(const double* x, std::size_t d, double* out);

}  // namespace dptune::trainers
