// dptune trainers: what the trainer plugins share — their parameter schemas, reading Params into
// options, the mechanism hand-off, and target-ε mode.  Eigen-free header.
#pragma once

#include <string>

#include "dptune/calibration.hpp"
#include "dptune/plugin.hpp"
#include "training.hpp"

namespace dptune::trainers {

/// model, hidden1, hidden2.
ParamSchema& add_model_params(ParamSchema& schema);
struct ModelParams {
  std::string model;
  std::size_t hidden1 = 0, hidden2 = 0;
  explicit ModelParams(const Params& p);
};

/// Target-ε mode: target_epsilon > 0 replaces the noise parameter σ by the smallest σ whose event
/// the pipeline's accountant proves (target_epsilon, target_delta)-DP (dptune::calibrate_noise,
/// run inside train(), where TrainingContext::accountant() is available).
///
/// Reported event.  The exact event of a calibrated run is the trainer's usual event with σ = σ*
/// (e.g. SelfComposed(SampledWithoutReplacement(n, m, Gaussian(σ*)), steps)): tight, and its ε by
/// the accountant is ≤ target (calibrated_event() computes it; the trainer tests pin ε ∈
/// [0.99 target, target]).  But Trainer::event(n) is called by the host without an accountant
/// (and before any train()), so it cannot know σ*, and the host's evaluator
/// (framework/src/evaluator.cpp) refuses a run whose train() event differs from event(n)'s
/// prediction.  Both therefore report ApproxDp(target_epsilon, target_delta): exactly the
/// guarantee the calibration proves — sound and conservative (it gives up RDP composition of the
/// underlying subsampled Gaussian when the host composes several runs).  For the same reason
/// target_delta cannot default to the pipeline's δ (event(n) does not know it) and is required
/// with target_epsilon.  Reporting the tight event needs a host change: either event() given the
/// accountant and δ, or the evaluator accepting from train() an event the accountant prices at
/// most at the predicted one.
ParamSchema& add_target_params(ParamSchema& schema);
struct TargetPrivacy {
  double epsilon = 0, delta = 0;
  bool active() const { return epsilon > 0; }
  TargetPrivacy(const Params& p, const std::string& who);
  DpEvent event() const { return DpEvent::approx_dp(epsilon, delta); }
};

/// Target-ε calibration: σ ∈ [0.01, 1e6], bracket narrowed to a relative width of 1e-6 (σ to six
/// digits; the returned σ is the bracket's upper end, so it always meets the target).
CalibrationOptions calibration_options();

/// The pipeline's mechanism configured with noise_multiplier σ, checked to be the Gaussian
/// mechanism the trainer's analysis (and its event()) assumes: its event() must equal Gaussian(σ).
/// A mechanism claiming anything else is refused with an error naming both events, rather than
/// reporting an event event() did not predict.
std::shared_ptr<const Mechanism> gaussian_mechanism(TrainingContext& context, double sigma,
                                                    const std::string& who);

/// A NoiseFunction releasing the sum through `mechanism` with Sensitivity{l2 = s} (l1 = √p · s,
/// linf = s: valid bounds for a vector of L2 norm ≤ s, unused by a Gaussian mechanism).
NoiseFunction mechanism_noise(std::shared_ptr<const Mechanism> mechanism, RandomBitGenerator& rng);

// ---- DP-SGD / DP-Adam plugins
// ---------------------------------------------------------------------

ParamSchema dp_sgd_schema(Optimizer optimizer);

class DpSgdTrainer : public Trainer {
 public:
  DpSgdTrainer(const Params& params, Optimizer optimizer);
  TrainedModel train(const Dataset& train, TrainingContext& context) const override;
  DpEvent event(std::size_t train_rows) const override;
  const DpSgdOptions& options() const { return options_; }
  /// Target-ε mode: σ* for `train_rows` rows through `accountant` (throws unless target mode).
  NoiseCalibration calibrate(std::size_t train_rows, const Accountant& accountant) const;
  /// The exact event of a target-ε run on `train_rows` rows: the usual event with σ = σ*.
  DpEvent calibrated_event(std::size_t train_rows, const Accountant& accountant) const;

 private:
  std::string name_;
  ModelParams model_;
  DpSgdOptions options_;
  TargetPrivacy target_;
};

}  // namespace dptune::trainers
