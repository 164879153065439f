// The RDP calculator: the mathematics of the rdp and pure_dp accountants (internal to those
// plugins, their tests and benchmarks; not SDK).  rdp::Calculator computes ε and δ of events;
// rdp::AccountantAdapter below is the dptune::Accountant built on it.
//
// An event is costed as three parts that compose separately:
//   * an RDP curve ε(α) over a grid of orders (Mironov 2017) — adds up under composition;
//   * a pure-DP bound ε∞ (RDP of order ∞), +∞ when there is none — adds up too;
//   * approximate-DP parts (ε_i, δ_i) that have no RDP curve — composed by basic composition and
//     combined with the rest at the end (said so in the derivation).
// RDP → (ε, δ) conversion: classic (Mironov 2017, Prop. 3) or improved (Liebenow et al. 2025,
// Theorem I.1; Canonne, Kamath & Steinke 2020), minimised over the orders.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/helpers/calibration.hpp"
#include "dptune/helpers/recent_results.hpp"
#include "dptune/plugin.hpp"
#include "dptune/privacy.hpp"

namespace dptune::rdp {

enum class Conversion { Classic, Improved };

/// dp_accounting's default grid plus points nearer to 1: 1.01…1.09, 1.1…10.9 (step 0.1), 11…63,
/// 64, 80, 96, 128, 192, 256, 384, 512, 1024.
std::vector<double> default_orders();
/// Parses "default" or a comma-separated list of orders > 1; throws InvalidArgument.
std::vector<double> parse_orders(const std::string& text);

// ---- closed forms, one release, order α > 1 ---------------------------------------------------
/// Gaussian mechanism with noise multiplier σ: α / (2σ²) (Mironov 2017, Prop. 7).
double gaussian_rdp(double sigma, double alpha);
/// Laplace mechanism with scale b (per unit L1 sensitivity) (Mironov 2017, Prop. 6):
/// 1/(α−1) · log( α/(2α−1) · e^{(α−1)/b} + (α−1)/(2α−1) · e^{−α/b} ), evaluated in log space.
double laplace_rdp(double b, double alpha);
/// The tightest RDP curve of ε-DP: the randomised-response pair, which dominates every ε-DP pair:
/// 1/(α−1) · log( (e^{αε} + e^{(1−α)ε}) / (1 + e^ε) ).
double pure_dp_rdp(double epsilon, double alpha);
/// The Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019): exact binomial expansion for
/// integer α (§3.3), the two convergent series for fractional α (§3.4), in log space.
double sampled_gaussian_rdp(double q, double sigma, double alpha);
/// The Poisson-subsampled discrete Gaussian with multiplier σ (integer shifts of L2 norm at most
/// s/σ, noise N_Z(0, s²) per coordinate), both neighbouring directions: the §3.3 binomial sum
/// above at integer α (an upper bound, proof in src/math.cpp), the chord of the neighbouring
/// integer orders at fractional α.
double sampled_discrete_gaussian_rdp(double q, double sigma, double alpha);
/// τ of Kairouz, Liu & Steinke 2021 (arXiv 2102.06387, Proposition 14) for the sum of `summands`
/// independent N_Z(0, s²) with s >= min_scale: 10 Σ_{k=1}^{summands−1} e^{−2π²s²·k/(k+1)}, at
/// s = min_scale (τ falls as s grows).  0 for one summand.  Throws PrivacyError below s = 1/2,
/// where the proposition does not apply.
double discrete_gaussian_sum_tau(double min_scale, std::int64_t summands);
/// The sum of n such noise vectors on an integer query in Z^d whose L2 shift is at most
/// √n·s/σ (σ the sum's noise multiplier), at every order α >= 1 (Proposition 14, using
/// ‖Δ‖₁ <= √d‖Δ‖₂): min{α/(2σ²) + τd, (α/2)(1/σ + τ√d)²}.  τ = 0 is the discrete Gaussian's
/// α/(2σ²) (Canonne, Kamath & Steinke 2020).
double discrete_gaussian_sum_rdp(double sigma, double tau, std::int64_t dimension, double alpha);
/// A Gaussian with noise multiplier σ (relative to the replace-one sensitivity) on a uniformly
/// random subset of size γn, replace-one adjacency: upper bounds on K(α) = (α−1)ε'(α), one per
/// integer order α ≥ 2 in `orders`, by Wang, Balle & Kasiviswanathan 2019's Gaussian-specific
/// bound (Theorem 27 of arXiv 1808.00087).  Throws InvalidArgument for an order below 2.
std::vector<double> wor_gaussian_log_moments(double gamma, double sigma,
                                             const std::vector<int>& orders);

/// log(e^a + e^b) and log(e^a − e^b) (a ≥ b), stable.
double log_add(double a, double b);
double log_sub(double a, double b);
/// log(erfc(x)) for every real x (asymptotic series beyond the double range of erfc).
double log_erfc(double x);

// ---- the analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8) -----------------------------
// One home, the helper library (dptune/helpers/calibration.hpp): δ(ε) and ε(δ) of one Gaussian
// release with noise multiplier s, and the smallest s for a target (ε, δ).
using dptune::analytic_gaussian_delta;
using dptune::analytic_gaussian_epsilon;
inline double analytic_gaussian_calibrate(double epsilon, double delta) {
  return dptune::analytic_gaussian_noise_multiplier(epsilon, delta);
}

// ---- the calculator -----------------------------------------------------------------------------
struct Options {
  std::vector<double> orders = default_orders();
  Conversion conversion = Conversion::Improved;
  /// Account events made only of Gaussians (and their compositions) exactly, by the analytic
  /// Gaussian mechanism on the composed noise multiplier (Gaussian DP composes exactly: 1/σ² adds
  /// up).
  bool analytic_gaussian = false;
  /// Name written into PrivacyGuarantee::accountant.
  std::string name = "rdp";
  /// pure_dp mode: refuse every event without a finite pure-DP or approximate-DP bound.
  bool pure_only = false;
  /// When the grid's largest order gives the best ε, also try orders 2, 4, 8… times larger
  /// (Calculator::epsilon); off when the user lists the orders.
  bool extend_beyond_grid = true;
};

class Calculator {
 public:
  explicit Calculator(Options options);
  /// Empty when `event` can be accounted; otherwise the reason.
  std::string unsupported_reason(const DpEvent& event) const;
  /// Smallest provable ε at δ (δ ∈ [0, 1)); ε = +inf when no finite bound exists.
  PrivacyGuarantee epsilon(const DpEvent& event, double delta) const;
  /// Smallest provable δ at ε ≥ 0.
  PrivacyGuarantee delta(const DpEvent& event, double epsilon) const;
  const Options& options() const { return options_; }

  /// The cost of an event (exposed for tests).
  struct Cost {
    std::vector<double> rdp;                      // one per order; +inf where unbounded
    double pure_epsilon;                          // +inf when not pure DP
    double approx_epsilon = 0, approx_delta = 0;  // basic composition of the ApproxDp parts
    bool has_approx = false;
    std::vector<std::string> notes;  // theorems used, for the derivation
  };
  Cost cost(const DpEvent& event) const;

 private:
  /// The event's cost (restated for its relation) and, for a repeat-and-select, its base's.
  struct Costed {
    Cost cost, selection_base;
  };
  /// The last few events' Costed, computed once: the host asks unsupported_reason and then
  /// epsilon or delta of the same event (and `best` its members the same), and each would
  /// otherwise compute the whole curve again (most of the time of a one-event query).
  using CostMemo = RecentResults<DpEvent, std::shared_ptr<const Costed>, 4>;
  std::shared_ptr<const Costed> costed(const DpEvent& event) const;
  /// The event's own curve (the discrete Gaussian by its own theorems), converted.
  PrivacyGuarantee epsilon_as_stated(const DpEvent& event, double delta) const;
  PrivacyGuarantee delta_as_stated(const DpEvent& event, double epsilon) const;
  Options options_;
  std::shared_ptr<CostMemo> memo_;  // shared by copies, which have the same options
};

/// The calculator adapted to the SDK's Accountant interface (rdp::Calculator computes ε and δ of
/// events and is no dptune::Accountant): what the rdp and pure_dp plugins export, and what tests
/// and benchmarks hand to calibrate_noise.
class AccountantAdapter : public dptune::Accountant {
 public:
  explicit AccountantAdapter(Options options = {}) : core_(std::move(options)) {}
  std::string unsupported_reason(const DpEvent& event) const override {
    return core_.unsupported_reason(event);
  }
  PrivacyGuarantee epsilon(const DpEvent& event, double delta) const override {
    return core_.epsilon(event, delta);
  }
  PrivacyGuarantee delta(const DpEvent& event, double epsilon) const override {
    return core_.delta(event, epsilon);
  }
  const rdp::Calculator& core() const { return core_; }

 private:
  rdp::Calculator core_;
};

}  // namespace dptune::rdp
