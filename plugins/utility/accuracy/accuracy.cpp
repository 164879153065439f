// Accuracy utility oracle (Avent et al. 2020 §4: classification error = 1 − accuracy): the fraction
// of predicted class indices equal to the true labels.
#include "dptune/dptune.hpp"
#include "dptune/masked_label.hpp"

namespace {

class Accuracy final : public dptune::Utility {
 public:
  explicit Accuracy(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }
  // A mean of per-record scores in {0, 1}: one scored record moves it by at most 1/n.
  static dptune::UtilityTraits traits() {
    return {dptune::UtilityTraits::Sensitivity::MeanOfRecords, 1.0,
            "accuracy is the mean of per-record scores in {0, 1}"};
  }

  double score(std::span<const double> truth, const dptune::Predictions& predicted) const override {
    dptune::require(truth.size() == predicted.values.size(),
                    "accuracy: " + std::to_string(truth.size()) + " true labels but " +
                        std::to_string(predicted.values.size()) + " predictions");
    dptune::require(!truth.empty(), "accuracy: no examples to score");
    // A masked record (a label outside the declared set, dptune::kMaskedLabel) counts in n and is
    // never correct, whatever is predicted for it.
    std::size_t correct = 0;
    for (std::size_t i = 0; i < truth.size(); ++i)
      correct += !dptune::is_masked_label(truth[i]) && truth[i] == predicted.values[i];
    return static_cast<double>(correct) / static_cast<double>(truth.size());
  }
};

}  // namespace

DPTUNE_PLUGIN(utility, accuracy, Accuracy, "1.0.0", "fraction of correctly predicted labels")
