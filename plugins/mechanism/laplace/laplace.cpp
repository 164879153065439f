// The Laplace mechanism: adds Laplace(0, b · Δ₁) to every coordinate, Δ₁ the query's L1 sensitivity
// and b the noise multiplier (scale / L1 sensitivity); event Laplace(b), i.e. (1/b)-DP.
//
// `noise: secure` (default) releases on a power-of-two grid with exact discrete Laplace noise
// scaled to the rounded query's sensitivity Δ₁ + g·d (dptune/helpers/grid_noise.hpp; Canonne,
// Kamath & Steinke 2020), so that Laplace(b) holds for the numbers actually released.  `noise:
// fast` keeps the floating-point inversion sampler, whose outputs reveal the noiseless value's
// low-order bits (Mironov 2012): every report of such a run says so.
#include <cmath>
#include <string>

#include "dptune/dptune.hpp"
#include "dptune/helpers/grid_noise.hpp"

namespace {

class Laplace final : public dptune::Mechanism {
 public:
  explicit Laplace(const dptune::Params& p)
      : b_(p.get_double("noise_multiplier")),
        secure_(!p.contains("noise") || p.get_string("noise") == "secure") {}

  static dptune::ParamSchema schema() {
    // One parameter per group of lines, with its bounds, choices and default.
    // clang-format off
    return dptune::ParamSchema{}
        .add_float("noise_multiplier", "b: noise scale / L1 sensitivity (ε = 1/b)")
            .min(0).default_to(1.0)
        .add_string("noise",
                    "secure: exact discrete Laplace on a power-of-two grid; fast: floating-point "
                    "inversion (insecure, Mironov 2012; labelled in every report)")
            .one_of({"secure", "fast"}).default_to(std::string("secure"));
    // clang-format on
  }

  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    check_sensitivity(s);
    if (secure_)
      return dptune::grid_laplace(values, s.l1, b_, dptune::laplace_grid(s.l1, b_, values.size()),
                                  rng);
    std::vector<double> out(values.begin(), values.end());
    const double scale = b_ * s.l1;
    if (scale == 0) return out;
    for (double& v : out) v += dptune::laplace(rng, scale);
    return out;
  }

  /// What release() refuses before it looks at a value: the sensitivity, and under secure noise
  /// the grid and the sampler's range for b and this many coordinates (b·count above 2^28,
  /// dptune/helpers/grid_noise.hpp).  Asked by the host before any privacy is spent.
  std::string release_refusal(std::size_t count, const dptune::Sensitivity& s) const override {
    try {
      check_sensitivity(s);
      if (secure_) {
        const double grid = dptune::laplace_grid(s.l1, b_, count);
        if (s.l1 != 0 && b_ != 0) (void)dptune::grid_laplace_scale(s.l1, b_, grid, count);
      }
    } catch (const dptune::Error& e) {
      return e.what();
    }
    return {};
  }

  dptune::DpEvent event() const override { return dptune::DpEvent::laplace(b_); }

 private:
  static void check_sensitivity(const dptune::Sensitivity& s) {
    dptune::require(s.l1 >= 0 && std::isfinite(s.l1),
                    "laplace: L1 sensitivity must be finite and >= 0");
  }

  double b_;
  bool secure_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, laplace, Laplace, "1.0.0",
              "Laplace mechanism: Laplace(0, b · L1 sensitivity) per coordinate")
