// dptune SDK test kit, part of <dptune/testing.hpp>: the conformance checks every accountant plugin
// must pass, run by `dptune check accountant NAME` and callable from a plugin's own tests.
//
// An accountant prices events by upper bounds, so the checks compare its answers with the exact
// privacy curves of events whose curve has a closed form, and with the invariants every sound
// bound keeps.  A check of an event the accountant does not support is skipped, but refusing
// must be done cleanly: a reason from unsupported_reason() and a dptune::Error from epsilon().
//
// Exact curves used (sensitivity 1, noise multiplier s):
//  * Gaussian: δ(ε) = Φ(1/(2s) − εs) − e^ε Φ(−1/(2s) − εs) (Balle & Wang 2018, Theorem 8); the
//    composition of k of them is the Gaussian of s/√k (Dong, Roth & Su 2019, Corollary 2.14).
//  * Laplace of scale b: pure (1/b)-DP and, for 0 ≤ ε < 1/b, δ(ε) = 1 − e^((ε − 1/b)/2)
//    (the hockey-stick divergence of two Laplace distributions one apart; e.g. Koskela, Jälkö &
//    Honkela 2020, Section 6.2).
#pragma once

#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/plugin.hpp"

namespace dptune::testing {

namespace detail {

inline double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

inline double exact_gaussian_delta(double s, double eps) {
  return normal_cdf(0.5 / s - eps * s) - std::exp(eps) * normal_cdf(-0.5 / s - eps * s);
}

inline double exact_laplace_delta(double b, double eps) {
  return eps >= 1 / b ? 0.0 : 1 - std::exp((eps - 1 / b) / 2);
}

/// The smallest ε ≥ 0 with curve(ε) ≤ δ, for a curve non-increasing in ε, by bisection.
template <class Curve>
double exact_epsilon(const Curve& curve, double delta) {
  if (curve(0.0) <= delta) return 0;
  double lo = 0, hi = 1;
  while (curve(hi) > delta) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (curve(mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

inline std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", x);
  return text;
}

}  // namespace detail

/// What one run of the checks found: every failed check, and how many checks ran or were skipped.
struct AccountantReport {
  std::vector<std::string> failures;
  std::size_t checked = 0, skipped = 0;
  bool passed() const { return failures.empty(); }
};

namespace detail {

/// One accountant's answers, with the failures they show recorded in the report.
class AccountantProbe {
 public:
  AccountantProbe(const Accountant& accountant, AccountantReport& report)
      : a_(accountant), report_(report) {}

  /// ε(event, δ), or nothing when the accountant refuses the event (cleanly, or it is a failure).
  std::optional<double> epsilon(const DpEvent& event, double delta) {
    const std::string why = a_.unsupported_reason(event);
    if (!why.empty()) {
      expect_refusal(event, delta);
      return std::nullopt;
    }
    try {
      const double eps = a_.epsilon(event, delta).epsilon;
      if (!(eps >= 0)) fail(event, "epsilon at delta " + number(delta) + " is " + number(eps));
      return eps;
    } catch (const dptune::Error& e) {
      fail(event, std::string("supported, but epsilon() threw: ") + e.what());
      return std::nullopt;
    }
  }
  std::optional<double> delta(const DpEvent& event, double eps) {
    if (!a_.supports(event)) return std::nullopt;
    try {
      return a_.delta(event, eps).delta;
    } catch (const dptune::Error& e) {
      fail(event, std::string("supported, but delta() threw: ") + e.what());
      return std::nullopt;
    }
  }
  /// A bound must not be below the exact value (relative tolerance for rounding).
  void at_least(const DpEvent& event, const std::string& what, double value, double exact) {
    ++report_.checked;
    if (value < exact * (1 - 1e-9) - 1e-12)
      fail(event, what + " " + number(value) + " is below the exact " + number(exact) +
                      ": not an upper bound");
  }
  void skipped() { ++report_.skipped; }
  void fail(const DpEvent& event, const std::string& what) {
    report_.failures.push_back(event.to_string() + ": " + what);
  }

 private:
  void expect_refusal(const DpEvent& event, double delta) {
    ++report_.checked;
    try {
      (void)a_.epsilon(event, delta);
      fail(event, "unsupported_reason() refuses it, but epsilon() returned a value");
    } catch (const dptune::Error&) {
      // a clean refusal
    } catch (const std::exception& e) {
      fail(event, std::string("refused with a non-dptune exception: ") + e.what());
    }
  }
  const Accountant& a_;
  AccountantReport& report_;
};

inline void check_gaussian(AccountantProbe& probe, double s, double delta, int count) {
  const DpEvent event =
      count == 1 ? DpEvent::gaussian(s) : DpEvent::self_composed(DpEvent::gaussian(s), count);
  const double s_total = s / std::sqrt(static_cast<double>(count));
  const auto curve = [s_total](double e) { return exact_gaussian_delta(s_total, e); };
  const auto eps = probe.epsilon(event, delta);
  if (!eps) return probe.skipped();
  probe.at_least(event, "epsilon at delta " + number(delta), *eps, exact_epsilon(curve, delta));
  for (double at : {0.1, 1.0, 3.0})
    if (const auto d = probe.delta(event, at))
      probe.at_least(event, "delta at epsilon " + number(at), *d, curve(at));
}

inline void check_laplace(AccountantProbe& probe, double b, double delta) {
  const DpEvent event = DpEvent::laplace(b);
  const auto eps = probe.epsilon(event, delta);
  if (!eps) return probe.skipped();
  const auto curve = [b](double e) { return exact_laplace_delta(b, e); };
  probe.at_least(event, "epsilon at delta " + number(delta), *eps, exact_epsilon(curve, delta));
}

/// ε must not grow with δ, and composing must not cost less than a part.
inline void check_invariants(AccountantProbe& probe, const DpEvent& event) {
  const auto tight = probe.epsilon(event, 1e-6), loose = probe.epsilon(event, 1e-3);
  if (!tight || !loose) return probe.skipped();
  probe.at_least(event, "epsilon at delta 1e-6 (against its value at 1e-3)", *tight, *loose);
  const DpEvent twice = DpEvent::composed({event, event});
  if (const auto both = probe.epsilon(twice, 1e-6))
    probe.at_least(twice, "epsilon of the composition (against one part)", *both, *tight);
  const DpEvent thrice = DpEvent::self_composed(event, 3);
  if (const auto three = probe.epsilon(thrice, 1e-6))
    probe.at_least(thrice, "epsilon of 3-fold self-composition (against one)", *three, *tight);
}

}  // namespace detail

/// Runs every conformance check on `accountant`: soundness against the exact curves of Gaussian
/// and Laplace events (alone and composed), monotonicity in δ, composition never cheaper than a
/// part (also for Poisson-subsampled and fixed-size-lot Gaussians), and clean refusals.
inline AccountantReport check_accountant(const Accountant& accountant) {
  AccountantReport report;
  detail::AccountantProbe probe(accountant, report);
  for (double s : {0.5, 1.0, 2.0, 8.0})
    for (double delta : {1e-5, 1e-2})
      for (int count : {1, 4}) detail::check_gaussian(probe, s, delta, count);
  for (double b : {0.5, 1.0, 4.0})
    for (double delta : {1e-5, 1e-2}) detail::check_laplace(probe, b, delta);
  for (const DpEvent& e :
       {DpEvent::gaussian(1.0), DpEvent::laplace(2.0),
        DpEvent::poisson_sampled(0.05, DpEvent::gaussian(1.0)),
        DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.1)), 100),
        DpEvent::self_composed(
            DpEvent::sampled_without_replacement(1000, 50, DpEvent::gaussian(1.0)), 20)})
    detail::check_invariants(probe, e);
  return report;
}

}  // namespace dptune::testing
