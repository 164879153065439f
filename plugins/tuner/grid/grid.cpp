// Grid search over the search space: the exhaustive baseline of paper 000 (§2.2, §4.1), which maps
// the privacy–utility trade-off for trusted analysts.  Not a private tuner: every trial is
// reported.
#include "dptune/dptune.hpp"

namespace {

class GridSearch final : public dptune::Tuner {
 public:
  explicit GridSearch(const dptune::Params& p)
      : points_(static_cast<std::size_t>(p.get_int("points_per_dimension"))) {}

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_int(
            "points_per_dimension",
            "grid points per float dimension (ints and categoricals: all values up to this many)")
        .min(1)
        .default_to(std::int64_t{10});
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    const auto candidates = context.space().grid(points_);
    dptune::TuningResult result;
    result.trials = dptune::evaluate_for_map(context, candidates, "grid");
    result.trusted_analyst_only = true;
    result.notes.push_back("grid of " + std::to_string(candidates.size()) + " candidates (" +
                           std::to_string(points_) + " points per dimension)");
    return result;
  }

 private:
  std::size_t points_;
};

}  // namespace

DPTUNE_PLUGIN(tuner, grid, GridSearch, "1.0.0",
              "exhaustive grid search; maps the privacy-utility trade-off (trusted analysts only)")
