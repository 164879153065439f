// Sparse vector technique, non-interactive, as DPareto's Algorithm 1 (paper 000, §2.2): total noise
// b and bound C; threshold noise b1 = b / (1 + (2C)^{1/3}), query noise b2 = b − b1; releases the
// indicator of the (at most C) queries found above the threshold 1/2.
//
// Privacy (paper 000, Appendix B): Algorithm 1 is Lyu, Su & Li (2017) Algorithm 7 with Δ = 1,
// T = 1/2, ε1 = 1/b1 and ε2 = 2C/b2, hence (ε1 + ε2, 0)-DP with
//   ε = (1 + (2C)^{1/3}) (1 + (2C)^{2/3}) / b.
// With a per-query sensitivity Δ ≠ 1 both noises scale by Δ and ε is unchanged.
#include <cmath>

#include "dptune/dptune.hpp"

namespace {

class SparseVector final : public dptune::Mechanism {
 public:
  explicit SparseVector(const dptune::Params& p)
      : b_(p.get_double("b")), c_(p.get_int("C")), threshold_(p.get_double("threshold")) {}

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_float("b", "total noise level b")
        .min_exclusive(0)
        .add_int("C", "bound C on the number of released positives")
        .min(1)
        .add_float("threshold", "threshold T the noisy answers are compared with")
        .default_to(0.5);
  }

  /// Closed form of paper 000, Appendix B.
  static double epsilon(double b, double c) {
    const double r = std::cbrt(2.0 * c);
    return (1.0 + r) * (1.0 + r * r) / b;
  }
  double threshold_noise() const { return b_ / (1.0 + std::cbrt(2.0 * static_cast<double>(c_))); }
  double query_noise() const { return b_ - threshold_noise(); }

  std::vector<double> release(std::span<const double> answers,
                              const dptune::Sensitivity& sensitivity,
                              dptune::RandomBitGenerator& rng) const override {
    dptune::require(sensitivity.linf > 0 && std::isfinite(sensitivity.linf),
                    "sparse_vector: per-query sensitivity must be positive and finite");
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

  dptune::DpEvent event() const override {
    return dptune::DpEvent::pure_dp(epsilon(b_, static_cast<double>(c_)));
  }

 private:
  double b_;
  std::int64_t c_;
  double threshold_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, sparse_vector, SparseVector, "1.0.0",
              "non-interactive sparse vector technique (DPareto Alg. 1): noise b, bound C; pure DP")
