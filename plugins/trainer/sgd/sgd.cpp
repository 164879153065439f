// Non-private mini-batch SGD with momentum, per-epoch learning-rate decay and L2 regularisation:
// what DP-Hype's clients train (Liebenow et al. 2025 §V-B, Table III grid of learning rate × decay
// × momentum). Its event is always NonPrivate: accountants refuse it, so it serves as a baseline or
// inside a tuner that privatises the selection (DP-Hype votes), never as a private algorithm by
// itself.
#include "training/trainer_plugin.hpp"

namespace {

namespace tr = dptune::trainers;

class Sgd final : public dptune::Trainer {
 public:
  explicit Sgd(const dptune::Params& p) : model_(p) {
    options_.epochs = static_cast<std::size_t>(p.get_int("epochs"));
    options_.batch_size = static_cast<std::size_t>(p.get_int("batch_size"));
    options_.learning_rate = p.get_double("learning_rate");
    options_.momentum = p.get_double("momentum");
    options_.lr_decay = p.get_double("lr_decay");
    options_.l2 = p.get_double("l2");
  }

  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    tr::add_model_params(schema);
    schema.add_int("epochs", "passes over the data")
        .min(1)
        .default_to(std::int64_t{10})
        .add_int("batch_size", "examples per step")
        .min(1)
        .default_to(std::int64_t{32})
        .add_float("learning_rate", "η")
        .min_exclusive(0)
        .default_to(0.1)
        .add_float("momentum", "μ of heavy-ball momentum v ← μ v + g")
        .min(0)
        .max_exclusive(1)
        .default_to(0.0)
        .add_float("lr_decay", "inverse-time decay per epoch e: η_e = η / (1 + lr_decay · e)")
        .min(0)
        .default_to(0.0)
        .add_float("l2", "L2 regularisation λ (gradient term λ w)")
        .min(0)
        .default_to(0.0);
    return schema;
  }
  // Non-private (the baseline): no parameter sets a privacy level.
  static dptune::TrainerTraits traits() { return {}; }

  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    tr::Network network(tr::make_architecture(model_.model, model_.hidden1, model_.hidden2, data));
    network.initialise(context.rng());
    tr::train_sgd(network, data, options_, context.rng());
    return {std::make_shared<tr::NetworkModel>(std::move(network)), dptune::DpEvent::non_private()};
  }

  dptune::DpEvent event(std::size_t) const override { return dptune::DpEvent::non_private(); }

 private:
  tr::ModelParams model_;
  tr::SgdOptions options_;
};

}  // namespace

DPTUNE_PLUGIN(
    trainer, sgd, Sgd, "1.0.0",
    "non-private mini-batch SGD with momentum, learning-rate decay and L2 (Liebenow et al. 2025)")
