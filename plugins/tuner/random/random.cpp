// Random search: candidates drawn independently from the search space (uniform, log-uniform for log
// dimensions), the baseline DPareto is compared with (paper 000, §4.1).  Not a private tuner.
#include "dptune/dptune.hpp"

namespace {

class RandomSearch final : public dptune::Tuner {
 public:
  explicit RandomSearch(const dptune::Params& p)
      : trials_(static_cast<std::size_t>(p.get_int("trials"))) {}

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_int("trials", "number of random candidates")
        .min(1)
        .default_to(std::int64_t{100});
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    std::vector<dptune::Params> candidates;
    candidates.reserve(trials_);
    for (std::size_t i = 0; i < trials_; ++i)
      candidates.push_back(context.space().sample(context.rng()));
    dptune::TuningResult result;
    result.trials = dptune::evaluate_for_map(context, candidates, "random");
    result.trusted_analyst_only = true;
    result.notes.push_back(std::to_string(trials_) +
                           " candidates sampled independently from the search space");
    return result;
  }

 private:
  std::size_t trials_;
};

}  // namespace

DPTUNE_PLUGIN(tuner, random, RandomSearch, "1.0.0",
              "random search; maps the privacy-utility trade-off (trusted analysts only)")
