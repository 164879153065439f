// F1 score utility oracle (paper 000, §2.2: "the F1-score between the vector of true answers and
// the vector w returned by the algorithm"): F1 = 2 tp / (2 tp + fp + fn), positives being values >=
// the threshold.  With no positive in either vector the release is perfect: F1 = 1.
#include <cmath>

#include "dptune/dptune.hpp"

namespace {

class F1 final : public dptune::Utility {
 public:
  explicit F1(const dptune::Params& p) : threshold_(p.get_double("threshold")) {}

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_float("threshold", "a released value >= threshold counts as positive")
        .default_to(0.5);
  }

  double score(std::span<const double> truth, const dptune::Predictions& predicted) const override {
    dptune::require(truth.size() == predicted.values.size(),
                    "f1: " + std::to_string(truth.size()) + " true values but " +
                        std::to_string(predicted.values.size()) + " predictions");
    std::size_t tp = 0, fp = 0, fn = 0;
    for (std::size_t i = 0; i < truth.size(); ++i) {
      const bool actual = truth[i] >= threshold_, released = predicted.values[i] >= threshold_;
      tp += actual && released;
      fp += !actual && released;
      fn += actual && !released;
    }
    if (tp + fp + fn == 0) return 1.0;
    return 2.0 * static_cast<double>(tp) / static_cast<double>(2 * tp + fp + fn);
  }

 private:
  double threshold_;
};

}  // namespace

DPTUNE_PLUGIN(utility, f1, F1, "1.0.0", "F1 score of released positives against the true ones")
