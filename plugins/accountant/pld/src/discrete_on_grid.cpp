// The discrete Gaussian of known minimum scale as a post-processing of a continuous Gaussian.
//
// Claim.  Let f(D) ∈ ℤ^d be an integer-valued query whose neighbours differ by at most Δ' in L2
// norm, and M(D) = f(D) + Z with Z ~ N_Z(0, s²)^d (the discrete Gaussian, pmf ∝ e^{−k²/(2s²)} on ℤ,
// Canonne, Kamath & Steinke 2020), the event discrete_gaussian_on_grid(σ, s_min) with
// s ≥ σΔ' and s ≥ s_min.  Fix s₂ < s_min and s₁ = sqrt(s² − s₂²).  Then for every ε and every pair
// of neighbours, and for any adaptive composition and sampling of such releases with N draws in
// all,
//     δ_M(ε) ≤ δ_G(ε) + (1 + e^ε) N θ/(1 − θ),   θ = 2 Σ_{j≥1} e^{−2π² s₂² j²},
// where G is the same computation with the continuous Gaussian of multiplier
// σ₁ = σ sqrt(1 − s₂²/s_min²) in place of each discrete release.
//
// Proof.  (1) Θ(y) = Σ_{k∈ℤ} e^{−(k−y)²/(2s₂²)} = √(2π) s₂ (1 + 2 Σ_{j≥1} e^{−2π²s₂²j²} cos 2πjy)
// by Poisson summation, so Θ(y) ∈ √(2π) s₂ [1 − θ, 1 + θ] for every real y.
// (2) Draw Y ~ N(0, s₁²) and K from N_Z(Y, s₂²) (pmf e^{−(k−Y)²/(2s₂²)}/Θ(Y) on ℤ).  Then
// P(K = k) = ∫ φ_{s₁}(y) e^{−(k−y)²/(2s₂²)}/Θ(y) dy lies within the factors [1/(1+θ), 1/(1−θ)] of
// ∫ φ_{s₁}(y) φ_{s₂}(k − y) dy = φ_s(k) (φ_t the N(0, t²) density; s² = s₁² + s₂²).
// (3) N_Z(0, s²) has pmf φ_s(k) √(2π) s / Θ_s(0), with Θ_s as Θ for scale s; Θ_s(0) lies in
// √(2π) s [1, 1 + θ_s] and θ_s ≤ θ because s ≥ s₂.  So its pmf lies in [φ_s(k)/(1+θ), φ_s(k)]
// too, the two pmfs differ by at most φ_s(k)(1/(1−θ) − 1/(1+θ)) at k, and Σ_k φ_s(k) ≤ 1 + θ:
// TV(K, N_Z(0, s²)) ≤ ½ (1 + θ) 2θ/(1 − θ²) = θ/(1 − θ).
// (4) For an integer vector v, the law of v + K (coordinatewise) is that of the kernel K applied to
// v + Y, because shifting ℤ by an integer maps N_Z(y, s₂²) to N_Z(v + y, s₂²).  So replacing Z by K
// turns M into a data-independent post-processing of f(D) + N(0, s₁² I), a continuous Gaussian
// mechanism of multiplier s₁/Δ' ≥ σ₁ (s/Δ' ≥ σ and s ≥ s_min); more noise only helps, and
// post-processing never increases a hockey-stick divergence.  Sampling and adaptive composition
// commute with this: the surrogate computation G is the same sampling and composition of
// continuous Gaussian releases, priced by their PLD (pld's Poisson and fixed-size-lot pairs).
// (5) Replacing the N draws one at a time (a hybrid argument, each draw's kernel replaced given
// everything before it) moves each neighbour's output law by at most N θ/(1 − θ) in total
// variation, and H_{e^ε}(P ‖ Q) = sup_S P(S) − e^ε Q(S) moves by at most TV(P, P') + e^ε TV(Q, Q').
//
// N.  The bound needs N, the number of discrete Gaussian draws the guarantee covers in all (every
// coordinate of every release, of every run the same guarantee composes).  dptune takes N = 2^127
// for every event: at 10^18 draws a second for the age of the universe (4·10^17 s) a computation
// draws under 2^119.  With s₂ = 3, ln(N θ/(1 − θ)) ≈ −88.9, so the additive term is about
// 2.4e-39 (1 + e^ε), which the accountant adds to δ explicitly; s₁ is below s by a relative
// s₂²/(2 s_min²), 2.6e-13 at the grid release's s_min = 2^22.
#include "pld/discrete_on_grid.hpp"

#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

#include "dptune/errors.hpp"

namespace dptune::pld {

namespace {
using K = DpEvent::Kind;

/// The event with its discrete_gaussian_on_grid leaves replaced, or nothing when no leaf is: only
/// the nodes above a replaced leaf are rebuilt, so a trace of a million steps without one is
/// walked once and not copied (a rebuilt node goes through its factory, which checks it again).
std::optional<DpEvent> substituted(const DpEvent& e) {
  if (!e.contains(K::DiscreteGaussianOnGrid)) return std::nullopt;
  auto children = [](const std::vector<DpEvent>& events) -> std::optional<std::vector<DpEvent>> {
    std::size_t first = 0;
    std::optional<DpEvent> changed;
    for (; first < events.size() && !changed; ++first) changed = substituted(events[first]);
    if (!changed) return std::nullopt;
    std::vector<DpEvent> out(events.begin(),
                             events.begin() + static_cast<std::ptrdiff_t>(first) - 1);
    out.reserve(events.size());
    out.push_back(std::move(*changed));
    for (std::size_t i = first; i < events.size(); ++i)
      out.push_back(substituted(events[i]).value_or(events[i]));
    return out;
  };
  if (e.kind() == K::DiscreteGaussianOnGrid) {
    if (!(e.min_scale() > kLatticeScale)) return std::nullopt;  // left for reason_of to refuse
    return DpEvent::gaussian(surrogate_multiplier(e.noise_multiplier(), e.min_scale()));
  }
  if (e.kind() == K::Composed || e.kind() == K::OneOf) {
    auto out = children(e.events());
    if (!out) return std::nullopt;
    return e.kind() == K::Composed ? DpEvent::composed(std::move(*out))
                                   : DpEvent::one_of(std::move(*out));
  }
  switch (e.kind()) {
    case K::PoissonSampled:
    case K::SampledWithoutReplacement:
    case K::SelfComposed:
    case K::RepeatAndSelect:
    case K::AdaptiveRepeatAndSelect:
    case K::RepeatUntilAccepted:
    case K::ReplaceOne:
      break;
    default:
      return std::nullopt;
  }
  std::optional<DpEvent> inner = substituted(e.inner());
  if (!inner) return std::nullopt;
  switch (e.kind()) {
    case K::PoissonSampled:
      return DpEvent::poisson_sampled(e.sampling_probability(), std::move(*inner));
    case K::SampledWithoutReplacement:
      return DpEvent::sampled_without_replacement(e.source_size(), e.sample_size(),
                                                  std::move(*inner));
    case K::SelfComposed:
      return DpEvent::self_composed(std::move(*inner), e.count());
    case K::RepeatAndSelect:
      return DpEvent::repeat_and_select(std::move(*inner), e.mean(), e.shape());
    case K::AdaptiveRepeatAndSelect:
      return DpEvent::adaptive_repeat_and_select(std::move(*inner), e.mean(), e.shape(),
                                                 e.density_ratio());
    case K::RepeatUntilAccepted:
      return DpEvent::repeat_until_accepted(std::move(*inner), e.stop_probability());
    default:  // K::ReplaceOne
      return DpEvent::replace_one(std::move(*inner));
  }
}
}  // namespace

double log_draws_total_variation(double lattice_scale) {
  // θ = 2 Σ_{j≥1} e^{−c j²}, c = 2π² s₂²: ln θ = ln 2 − c + ln(1 + Σ_{j≥2} e^{−c (j² − 1)}).
  const double c = 2 * std::numbers::pi * std::numbers::pi * lattice_scale * lattice_scale;
  double rest = 0;
  for (int j = 2; j < 64; ++j) rest += std::exp(-c * (j * j - 1.0));
  const double log_theta = std::log(2.0) - c + std::log1p(rest);
  const double theta = std::exp(log_theta);
  return kLog2MaxDraws * std::log(2.0) + log_theta - std::log1p(-theta);
}

double surrogate_multiplier(double noise_multiplier, double min_scale) {
  require(min_scale > kLatticeScale, "discrete_gaussian_on_grid: min_scale must exceed 3");
  const double ratio = kLatticeScale / min_scale;
  // Rounded down (a smaller multiplier only raises the price): one ulp off each of the few
  // roundings of the product.
  const double factor = std::sqrt((1 - ratio) * (1 + ratio)) * (1 - 8e-16);
  return noise_multiplier * factor;
}

ContinuousSurrogate continuous_surrogate(const DpEvent& event) {
  std::optional<DpEvent> replaced = substituted(event);
  if (!replaced) return ContinuousSurrogate{event};
  ContinuousSurrogate out{std::move(*replaced)};
  out.log_eta = log_draws_total_variation(kLatticeScale);
  return out;
}

double surrogate_delta(double log_eta, double epsilon) {
  if (!(log_eta > -std::numeric_limits<double>::infinity())) return 0;
  // ln(1 + e^ε) without overflow, then a relative 1e-12 up for the roundings of exp and log.
  const double log_weight =
      epsilon > 0 ? epsilon + std::log1p(std::exp(-epsilon)) : std::log1p(std::exp(epsilon));
  return std::exp(log_weight + log_eta) * (1 + 1e-12);
}

}  // namespace dptune::pld
