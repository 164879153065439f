// The Gaussian mechanism: adds N(0, (σ · Δ₂)²) to every coordinate, Δ₂ the query's L2 sensitivity
// and σ the noise multiplier; event Gaussian(σ).  Used by DP-SGD, DP-Adam and output perturbation
// for their noise, so a third-party mechanism with the same event can replace it from YAML.
//
// `noise: secure` (default) releases on a power-of-two grid with exact discrete Gaussian noise
// whose σ is scaled to the rounded query's sensitivity Δ₂ + g·√d (dptune/grid_noise.hpp): for
// integer shifts the discrete Gaussian's Rényi divergences equal the continuous one's (Canonne,
// Kamath & Steinke 2020, Proposition 5), so Gaussian(σ) holds for the numbers released
// (docs/noise.md says which accountant paths rest on more).  `noise: fast` keeps the floating-point
// polar method below, insecure (Mironov 2012) and labelled so in every report.
//
// Speed: DP-SGD calls release once per step on the whole gradient, so the normals are drawn in bulk
// here with both outputs of each Box–Muller pair (r cos θ, r sin θ: independent standard normals),
// half the uniforms, logarithms and square roots of the SDK's one-output dptune::gaussian, on top
// of the SDK's own uniform samplers (never <random>'s distributions).
#include <cmath>
#include <string>

#include "dptune/dptune.hpp"

namespace {

class Gaussian final : public dptune::Mechanism {
 public:
  explicit Gaussian(const dptune::Params& p)
      : sigma_(p.get_double("noise_multiplier")),
        secure_(!p.contains("noise") || p.get_string("noise") == "secure") {}

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_float("noise_multiplier", "σ: noise stddev / L2 sensitivity")
        .min(0)
        .default_to(1.0)
        .add_string("noise",
                    "secure: exact discrete Gaussian on a power-of-two grid; fast: floating-point "
                    "polar method (insecure, Mironov 2012; labelled in every report)")
        .one_of({"secure", "fast"})
        .default_to(std::string("secure"));
  }

  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    dptune::require(s.l2 >= 0 && std::isfinite(s.l2),
                    "gaussian: L2 sensitivity must be finite and >= 0");
    if (secure_)
      return dptune::grid_gaussian(values, s.l2, sigma_,
                                   dptune::gaussian_grid(s.l2, sigma_, values.size()), rng);
    std::vector<double> out(values.begin(), values.end());
    const double sd = sigma_ * s.l2;
    if (sd == 0) return out;
    const std::size_t n = out.size();
    std::size_t i = 0;
    while (i < n) {
      // Marsaglia's polar method: (u, v) uniform in the unit disc (rejection, acceptance π/4);
      // with s = u² + v², u·√(−2 ln s / s) and v·√(−2 ln s / s) are independent N(0, 1).
      const double u = 2.0 * dptune::uniform_open01(rng) - 1.0;
      const double v = 2.0 * dptune::uniform_open01(rng) - 1.0;
      const double q = u * u + v * v;
      if (q >= 1.0 || q == 0.0) continue;
      const double f = sd * std::sqrt(-2.0 * std::log(q) / q);
      out[i++] += u * f;
      if (i < n) out[i++] += v * f;
    }
    return out;
  }

  dptune::DpEvent event() const override { return dptune::DpEvent::gaussian(sigma_); }

 private:
  double sigma_;
  bool secure_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, gaussian, Gaussian, "1.0.0",
              "Gaussian mechanism: N(0, (σ · L2 sensitivity)²) per coordinate")
