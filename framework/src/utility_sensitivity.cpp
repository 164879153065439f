#include "dptune/host/utility_sensitivity.hpp"

#include <algorithm>
#include <cmath>

#include "dptune/host/format.hpp"

namespace dptune::host {

dptune::UtilitySensitivity utility_sensitivity(const ComponentConfig& utility,
                                               std::size_t scored_rows) {
  dptune::UtilitySensitivity out;
  out.utility = utility.use;
  if (scored_rows == 0) {
    out.derivation = "no scored rows: the utility of an empty split has no sensitivity bound";
    return out;
  }
  const double n = static_cast<double>(scored_rows);
  const std::string rows = std::to_string(scored_rows);
  if (utility.use == "accuracy") {
    // a/n with a correct of n: replacing a record moves a by <= 1; adding or removing one gives
    // |(n x - a)| / (n (n +- 1)) <= 1/n as well (x the record's 0/1 score).
    out.per_record = 1 / n;
    out.derivation = "accuracy is the mean of " + rows +
                     " per-record scores in {0, 1}: one record moves it by at most 1/" + rows;
  } else if (utility.use == "log_loss_score") {
    // exp(-L), L = mean of per-record losses c_i = -ln(max(p_i, floor)) in [0, C], C = ln(1/floor).
    // Replace: |dL| <= C/n; remove: |L - c| / (n - 1) <= C/n since L includes c; add: <= C/(n+1).
    // |d exp(-L)| <= |dL| for L >= 0.
    const double floor =
        utility.params.contains("floor") ? utility.params.get_double("floor") : 1e-15;
    const double c = -std::log(floor);
    out.per_record = std::min(1.0, c / n);
    out.derivation = "log_loss_score is exp(-L), L the mean of " + rows +
                     " per-record losses in [0, ln(1/floor)] = [0, " + significant(c) +
                     "]; one record moves L by at most " + significant(c) + "/" + rows +
                     " and exp(-L) is 1-Lipschitz, so min(1, " + significant(c) + "/" + rows + ")";
  } else if (utility.use == "f1") {
    out.per_record = 1.0;
    out.derivation =
        "f1 is not a mean of per-record scores: with a single true positive among negatives, "
        "replacing that record by a missed positive moves F1 from 1 to 0, so one record can move "
        "it by 1 (the trivial bound of a score in [0, 1]; macro-F1 is bounded by 1 the same way)";
  } else {
    out.derivation =
        "the host knows the per-record sensitivity of the utilities accuracy, "
        "log_loss_score and f1 only, not of '" +
        utility.use + "'";
  }
  return out;
}

}  // namespace dptune::host
