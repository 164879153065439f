// A small tuner as a third party writes it against the installed SDK, built in three ways
// (tests/test_plugins/CMakeLists.txt) for tests/unit/declared_traits_test.cpp:
//   DPTUNE_TEST_DECLARES 0  no traits(): it declares nothing, so the host holds it to every rule of
//                           a private tuner (the safe default);
//   DPTUNE_TEST_DECLARES 1  traits() declaring private outputs explicitly;
//   DPTUNE_TEST_DECLARES 2  traits() declaring a privacy-utility map (as grid does).
// It evaluates the centre of the search space once, privately, and releases it with that run's
// guarantee (private) or as a map trial (map), keeping the run's model as a releasing tuner does.
// When tune() starts it appends a line to the file named by its `marker` param, so that a test can
// tell whether the host ever ran it.
#include <fstream>
#include <string>
#include <vector>

#include "dptune/plugin.hpp"

namespace {

class DeclaringTuner final : public dptune::Tuner {
 public:
  explicit DeclaringTuner(const dptune::Params& p) : marker_(p.get_string("marker")) {}
  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_string("marker", "file to append a line to when tune() starts (empty: none)")
        .default_to(std::string());
  }
#if DPTUNE_TEST_DECLARES == 1
  static dptune::TunerTraits traits() { return {.outputs = dptune::TunerOutputs::Private}; }
#elif DPTUNE_TEST_DECLARES == 2
  static dptune::TunerTraits traits() { return {.outputs = dptune::TunerOutputs::Map}; }
#endif

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    if (!marker_.empty()) std::ofstream(marker_, std::ios::app) << "tune() started\n";
    dptune::EvaluationRequest request;
    request.candidate = context.space().from_unit(std::vector<double>(context.space().size(), 0.5));
    request.keep_output = true;  // the model a release would write, if the host released one
    const dptune::Evaluation run = context.evaluator().evaluate({request}).front();
    dptune::Trial trial;
    trial.params = run.request.candidate;
    trial.privacy = run.privacy;
    trial.utility_mean = trial.utility_min = trial.utility_max = run.utility_mean;
    trial.repetitions = run.request.repetitions;
    dptune::TuningResult result;
    if (DPTUNE_TEST_DECLARES == 2) {
      result.trials.push_back(trial);
      result.trusted_analyst_only = true;
    } else {
      result.selected = trial;
      result.guarantee = run.privacy;
    }
    return result;
  }

 private:
  std::string marker_;
};

}  // namespace

// One expansion level more, so that DPTUNE_TEST_TUNER_NAME becomes its value before DPTUNE_PLUGIN
// stringizes it.
#define DPTUNE_TEST_EXPORT(NAME) \
  DPTUNE_PLUGIN(tuner, NAME, DeclaringTuner, "1.0.0", "a third party's tuner (test)")
DPTUNE_TEST_EXPORT(DPTUNE_TEST_TUNER_NAME)
