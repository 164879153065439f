// DP-Adam (Avent et al. 2020, §4.2, Algorithm 4): DP-SGD's noisy clipped lot gradient fed to Adam's
// de-biased moment estimates.  The loop and its event are in plugins/trainer/training.
#include "training/trainer_plugin.hpp"

namespace {

class DpAdam final : public dptune::trainers::DpSgdTrainer {
 public:
  explicit DpAdam(const dptune::Params& p) : DpSgdTrainer(p, dptune::trainers::Optimizer::Adam) {}
  static dptune::ParamSchema schema() {
    return dptune::trainers::dp_sgd_schema(dptune::trainers::Optimizer::Adam);
  }
  // The parameters that set its privacy, for the host's explanations (no probing by name).
  static dptune::TrainerTraits traits() {
    return {.target_epsilon = "target_epsilon",
            .target_delta = "target_delta",
            .noise_multiplier = "noise_multiplier",
            .sampling = "sampling"};
  }
};

}  // namespace

DPTUNE_PLUGIN(
    trainer, dp_adam, DpAdam, "1.0.0",
    "DP-Adam (Avent et al. 2020 Alg. 4): DP-SGD's noisy clipped gradients with Adam updates")
