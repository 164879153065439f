// The PLD calculator: the mathematics of the pld accountant (internal to the pld plugin, its tests
// and the accounting benchmark; not SDK).  pld::Calculator computes ε and δ of events;
// pld::AccountantAdapter is the dptune::Accountant built on it.
//
// A privacy loss distribution (Meiser & Mohammadi 2018; Koskela, Jälkö & Honkela 2020) of an
// ordered pair (P, Q) is the law of L = log(dP/dQ)(o) for o ~ P, with an atom at +∞ for outputs Q
// cannot produce.  Its hockey-stick divergence is
//     δ(ε) = H_{e^ε}(P ‖ Q) = P(L = ∞) + E_P[(1 − e^{ε − L})₊],                     (1)
// which is non-decreasing in L (stochastic order), and independent composition adds the losses, so
// the composed PLD is the convolution.  Losses live on the grid h·Z (h = the value discretisation
// interval), so convolution is an FFT.
//
// Pessimistic discretisation ("connect the dots", Doroshenko, Ghazi, Kamath, Kumar & Manurangsi
// 2022): the part of (P, Q) whose loss lies in (ih, (i+1)h] is replaced by a two-point pair on the
// grid with the same P- and Q-masses.  Its hockey-stick curve in x = e^ε is the chord of the part's
// (convex) curve between e^{ih} and e^{(i+1)h}, hence above it: the discrete pair dominates the
// continuous one, and domination survives composition, so every δ(ε) and ε(δ) computed from it is
// an upper bound.  Tails beyond the truncation points go to +∞ (upper) or to the lowest grid point
// (lower), which only raises δ.  The optimistic estimate rounds every loss down to the grid and
// drops the tails: a lower bound (up to the aliased tail mass of the FFT, at most the truncation
// mass), for tests that bracket the exact value.
//
// Add/remove neighbours: a pair (Y, X) with Y = X plus one record has two directions, "remove"
// (M(Y), M(X)) and "add" (M(X), M(Y)).  Both are composed separately (the same record is added in
// every step) and δ(ε) is the larger of the two, as dp_accounting does.  Gaussian, Laplace and
// (ε, δ) leaves are symmetric (one PLD serves both); Poisson subsampling is not.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/errors.hpp"
#include "dptune/plugin.hpp"
#include "dptune/privacy.hpp"

namespace dptune::pld {

enum class Estimate { Pessimistic, Optimistic };

struct Options {
  /// h: losses are multiples of h.  Smaller is tighter and slower.
  double value_discretization_interval = 1e-4;
  /// Probability mass a discretisation or composition may move to the tails (pessimistic: to +∞).
  double tail_mass_truncation = 1e-15;
  /// A PLD needing more grid points than this is refused (raise the interval).
  std::size_t max_points = std::size_t{1} << 23;
  /// Name written into PrivacyGuarantee::accountant.
  std::string name = "pld";

  bool operator==(const Options&) const = default;
};

/// Thrown when a PLD would need more than Options::max_points grid points.  The accountant then
/// answers vacuously (ε = +∞, δ = 1: always true) and says why, so that calibration and `best`
/// can move on.
class GridTooWide : public PrivacyError {
 public:
  using PrivacyError::PrivacyError;
};

/// A discrete PLD: P-mass `mass[i]` at loss (offset + i)·h, and `infinity` at loss +∞.
struct Pld {
  std::int64_t offset = 0;
  std::vector<double> mass;
  double infinity = 0;

  /// δ(ε) by (1).
  double delta(double h, double epsilon) const;
  /// Smallest ε ≥ 0 with δ(ε) ≤ delta (solved exactly between grid points); +∞ if none.
  double epsilon(double h, double delta) const;
};

/// A discrete PLD's δ(ε) (Pld::delta) in O(log n) per query instead of O(n), for the selection
/// bounds, which ask a base's profile 10⁴–10⁵ times per price.  With j the first grid point above
/// ε, δ(ε) = P(L = ∞) + A_j − e^{ε − l_j} B_j, where A_j = Σ_{i ≥ j} m_i and B_j = Σ_{i ≥ j} m_i
/// e^{−(l_i − l_j)} are suffix sums kept once (B_j = m_j + e^{−h} B_{j+1}: every factor ≤ 1,
/// nothing overflows).  Rounding: each suffix sum is off by at most (n − j)·u relative (u the unit
/// roundoff, all terms ≥ 0), so 2(n − j + 2)u(A_j + B_j) is added: the value is never below the
/// exact sum's (a relative 10⁻¹⁰ at n = 10⁵ points).
class FastProfile {
 public:
  FastProfile(const Pld& loss, double h);
  double operator()(double epsilon) const;

 private:
  double loss(std::size_t j) const;
  std::int64_t offset_;
  double h_, infinity_;
  std::vector<double> above_, weighted_;
};

/// The PLDs of both directions; `add` empty when the pair is symmetric (add = remove).
struct Directions {
  Pld remove;
  std::optional<Pld> add;
  const Pld& add_or_remove() const { return add ? *add : remove; }
};

/// The privacy profile δ(ε) of a base whose pessimistic PLDs are `d` (grid interval h), for the
/// selection bounds: an upper bound on the hockey-stick divergence in both orders of every pair of
/// neighbours, the worse direction read by FastProfile, plus the additive (1 + e^ε)η of a
/// discrete_gaussian_on_grid base priced through its continuous surrogate (log_eta; −inf for
/// none), rounded up, at most 1.
std::function<double(double)> worse_direction_profile(const Directions& d, double h,
                                                      double log_eta);

// ---- leaves (src/leaves.cpp) --------------------------------------------------------------------
/// Gaussian mechanism, noise multiplier σ (L2 sensitivity 1): P = N(1, σ²), Q = N(0, σ²).
Directions gaussian(double sigma, const Options& options, Estimate estimate);
/// Laplace mechanism, scale b per unit L1 sensitivity: P = Lap(1, b), Q = Lap(0, b).
Directions laplace(double b, const Options& options, Estimate estimate);
/// (ε, δ)-DP: the dominating pair of Kairouz, Oh & Viswanath 2015 (randomised response with a
/// δ-atom); δ = 0 is pure DP.
Directions approx_dp(double epsilon, double delta, const Options& options, Estimate estimate);
/// Poisson subsampling with rate q of the Gaussian (`laplace` false) or Laplace mechanism:
/// remove (q·D₁ + (1 − q)·D₀, D₀) and add (D₀, q·D₁ + (1 − q)·D₀), the dominating pairs of
/// Poisson subsampling for add/remove neighbours (Zhu, Dong & Wang 2022).
Directions poisson_sampled(double q, double noise, bool laplace, const Options& options,
                           Estimate estimate);
/// Sampling without replacement (a lot of m of n records, γ = m/n) of the Gaussian mechanism of
/// noise multiplier σ relative to its REPLACE-ONE sensitivity, for replace-one neighbours.  With
/// R = (γ·N(1, σ²) + (1 − γ)·N(0, σ²), N(0, σ²)), every ordered pair of neighbouring outputs has
/// hockey-stick curve at most max(δ_R, δ_{R reversed}) at every ε (proof in
/// src/without_replacement.cpp and docs/accounting.md), and that maximum is the profile of one
/// symmetric pair, which composes.  Pessimistic: that pair's PLD (`add` empty).  Optimistic: R and
/// its reverse as the two directions, each a lower bound of what one pair of datasets realises.
Directions sampled_without_replacement(double gamma, double sigma, const Options& options,
                                       Estimate estimate);

// ---- composition (src/compose.cpp) --------------------------------------------------------------
/// The PLD of two independent mechanisms: the convolution, tails truncated.
Pld compose(const Pld& a, const Pld& b, const Options& options, Estimate estimate);
/// k-fold self-composition: one FFT, the k-th power of the spectrum on a window chosen by a
/// Chernoff bound on the tails; the mass that may lie above the window goes to +∞ (pessimistic).
Pld self_compose(const Pld& pld, std::int64_t k, const Options& options, Estimate estimate);
/// self_compose of two PLDs at once (both directions of one event), sharing one complex FFT.
std::pair<Pld, Pld> self_compose_both(const Pld& a, const Pld& b, std::int64_t k,
                                      const Options& options, Estimate estimate);
/// A PLD whose δ(ε) is above every one of `plds`' at every ε (the chord construction on their
/// pointwise maximum, see src/compose.cpp); pessimistic only.
Pld dominate_all(const std::vector<Pld>& plds, const Options& options);
/// Moves at most tail_mass_truncation / 2 from the lower end, to the lowest kept point
/// (pessimistic) or away (optimistic), and drops zeros at the top.
void truncate_tails(Pld& pld, const Options& options, Estimate estimate);
/// Linear convolution (FFT above a size threshold); negative rounding noise clamped to 0.
std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b);

// ---- the Fourier transform (src/fft.cpp) --------------------------------------------------------
/// In-place DFT of a[0..n), X_j = Σ_m x_m e^{∓2πijm/n} (− forward, + inverse; the inverse
/// without the 1/n), natural order in and out: fourier_own, or FFTW when built with
/// DPTUNE_PLD_FFTW.
void fourier(std::complex<double>* a, std::size_t n, bool inverse);
inline void fourier(std::vector<std::complex<double>>& a, bool inverse) {
  fourier(a.data(), a.size(), inverse);
}
/// The own radix-4 transform (n a power of two), always built: the default, and the reference
/// the FFTW path is tested against.
void fourier_own(std::complex<double>* a, std::size_t n, bool inverse);
/// Whether fourier() runs FFTW.
bool fourier_uses_fftw();
/// Lets the own transform use its AVX2 copy where the CPU has AVX2 (the default) or not (for tests:
/// both copies give the same results bit for bit); returns whether it now does.
bool fourier_allow_avx2(bool allowed);
/// The forward DFT of a[0..n) (n a power of two) in "spectrum order": X_j at position
/// spectrum_position(j, n).  A convolution multiplies spectra pointwise and transforms back with
/// spectrum_inverse, so it never needs natural order (the own transform skips its bit reversal).
void spectrum_forward(std::complex<double>* a, std::size_t n);
/// The inverse of spectrum_forward (without the 1/n): a spectrum in spectrum order to a sequence in
/// natural order.
void spectrum_inverse(std::complex<double>* a, std::size_t n);
/// Where spectrum_forward puts X_j: the bit reversal of j (own transform), or j (FFTW).
std::size_t spectrum_position(std::size_t j, std::size_t n);
/// The position of X_{(n−j) mod n} given the position p of X_j (the pairing by which two real
/// sequences share one complex transform).
std::size_t spectrum_mirror(std::size_t p, std::size_t n);
/// Calls visit(p, spectrum_mirror(p, n)) once for each pair of mirror positions (once with p = its
/// mirror for the self-paired X_0 and X_{n/2}), in an order that walks memory forwards and
/// backwards in step.
template <class Visit>
void for_each_mirror_pair(std::size_t n, Visit&& visit) {
  if (n == 0) return;
  visit(std::size_t{0}, std::size_t{0});
  if (n == 1) return;
  if (fourier_uses_fftw()) {  // natural order: j with n − j
    visit(n / 2, n / 2);
    for (std::size_t j = 1; j < n / 2; ++j) visit(j, n - j);
    return;
  }
  visit(std::size_t{1}, std::size_t{1});  // bit-reversed order: each block [b, 2b) read backwards
  for (std::size_t b = 2; b < n; b *= 2)
    for (std::size_t p = b; p < b + b / 2; ++p) visit(p, 3 * b - 1 - p);
}

// ---- the calculator (src/calculator.cpp) --------------------------------------------------------
/// Computes ε and δ of events from their PLDs; no dptune::Accountant (AccountantAdapter below is
/// the one built on it).
class Calculator {
 public:
  /// Throws InvalidArgument for an interval or tail mass out of range.
  explicit Calculator(Options options);
  /// Empty when `event` can be priced; otherwise why not.
  std::string unsupported_reason(const DpEvent& event) const;
  /// The PLDs of `event`, restated for its neighbouring relation.  Throws PrivacyError when
  /// unsupported.  A discrete_gaussian_on_grid leaf is priced by its continuous surrogate
  /// (pld/discrete_on_grid.hpp), whose additive δ epsilon() and delta() add and these PLDs omit;
  /// the optimistic estimate is the surrogate's, not a lower bound of the discrete mechanism.
  Directions directions(const DpEvent& event, Estimate estimate = Estimate::Pessimistic) const;
  PrivacyGuarantee epsilon(const DpEvent& event, double delta,
                           Estimate estimate = Estimate::Pessimistic) const;
  PrivacyGuarantee delta(const DpEvent& event, double epsilon,
                         Estimate estimate = Estimate::Pessimistic) const;
  const Options& options() const { return options_; }

 private:
  std::string describe(const DpEvent& event, Estimate estimate) const;
  /// A whole event that is one repeat-and-select (K > 1): the selection privacy profile
  /// (plugins/accountant/selection) of the base's PLD profile; nothing for any other event.
  std::optional<PrivacyGuarantee> selection(const DpEvent& event, double delta, double epsilon,
                                            bool want_epsilon) const;
  PrivacyGuarantee vacuous(const DpEvent& event, double epsilon, double delta,
                           const std::string& why) const;
  Options options_;
};

/// The calculator adapted to the SDK's Accountant interface (what the plugin exports, and what
/// tests and benchmarks hand to calibrate_parameter).
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
  const pld::Calculator& core() const { return core_; }

 private:
  pld::Calculator core_;
};

}  // namespace dptune::pld
