// The `command` trainer: tunes a user's own training program.  dptune starts the
// program (argv, no shell) once per run with a JSON request on stdin — candidate, training rows
// of the run's data scope, seed, output folder — and once per scoring with the rows to predict;
// the utility is dptune's own oracle on those predictions.  The privacy event is dptune's: a
// template over the candidate and the public sizes, priced by the pipeline's accountant before
// the program starts.  Protocol: docs/command-trainer.md.
#include "command/command_trainer.hpp"
#include "dptune/plugin.hpp"

namespace {

namespace cmd = dptune::command;

class CommandTrainer final : public dptune::Trainer, public dptune::ModelFileLoader {
 public:
  explicit CommandTrainer(const dptune::Params& p) : config_(cmd::make_config(p)) {}

  static dptune::ParamSchema schema() { return cmd::command_schema(); }
  // The noise parameter it passes to the program (no target-ε mode).
  static dptune::TrainerTraits traits() {
    dptune::TrainerTraits traits;
    traits.noise_multiplier = "noise_multiplier";
    return traits;
  }

  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    return cmd::train(config_, data, context);
  }

  dptune::DpEvent event(std::size_t train_rows) const override {
    return cmd::declared_event(*config_, train_rows);
  }

  std::shared_ptr<const dptune::Model> load_model(
      const dptune::ModelFiles& released) const override {
    return cmd::load_model(config_, released);
  }

 private:
  std::shared_ptr<const cmd::Config> config_;
};

}  // namespace

DPTUNE_PLUGIN(trainer, command, CommandTrainer, "1.0.0",
              "your own training program (any language), run per evaluation with a JSON request "
              "on stdin; privacy from a declared event template (protocol 1, "
              "docs/command-trainer.md)")
