// The two-sided geometric mechanism (Ghosh, Roughgarden and Sundararajan, "Universally
// utility-maximizing privacy mechanisms", STOC 2009), also called the discrete Laplace mechanism.
//
// For an integer-valued query f with L1 sensitivity Δ it releases f(D) + Z, with Z drawn
// independently per coordinate from P(Z = k) = (1 - α) / (1 + α) · α^|k|, α = exp(-ε / Δ).  For
// neighbouring D, D' and any integer output vector y, P(y | D) / P(y | D') ≤ α^-‖f(D) - f(D')‖₁ ≤
// α^-Δ = e^ε: the release is ε-DP (pure), which is exactly what event() states.  Outputs are
// integers, so no floating-point attack on the noise's low bits applies.
//
// Input values are rounded to the nearest integer first.  That is only free of privacy cost for a
// query that is integer-valued to begin with (rounding a real-valued query could increase its
// sensitivity), so release() refuses values farther than 1e-9 (relative) from an integer.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <dptune/dptune.hpp>

namespace {

class GeometricMechanism final : public dptune::Mechanism {
 public:
  explicit GeometricMechanism(const dptune::Params& params)
      : epsilon_(params.get_double("epsilon")) {
    dptune::require(
        std::isfinite(epsilon_) && epsilon_ > 0,
        "geometric: epsilon must be a finite number > 0, got " + std::to_string(epsilon_));
  }

  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    schema.add_float("epsilon", "privacy of one release (pure ε-DP)").min_exclusive(0);
    return schema;
  }

  std::vector<double> release(std::span<const double> values,
                              const dptune::Sensitivity& sensitivity,
                              dptune::RandomBitGenerator& rng) const override {
    dptune::require(std::isfinite(sensitivity.l1) && sensitivity.l1 > 0,
                    "geometric: sensitivity.l1 must be a finite number > 0, got " +
                        std::to_string(sensitivity.l1));
    const double alpha = std::exp(-epsilon_ / sensitivity.l1);
    std::vector<double> released;
    released.reserve(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double value = values[i];
      const double rounded = std::nearbyint(value);
      dptune::require(std::isfinite(value) &&
                          std::abs(value - rounded) <= 1e-9 * std::max(1.0, std::abs(value)),
                      "geometric: values[" + std::to_string(i) + "] = " + std::to_string(value) +
                          " is not an integer; the geometric mechanism is for integer-valued "
                          "queries");
      released.push_back(rounded + static_cast<double>(dptune::two_sided_geometric(rng, alpha)));
    }
    return released;
  }

  dptune::DpEvent event() const override { return dptune::DpEvent::pure_dp(epsilon_); }

 private:
  double epsilon_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, geometric, GeometricMechanism, "1.0.0",
              "two-sided geometric (discrete Laplace) noise for integer-valued queries, pure "
              "epsilon-DP (Ghosh, Roughgarden, Sundararajan 2009)")
