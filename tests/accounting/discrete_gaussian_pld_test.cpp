// The discrete Gaussian event (ABI 2.8) through the built plugins: pld refuses it with the reason
// (and the reason is real: the discrete pair's hockey-stick curve can exceed the continuous one),
// pure_dp refuses it, `best` prices it by rdp, `dptune privacy` reads it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "built_plugins.hpp"
#include "cli_support.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "temp_dir.hpp"

using dptune::DpEvent;
using dptune_test::run_dptune;

namespace {

/// Σ_x (p_1(x) − p_0(x))₊ for p_0 = N_Z(0, s²), p_1 = N_Z(μ, s²), summed over the support.
double discrete_tv(double s, int mu) {
  const int radius = static_cast<int>(std::ceil(40 * s)) + std::abs(mu);
  double z = 0;
  for (int x = -radius; x <= radius; ++x) z += std::exp(-x * x / (2 * s * s));
  double tv = 0;
  for (int x = -radius; x <= radius; ++x) {
    const double p0 = std::exp(-x * x / (2 * s * s)) / z;
    const double p1 = std::exp(-(x - mu) * (x - mu) / (2 * s * s)) / z;
    tv += std::max(0.0, p1 - p0);
  }
  return tv;
}

}  // namespace

TEST_CASE("discrete Gaussian: its total variation can exceed the continuous Gaussian's") {
  // Multiplier 1/2 both: N_Z(0, 1/4) against N_Z(1, 1/4), and N(0, 1/4) against N(1, 1/4), whose
  // total variation is 2Φ(1) − 1 = erf(1/√2).  The discrete pair is further apart, so pricing
  // its PLD (δ at ε = 0) as the continuous Gaussian's would be optimistic.
  const double discrete = discrete_tv(0.5, 1), continuous = std::erf(1 / std::sqrt(2.0));
  MESSAGE("TV: discrete " << discrete << ", continuous " << continuous);
  CHECK(discrete == doctest::Approx(0.78657).epsilon(1e-4));
  CHECK(continuous == doctest::Approx(0.68269).epsilon(1e-4));
  CHECK(discrete > continuous + 0.1);
}

TEST_CASE("discrete Gaussian: pld and pure_dp refuse it, best prices it by rdp") {
  const auto pld = dptune_test::built_accountant("pld"), rdp = dptune_test::built_accountant("rdp"),
             best = dptune_test::built_accountant("best"),
             pure = dptune_test::built_accountant("pure_dp");
  const DpEvent e =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::discrete_gaussian(1.1)), 1000);
  for (const DpEvent& ev : {DpEvent::discrete_gaussian(1.0), e}) {
    CHECK(pld->unsupported_reason(ev).find("discrete") != std::string::npos);
    CHECK_THROWS_AS(pld->epsilon(ev, 1e-5), dptune::PrivacyError);
    CHECK(pure->unsupported_reason(ev).find("pure or approximate DP bound") != std::string::npos);
  }
  CHECK(pld->unsupported_reason(DpEvent::discrete_gaussian(1.0)).find("rdp accountant") !=
        std::string::npos);
  const auto r = rdp->epsilon(e, 1e-5), b = best->epsilon(e, 1e-5);
  CHECK(b.epsilon == r.epsilon);
  CHECK(b.derivation.find("rdp wins") != std::string::npos);
  CHECK(b.derivation.find("pld cannot price it") != std::string::npos);
  CHECK(r.derivation.find("Poisson-sampled discrete Gaussian") != std::string::npos);
  // Never below the continuous Gaussian's rdp price (the chord at fractional orders).
  const DpEvent continuous =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.1)), 1000);
  CHECK(r.epsilon >= rdp->epsilon(continuous, 1e-5).epsilon);
}

TEST_CASE("dptune privacy reads a discrete_gaussian event and names its theorem") {
  dptune_test::TempDir dir;
  const auto file =
      dir.write("dg.yaml",
                "self_composed: {count: 1000, event: {poisson_sampled: {rate: 0.01, event: "
                "{discrete_gaussian: {noise_multiplier: 1.1}}}}}\n");
  auto r = run_dptune("privacy " + file.string() + " --delta 1e-5", "dg");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("discrete") != std::string::npos);
  r = run_dptune("privacy " + file.string() + " --delta 1e-5 --accountant pld", "dg_pld");
  CHECK(r.exit_code != 0);
  CHECK((r.out + r.err).find("discrete Gaussian's privacy loss distribution") != std::string::npos);
  // --calibrate finds the smallest multiplier; the discrete one needs at least the continuous one.
  auto sigma_for = [&](const std::string& leaf) {
    const auto f = dir.write(leaf + ".yaml",
                             "self_composed: {count: 1000, event: "
                             "{poisson_sampled: {rate: 0.01, event: {" +
                                 leaf + ": {noise_multiplier: 1}}}}}\n");
    const auto c = run_dptune("privacy " + f.string() +
                                  " --delta 1e-5 --target-epsilon 1 --calibrate noise_multiplier "
                                  "--json",
                              "dg_cal_" + leaf);
    INFO(c.err);
    REQUIRE(c.exit_code == 0);
    const auto at = c.out.find("\"value\":");
    REQUIRE(at != std::string::npos);
    return std::stod(c.out.substr(at + 8));
  };
  const double continuous = sigma_for("gaussian"), discrete = sigma_for("discrete_gaussian");
  MESSAGE("calibrated sigma: continuous " << continuous << ", discrete " << discrete);
  CHECK(discrete >= continuous * (1 - 1e-6));
  CHECK(discrete <= 1.02 * continuous);
  const auto bad = dir.write("bad.yaml", "discrete_gaussian: {noise_multiplier: -2}\n");
  r = run_dptune("privacy " + bad.string() + " --delta 1e-5", "dg_bad");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad.yaml:1:") != std::string::npos);
}
