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
  using Form = dptune::UtilityTraits::Sensitivity;
  const dptune::UtilityTraits declared = utility.traits.utility.value_or(dptune::UtilityTraits{});
  const double n = static_cast<double>(scored_rows);
  const std::string rows = std::to_string(scored_rows);
  const bool usable = std::isfinite(declared.scale) && declared.scale >= 0;
  if (declared.sensitivity == Form::MeanOfRecords && usable) {
    // A function f with |f(a) - f(b)| <= |a - b| of the mean m of n terms in [0, C]: replacing a
    // record moves m by <= C/n; removing record c gives |m - c| / (n - 1) <= C/n since m includes
    // c; adding one moves it by <= C/(n + 1).  A score in [0, 1] moves by at most 1 anyway.
    out.per_record = std::min(1.0, declared.scale / n);
    out.derivation = declared.derivation + " (" + rows +
                     " scored records, per-record terms in [0, " + significant(declared.scale) +
                     "]): one record moves it by at most min(1, " + significant(declared.scale) +
                     "/" + rows + ")";
  } else if (declared.sensitivity == Form::Constant && usable) {
    out.per_record = std::min(1.0, declared.scale);
    out.derivation = declared.derivation;
  } else {
    out.derivation = "the utility '" + utility.use +
                     "' declares no per-record sensitivity (UtilityTraits), so the host knows no "
                     "bound for it";
  }
  return out;
}

}  // namespace dptune::host
