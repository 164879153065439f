// dptune trainers: what the trainer plugins share — their parameter schemas, reading Params into
// options, the mechanism hand-off, and target-ε mode.  Eigen-free header.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "dptune/gradient_canaries.hpp"
#include "dptune/helpers/calibration.hpp"
#include "dptune/plugin.hpp"
#include "training/training.hpp"

namespace dptune::trainers {

/// model, hidden1, hidden2.
ParamSchema& add_model_params(ParamSchema& schema);
struct ModelParams {
  std::string model;
  std::size_t hidden1 = 0, hidden2 = 0;
  explicit ModelParams(const Params& p);
};

/// Target-ε mode: target_epsilon > 0 replaces the noise parameter σ by the smallest σ whose event
/// the pipeline's accountant proves (target_epsilon, target_delta)-DP (dptune::calibrate_noise);
/// target_delta 0 (the default) means the pipeline's δ.
///
/// Reported event (ABI 2.2).  The exact event of a calibrated run is the trainer's usual event
/// with σ = σ* (e.g. SelfComposed(SampledWithoutReplacement(n, m, Gaussian(σ*)), steps)): tight,
/// its ε by the accountant is ≤ the target (and ≥ 0.99 target, the trainer tests pin it), and an
/// RDP accountant composes several such runs well below k · target.  Trainer::exact_event(n,
/// accountant, δ), which the host calls before running, calibrates σ* and returns that event;
/// train() calibrates against the same accountant and δ (its TrainingContext's) and reports the
/// very same event, which the host's evaluator checks.  σ* is computed once per (n, δ,
/// accountant) and cached (CalibrationCache).  Trainer::event(n), which has no accountant, still
/// returns the sound summary ApproxDp(target_epsilon, target_delta) and refuses when target_delta
/// is left to the pipeline's δ, which it cannot know.
ParamSchema& add_target_params(ParamSchema& schema);
struct TargetPrivacy {
  double epsilon = 0, delta = 0;  // delta 0: the pipeline's
  bool active() const { return epsilon > 0; }
  TargetPrivacy(const Params& p, std::string who);
  /// The δ the calibration targets: target_delta, or the pipeline's δ when it is 0.
  double delta_for(double pipeline_delta) const { return delta > 0 ? delta : pipeline_delta; }
  /// ApproxDp(target): the guarantee the calibration proves (event(n), without an accountant).
  DpEvent event() const;

 private:
  std::string who_;
};

/// σ* of a target-ε trainer per (rows, δ, accountant): the calibration is a root-find over
/// accountant calls, and the host asks for the event of every candidate of a search and of every
/// evaluation before its R repetitions each calibrate again in train().  Thread-safe; calibrates
/// under the lock (concurrent callers of one instance wait rather than repeat the root-find).
class CalibrationCache {
 public:
  double sigma(std::size_t rows, double delta, const Accountant& accountant,
               const std::function<double()>& calibrate) const;
  /// Root-finds run so far (for tests).
  std::size_t calibrations() const;

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<std::size_t, double, const Accountant*>, double> sigmas_;
};

/// Target-ε calibration: σ ∈ [0.01, 1e6], bracket narrowed to a relative width of 1e-6 (σ to six
/// digits; the returned σ is the bracket's upper end, so it always meets the target).
CalibrationOptions calibration_options();

/// The pipeline's mechanism configured with noise_multiplier σ, checked to be the Gaussian
/// mechanism the trainer's analysis (and its event()) assumes: its event() must equal gaussian(σ)
/// or, for exact noise on a grid (`noise: secure`), discrete_gaussian(σ).  A mechanism claiming
/// anything else is refused with an error naming both events.
///
/// Noise event.  event() and exact_event() state the noise as gaussian(σ), before the
/// mechanism is known; train() reports the mechanism's own event.  A host of ABI >= 2.6 states
/// the prediction the same way: it replaces each gaussian(σ) leaf by the mechanism's event for σ,
/// and hands exact_event() and TrainingContext an accountant that prices events so stated, so a
/// target-ε calibration holds for the event the run reports (framework MechanismNoise).
std::shared_ptr<const Mechanism> gaussian_mechanism(TrainingContext& context, double sigma,
                                                    const std::string& who);

/// What gaussian_mechanism(context, σ, who) asks of the pipeline's mechanism: {noise_multiplier:
/// σ} and the event gaussian(σ) (the host also accepts its discrete Gaussian).  A target-ε trainer
/// calibrates σ per run: it passes a representative σ (kTargetRepresentativeSigma), the kind of
/// noise being what matters.
MechanismRequest gaussian_request(double sigma);
inline constexpr double kTargetRepresentativeSigma = 1.0;

/// A NoiseFunction releasing the sum through `mechanism` with Sensitivity{l2 = s} (l1 = √p · s,
/// linf = s: valid bounds for a vector of L2 norm ≤ s, unused by a Gaussian mechanism).
NoiseFunction mechanism_noise(std::shared_ptr<const Mechanism> mechanism, RandomBitGenerator& rng);

/// The Sensitivity mechanism_noise releases a `count`-value sum of L2 sensitivity `l2` with.
Sensitivity sum_sensitivity(std::size_t count, double l2);

/// The gradient canaries `context` offers: only the audit's context does
/// (dptune/gradient_canaries.hpp); null for every other run.
const GradientCanaries* offered_gradient_canaries(TrainingContext& context);

// ---- DP-SGD / DP-Adam plugins -------------------------------------------------------------------

ParamSchema dp_sgd_schema(Optimizer optimizer);

/// Also a GradientCanaryTrainer: train() inserts an audit's gradient canaries into its clipped
/// sums (offered_gradient_canaries) and reports every released sum.
class DpSgdTrainer : public Trainer, public GradientCanaryTrainer {
 public:
  DpSgdTrainer(const Params& params, Optimizer optimizer);
  TrainedModel train(const Dataset& train, TrainingContext& context) const override;
  DpEvent event(std::size_t train_rows) const override;
  /// The event train() reports: dp_sgd_event(schedule, gaussian(σ)), σ = σ* in target-ε mode,
  /// with gaussian(σ) standing for the mechanism's event (see gaussian_mechanism).
  DpEvent exact_event(std::size_t train_rows, const Accountant& accountant,
                      double delta) const override;
  /// {noise_multiplier: σ} and Gaussian(σ): what gaussian_mechanism() asks and checks.
  std::optional<MechanismRequest> mechanism_request() const override;
  /// One release a step: the summed gradient of the network's parameters (dp_noisy_sum).
  std::vector<MechanismRelease> mechanism_releases(const DataShape& shape) const override;
  const DpSgdOptions& options() const { return options_; }
  /// Target-ε mode: σ* for `train_rows` rows through `accountant` at the target δ (target_delta, or
  /// `pipeline_delta` when it is 0), cached.  Throws unless in target mode.
  double calibrated_sigma(std::size_t train_rows, const Accountant& accountant,
                          double pipeline_delta) const;
  const CalibrationCache& calibration_cache() const { return cache_; }

 private:
  std::string name_;
  ModelParams model_;
  DpSgdOptions options_;
  TargetPrivacy target_;
  CalibrationCache cache_;
};

}  // namespace dptune::trainers
