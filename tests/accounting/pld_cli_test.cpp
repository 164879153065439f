// The pld and best accountants through the host: the plugin registry's `best` (the smaller of the
// rdp and pld answers, naming the winner) and `dptune privacy --accountant pld|best`.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>
#include <string>

#include "built_plugins.hpp"
#include "cli_support.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/plugin_registry.hpp"

using dptune::DpEvent;
using dptune_test::run_dptune;

namespace {

double json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  return std::stod(json.substr(at + key.size() + 3));
}

}  // namespace

TEST_CASE("best: never above rdp or pld, and names the winner") {
  const auto rdp = dptune_test::built_accountant("rdp"), pld = dptune_test::built_accountant("pld"),
             best = dptune_test::built_accountant("best");
  const std::vector<DpEvent> events{
      DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.0)), 500),
      DpEvent::self_composed(DpEvent::laplace(10.0), 100),
      DpEvent::composed({DpEvent::gaussian(2.0), DpEvent::pure_dp(0.1)}),
      DpEvent::pure_dp(0.5),
  };
  for (const auto& e : events) {
    INFO(e.to_string());
    const auto r = rdp->epsilon(e, 1e-6), p = pld->epsilon(e, 1e-6), b = best->epsilon(e, 1e-6);
    CHECK(b.epsilon <= r.epsilon);
    CHECK(b.epsilon <= p.epsilon);
    CHECK(b.epsilon == std::min(r.epsilon, p.epsilon));
    CHECK(b.accountant == "best");
    const std::string winner = p.epsilon < r.epsilon ? "pld wins" : "rdp wins";
    CHECK(b.derivation.find(winner) != std::string::npos);
    const auto bd = best->delta(e, 1.0);
    CHECK(bd.delta == std::min(rdp->delta(e, 1.0).delta, pld->delta(e, 1.0).delta));
  }
  // The PLD wins on DP-SGD-like compositions of subsampled Gaussians.
  const auto sgd =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.0)), 500);
  CHECK(best->epsilon(sgd, 1e-6).derivation.find("pld wins") != std::string::npos);
}

TEST_CASE("best: an event only rdp can price goes to rdp, one neither can is refused") {
  const auto best = dptune_test::built_accountant("best");
  // Fixed-size lots of exact discrete Gaussian noise: pld declines the discrete Gaussian.
  const auto wor = DpEvent::sampled_without_replacement(1000, 10, DpEvent::discrete_gaussian(1.0));
  CHECK(best->unsupported_reason(wor).empty());
  const auto g = best->epsilon(wor, 1e-5);
  CHECK(g.derivation.find("pld cannot price it") != std::string::npos);
  CHECK(g.derivation.find("rdp wins") != std::string::npos);
  CHECK(g.epsilon == dptune_test::built_accountant("rdp")->epsilon(wor, 1e-5).epsilon);
  const std::string why = best->unsupported_reason(DpEvent::non_private());
  CHECK(why.find("rdp:") != std::string::npos);
  CHECK(why.find("pld:") != std::string::npos);
  CHECK_THROWS(best->epsilon(DpEvent::non_private(), 1e-5));
  // The registry knows best as an accountant with the union of its members' params.
  const auto names = dptune_test::built_plugins().names(dptune::host::ComponentKind::Accountant);
  CHECK(std::find(names.begin(), names.end(), "best") != names.end());
  const auto* schema =
      dptune_test::built_plugins().schema(dptune::host::ComponentKind::Accountant, "best");
  REQUIRE(schema != nullptr);
  CHECK(schema->find("orders") != nullptr);
  CHECK(schema->find("value_discretization_interval") != nullptr);
}

TEST_CASE("dptune privacy --accountant pld and best: DP-SGD shortcut, JSON names the grid") {
  const std::string sgd =
      "privacy --dataset-size 60000 --batch-size 256 --steps 14063 --noise-multiplier 1.1 "
      "--sampling poisson --noise fast --delta 1e-5 --json --accountant ";
  const auto pld = run_dptune(sgd + "pld", "pld_dpsgd");
  REQUIRE(pld.exit_code == 0);
  CHECK(json_number(pld.out, "epsilon") == doctest::Approx(2.382).epsilon(1e-3));
  CHECK(pld.out.find("\"accountant\": \"pld\"") != std::string::npos);
  CHECK(pld.out.find("value_discretization_interval 0.0001") != std::string::npos);
  CHECK(pld.out.find("tail_mass_truncation 1e-15") != std::string::npos);
  const auto best = run_dptune(sgd + "best", "best_dpsgd");
  REQUIRE(best.exit_code == 0);
  CHECK(json_number(best.out, "epsilon") == json_number(pld.out, "epsilon"));
  CHECK(best.out.find("pld wins") != std::string::npos);
  // A coarser grid is still an upper bound, and looser.
  const auto coarse = run_dptune(sgd + "pld --value-discretization-interval 1e-3", "pld_coarse");
  REQUIRE(coarse.exit_code == 0);
  CHECK(json_number(coarse.out, "epsilon") >= json_number(pld.out, "epsilon") - 1e-9);
}

TEST_CASE("dptune privacy --accountant pld: bad parameters and unsupported events exit 2") {
  const std::string gauss = "privacy --event '{gaussian: {noise_multiplier: 1}}' --delta 1e-5 ";
  const auto zero =
      run_dptune(gauss + "--accountant pld --value-discretization-interval 0", "pld_h0");
  CHECK(zero.exit_code == 2);
  CHECK(zero.err.find("value_discretization_interval") != std::string::npos);
  const auto tail = run_dptune(gauss + "--accountant pld --tail-mass-truncation 0.5", "pld_tail");
  CHECK(tail.exit_code == 2);
  CHECK(tail.err.find("tail_mass_truncation") != std::string::npos);
  const auto wrong =
      run_dptune(gauss + "--accountant rdp --tail-mass-truncation 1e-10", "rdp_tail");
  CHECK(wrong.exit_code == 2);
  const auto zcdp =
      run_dptune("privacy --event '{zcdp: {rho: 0.1}}' --delta 1e-5 --accountant pld", "pld_zcdp");
  CHECK(zcdp.exit_code == 2);
  CHECK(zcdp.err.find("zCDP") != std::string::npos);
}

TEST_CASE("dptune validate: pld prices DP-SGD with the secure default noise, both samplings") {
  // The secure noise states its scale (discrete_gaussian_on_grid), which pld prices; it refused
  // the scale-free discrete_gaussian the mechanism stated before (exit 2 at accountant.use).
  for (const char* sampling : {"poisson", "without_replacement"}) {
    CAPTURE(sampling);
    const auto r = run_dptune(
        std::string("validate examples/pipelines/repetition_dp_sgd_logreg_breast_cancer.yaml "
                    "--set accountant.use=pld --set algorithm.params.sampling=") +
            sampling,
        std::string("pld_validate_secure_") + sampling);
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
}

namespace {

/// The ε `best` states for `member` in its derivation ("best of rdp (eps 1.39…), pld (eps …)").
double member_epsilon(const std::string& summary, const std::string& member) {
  std::smatch m;
  const std::regex pattern(member + R"( \(eps ([0-9.eE+-]+)\))");
  REQUIRE(std::regex_search(summary, m, pattern));
  return std::stod(m[1].str());
}

/// best's answer is the PLD selection profile's: pld's own price, or rdp's selection bound fed the
/// same PLD profile (pld::FastProfile, the same numbers: a tie, which the first member takes).
void check_pld_selection_profile_wins(const std::string& summary) {
  CHECK(summary.find("\"accountant\": \"best\"") != std::string::npos);
  CHECK(summary.find(" wins: selection privacy profile") != std::string::npos);
  const double pld = member_epsilon(summary, "pld"), rdp = member_epsilon(summary, "rdp");
  CHECK(pld <= rdp);
  std::smatch m;
  REQUIRE(std::regex_search(summary, m, std::regex(R"("epsilon": ([0-9.eE+-]+))")));
  CHECK(std::stod(m[1].str()) == pld);
}

}  // namespace

TEST_CASE("dptune run: the repetition tuner with accountant best takes the PLD selection profile") {
  // Floating-point noise (noise: fast) first, then the secure default.
  const auto out = dptune_test::fresh_dir("pld_repetition_run");
  const std::string run =
      "run examples/pipelines/repetition_dp_sgd_logreg_breast_cancer.yaml --set "
      "accountant.use=best --set algorithm.params.sampling=poisson --set utility.repetitions=1 "
      "--overwrite ";
  const auto r =
      run_dptune(run + "--set mechanism.params.noise=fast -o '" + (out / "study").string() + "'",
                 "pld_repetition");
  REQUIRE(r.exit_code == 0);
  check_pld_selection_profile_wins(dptune_test::slurp(out / "study" / "summary.json"));
  // The secure default's exact discrete Gaussian noise states its scale
  // (discrete_gaussian_on_grid), so pld prices it through its continuous surrogate (the only way
  // it can: its price is finite), and that price is best's.
  const auto secure = run_dptune(run + "-o '" + (out / "secure").string() + "'", "pld_secure");
  REQUIRE(secure.exit_code == 0);
  const std::string secure_summary = dptune_test::slurp(out / "secure" / "summary.json");
  CHECK(secure_summary.find("pld cannot price it") == std::string::npos);
  check_pld_selection_profile_wins(secure_summary);
}
