// dptune host: RDP curve → (ε, δ), for the host's own RDP arithmetic (the ledger's composed
// charges, the `best` accountant's private-selection route).  Accountant plugins keep their own
// conversions; the host cannot call into them, so this is its one home for the formula.
//
// Canonne, Kamath & Steinke 2020, Proposition 12 (the rdp accountant's default conversion): an
// (α, τ)-RDP mechanism is (ε, δ)-DP with
//     ε = τ + log((α − 1)/α) − (log δ + log α)/(α − 1),
// equivalently log δ = (α − 1)(τ − ε + log(1 − 1/α)) − log α, for every order α > 1.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dptune/privacy.hpp"

namespace dptune::host {

/// ε at δ ∈ (0, 1) from (α, τ)-RDP by the conversion above.
inline double rdp_to_epsilon(double alpha, double tau, double delta) {
  return tau + std::log1p(-1 / alpha) - (std::log(delta) + std::log(alpha)) / (alpha - 1);
}

/// δ at ε from (α, τ)-RDP by the conversion above, capped at 1.
inline double rdp_to_delta(double alpha, double tau, double epsilon) {
  const double log_delta = (alpha - 1) * (tau - epsilon + std::log1p(-1 / alpha)) - std::log(alpha);
  return std::min(1.0, std::exp(log_delta));
}

/// The best of the conversion over a curve's orders: the value and the order that gave it (order
/// 0 and value +inf / 1 when no order is finite).
struct CurveConversion {
  double value = 0;
  double order = 0;
};

/// ε at δ ∈ (0, 1), minimised over the curve's orders, clamped at 0.
inline CurveConversion curve_epsilon(const std::vector<dptune::RdpPoint>& curve, double delta) {
  CurveConversion best{std::numeric_limits<double>::infinity(), 0};
  for (const auto& [alpha, tau] : curve) {
    if (!(alpha > 1) || !std::isfinite(tau)) continue;
    const double eps = rdp_to_epsilon(alpha, tau, delta);
    if (eps < best.value) best = {eps, alpha};
  }
  best.value = std::max(0.0, best.value);
  return best;
}

}  // namespace dptune::host
