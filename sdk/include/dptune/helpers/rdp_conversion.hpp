// dptune helpers: RDP → (ε, δ), the one home of the conversion.  The rdp accountant's default
// ("improved") conversion, the `best` accountant's private-selection route and the host's ledger
// (RDP composition of stored charge curves) all convert through these functions, so the number a
// report prints for an RDP curve never depends on which of them converted it.
//
// Canonne, Kamath & Steinke 2020, Proposition 12 (restated as Liebenow et al. 2025, Theorem I.1):
// an (α, τ)-RDP mechanism is (ε, δ)-DP with
//     ε = τ + log((α − 1)/α) − (log δ + log α)/(α − 1),
// equivalently log δ = (α − 1)(τ − ε + log(1 − 1/α)) − log α, for every order α > 1.  The classic
// conversion (Mironov 2017, Proposition 3), ε = τ + log(1/δ)/(α − 1), is also here.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dptune/privacy.hpp"

namespace dptune {

/// ε at δ ∈ (0, 1) from (α, τ)-RDP by the improved conversion above.
inline double rdp_to_epsilon(double alpha, double tau, double delta) {
  return tau + std::log1p(-1 / alpha) - (std::log(delta) + std::log(alpha)) / (alpha - 1);
}

/// log δ at ε from (α, τ)-RDP by the improved conversion above (not capped).
inline double rdp_to_log_delta(double alpha, double tau, double epsilon) {
  return (alpha - 1) * (tau - epsilon + std::log1p(-1 / alpha)) - std::log(alpha);
}

/// δ at ε from (α, τ)-RDP by the improved conversion above, capped at 1.
inline double rdp_to_delta(double alpha, double tau, double epsilon) {
  return std::min(1.0, std::exp(rdp_to_log_delta(alpha, tau, epsilon)));
}

/// ε at δ ∈ (0, 1) from (α, τ)-RDP by the classic conversion (Mironov 2017, Proposition 3).
inline double rdp_to_epsilon_classic(double alpha, double tau, double delta) {
  return tau + std::log(1 / delta) / (alpha - 1);
}

/// log δ at ε from (α, τ)-RDP by the classic conversion (not capped).
inline double rdp_to_log_delta_classic(double alpha, double tau, double epsilon) {
  return (alpha - 1) * (tau - epsilon);
}

/// Converting a surrogate's curve when the real mechanism's privacy profile exceeds the
/// surrogate's by an additive term: if δ_real(ε) ≤ δ_surrogate(ε) + (1 + e^ε)·η at every ε, then
/// any ε ≤ epsilon_cap at which the surrogate is (ε, δ′)-DP with δ′ = delta − (1 + e^cap)·η leaves
/// the real mechanism (ε, delta)-DP, as (1 + e^ε)η ≤ (1 + e^cap)η.  Returns that δ′ (rounded down
/// by a relative 1e-12 of the term; ≤ 0 when the term alone exceeds delta); log_eta = ln η.
inline double delta_left_for_surrogate(double delta, double log_eta, double epsilon_cap) {
  if (!(log_eta > -std::numeric_limits<double>::infinity())) return delta;
  const double log_weight = epsilon_cap > 0 ? epsilon_cap + std::log1p(std::exp(-epsilon_cap))
                                            : std::log1p(std::exp(epsilon_cap));
  return delta - std::exp(log_weight + log_eta) * (1 + 1e-12);
}

/// The best of the conversion over a curve's orders: the value and the order that gave it (order
/// 0 and value +inf when no order is finite).
struct CurveConversion {
  double value = 0;
  double order = 0;
};

/// ε at δ ∈ (0, 1) by the improved conversion, minimised over the curve's orders, clamped at 0.
inline CurveConversion curve_epsilon(const std::vector<RdpPoint>& curve, double delta) {
  CurveConversion best{std::numeric_limits<double>::infinity(), 0};
  for (const auto& [alpha, tau] : curve) {
    if (!(alpha > 1) || !std::isfinite(tau)) continue;
    const double eps = rdp_to_epsilon(alpha, tau, delta);
    if (eps < best.value) best = {eps, alpha};
  }
  best.value = std::max(0.0, best.value);
  return best;
}

}  // namespace dptune
