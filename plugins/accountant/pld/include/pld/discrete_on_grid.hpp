// The discrete Gaussian of known minimum scale (`discrete_gaussian_on_grid`) priced through the
// continuous Gaussian: the event is replaced by a continuous surrogate, and every δ gets an
// explicit additive term.  The proof is in src/discrete_on_grid.cpp and docs/accounting.md ("The
// discrete Gaussian").
#pragma once

#include <limits>

#include "dptune/dp_event.hpp"

namespace dptune::pld {

/// s₂: the part of the discrete Gaussian's scale (in lattice units) that is rounded onto the
/// lattice; the rest, s₁ = sqrt(s² − s₂²), is a continuous Gaussian.
inline constexpr double kLatticeScale = 3;
/// log₂ of the bound on the number of discrete Gaussian draws any guarantee covers.
inline constexpr double kLog2MaxDraws = 127;

/// ln(N θ/(1 − θ)) with N = 2^127 and θ = 2 Σ_{j≥1} exp(−2π² s₂² j²): the total variation between
/// N draws of the discrete Gaussian and of its surrogate.  About −88.9 for s₂ = 3.
double log_draws_total_variation(double lattice_scale = kLatticeScale);

/// The noise multiplier of the continuous Gaussian that a discrete_gaussian_on_grid(σ, s_min) is a
/// post-processing of (up to the total variation above): σ sqrt(1 − s₂²/s_min²).  Requires
/// s_min > s₂.
double surrogate_multiplier(double noise_multiplier, double min_scale);

/// An event with every discrete_gaussian_on_grid leaf whose min_scale exceeds s₂ replaced by the
/// continuous Gaussian of surrogate_multiplier, and what the replacement costs.
struct ContinuousSurrogate {
  DpEvent event;
  /// ln of the additive δ's factor η (δ_real(ε) ≤ δ_surrogate(ε) + (1 + e^ε) η); −inf when no
  /// leaf was replaced.
  double log_eta = -std::numeric_limits<double>::infinity();
  bool replaced() const { return log_eta > -std::numeric_limits<double>::infinity(); }
};
ContinuousSurrogate continuous_surrogate(const DpEvent& event);

/// (1 + e^ε) η, rounded up; 0 when log_eta is −inf.
double surrogate_delta(double log_eta, double epsilon);

}  // namespace dptune::pld
