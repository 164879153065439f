// A test tuner with the bug `dptune check release` exists to catch: a private tuner (it declares
// nothing, so the host holds it to the private rules) that releases the best of two runs, and
// also prints both runs' scores in a note that is not a declared DP output.
#include <cstdio>
#include <string>

#include "dptune/plugin.hpp"

namespace {

class LeakyTuner final : public dptune::Tuner {
 public:
  explicit LeakyTuner(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    std::vector<dptune::EvaluationRequest> requests(2);
    const std::size_t dims = context.space().size();
    requests[0].candidate = context.space().from_unit(std::vector<double>(dims, 0.25));
    requests[1].candidate = context.space().from_unit(std::vector<double>(dims, 0.75));
    const std::vector<dptune::Evaluation> runs = context.evaluator().evaluate(requests);
    const std::size_t best = runs[1].utility_mean > runs[0].utility_mean ? 1 : 0;
    dptune::Trial trial;
    trial.params = runs[best].request.candidate;
    trial.privacy = runs[best].privacy;
    trial.utility_mean = trial.utility_min = trial.utility_max = runs[best].utility_mean;
    trial.repetitions = runs[best].request.repetitions;
    dptune::TuningResult result;
    result.selected = trial;
    result.guarantee = context.accountant().epsilon(
        dptune::DpEvent::composed({runs[0].event, runs[1].event}), context.delta());
    char note[96];
    std::snprintf(note, sizeof note, "the two runs scored %.6f and %.6f", runs[0].utility_mean,
                  runs[1].utility_mean);
    result.notes.emplace_back(note);  // the leak: raw scores of private runs
    return result;
  }
};

}  // namespace

DPTUNE_PLUGIN(tuner, leaky, LeakyTuner, "0.1.0",
              "test: a private tuner that prints its runs' scores in a note")
