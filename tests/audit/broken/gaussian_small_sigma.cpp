// DELIBERATELY BROKEN (a test fixture for `dptune audit`, never for use): a Gaussian mechanism
// whose noise is a quarter smaller than it claims.  It adds N(0, (0.75 σ Δ₂)²) and claims
// Gaussian(σ).
#include "dptune/dptune.hpp"

namespace {

class GaussianSmallSigma final : public dptune::Mechanism {
 public:
  explicit GaussianSmallSigma(const dptune::Params& p) : sigma_(p.get_double("noise_multiplier")) {}

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_float("noise_multiplier", "σ: claimed noise stddev / L2 sensitivity")
        .min_exclusive(0)
        .default_to(1.0);
  }

  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    std::vector<double> out(values.begin(), values.end());
    for (double& v : out) v += dptune::gaussian(rng, 0.75 * sigma_ * s.l2);  // BUG: 0.75
    return out;
  }

  dptune::DpEvent event() const override { return dptune::DpEvent::gaussian(sigma_); }

 private:
  double sigma_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, broken_gaussian_small_sigma, GaussianSmallSigma, "0.0.1",
              "BROKEN test fixture: Gaussian noise a quarter smaller than claimed")
