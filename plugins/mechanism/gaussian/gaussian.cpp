// The Gaussian mechanism: adds N(0, (σ · Δ₂)²) to every coordinate, Δ₂ the query's L2 sensitivity
// and σ the noise multiplier.  Used by DP-SGD, DP-Adam, output perturbation and DP-Hype for their
// noise, so a third-party mechanism with the same event can replace it from YAML.
//
// `noise: secure` (default) releases on a power-of-two grid with exact discrete Gaussian noise
// whose σ is scaled to the rounded query's sensitivity Δ₂/g + √d in grid units
// (dptune/helpers/grid_noise.hpp), and states what it draws: discrete_gaussian_on_grid(σ, 2^22),
// the discrete Gaussian with its scale in grid units at least 2^22, which the accountants price by
// the discrete Gaussian's own theorems (Canonne, Kamath & Steinke 2020, Proposition 5; rdp) and,
// knowing the scale, as a post-processing of a continuous Gaussian up to an explicit additive δ
// (pld; docs/accounting.md, "The discrete Gaussian").  The release enforces the stated scale.
// `noise: fast` keeps a floating-point sampler (the ziggurat below), states gaussian(σ), and is
// insecure (Mironov 2012), labelled so in every report.
//
// Speed: DP-SGD calls release once per step on the whole gradient (one normal per parameter), so
// `noise: fast` draws by the ziggurat method (dptune/helpers/fast_normal.hpp; Marsaglia & Tsang
// 2000): one 64-bit word, a multiplication and a comparison for about 99% of the normals, against
// two uniforms, a logarithm and a square root per pair for the polar method it replaced.
#include <cmath>
#include <string>

#include "dptune/dptune.hpp"
#include "dptune/helpers/fast_normal.hpp"
#include "dptune/helpers/grid_noise.hpp"

namespace {

class Gaussian final : public dptune::Mechanism {
 public:
  explicit Gaussian(const dptune::Params& p)
      : sigma_(p.get_double("noise_multiplier")),
        secure_(!p.contains("noise") || p.get_string("noise") == "secure") {}

  static dptune::ParamSchema schema() {
    // One parameter per group of lines, with its bounds, choices and default.
    // clang-format off
    return dptune::ParamSchema{}
        .add_float("noise_multiplier", "σ: noise stddev / L2 sensitivity").min(0).default_to(1.0)
        .add_string("noise",
                    "secure: exact discrete Gaussian on a power-of-two grid; fast: floating-point "
                    "ziggurat (insecure, Mironov 2012; labelled in every report)")
            .one_of({"secure", "fast"}).default_to(std::string("secure"));
    // clang-format on
  }

  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    dptune::require(s.l2 >= 0 && std::isfinite(s.l2),
                    "gaussian: L2 sensitivity must be finite and >= 0");
    if (secure_) {
      const double grid = dptune::gaussian_grid(s.l2, sigma_, values.size());
      return dptune::grid_gaussian(values, s.l2, multiplier_on_grid(s.l2, grid, values.size()),
                                   grid, rng);
    }
    std::vector<double> out(values.begin(), values.end());
    const double sd = sigma_ * s.l2;
    if (sd == 0) return out;
    dptune::ZigguratNormal::instance().add_to(rng, sd, out);
    return out;
  }

  dptune::DpEvent event() const override {
    return secure_
               ? dptune::DpEvent::discrete_gaussian_on_grid(sigma_, dptune::kGaussianGridMinScale)
               : dptune::DpEvent::gaussian(sigma_);
  }

 private:
  /// σ, or more where needed so that the noise in grid units is at least the stated min_scale
  /// 2^22: the grid rule gives that unless the step is clamped at 2^-1000 (an L2 sensitivity
  /// below about 2^-977), where the noise is raised (more noise only lowers every divergence).
  /// Checked on the rational σ² the sampler is given, exactly.
  double multiplier_on_grid(double l2, double grid, std::size_t count) const {
    if (l2 == 0 || sigma_ == 0) return sigma_;
    __extension__ using u128 = unsigned __int128;
    constexpr u128 kMinVariance = u128{1} << 44;  // (2^22)²
    double multiplier = sigma_;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const auto variance = dptune::grid_gaussian_variance(l2, multiplier, grid, count);
      if (u128{variance.numerator} >= kMinVariance * variance.denominator) return multiplier;
      const double scale = std::sqrt(static_cast<double>(variance.numerator) /
                                     static_cast<double>(variance.denominator));
      multiplier *= dptune::kGaussianGridMinScale / scale * (1 + 1e-9);
    }
    throw dptune::Error("gaussian: the noise could not be raised to 2^22 grid units");
  }

  double sigma_;
  bool secure_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, gaussian, Gaussian, "1.0.0",
              "Gaussian mechanism: N(0, (σ · L2 sensitivity)²) per coordinate")
