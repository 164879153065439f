// Private logistic regression by output perturbation (Avent et al. 2020 §2.2; Wu et al. 2017,
// "Bolt-on differential privacy for scalable stochastic gradient descent-based analytics",
// Algorithm 2, the strongly convex case): projected permutation SGD on the γ-regularised logistic
// loss, then Gaussian noise of stddev σ · Δ₂ on the weights, Δ₂ = 2L / (γ n) = 4 / (γ n) (L = 2)
// when the batch count divides n (always for batch size 1), 4 / (γ B ⌊n/B⌋) otherwise; with K ≥ 3
// classes K one-vs-rest models released together with Δ₂ · √K (derivations in
// training/training.hpp).  The event is Gaussian(σ) relative to Δ₂, as the pipeline's mechanism
// states it (discrete_gaussian_on_grid(σ, 2^22) under `noise: secure`, the default: the host states
// the prediction the same way, training/trainer_plugin.hpp); the accountant prices it at the
// pipeline's δ (Avent et al. 2020 uses the exact analysis of the Gaussian mechanism of Balle &
// Wang 2018 at δ = 1e-6).  Hyperparameters γ and σ; batch size 1 and 10 epochs by default (Avent
// et al. 2020 footnote 6).
#include <algorithm>

#include "dptune/helpers/calibration.hpp"
#include "training/trainer_plugin.hpp"

namespace {

namespace tr = dptune::trainers;

class OutputPerturbation final : public dptune::Trainer {
 public:
  explicit OutputPerturbation(const dptune::Params& p)
      : sigma_(p.get_double("noise_multiplier")), target_(p, "output_perturbation") {
    options_.regularization = p.get_double("regularization");
    options_.epochs = static_cast<std::size_t>(p.get_int("epochs"));
    options_.batch_size = static_cast<std::size_t>(p.get_int("batch_size"));
  }

  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    schema.add_float("regularization", "γ, L2 regularisation (strong convexity)")
        .min_exclusive(0)
        .default_to(0.01)
        .add_float("noise_multiplier",
                   "σ: output noise stddev σ · Δ₂, Δ₂ = 4 / (γ n) (batch size 1; ×√K for K ≥ 3 "
                   "classes, one-vs-rest)")
        .min(0)
        .default_to(1.0)
        .add_int("epochs", "passes of projected SGD")
        .min(1)
        .default_to(std::int64_t{10})
        .add_int("batch_size", "examples per SGD step")
        .min(1)
        .default_to(std::int64_t{1});
    tr::add_target_params(schema);
    return schema;
  }
  // The parameters that set its privacy, for the host's explanations (no probing by name).
  static dptune::TrainerTraits traits() {
    return {.target_epsilon = "target_epsilon",
            .target_delta = "target_delta",
            .noise_multiplier = "noise_multiplier",
            .sampling = {}};  // no parameter chooses a batch sampling
  }

  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    std::vector<double> weights = tr::train_output_perturbation(data, options_, context.rng());
    const std::size_t classes = std::max<std::size_t>(data.num_classes, 2);
    if (!context.private_run())
      return {std::make_shared<tr::OutputPerturbationModel>(std::move(weights), classes),
              dptune::DpEvent::non_private()};
    // Target-ε mode: the σ* exact_event(n, accountant, δ) calibrated (the same cache entry).
    const double sigma = target_.active()
                             ? calibrated_sigma(data.rows, context.accountant(), context.delta())
                             : sigma_;
    auto mechanism = tr::gaussian_mechanism(context, sigma, "output_perturbation");
    auto noise = tr::mechanism_noise(mechanism, context.rng());
    noise(weights, tr::output_perturbation_joint_sensitivity(data.rows, options_.regularization,
                                                             options_.batch_size, classes));
    // Gaussian(σ) or discrete_gaussian(_on_grid)(σ) relative to the joint sensitivity (the
    // mechanism's own claim, checked above), which Chaudhuri et al. 2011 / Wu et al. 2017 derive
    // for replace-one neighbours.
    return {std::make_shared<tr::OutputPerturbationModel>(std::move(weights), classes),
            dptune::DpEvent::replace_one(mechanism->event())};
  }

  dptune::DpEvent event(std::size_t) const override {
    return target_.active() ? dptune::DpEvent::replace_one(target_.event())
                            : released_event(sigma_);
  }

  /// Gaussian(σ*) in target-ε mode: the release is one Gaussian mechanism whatever n is (n enters
  /// only the sensitivity, which the noise scales with), so σ* depends on the accountant and δ.
  dptune::DpEvent exact_event(std::size_t train_rows, const dptune::Accountant& accountant,
                              double delta) const override {
    if (!target_.active()) return event(train_rows);
    return released_event(calibrated_sigma(train_rows, accountant, delta));
  }

  /// {noise_multiplier: σ} and Gaussian(σ): what tr::gaussian_mechanism asks and checks.
  std::optional<dptune::MechanismRequest> mechanism_request() const override {
    return tr::gaussian_request(target_.active() ? tr::kTargetRepresentativeSigma : sigma_);
  }

  /// One release: the weights of every binary model, models × (d + 1), at the joint sensitivity.
  std::vector<dptune::MechanismRelease> mechanism_releases(
      const dptune::DataShape& shape) const override {
    if (shape.rows == 0) return {};
    const std::size_t classes = std::max<std::size_t>(shape.num_classes, 2);
    const std::size_t count = tr::output_perturbation_models(classes) * (shape.features + 1);
    return {{count, tr::sum_sensitivity(count, tr::output_perturbation_joint_sensitivity(
                                                   shape.rows, options_.regularization,
                                                   options_.batch_size, classes))}};
  }

  /// One Gaussian release with multiplier σ relative to the replace-one sensitivity 2/(nλ).
  static dptune::DpEvent released_event(double sigma) {
    return dptune::DpEvent::replace_one(dptune::DpEvent::gaussian(sigma));
  }

  double calibrated_sigma(std::size_t, const dptune::Accountant& accountant,
                          double pipeline_delta) const {
    const double delta = target_.delta_for(pipeline_delta);
    // Keyed with rows 0: σ* of Gaussian(σ) does not depend on n.
    return cache_.sigma(0, delta, accountant, [&] {
      return dptune::calibrate_noise(
                 accountant, [](double s) { return released_event(s); }, target_.epsilon, delta,
                 tr::calibration_options())
          .noise;
    });
  }

 private:
  double sigma_;
  tr::TargetPrivacy target_;
  tr::OutputPerturbationOptions options_;
  tr::CalibrationCache cache_;
};

}  // namespace

DPTUNE_PLUGIN(
    trainer, output_perturbation, OutputPerturbation, "1.0.0",
    "private logistic regression by output perturbation (Avent et al. 2020 §2.2, Wu et al. 2017 "
    "Alg. 2); binary, or one-vs-rest for 3+ classes")
