// Grid search over the search space: the exhaustive baseline of Avent et al. 2020 (§2.2, §4.1),
// which maps the privacy–utility trade-off for trusted analysts.  Not a private tuner: every trial
// is reported.  With `private: false` it runs the algorithm non-privately (no noise, no ε): the
// non-private baseline of Ding et al.; Liebenow et al. 2025.
#include "dptune/dptune.hpp"
#include "dptune/helpers/tuning.hpp"

namespace {

class GridSearch final : public dptune::Tuner {
 public:
  explicit GridSearch(const dptune::Params& p)
      : points_(static_cast<std::size_t>(p.get_int("points_per_dimension"))),
        private_(p.get_bool("private")) {}

  // A privacy-utility map for trusted analysts: no guarantee, no model released.
  static dptune::TunerTraits traits() { return {.outputs = dptune::TunerOutputs::Map}; }

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_int(
            "points_per_dimension",
            "grid points per float dimension (ints and categoricals: all values up to this many)")
        .min(1)
        .default_to(std::int64_t{10})
        .add_bool("private",
                  "true: private runs, each trial priced by the accountant; false: non-private "
                  "baseline runs (no noise, no privacy guarantee, no epsilon)")
        .default_to(true);
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    const auto candidates = context.space().grid(points_);
    dptune::TuningResult result;
    result.trials = dptune::evaluate_for_map(context, candidates,
                                             private_ ? "grid" : "grid (non-private)", 0, private_);
    result.trusted_analyst_only = true;
    result.notes.push_back("grid of " + std::to_string(candidates.size()) + " candidates (" +
                           std::to_string(points_) + " points per dimension)");
    if (!private_)
      result.notes.push_back(
          "non-private baseline: every run trained without privacy (private: false); the trials "
          "carry no privacy guarantee and no epsilon");
    return result;
  }

 private:
  std::size_t points_;
  bool private_;
};

}  // namespace

DPTUNE_PLUGIN(tuner, grid, GridSearch, "1.0.0",
              "exhaustive grid search; maps the privacy-utility trade-off (trusted analysts only)")
