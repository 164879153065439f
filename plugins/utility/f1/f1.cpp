// F1 score utility oracle.
//  * average: binary (default) — Avent et al. 2020, §2.2: "the F1-score between the vector of
//    true answers and the vector w returned by the algorithm": F1 = 2 tp / (2 tp + fp + fn),
//    positives being values >= the threshold.  With no positive in either vector the release is
//    perfect: F1 = 1.
//  * average: macro — multi-class: the unweighted mean over classes of the one-vs-rest F1 of class
//    indices, over the classes that occur in the truth or in the predictions (a class absent from
//    both has no defined F1 and is left out, as scikit-learn's labels=present convention).
//  * A masked record (dptune::kMaskedLabel: a label outside the declared set) adds no true or
//    false positive or negative in either mode: it scores as a true negative would.  F1's
//    per-record sensitivity is the trivial 1 (utility_sensitivity), which covers that too.
#include <algorithm>
#include <cmath>
#include <map>

#include "dptune/dptune.hpp"
#include "dptune/masked_label.hpp"

namespace {

double f1_of(std::size_t tp, std::size_t fp, std::size_t fn) {
  if (tp + fp + fn == 0) return 1.0;
  return 2.0 * static_cast<double>(tp) / static_cast<double>(2 * tp + fp + fn);
}

class F1 final : public dptune::Utility {
 public:
  explicit F1(const dptune::Params& p)
      : threshold_(p.get_double("threshold")), macro_(p.get_string("average") == "macro") {}

  static dptune::ParamSchema schema() {
    // One parameter per group of lines, with its bounds, choices and default.
    // clang-format off
    return dptune::ParamSchema{}
        .add_float("threshold", "binary: a released value >= threshold counts as positive")
            .default_to(0.5)
        .add_string("average", "binary (positives vs the rest) or macro (mean over classes)")
            .one_of({"binary", "macro"}).default_to(std::string("binary"));
    // clang-format on
  }
  // Not a mean of per-record scores: only the trivial bound of a score in [0, 1].
  static dptune::UtilityTraits traits() {
    return {dptune::UtilityTraits::Sensitivity::Constant, 1.0,
            "f1 is not a mean of per-record scores: with a single true positive among negatives, "
            "replacing that record by a missed positive moves F1 from 1 to 0, so one record can "
            "move it by 1 (the trivial bound of a score in [0, 1]; macro-F1 is bounded by 1 the "
            "same way)"};
  }

  double score(std::span<const double> truth, const dptune::Predictions& predicted) const override {
    dptune::require(truth.size() == predicted.values.size(),
                    "f1: " + std::to_string(truth.size()) + " true values but " +
                        std::to_string(predicted.values.size()) + " predictions");
    if (macro_) return macro(truth, predicted.values);
    std::size_t tp = 0, fp = 0, fn = 0;
    for (std::size_t i = 0; i < truth.size(); ++i) {
      if (dptune::is_masked_label(truth[i])) continue;  // a masked record: no tp, fp or fn
      const bool actual = truth[i] >= threshold_, released = predicted.values[i] >= threshold_;
      tp += actual && released;
      fp += !actual && released;
      fn += actual && !released;
    }
    return f1_of(tp, fp, fn);
  }

 private:
  static double macro(std::span<const double> truth, const std::vector<double>& predicted) {
    struct Counts {
      std::size_t tp = 0, fp = 0, fn = 0;
    };
    std::map<double, Counts> classes;
    for (std::size_t i = 0; i < truth.size(); ++i) {
      if (dptune::is_masked_label(truth[i])) continue;  // a masked record counts for no class
      if (truth[i] == predicted[i]) {
        ++classes[truth[i]].tp;
      } else {
        ++classes[truth[i]].fn;
        ++classes[predicted[i]].fp;
      }
    }
    if (classes.empty()) return 1.0;
    double total = 0;
    for (const auto& [label, c] : classes) total += f1_of(c.tp, c.fp, c.fn);
    return total / static_cast<double>(classes.size());
  }

  double threshold_;
  bool macro_;
};

}  // namespace

DPTUNE_PLUGIN(utility, f1, F1, "1.1.0",
              "F1 score: binary (released positives vs true ones) or macro-averaged over classes")
