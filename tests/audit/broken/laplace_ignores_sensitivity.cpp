// DELIBERATELY BROKEN (a test fixture for `dptune audit`, never for use): a Laplace mechanism that
// ignores the sensitivity it is given.  It adds Laplace(0, b) instead of Laplace(0, b · Δ₁) yet
// claims Laplace(b), i.e. (1/b)-DP; for a query with Δ₁ = 16 it is really (16/b)-DP.
#include "dptune/dptune.hpp"

namespace {

class LaplaceIgnoresSensitivity final : public dptune::Mechanism {
 public:
  explicit LaplaceIgnoresSensitivity(const dptune::Params& p)
      : b_(p.get_double("noise_multiplier")) {}

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_float("noise_multiplier", "b: claimed noise scale / L1 sensitivity")
        .min_exclusive(0)
        .default_to(1.0);
  }

  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator& rng) const override {
    std::vector<double> out(values.begin(), values.end());
    for (double& v : out) v += dptune::laplace(rng, b_);  // BUG: should be b_ · sensitivity.l1
    return out;
  }

  dptune::DpEvent event() const override { return dptune::DpEvent::laplace(b_); }

 private:
  double b_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, broken_laplace_ignores_sensitivity, LaplaceIgnoresSensitivity, "0.0.1",
              "BROKEN test fixture: Laplace noise that ignores the L1 sensitivity")
