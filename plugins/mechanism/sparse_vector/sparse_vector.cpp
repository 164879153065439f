// Sparse vector technique, non-interactive, as DPareto's Algorithm 1 (Avent et al. 2020, §2.2):
// total noise b and bound C; threshold noise b1 = b / (1 + (2C)^{1/3}), query noise b2 = b − b1;
// releases the indicator of the (at most C) queries found above the threshold 1/2.
//
// Privacy (Avent et al. 2020, Appendix B): Algorithm 1 is Lyu, Su & Li (2017) Algorithm 7 with Δ =
// 1, T = 1/2, ε1 = 1/b1 and ε2 = 2C/b2, hence (ε1 + ε2, 0)-DP with
//   ε = (1 + (2C)^{1/3}) (1 + (2C)^{2/3}) / b.
// With a per-query sensitivity Δ ≠ 1 both noises scale by Δ and ε is unchanged.
//
// `noise: secure` (default): the threshold and every answer are rounded to one
// power-of-two grid g and get exact discrete Laplace noise (dptune/helpers/grid_noise.hpp) of
// scales b1 (Δ/g + 1) and b2 (Δ/g + 1) grid units; the comparisons are between exact multiples of
// g.  The rounded answers move by at most the integer Δ'' = floor(Δ/g) + 1 <= Δ/g + 1, and Lyu, Su
// & Li's proof (shift ρ by Δ'', each positive query's noise by 2Δ'') uses only implications between
// the comparisons, valid for integers with ties as for reals, and the pmf ratio exp(Δ''/t) of the
// discrete Laplace for an integer shift: ε is unchanged.  `noise: fast` keeps floating-point
// Laplace (insecure, Mironov 2012; labelled in every report).
#include <algorithm>
#include <cmath>
#include <string>

#include "dptune/dptune.hpp"
#include "dptune/helpers/grid_noise.hpp"

namespace {

class SparseVector final : public dptune::Mechanism {
 public:
  explicit SparseVector(const dptune::Params& p)
      : b_(p.get_double("b")),
        c_(p.get_int("C")),
        threshold_(p.get_double("threshold")),
        secure_(!p.contains("noise") || p.get_string("noise") == "secure") {}

  static dptune::ParamSchema schema() {
    // One parameter per group of lines, with its bounds, choices and default.
    // clang-format off
    return dptune::ParamSchema{}
        .add_float("b", "total noise level b").min_exclusive(0)
        .add_int("C", "bound C on the number of released positives").min(1)
        .add_float("threshold", "threshold T the noisy answers are compared with").default_to(0.5)
        .add_string("noise",
                    "secure: exact discrete Laplace on a power-of-two grid; fast: floating-point "
                    "Laplace (insecure, Mironov 2012; labelled in every report)")
            .one_of({"secure", "fast"}).default_to(std::string("secure"));
    // clang-format on
  }

  /// Closed form of Avent et al. 2020, Appendix B.
  static double epsilon(double b, double c) {
    const double r = std::cbrt(2.0 * c);
    return (1.0 + r) * (1.0 + r * r) / b;
  }
  double threshold_noise() const { return b_ / (1.0 + std::cbrt(2.0 * static_cast<double>(c_))); }
  double query_noise() const { return b_ - threshold_noise(); }

  std::vector<double> release(std::span<const double> answers,
                              const dptune::Sensitivity& sensitivity,
                              dptune::RandomBitGenerator& rng) const override {
    check_sensitivity(sensitivity);
    if (secure_) return release_on_grid(answers, sensitivity.linf, rng);
    const double noisy_threshold =
        threshold_ + dptune::laplace(rng, threshold_noise() * sensitivity.linf);
    const double query_scale = query_noise() * sensitivity.linf;
    std::vector<double> released(answers.size(), 0.0);
    std::int64_t count = 0;
    for (std::size_t i = 0; i < answers.size(); ++i) {
      if (answers[i] + dptune::laplace(rng, query_scale) >= noisy_threshold) {
        released[i] = 1.0;
        if (++count >= c_) break;  // halt after C positives: the rest stay 0
      }
    }
    return released;
  }

  static void check_sensitivity(const dptune::Sensitivity& sensitivity) {
    dptune::require(sensitivity.linf > 0 && std::isfinite(sensitivity.linf),
                    "sparse_vector: per-query sensitivity must be positive and finite");
  }

  /// The secure variant (see the top of the file): one grid for the threshold and all answers,
  /// each noised as a one-coordinate grid release of sensitivity Δ.
  std::vector<double> release_on_grid(std::span<const double> answers, double linf,
                                      dptune::RandomBitGenerator& rng) const {
    const double b1 = threshold_noise(), b2 = query_noise();
    const double grid = dptune::laplace_grid(linf, std::max(b1, b2), 1);
    const double t[] = {threshold_};
    const double noisy_threshold = dptune::grid_laplace(t, linf, b1, grid, rng)[0];
    std::vector<double> released(answers.size(), 0.0);
    std::int64_t count = 0;
    for (std::size_t i = 0; i < answers.size(); ++i) {
      if (dptune::grid_laplace(answers.subspan(i, 1), linf, b2, grid, rng)[0] >= noisy_threshold) {
        released[i] = 1.0;
        if (++count >= c_) break;  // halt after C positives: the rest stay 0
      }
    }
    return released;
  }

  dptune::DpEvent event() const override {
    return dptune::DpEvent::pure_dp(epsilon(b_, static_cast<double>(c_)));
  }

  /// What release() refuses before it looks at an answer: the sensitivity, and under secure noise
  /// the grid and the sampler's range of both noises, and the threshold on that grid (every query
  /// is a one-coordinate release, so the count does not enter).  Asked before any privacy is spent.
  std::string release_refusal(std::size_t, const dptune::Sensitivity& sensitivity) const override {
    try {
      check_sensitivity(sensitivity);
      if (secure_) {
        const double grid =
            dptune::laplace_grid(sensitivity.linf, std::max(threshold_noise(), query_noise()), 1);
        (void)dptune::grid_laplace_scale(sensitivity.linf, threshold_noise(), grid, 1);
        (void)dptune::grid_laplace_scale(sensitivity.linf, query_noise(), grid, 1);
        const std::int64_t no_noise[] = {0};
        const double t[] = {threshold_};
        (void)dptune::add_noise_on_grid(t, grid, no_noise);  // the threshold within 2^52 steps
      }
    } catch (const dptune::Error& e) {
      return e.what();
    }
    return {};
  }

 private:
  double b_;
  std::int64_t c_;
  double threshold_;
  bool secure_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, sparse_vector, SparseVector, "1.0.0",
              "non-interactive sparse vector technique (DPareto Alg. 1): noise b, bound C; pure DP")
