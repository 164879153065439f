// Privacy profiles of private selection: δ_M(ε) of "run a DP base algorithm Q a random number K of
// times and release only the best output" (Papernot & Steinke 2022's repeat-and-select; Liu &
// Talwar 2019), computed from the base's own privacy profile δ_Q(ε) rather than from its RDP curve.
// The idea is that of Koskela, Redberg & Wang (ICML 2024, "Privacy Profiles for Private Selection",
// arXiv 2402.06701); their text was not reachable from this project (only its abstract), so the
// bound implemented here is our own, proved in src/profile.cpp, and not their theorem.
//
// A static library on the SDK only, shared by every accountant that can state a base profile: the
// rdp accountant hands it its RDP-conversion (or analytic Gaussian) profile; a PLD accountant can
// hand it a tighter one with the same single call (`epsilon(profile, runs, delta)`).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dptune {
class RepetitionDistribution;
}

namespace dptune::selection {

/// The base algorithm's privacy profile: ε ≥ 0 ↦ an upper bound on sup H_{e^ε}(Q(X) ‖ Q(Y)) over
/// ordered pairs of neighbours in BOTH orders (X, Y) and (Y, X).  Any upper bound may be given: the
/// proof uses only that each value bounds a hockey-stick divergence (no monotonicity is assumed).
using Profile = std::function<double(double)>;

/// The distribution of the number of runs K, through its PGF f(x) = E[x^K].  The bound needs
/// g(s) = f'(1 − s) (decreasing in s) and the ratio sup_s g(t(s)) / g(s) in closed form, which the
/// three families below have.
class Runs {
 public:
  /// D_{η,γ} (Papernot & Steinke 2022, Definition 1; η > −1, γ ∈ (0, 1)): g(s) ∝ (γ + (1 −
  /// γ)s)^{−(η+1)}.
  static Runs truncated_negative_binomial(double eta, double gamma);
  /// Poisson(μ): g(s) = μ e^{−μ s}.
  static Runs poisson(double mean);
  /// Binomial(n, p), p ∈ (0, 1): g(s) = n p (1 − p s)^{n−1}.
  static Runs binomial(std::int64_t n, double p);
  /// From the SDK's distribution (truncated negative binomial or Poisson).
  static Runs from(const RepetitionDistribution& distribution);

  /// E[K] = f'(1) = g(0) = sup_s g(s).
  double mean() const;
  /// log sup_{s ∈ [0,1]} g(e^{−ε₁}(s − δ₁)₊) / g(s) ≥ 0 (see src/profile.cpp, step 3).
  double log_ratio_bound(double eps1, double delta1) const;
  /// The same supremum over s ∈ [a, b] only, for [a, b] inside [0, δ₁] or inside [δ₁, 1].
  double log_ratio_bound(double eps1, double delta1, double a, double b) const;
  /// g(s) = f'(1 − s), normalised so that g(0) = E[K].
  double g(double s) const;
  std::string describe() const;

 private:
  enum class Family { TruncatedNegativeBinomial, Poisson, Binomial };
  double log_g(double s) const;  // log g(s) up to an additive constant
  Family family_ = Family::Poisson;
  double eta_ = 0, gamma_ = 0, mean_ = 0, p_ = 0;
  std::int64_t n_ = 0;
};

/// The auxiliary part of the bound: L = log sup g(e^{−ε₁}(s − δ_Q(ε₁))₊)/g(s), minimised over ε₁.
struct Shift {
  double shift = 0;   // L
  double eps1 = 0;    // the ε₁ that gave it
  double delta1 = 0;  // δ_Q(ε₁)
};
/// Every ε₁ gives a valid L, so the search (a log grid, the profile's zero point when it has one,
/// and a golden-section refinement) is sound whatever it finds.
Shift best_shift(const Profile& base, const Runs& runs);

struct Bound {
  double value = 1;         // δ_M(ε) or ε_M(δ)
  double base_epsilon = 0;  // ε₀ with δ_M(ε₀ + L) ≤ E[K] δ_Q(ε₀)
  Shift shift;
  std::string derivation;
};

/// δ_M(ε) ≤ min over ε₁ of the partitioned bound (src/profile.cpp, step 5), which is never
/// above E[K] · δ_Q(ε − L(ε₁)); capped at 1.
Bound delta(const Profile& base, const Runs& runs, double epsilon);
/// ε_M(δ): first ε_Q(δ / E[K]) + L*, with ε_Q(·) the smallest ε found by bisection whose profile
/// value is ≤ δ / E[K]; then a bisection below it on the partitioned bound of `delta`.  The
/// returned ε is always one at which a bound ≤ δ was evaluated; +∞ when no such ε ≤ 1000 exists.
Bound epsilon(const Profile& base, const Runs& runs, double delta);

/// Smallest ε ∈ [0, 1000] found by bisection with profile(ε) ≤ target, +∞ if none: the returned ε
/// is always one at which profile(ε) ≤ target was checked.
double profile_epsilon(const Profile& profile, double target);

/// δ of the k-fold composition of the base at ε, k ≥ 1: an upper bound in both orders.
using ComposedProfile = std::function<double(std::int64_t k, double epsilon)>;

/// δ_M(ε) ≤ Σ_k P[K = k] · δ_{Q^k}(ε), the sum over k ≥ 1 up to where the remaining mass P[K > k]
/// is below 1e-12 or k reaches 4096, that remaining mass added as it is (δ ≤ 1).  Given K = k the
/// release is a post-processing of k independent runs (their k-fold composition Q^k), K = 0
/// releases ⊥ on both sides, and the hockey-stick divergence is jointly convex, so the mixture
/// over K is bounded by the mixture of the bounds.  Where ε is below the selection bound's shift L
/// (small ε), `delta` can only say δ ≤ 1; this one stays below 1.
double composition_delta(const RepetitionDistribution& runs, const ComposedProfile& composed,
                         double epsilon);

/// Papernot & Steinke 2022, Theorem 6 (Poisson(μ) runs) with the base's (ε̂, δ̂) taken from any
/// profile: at order λ > 1 with ε̂ = log(λ/(λ−1)) (the largest ε̂ the theorem allows), the
/// selection's RDP is ε(λ) + μ δ̂ + log(μ)/(λ − 1), clamped at 0, where ε(λ) is the base's RDP at λ.
double poisson_selection_rdp(double base_rdp, double lambda, double mean, const Profile& base);

}  // namespace dptune::selection
