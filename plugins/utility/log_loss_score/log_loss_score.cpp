// A bounded loss-based utility: exp(−mean cross-entropy) = the geometric mean, over the examples,
// of the probability the model gives the true class.  In (0, 1], 1 for a certain and correct model,
// 1/K for a uniform guess over K classes; unlike accuracy it rewards calibrated confidence.
// Probabilities are floored at `floor` (default 1e-15) so that one confident mistake cannot make
// the log infinite.
#include <algorithm>
#include <cmath>

#include "dptune/dptune.hpp"
#include "dptune/masked_label.hpp"

namespace {

class LogLossScore final : public dptune::Utility {
 public:
  explicit LogLossScore(const dptune::Params& p) : floor_(p.get_double("floor")) {}
  static dptune::ParamSchema schema() {
    // One parameter per group of lines, with its bounds, choices and default.
    // clang-format off
    return dptune::ParamSchema{}
        .add_float("floor", "smallest probability used in the log")
            .min_exclusive(0).max_exclusive(1).default_to(1e-15);
    // clang-format on
  }
  // exp(-L), L the mean of per-record losses -ln(max(p, floor)) in [0, ln(1/floor)], and exp(-L)
  // is 1-Lipschitz for L >= 0: one scored record moves it by at most min(1, ln(1/floor)/n).
  static dptune::UtilityTraits traits(const dptune::Params& p) {
    return {dptune::UtilityTraits::Sensitivity::MeanOfRecords, -std::log(p.get_double("floor")),
            "log_loss_score is exp(-L), L the mean of per-record losses in [0, ln(1/floor)], and "
            "exp(-L) is 1-Lipschitz"};
  }

  double score(std::span<const double> truth, const dptune::Predictions& predicted) const override {
    const std::size_t n = truth.size(), k = predicted.num_classes;
    dptune::require(n > 0, "log_loss_score: no examples to score");
    dptune::require(k >= 2 && predicted.probabilities.size() == n * k,
                    "log_loss_score: the algorithm gave no class probabilities "
                    "(need rows x classes = " +
                        std::to_string(n) + " x " + std::to_string(k) + ", got " +
                        std::to_string(predicted.probabilities.size()) + " values)");
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double y = truth[i];
      if (dptune::is_masked_label(y)) {
        // A masked record counts in n and is never right: the largest loss, ln(1/floor), a
        // per-record value inside the sensitivity bound [0, ln(1/floor)].
        total -= std::log(floor_);
        continue;
      }
      dptune::require(y >= 0 && y < static_cast<double>(k) && y == std::floor(y),
                      "log_loss_score: label " + std::to_string(y) + " is not a class index");
      const double p = predicted.probabilities[i * k + static_cast<std::size_t>(y)];
      total -= std::log(std::clamp(p, floor_, 1.0));
    }
    return std::exp(-total / static_cast<double>(n));
  }

 private:
  double floor_;
};

}  // namespace

DPTUNE_PLUGIN(utility, log_loss_score, LogLossScore, "1.0.0",
              "exp(−mean cross-entropy): geometric mean probability of the true class, in (0, 1]")
