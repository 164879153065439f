// Test doubles for the DP-Hype tests: a two-thread parallel_for, secure and scale-free Gaussian
// mechanisms (the plain one is dptune_test::GaussianNoise), and an
// accountant that implements exactly Liebenow et al. 2025's Theorem III.1 + Theorem I.1 minimised
// over a dense order grid (independent of the rdp plugin, so the calibration code is tested on its
// own).
#pragma once

#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "dp_hype/secagg.hpp"
#include "dptune/dptune.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "test_mechanisms.hpp"

namespace dp_hype_test {

using dptune::dp_hype::secagg::two_threads;

/// The built-in gaussian mechanism's secure release (grid + exact discrete Gaussian).
class SecureGaussianMechanism final : public dptune::Mechanism {
 public:
  explicit SecureGaussianMechanism(double noise_multiplier) : z_(noise_multiplier) {}
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    return dptune::grid_gaussian(values, s.l2, z_, dptune::gaussian_grid(s.l2, z_, values.size()),
                                 rng);
  }
  dptune::DpEvent event() const override {
    return dptune::DpEvent::discrete_gaussian_on_grid(z_, dptune::kGaussianGridMinScale);
  }

 private:
  double z_;
};

/// A discrete Gaussian mechanism that states no scale (discrete_gaussian): the vote's sum cannot
/// be priced from it.
class ScaleFreeDiscreteMechanism final : public dptune::Mechanism {
 public:
  explicit ScaleFreeDiscreteMechanism(double noise_multiplier) : z_(noise_multiplier) {}
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    return dptune::grid_gaussian(values, s.l2, z_, dptune::gaussian_grid(s.l2, z_, values.size()),
                                 rng);
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::discrete_gaussian(z_); }

 private:
  double z_;
};

/// Adds a fixed, known offset per entry (so the exact real sum is known).
class OffsetMechanism final : public dptune::Mechanism {
 public:
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator& rng) const override {
    std::vector<double> out(values.begin(), values.end());
    for (auto& v : out) v += dptune::uniform01(rng) * 20 - 10;
    return out;
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::gaussian(1); }
};

/// replace_one(Gaussian(z)) (client-level replace-one, multiplier relative to √(2k)):
/// ε(α) = α / (2 z²) (Definition I.3 with Δ = 1; for z = σ/√(2k) this is αk/σ², Theorem III.1),
/// converted with Theorem I.1: ε = ε(α) + log((α−1)/α) − (log δ + log α)/(α − 1), minimised over α
/// ∈ {1.01, 1.02, ..., 101} ∪ {102, ..., 10101}.
class PaperAccountant final : public dptune::Accountant {
 public:
  std::string unsupported_reason(const dptune::DpEvent& e) const override {
    return is_vote_event(e) ? "" : "test accountant: replace_one(gaussian) only";
  }
  static bool is_vote_event(const dptune::DpEvent& e) {
    return e.kind() == dptune::DpEvent::Kind::ReplaceOne &&
           e.inner().kind() == dptune::DpEvent::Kind::Gaussian;
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& e, double delta) const override {
    if (!is_vote_event(e)) throw dptune::PrivacyError(unsupported_reason(e));
    const double z = e.inner().noise_multiplier();
    dptune::PrivacyGuarantee g;
    g.delta = delta;
    g.epsilon = INFINITY;
    for (int i = 1; i <= 20000; ++i) {
      const double a = i <= 10000 ? 1 + i * 0.01 : 101 + (i - 10000) * 1.0;
      const double eps =
          a / (2 * z * z) + std::log((a - 1) / a) - (std::log(delta) + std::log(a)) / (a - 1);
      g.epsilon = std::min(g.epsilon, eps);
    }
    g.accountant = "paper003-test";
    g.derivation = "Theorem III.1 + Theorem I.1 over a dense order grid";
    return g;
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent&, double) const override {
    throw dptune::PrivacyError("test accountant: delta() not implemented");
  }
};

/// Liebenow et al. 2025, Theorem III.1 converted by Theorem I.1, written out independently of any
/// accountant: the Gaussian vote sum with L2 sensitivity Δ = √(2k) and noise variance v has RDP
/// ε(α) = α Δ² / (2v) = α k / v; ε = min over α > 1 of ε(α) + log((α−1)/α) − (log δ + log α)/(α−1),
/// minimised by golden-section search on log(α − 1) (the objective is unimodal there).
inline double closed_form_epsilon(std::size_t k, double variance, double delta) {
  auto eps = [&](double t) {
    const double a = 1 + std::exp(t);
    return a * static_cast<double>(2 * k) / (2 * variance) + std::log((a - 1) / a) -
           (std::log(delta) + std::log(a)) / (a - 1);
  };
  double lo = std::log(1e-4), hi = std::log(1e5);
  const double r = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200; ++i) {
    const double m1 = hi - r * (hi - lo), m2 = lo + r * (hi - lo);
    if (eps(m1) < eps(m2))
      hi = m2;
    else
      lo = m1;
  }
  return eps(0.5 * (lo + hi));
}

}  // namespace dp_hype_test

#include "rdp/calculator.hpp"

namespace dp_hype_test {

/// The project's `rdp` accountant (plugins/accountant/rdp, its static core) behind the plugin
/// interface, with its defaults (improved conversion = Liebenow et al. 2025 Theorem I.1).
using RealRdpAccountant = dptune::rdp::AccountantAdapter;

}  // namespace dp_hype_test
