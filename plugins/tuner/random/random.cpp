// Random search: candidates drawn independently from the search space (uniform, log-uniform for log
// dimensions), the baseline DPareto is compared with (Avent et al. 2020, §4.1).  Not a private
// tuner.  With `private: false` it runs the algorithm non-privately (no noise, no ε): the
// non-private baseline of Ding et al.; Liebenow et al. 2025.
#include "dptune/dptune.hpp"
#include "dptune/helpers/tuning.hpp"

namespace {

class RandomSearch final : public dptune::Tuner {
 public:
  explicit RandomSearch(const dptune::Params& p)
      : trials_(static_cast<std::size_t>(p.get_int("trials"))), private_(p.get_bool("private")) {}

  // A privacy-utility map for trusted analysts: no guarantee, no model released.
  static dptune::TunerTraits traits() { return {.outputs = dptune::TunerOutputs::Map}; }

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_int("trials", "number of random candidates")
        .min(1)
        .default_to(std::int64_t{100})
        .add_bool("private",
                  "true: private runs, each trial priced by the accountant; false: non-private "
                  "baseline runs (no noise, no privacy guarantee, no epsilon)")
        .default_to(true);
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    std::vector<dptune::Params> candidates;
    candidates.reserve(trials_);
    for (std::size_t i = 0; i < trials_; ++i)
      candidates.push_back(context.space().sample(context.rng()));
    dptune::TuningResult result;
    result.trials = dptune::evaluate_for_map(
        context, candidates, private_ ? "random" : "random (non-private)", 0, private_);
    result.trusted_analyst_only = true;
    result.notes.push_back(std::to_string(trials_) +
                           " candidates sampled independently from the search space");
    if (!private_)
      result.notes.push_back(
          "non-private baseline: every run trained without privacy (private: false); the trials "
          "carry no privacy guarantee and no epsilon");
    return result;
  }

 private:
  std::size_t trials_;
  bool private_;
};

}  // namespace

DPTUNE_PLUGIN(tuner, random, RandomSearch, "1.0.0",
              "random search; maps the privacy-utility trade-off (trusted analysts only)")
