// DELIBERATELY BROKEN (test fixtures for `dptune audit`, never for use): the sparse-vector variants
// that Lyu, Su & Li ("Understanding the Sparse Vector Technique for Differential Privacy", PVLDB
// 2017, Figure 1 and §3) show do not keep the ε-DP their sources claimed, reconstructed as Ding,
// Wang, Wang, Zhang & Kifer ("Detecting Violations of Differential Privacy", CCS 2018, §6) test
// them.  Each releases one output per query (1 above the noisy threshold, 0 below) and claims
// pure ε-DP for queries whose answers move by at most Δ = sensitivity.linf:
//   svt_lsl3  Alg. 3 (Roth 2011): releases the noisy answer q_i + ν_i itself for a positive.
//   svt_lsl4  Alg. 4 (Lee & Clifton 2014): ρ ~ Lap(4Δ/ε), ν_i ~ Lap(4Δ/(3ε)), not scaled with C:
//             really ((1 + 6C)/4)ε-DP.
//   svt_lsl5  Alg. 5 (Stoddard et al. 2014): no noise on the queries and no cut-off: not ε'-DP for
//             any finite ε'.
//   svt_lsl6  Alg. 6 (Chen et al. 2015): ν_i ~ Lap(2Δ/ε) and no cut-off: not ε'-DP for any ε'.
// The correct algorithm (Lyu et al. Alg. 1) draws ρ ~ Lap(2Δ/ε), ν_i ~ Lap(4CΔ/ε), outputs only
// the comparison and halts after C positives.
#include "dptune/dptune.hpp"

namespace {

enum class Variant { Alg3, Alg4, Alg5, Alg6 };

template <Variant V>
class BrokenSvt final : public dptune::Mechanism {
 public:
  explicit BrokenSvt(const dptune::Params& p)
      : epsilon_(p.get_double("epsilon")),
        c_(p.get_int("C")),
        threshold_(p.get_double("threshold")) {}

  static dptune::ParamSchema schema() {
    return dptune::ParamSchema{}
        .add_float("epsilon", "the (wrongly) claimed pure ε")
        .min_exclusive(0)
        .default_to(1.0)
        .add_int("C", "cut-off: positives released before halting (Alg. 3 and 4)")
        .min(1)
        .default_to(std::int64_t{1})
        .add_float("threshold", "threshold T")
        .default_to(0.5);
  }

  std::vector<double> release(std::span<const double> answers, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    const double delta = s.linf, c = static_cast<double>(c_);
    const double rho_scale = (V == Variant::Alg4 ? 4.0 : 2.0) * delta / epsilon_;
    double nu_scale = 2.0 * c * delta / epsilon_;  // Alg. 3 (Roth's lecture notes)
    if (V == Variant::Alg4) nu_scale = 4.0 * delta / (3.0 * epsilon_);
    if (V == Variant::Alg5) nu_scale = 0;
    if (V == Variant::Alg6) nu_scale = 2.0 * delta / epsilon_;
    const bool cut_off = V == Variant::Alg3 || V == Variant::Alg4;
    const double noisy_threshold = threshold_ + dptune::laplace(rng, rho_scale);
    std::vector<double> out(answers.size(), 0.0);
    std::int64_t count = 0;
    for (std::size_t i = 0; i < answers.size(); ++i) {
      const double noisy = answers[i] + (nu_scale > 0 ? dptune::laplace(rng, nu_scale) : 0.0);
      if (noisy < noisy_threshold) continue;
      out[i] = V == Variant::Alg3 ? noisy : 1.0;
      if (cut_off && ++count >= c_) break;
    }
    return out;
  }

  dptune::DpEvent event() const override { return dptune::DpEvent::pure_dp(epsilon_); }

 private:
  double epsilon_;
  std::int64_t c_;
  double threshold_;
};

using Svt3 = BrokenSvt<Variant::Alg3>;
using Svt4 = BrokenSvt<Variant::Alg4>;
using Svt5 = BrokenSvt<Variant::Alg5>;
using Svt6 = BrokenSvt<Variant::Alg6>;

}  // namespace

DPTUNE_PLUGIN(mechanism, svt_lsl3, Svt3, "0.0.1",
              "BROKEN test fixture: Lyu-Su-Li Alg. 3, releases the noisy answers")
DPTUNE_PLUGIN(mechanism, svt_lsl4, Svt4, "0.0.1",
              "BROKEN test fixture: Lyu-Su-Li Alg. 4, query noise not scaled with C")
DPTUNE_PLUGIN(mechanism, svt_lsl5, Svt5, "0.0.1",
              "BROKEN test fixture: Lyu-Su-Li Alg. 5, no query noise, no cut-off")
DPTUNE_PLUGIN(mechanism, svt_lsl6, Svt6, "0.0.1",
              "BROKEN test fixture: Lyu-Su-Li Alg. 6, no cut-off")
