#include "training/trainer_plugin.hpp"

#include <cmath>

#include "dptune/errors.hpp"
#include "dptune/helpers/calibration.hpp"

namespace dptune::trainers {

ParamSchema& add_model_params(ParamSchema& schema) {
  return schema.add_string("model", "logistic (regression), svm (linear, hinge) or mlp")
      .one_of({"logistic", "svm", "mlp"})
      .default_to(std::string("logistic"))
      .add_int("hidden1", "mlp: units of the first hidden ReLU layer")
      .min(1)
      .default_to(std::int64_t{128})
      .add_int("hidden2", "mlp: units of a second hidden ReLU layer (0: one hidden layer)")
      .min(0)
      .default_to(std::int64_t{0});
}

ModelParams::ModelParams(const Params& p)
    : model(p.get_string("model")),
      hidden1(static_cast<std::size_t>(p.get_int("hidden1"))),
      hidden2(static_cast<std::size_t>(p.get_int("hidden2"))) {}

ParamSchema& add_target_params(ParamSchema& schema) {
  return schema
      .add_float("target_epsilon",
                 "target-ε mode when > 0: calibrate the noise multiplier through the pipeline's "
                 "accountant instead of using noise_multiplier (0: off)")
      .min(0)
      .default_to(0.0)
      .add_float("target_delta",
                 "δ of the target guarantee (0: the pipeline's δ); used with target_epsilon")
      .min(0)
      .max_exclusive(1)
      .default_to(0.0);
}

TargetPrivacy::TargetPrivacy(const Params& p, std::string who)
    : epsilon(p.get_double("target_epsilon")),
      delta(p.get_double("target_delta")),
      who_(std::move(who)) {}

DpEvent TargetPrivacy::event() const {
  if (!(delta > 0))
    throw InvalidArgument(who_ +
                          ": event(n) without an accountant cannot state the target-ε guarantee "
                          "at the pipeline's δ; set target_delta, or run it on a host of ABI "
                          ">= 2.2, which asks exact_event()");
  return DpEvent::approx_dp(epsilon, delta);
}

double CalibrationCache::sigma(std::size_t rows, double delta, const Accountant& accountant,
                               const std::function<double()>& calibrate) const {
  std::lock_guard lock(mutex_);
  const auto key = std::make_tuple(rows, delta, &accountant);
  if (auto found = sigmas_.find(key); found != sigmas_.end()) return found->second;
  const double sigma = calibrate();
  sigmas_.emplace(key, sigma);
  return sigma;
}

std::size_t CalibrationCache::calibrations() const {
  std::lock_guard lock(mutex_);
  return sigmas_.size();
}

std::shared_ptr<const Mechanism> gaussian_mechanism(TrainingContext& context, double sigma,
                                                    const std::string& who) {
  auto mechanism = context.mechanism(Params{{"noise_multiplier", sigma}});
  if (!mechanism) throw Error(who + ": the pipeline's mechanism could not be created");
  // Either noise fits the analysis (sensitivity, sampling, composition); the event reported is
  // the one the mechanism states, priced by its own theorems (docs/accounting.md).
  const DpEvent claimed = mechanism->event(), expected = DpEvent::gaussian(sigma);
  const bool discrete_on_grid = claimed.kind() == DpEvent::Kind::DiscreteGaussianOnGrid &&
                                claimed.noise_multiplier() == sigma;
  if (!(claimed == expected) && !(claimed == DpEvent::discrete_gaussian(sigma)) &&
      !discrete_on_grid)
    throw Error(who + ": the pipeline's mechanism states the event " + claimed.to_string() +
                ", but " + who + "'s privacy analysis needs the Gaussian mechanism " +
                expected.to_string() +
                " or its discrete Gaussian (noise stddev σ · L2 sensitivity); use `mechanism: "
                "{use: gaussian}` or a mechanism whose event is one of those");
  return mechanism;
}

MechanismRequest gaussian_request(double sigma) {
  return {Params{{"noise_multiplier", sigma}}, DpEvent::gaussian(sigma)};
}

NoiseFunction mechanism_noise(std::shared_ptr<const Mechanism> mechanism, RandomBitGenerator& rng) {
  return [mechanism = std::move(mechanism), &rng](std::vector<double>& sum, double l2) {
    std::vector<double> noisy = mechanism->release(sum, sum_sensitivity(sum.size(), l2), rng);
    if (noisy.size() != sum.size())
      throw Error("the mechanism released " + std::to_string(noisy.size()) + " values for a " +
                  std::to_string(sum.size()) + "-dimensional gradient");
    sum.swap(noisy);
  };
}

Sensitivity sum_sensitivity(std::size_t count, double l2) {
  Sensitivity s;
  s.l2 = l2;
  s.linf = l2;
  s.l1 = std::sqrt(static_cast<double>(count)) * l2;
  return s;
}

CalibrationOptions calibration_options() {
  CalibrationOptions o;
  o.lower = 1e-2;
  o.relative_tolerance = 1e-6;
  return o;
}

ParamSchema dp_sgd_schema(Optimizer optimizer) {
  ParamSchema schema;
  add_model_params(schema);
  schema.add_int("epochs", "T, passes over the data (steps = T · ceil(n / m))")
      .min(1)
      .default_to(std::int64_t{10})
      .add_int("lot_size", "m, examples per noisy step (clamped to n)")
      .min(1)
      .default_to(std::int64_t{64})
      .add_float("learning_rate", "η")
      .min_exclusive(0)
      .default_to(optimizer == Optimizer::Adam ? 0.01 : 0.1)
      .add_float("noise_multiplier",
                 "σ = noise stddev ÷ clipping_norm on the summed clipped gradients, for both "
                 "samplings (Opacus / TF Privacy convention); fixed-size lots are priced for "
                 "replace-one neighbours (sensitivity 2 L), so Avent et al. 2020's σ is σ/2")
      .min(0)
      .default_to(1.0)
      .add_float("clipping_norm", "L, per-example gradient clipping norm")
      .min_exclusive(0)
      .default_to(1.0)
      .add_string(
          "sampling",
          "without_replacement: fixed-size lots (Avent et al. 2020 Alg. 3); poisson: each example "
          "with q = m / n (Abadi et al. 2016)")
      .one_of({"without_replacement", "poisson"})
      .default_to(std::string("without_replacement"));
  if (optimizer == Optimizer::Adam) {
    schema.add_float("beta1", "Adam β1")
        .min(0)
        .max_exclusive(1)
        .default_to(0.9)
        .add_float("beta2", "Adam β2")
        .min(0)
        .max_exclusive(1)
        .default_to(0.999)
        .add_float("epsilon_adam", "Adam κ in w ← w − η µ̂ / (√ν̂ + κ)")
        .min_exclusive(0)
        .default_to(1e-8);
  }
  add_target_params(schema);
  return schema;
}

DpSgdTrainer::DpSgdTrainer(const Params& p, Optimizer optimizer)
    : name_(optimizer == Optimizer::Adam ? "dp_adam" : "dp_sgd"),
      model_(p),
      target_(p, optimizer == Optimizer::Adam ? "dp_adam" : "dp_sgd") {
  options_.epochs = static_cast<std::size_t>(p.get_int("epochs"));
  options_.lot_size = static_cast<std::size_t>(p.get_int("lot_size"));
  options_.learning_rate = p.get_double("learning_rate");
  options_.noise_multiplier = p.get_double("noise_multiplier");
  options_.clipping_norm = p.get_double("clipping_norm");
  options_.sampling =
      p.get_string("sampling") == "poisson" ? Sampling::Poisson : Sampling::WithoutReplacement;
  options_.optimizer = optimizer;
  if (optimizer == Optimizer::Adam) {
    options_.beta1 = p.get_double("beta1");
    options_.beta2 = p.get_double("beta2");
    options_.adam_epsilon = p.get_double("epsilon_adam");
  }
}

DpEvent DpSgdTrainer::event(std::size_t train_rows) const {
  // The target guarantee holds for the relation the sampling's theorem is stated for.
  if (target_.active())
    return options_.sampling == Sampling::Poisson ? target_.event()
                                                  : DpEvent::replace_one(target_.event());
  return dp_sgd_event(dp_schedule(train_rows, options_),
                      DpEvent::gaussian(options_.noise_multiplier));
}

double DpSgdTrainer::calibrated_sigma(std::size_t train_rows, const Accountant& accountant,
                                      double pipeline_delta) const {
  require(target_.active(), name_ + ": calibrated_sigma() needs target_epsilon > 0");
  const double delta = target_.delta_for(pipeline_delta);
  return cache_.sigma(train_rows, delta, accountant, [&] {
    const DpSchedule schedule = dp_schedule(train_rows, options_);
    return calibrate_noise(
               accountant,
               [&](double sigma) { return dp_sgd_event(schedule, DpEvent::gaussian(sigma)); },
               target_.epsilon, delta, calibration_options())
        .noise;
  });
}

DpEvent DpSgdTrainer::exact_event(std::size_t train_rows, const Accountant& accountant,
                                  double delta) const {
  if (!target_.active()) return event(train_rows);
  return dp_sgd_event(dp_schedule(train_rows, options_),
                      DpEvent::gaussian(calibrated_sigma(train_rows, accountant, delta)));
}

std::optional<MechanismRequest> DpSgdTrainer::mechanism_request() const {
  return gaussian_request(target_.active() ? kTargetRepresentativeSigma
                                           : options_.noise_multiplier);
}

std::vector<MechanismRelease> DpSgdTrainer::mechanism_releases(const DataShape& shape) const {
  const auto sum = dp_noisy_sum(options_, model_.model, model_.hidden1, model_.hidden2, shape);
  if (!sum) return {};
  return {{sum->first, sum_sensitivity(sum->first, sum->second)}};
}

const GradientCanaries* offered_gradient_canaries(TrainingContext& context) {
  const auto* offering = dynamic_cast<const GradientCanaryContext*>(&context);
  return offering ? &offering->gradient_canaries() : nullptr;
}

TrainedModel DpSgdTrainer::train(const Dataset& data, TrainingContext& context) const {
  Network network(make_architecture(model_.model, model_.hidden1, model_.hidden2, data));
  network.initialise(context.rng());
  DpSgdOptions options = options_;
  const DpSchedule schedule = dp_schedule(data.rows, options);
  if (!context.private_run()) {
    // The same algorithm (sampling, clipping) without noise: the non-private baseline.
    train_dp_sgd(network, data, options, context.rng(), {}, offered_gradient_canaries(context));
    return {std::make_shared<NetworkModel>(std::move(network)), DpEvent::non_private()};
  }
  // Target-ε mode: the σ* exact_event(n, accountant, δ) calibrated (the same cache entry).
  if (target_.active())
    options.noise_multiplier = calibrated_sigma(data.rows, context.accountant(), context.delta());
  auto mechanism = gaussian_mechanism(context, options.noise_multiplier, name_);
  // The step event is the mechanism's own claim (checked above to be gaussian(σ) or, under
  // `noise: secure`, discrete_gaussian_on_grid(σ, 2^22)); the host states exact_event()'s
  // gaussian(σ) the same way.
  const DpEvent reported = dp_sgd_event(schedule, mechanism->event());
  train_dp_sgd(network, data, options, context.rng(), mechanism_noise(mechanism, context.rng()),
               offered_gradient_canaries(context));
  return {std::make_shared<NetworkModel>(std::move(network)), reported};
}

}  // namespace dptune::trainers
