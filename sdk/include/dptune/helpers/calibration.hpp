// dptune helpers: noise calibration, the inverse of accounting.  Given how an event depends on a
// noise parameter s (e.g. s ↦ SelfComposed(PoissonSampled(q, Gaussian(s)), T)), find the smallest s
// whose cost, as the accountant proves it, meets a target (ε, δ).  Used by trainers in target-ε
// mode and by `dptune privacy --calibrate`.
#pragma once

#include <boost/config.hpp>
#include <functional>

#include "dptune/dp_event.hpp"
#include "dptune/privacy.hpp"

namespace dptune {

class Accountant;

struct BOOST_SYMBOL_VISIBLE NoiseCalibration {
  /// The calibrated noise parameter: accountant ε at δ of event_of(noise) is ≤ the target.  It is
  /// the end of the final bracket that meets the target (never rounded down).
  double noise = 0;
  /// The accountant's guarantee for event_of(noise).
  PrivacyGuarantee guarantee;
  /// Accountant calls made.
  int evaluations = 0;
};

struct BOOST_SYMBOL_VISIBLE CalibrationOptions {
  double lower = 1e-3;  // smallest noise parameter considered
  double upper = 1e6;   // largest noise parameter considered
  /// Stop when the bracket [lo, hi] has hi / lo ≤ 1 + relative_tolerance.
  double relative_tolerance = 1e-9;
};

/// Brent's method in log space over [options.lower, options.upper] (calibrate_parameter).  ε must
/// not increase with the noise parameter; every evaluated pair is checked and a violation throws
/// Error (the event family is not a noise family).  Throws PrivacyError when even options.upper
/// cannot meet the target, and InvalidArgument for target_epsilon ≤ 0, δ ∉ (0, 1) or a bad range.
NoiseCalibration calibrate_noise(const Accountant& accountant,
                                 const std::function<DpEvent(double)>& event_of,
                                 double target_epsilon, double delta,
                                 const CalibrationOptions& options = {});

/// The analytic Gaussian mechanism (Balle & Wang 2018, "Improving the Gaussian Mechanism for
/// Differential Privacy", Theorem 8): the exact privacy profile of ONE Gaussian release, stated
/// for a noise multiplier s = noise stddev / L2 sensitivity.  Tighter than any RDP conversion for a
/// single release.  Helper library only (libdptune_helpers, not in libdptune_sdk).
///
/// δ(ε) = Φ(1/(2s) − εs) − e^ε Φ(−1/(2s) − εs), clamped to [0, 1], in log space so that it stays
/// exact where Φ underflows.  Throws InvalidArgument unless s > 0 and ε ≥ 0.
double analytic_gaussian_delta(double noise_multiplier, double epsilon);
/// The smallest ε with δ(ε) ≤ delta (bisection on ε, returning the end that meets δ: never rounded
/// down); 0 when δ(0) ≤ delta, +∞ when no ε up to 1e6 does.  Throws unless delta ∈ (0, 1).
double analytic_gaussian_epsilon(double noise_multiplier, double delta);
/// The smallest noise multiplier s with δ_s(ε) ≤ delta: δ falls as s grows (Balle & Wang 2018,
/// Lemma 7), so bisection in log s over [1e-6, 1e7] to 1e-12, returning the end that meets δ.
/// Multiply by the L2 sensitivity for the noise stddev.  Throws InvalidArgument unless ε > 0 is
/// finite and delta ∈ (0, 1), and PrivacyError when no s up to 1e7 meets the target.
double analytic_gaussian_noise_multiplier(double epsilon, double delta);

/// The values a calibrated parameter may take.
struct BOOST_SYMBOL_VISIBLE ParameterRange {
  double lower = 1e-3;  // > 0
  double upper = 1e6;   // > lower, finite
  /// Only integers in [lower, upper] (steps, epochs, K): the answer is exact, not within a
  /// tolerance.
  bool integer = false;
  /// Real parameters: stop when the bracket [lo, hi] has hi / lo ≤ 1 + relative_tolerance.
  double relative_tolerance = 1e-9;
};

struct BOOST_SYMBOL_VISIBLE ParameterCalibration {
  /// The calibrated value; the accountant's ε at δ of event_of(value) is ≤ the target.
  double value = 0;
  /// −1 when ε falls as the parameter grows (noise): `value` is the smallest that meets the
  /// target.  +1 when ε grows with it (steps, epochs, a sampling rate, K): the largest.
  int direction = 0;
  PrivacyGuarantee guarantee;
  int evaluations = 0;
};

/// The value of a parameter at which the accountant's ε at δ of event_of(value) meets the target:
/// the smallest such value when ε falls with the parameter, the largest when ε grows with it (the
/// direction is read from the range's ends).  Brent's method (Brent 1973, "Algorithms for
/// Minimization without Derivatives", ch. 4) on log(value) brackets the boundary; the answer is
/// always an evaluated point that meets the target.  Every evaluated pair is checked for
/// monotonicity (a violation throws Error).  Throws PrivacyError when no value in the range meets
/// the target, InvalidArgument for a bad target, δ or range.
ParameterCalibration calibrate_parameter(const Accountant& accountant,
                                         const std::function<DpEvent(double)>& event_of,
                                         double target_epsilon, double delta,
                                         const ParameterRange& range = {});

}  // namespace dptune
