// DP-SGD (Avent et al. 2020, §4.2, Algorithm 3): fixed-size lots of m examples sampled without
// replacement (or, with sampling: poisson, Abadi et al. 2016's Poisson lots), per-example clipping
// to L, Gaussian noise through the pipeline's mechanism, T · ceil(n / m) steps.  The loop and its
// event are in plugins/trainer/training (training/training.hpp, training/trainer_plugin.hpp).
#include "training/trainer_plugin.hpp"

namespace {

class DpSgd final : public dptune::trainers::DpSgdTrainer {
 public:
  explicit DpSgd(const dptune::Params& p) : DpSgdTrainer(p, dptune::trainers::Optimizer::Sgd) {}
  static dptune::ParamSchema schema() {
    return dptune::trainers::dp_sgd_schema(dptune::trainers::Optimizer::Sgd);
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

DPTUNE_PLUGIN(trainer, dp_sgd, DpSgd, "1.0.0",
              "DP-SGD (Avent et al. 2020 Alg. 3): lots without replacement or Poisson, per-example "
              "clipping, Gaussian noise; logistic regression, linear SVM or MLP")
