// DELIBERATELY BROKEN (test fixtures for `dptune audit trainer`, never for use): DP-SGD variants
// that report the event of the correct algorithm (dp_sgd_event with the mechanism's gaussian(σ))
// but do something else.  Both reuse the built-in training loop and change only what the bug
// changes, so the audit sees exactly that bug.
//  * broken_dp_sgd_noclip: never clips (clipping norm 10^9) but scales the noise to the declared
//    clipping norm L, as if every gradient had norm at most L.
//  * broken_dp_sgd_lot_squared: divides the noise by the lot size once too often: the sum gets
//    noise of stddev σ L / m instead of σ L, so the averaged update has σ L / m² instead of σ L /
//    m.
// An audit's gradient canaries (dptune/gradient_canaries.hpp) go through the same broken loop.
// Also canary_probe, not broken: see its class.
#include <memory>

#include "dptune/errors.hpp"

#include "training/network.hpp"
#include "training/trainer_plugin.hpp"

namespace {

using dptune::trainers::DpSgdOptions;
using dptune::trainers::DpSgdTrainer;

enum class Bug { NoClipping, LotSquared };

template <Bug kBug>
class BrokenDpSgd final : public DpSgdTrainer {
 public:
  explicit BrokenDpSgd(const dptune::Params& p)
      : DpSgdTrainer(p, dptune::trainers::Optimizer::Sgd), model_(p) {}
  static dptune::ParamSchema schema() {
    return dptune::trainers::dp_sgd_schema(dptune::trainers::Optimizer::Sgd);
  }

  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    using namespace dptune::trainers;
    Network network(make_architecture(model_.model, model_.hidden1, model_.hidden2, data));
    network.initialise(context.rng());
    DpSgdOptions opts = options();
    const DpSchedule schedule = dp_schedule(data.rows, opts);
    auto mechanism = gaussian_mechanism(context, opts.noise_multiplier, "broken_dp_sgd");
    const dptune::DpEvent reported = dp_sgd_event(schedule, mechanism->event());
    NoiseFunction honest = mechanism_noise(mechanism, context.rng());
    NoiseFunction noise;
    if constexpr (kBug == Bug::NoClipping) {
      const double declared = opts.clipping_norm;
      opts.clipping_norm = 1e9;  // BUG: no clipping
      noise = [honest, declared](std::vector<double>& sum, double l2) {
        honest(sum, l2 * declared / 1e9);  // noise for the declared norm
      };
    } else {
      const auto lot = static_cast<double>(schedule.lot);
      noise = [honest, lot](std::vector<double>& sum, double l2) {
        honest(sum, l2 / lot);  // BUG: the lot size applied to the noise of the sum
      };
    }
    // Gradient canaries enter the same (broken) loop: a gradient audit sees the same bug.
    train_dp_sgd(network, data, opts, context.rng(), noise, offered_gradient_canaries(context));
    return {std::make_shared<NetworkModel>(std::move(network)), reported};
  }

 private:
  dptune::trainers::ModelParams model_;
};

/// Not broken: the built-in DP-SGD, refusing to train when a context offers gradient canaries, so
/// that a run which trains it shows that no context outside `dptune audit trainer --canary-kind
/// gradient` offers them.
class CanaryProbe final : public DpSgdTrainer {
 public:
  explicit CanaryProbe(const dptune::Params& p)
      : DpSgdTrainer(p, dptune::trainers::Optimizer::Sgd) {}
  static dptune::ParamSchema schema() {
    return dptune::trainers::dp_sgd_schema(dptune::trainers::Optimizer::Sgd);
  }
  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    if (dptune::trainers::offered_gradient_canaries(context))
      throw dptune::PluginError("canary_probe: this training context offers gradient canaries");
    return DpSgdTrainer::train(data, context);
  }
};

using NoClip = BrokenDpSgd<Bug::NoClipping>;
using LotSquared = BrokenDpSgd<Bug::LotSquared>;

}  // namespace

DPTUNE_PLUGIN(trainer, broken_dp_sgd_noclip, NoClip, "0.0.1",
              "BROKEN test fixture: DP-SGD without clipping, noise for the declared clipping norm")
DPTUNE_PLUGIN(trainer, canary_probe, CanaryProbe, "0.0.1",
              "test fixture: the built-in DP-SGD, failing when gradient canaries are offered")
DPTUNE_PLUGIN(trainer, broken_dp_sgd_lot_squared, LotSquared, "0.0.1",
              "BROKEN test fixture: DP-SGD whose noise is divided by the lot size twice")
