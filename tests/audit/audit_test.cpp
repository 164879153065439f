// `dptune audit`: exact binomial bounds against independent numerics, the neighbouring inputs, the
// false-alarm rate on a mechanism that meets its claim exactly, every deliberately broken plugin
// flagged (exit 3), the built-in and example mechanisms passing (exit 0), and the record store
// shown by `plugins describe` and run reports.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "build_paths.hpp"
#include "cli_support.hpp"
#include "dptune/dptune.hpp"
#include "dptune/host/audit.hpp"

namespace fs = std::filesystem;
using dptune_test::run_dptune;

namespace {

const std::string kPlugins = dptune_test::build_paths::audit_plugin_dir;

/// Points the audit record store at a fresh file for this test (child processes inherit it), so
/// tests never read or write the user's cache.
std::string private_store(const std::string& tag) {
  const auto store = dptune_test::fresh_dir("audit_store_" + tag) / "audits.json";
  ::setenv("DPTUNE_AUDIT_STORE", store.c_str(), 1);
  return store.string();
}

/// The third-party example pipeline in `dir`, loading the example plugin from dir/plug (the
/// example builds it into build/), with a grid of 2 points.
void write_geometric_example(const fs::path& dir) {
  fs::create_directories(dir / "plug");
  fs::copy_file(kPlugins + "/geometric/audit_geometric.so", dir / "plug" / "audit_geometric.so");
  std::string yaml = dptune_test::slurp(fs::path(dptune_test::build_paths::source_dir) /
                                        "examples" / "third_party_plugin" / "pipeline.yaml");
  yaml.replace(yaml.find("plugin_paths: [build]"), 21, "plugin_paths: [plug] ");
  yaml.replace(yaml.find("points_per_dimension: 8"), 23, "points_per_dimension: 2");
  std::ofstream(dir / "pipeline.yaml") << yaml;
}

}  // namespace

TEST_CASE("regularized incomplete beta matches mpmath (40 digits)") {
  // mpmath.betainc(a, b, 0, x, regularized=True) at mp.dps = 40.
  CHECK(dptune::host::regularized_beta(2.5, 3.5, 0.3) ==
        doctest::Approx(0.29675298929566637832).epsilon(1e-13));
  CHECK(dptune::host::regularized_beta(500, 700, 0.45) ==
        doctest::Approx(0.99009477752156837539).epsilon(1e-11));
  CHECK(dptune::host::regularized_beta(0.5, 0.5, 0.9) ==
        doctest::Approx(0.79516723530086657191).epsilon(1e-13));
  // I_x(1, b) = 1 - (1 - x)^b and I_x(a, 1) = x^a in closed form.
  CHECK(dptune::host::regularized_beta(1, 7, 0.2) ==
        doctest::Approx(1 - std::pow(0.8, 7)).epsilon(1e-14));
  CHECK(dptune::host::regularized_beta(3, 1, 0.6) == doctest::Approx(0.216).epsilon(1e-14));
}

TEST_CASE("Clopper-Pearson bounds: closed forms and scipy/mpmath quantiles") {
  using dptune::host::clopper_pearson_lower;
  using dptune::host::clopper_pearson_upper;
  // k = 0: upper = 1 - a^(1/n); k = n: lower = a^(1/n) (Clopper & Pearson 1934).
  CHECK(clopper_pearson_upper(0, 10, 0.05) ==
        doctest::Approx(1 - std::pow(0.05, 0.1)).epsilon(1e-8));
  CHECK(clopper_pearson_lower(20, 20, 0.01) == doctest::Approx(std::pow(0.01, 0.05)).epsilon(1e-8));
  CHECK(clopper_pearson_lower(0, 10, 0.05) == 0.0);
  CHECK(clopper_pearson_upper(10, 10, 0.05) == 1.0);
  // Beta quantiles: mpmath.findroot on betainc (first three), scipy.stats.beta.ppf (last two).
  struct Known {
    std::uint64_t k, n;
    double a, lower, upper;
  };
  for (const Known& c :
       {Known{5, 100, 0.025, 0.01643187918205216, 0.11283491110546275},
        Known{1, 10, 0.05, 0.0051161968918237014, 0.39416330243650471},
        Known{37, 1000, 1e-4, 0.018679528551894026, 0.064374086017235327},
        Known{99900, 100000, 1e-5, 0.9985032665732316, 0.9993705477208973},
        Known{3, 200000, 2.27e-5, 2.6062523852996444e-07, 8.847177897516683e-05}}) {
    CAPTURE(c.k);
    CAPTURE(c.n);
    const double lo = clopper_pearson_lower(c.k, c.n, c.a),
                 hi = clopper_pearson_upper(c.k, c.n, c.a);
    CHECK(lo == doctest::Approx(c.lower).epsilon(1e-8));
    CHECK(hi == doctest::Approx(c.upper).epsilon(1e-8));
    // Widened, never narrowed: the bounds are conservative.
    CHECK(lo <= c.lower * (1 + 1e-12));
    CHECK(hi >= c.upper * (1 - 1e-12));
  }
}

TEST_CASE("neighbouring inputs carry the exact sensitivity of their difference") {
  const auto pairs = dptune::host::neighbour_pairs();
  REQUIRE(pairs.size() == 11);
  for (const auto& p : pairs) {
    CAPTURE(p.name);
    REQUIRE(p.d.size() == p.d_prime.size());
    const auto s = dptune::host::exact_sensitivity(p.d, p.d_prime);
    CHECK(p.sensitivity.l1 == s.l1);
    CHECK(p.sensitivity.linf == s.linf);
    CHECK(p.sensitivity.linf > 0);
  }
  CHECK(pairs[1].sensitivity.l1 == 16);
  // one below rest above: (1,1,1,1,1) vs (0,2,2,2,2)
  CHECK(pairs[5].sensitivity.l1 == 5);
  CHECK(pairs[5].sensitivity.l2 == doctest::Approx(std::sqrt(5.0)));
  CHECK(pairs[5].sensitivity.linf == 1);
}

TEST_CASE("output events: membership and description") {
  using E = dptune::host::OutputEvent;
  E e;
  e.statistic = E::Statistic::NonZero;
  e.op = E::Op::Equal;
  e.value = 2;
  CHECK(e.contains(std::vector<double>{1, 0, 1}));
  CHECK_FALSE(e.contains(std::vector<double>{1, 1, 1}));
  CHECK(e.describe() == "count(output != 0) == 2.0");
  e.statistic = E::Statistic::Vector;
  e.vector = {1, 0};
  CHECK(e.contains(std::vector<double>{1, 0}));
  CHECK_FALSE(e.contains(std::vector<double>{1, 0, 0}));
}

namespace {

/// Randomized response on [values[0] >= 1/2], claimed pure ε-DP — exactly ε-DP, so {output = 1}
/// meets the claim with equality: the hardest case for false alarms.
class RandomizedResponse final : public dptune::Mechanism {
 public:
  explicit RandomizedResponse(double epsilon) : epsilon_(epsilon) {}
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator& rng) const override {
    const bool bit = values[0] >= 0.5;
    const bool keep = dptune::bernoulli(rng, std::exp(epsilon_) / (1 + std::exp(epsilon_)));
    return {keep == bit ? 1.0 : 0.0};
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::pure_dp(epsilon_); }

 private:
  double epsilon_;
};

}  // namespace

TEST_CASE("false alarms stay below alpha on a mechanism that meets its claim with equality") {
  // At alpha = 0.2, 30 independent audits of an exactly-tight mechanism: a sound procedure raises
  // at most Bin(30, 0.2) alarms, and P[Bin(30, 0.2) >= 12] < 0.003.
  const RandomizedResponse rr(1.0);
  dptune::host::Claim claim;
  claim.event = "pure_dp 1";
  claim.pure = true;
  claim.curve = {{0.0, 1.0}};
  int alarms = 0, strict_alarms = 0;
  double best_lower = -1;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    dptune::host::AuditOptions options;
    options.samples = 4000;
    options.alpha = 0.2;
    options.seed = seed;
    const auto r = dptune::host::run_audit(rr, claim, options);
    alarms += r.violation ? 1 : 0;
    best_lower = std::max(best_lower, r.epsilon_lower[0]);
    options.alpha = 1e-3;  // the default level: no alarm expected in 30 runs (P >= 0.97)
    strict_alarms += dptune::host::run_audit(rr, claim, options).violation ? 1 : 0;
  }
  CHECK(alarms < 12);
  CHECK(strict_alarms == 0);
  // ...and the audit has power: the bounds it certifies come close to the true ε = 1.
  CHECK(best_lower > 0.8);
}

TEST_CASE("the sound laplace audit raises no alarm over several seeds") {
  private_store("laplace_seeds");
  for (const char* seed : {"1", "2", "3", "4", "5"}) {
    const auto r =
        run_dptune(std::string("audit laplace --samples 20000 --no-record --seed ") + seed,
                   std::string("laplace_seed_") + seed);
    CAPTURE(r.out);
    CHECK(r.exit_code == 0);
  }
}

namespace {

void expect_flagged(const std::string& mechanism, const std::string& folder,
                    const std::string& extra) {
  const auto r = run_dptune("audit " + mechanism + " --plugin-path '" + kPlugins + "/" + folder +
                                "' --seed 11 --samples 50000 --no-record " + extra,
                            "flag_" + mechanism);
  CAPTURE(r.out);
  CAPTURE(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("VIOLATION: inputs") != std::string::npos);
  CHECK(r.out.find("result: VIOLATION certified") != std::string::npos);
}

void expect_passes(const std::string& args, const std::string& tag) {
  const auto r = run_dptune("audit " + args + " --seed 5 --no-record", "pass_" + tag);
  CAPTURE(r.out);
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("result: no violation found") != std::string::npos);
}

}  // namespace

TEST_CASE("broken: Laplace ignoring its sensitivity is flagged") {
  expect_flagged("broken_laplace_ignores_sensitivity", "broken_laplace", "");
}
TEST_CASE("broken: Gaussian with sigma a quarter smaller is flagged") {
  expect_flagged("broken_gaussian_small_sigma", "broken_gaussian", "");
}
TEST_CASE("broken: Lyu-Su-Li Alg. 3 (noisy answers released) is flagged") {
  expect_flagged("svt_lsl3", "broken_svt", "");
}
TEST_CASE("broken: Lyu-Su-Li Alg. 4 (query noise not scaled with C) is flagged") {
  expect_flagged("svt_lsl4", "broken_svt", "--param C=2");
}
TEST_CASE("broken: Lyu-Su-Li Alg. 5 (no query noise) is flagged") {
  expect_flagged("svt_lsl5", "broken_svt", "");
}
TEST_CASE("broken: Lyu-Su-Li Alg. 6 (no cut-off) is flagged") {
  expect_flagged("svt_lsl6", "broken_svt", "");
}

TEST_CASE("built-in laplace passes with default settings") { expect_passes("laplace", "laplace"); }
TEST_CASE("built-in gaussian passes with default settings") {
  expect_passes("gaussian", "gaussian");
}
TEST_CASE("built-in sparse_vector passes (b = 4, C = 1 and C = 3)") {
  expect_passes("sparse_vector --param b=4 --param C=1", "svt_c1");
  expect_passes("sparse_vector --param b=4 --param C=3", "svt_c3");
}
TEST_CASE("example geometric passes") {
  expect_passes("geometric --param epsilon=1 --plugin-path '" + kPlugins + "/geometric'",
                "geometric");
}

TEST_CASE("usage errors exit 2 and name the problem") {
  auto r = run_dptune("audit no_such_mechanism", "usage_unknown");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no mechanism plugin 'no_such_mechanism'") != std::string::npos);
  r = run_dptune("audit laplace --param noise_multiplier=abc", "usage_param");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--param noise_multiplier=abc") != std::string::npos);
  r = run_dptune("audit laplace --param bogus=1", "usage_bogus");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no such parameter") != std::string::npos);
  r = run_dptune("audit laplace --alpha 2", "usage_alpha");
  CHECK(r.exit_code == 2);
  r = run_dptune("audit sparse_vector", "usage_required");  // b and C are required
  CHECK(r.exit_code == 2);
}

TEST_CASE("--json: the claim, the bound and the witness") {
  const auto r = run_dptune("audit broken_laplace_ignores_sensitivity --plugin-path '" + kPlugins +
                                "/broken_laplace' --seed 3 --samples 5000 --no-record --json",
                            "json");
  CHECK(r.exit_code == 3);
  for (const char* key : {"\"claimed_event\"", "\"epsilon_lower_bound\"", "\"violation\": true",
                          "\"p_likelier_lower\"", "\"d_prime\"", "\"sensitivity\""})
    CHECK(r.out.find(key) != std::string::npos);
}

TEST_CASE("audit records: plugins describe and a run report name the audit of the library") {
  const std::string store = private_store("records");
  const std::string env;
  const std::string path = " --plugin-path '" + kPlugins + "/broken_laplace'";
  auto r = run_dptune(env + "plugins describe broken_laplace_ignores_sensitivity" + path,
                      "records_before");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("not audited: run `dptune audit broken_laplace_ignores_sensitivity`") !=
        std::string::npos);
  r = run_dptune(env + "audit broken_laplace_ignores_sensitivity --seed 1 --samples 2000" + path,
                 "records_audit");
  CHECK(r.exit_code == 3);
  r = run_dptune(env + "plugins describe broken_laplace_ignores_sensitivity" + path,
                 "records_after");
  CAPTURE(r.out);
  CHECK(r.out.find("audited by dptune " DPTUNE_VERSION_STRING " on ") != std::string::npos);
  CHECK(r.out.find(": violation certified at alpha = 0.001") != std::string::npos);
  CHECK(r.out.find("sha256 ") != std::string::npos);
  // Built-in mechanisms carry no audit line.
  r = run_dptune(env + "plugins describe laplace", "records_builtin");
  CHECK(r.out.find("audit:") == std::string::npos);
  // The record store survives a second record and keeps both.
  const auto records = dptune::host::read_audit_records(store);
  REQUIRE(records.size() == 1);
  CHECK(records[0].plugin == "broken_laplace_ignores_sensitivity");
  CHECK(records[0].samples == 2000);
  CHECK(records[0].seed == "1");
  CHECK(records[0].sha256.size() == 64);
}

TEST_CASE("a run report states the audit of a third-party mechanism") {
  const auto dir = dptune_test::fresh_dir("audit_report");
  private_store("report");
  const std::string env;
  write_geometric_example(dir);
  const std::string run = "run '" + (dir / "pipeline.yaml").string() + "' --no-progress -o '" +
                          (dir / "results").string() + "'";
  auto r = run_dptune(run, "report_before");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("audit: mechanism plugin geometric (library ") != std::string::npos);
  CHECK(r.out.find("not audited with these parameters: run `dptune audit geometric`") !=
        std::string::npos);
  r = run_dptune(env + "audit geometric --param epsilon=2 --seed 2 --samples 2000 --plugin-path '" +
                     (dir / "plug").string() + "'",
                 "report_audit");
  CHECK(r.exit_code == 0);
  r = run_dptune(run + " --overwrite", "report_after");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("audited by dptune " DPTUNE_VERSION_STRING) != std::string::npos);
  CHECK(r.out.find("no violation found at alpha = 0.001 (params {epsilon: 2.0}; covers only "
                   "epsilon 2.0 of the values this run may use") != std::string::npos);
  const std::string summary = dptune_test::slurp(dir / "results" / "summary.json");
  CHECK(summary.find("\"mechanism_audits\"") != std::string::npos);
  CHECK(summary.find("no violation found at alpha") != std::string::npos);
}

namespace {

/// A record of `plugin` in `library` for one configuration, as `dptune audit` writes it.
dptune::host::AuditRecord crafted_record(const std::string& plugin, const fs::path& library,
                                         const std::string& epsilon, bool violation) {
  dptune::host::AuditRecord r;
  r.plugin = plugin;
  r.version = "1";
  r.library = library.string();
  r.sha256 = dptune::host::sha256_file(library);
  r.dptune_version = DPTUNE_VERSION_STRING;
  r.params = "{epsilon: " + epsilon + "}";
  r.configuration = {{"epsilon", epsilon}};
  r.samples = 1000;
  r.alpha = 0.001;
  r.result = violation ? "violation certified" : "no violation found";
  r.date = "2026-01-01T00:00:00Z";
  return r;
}

}  // namespace

TEST_CASE("audit verdicts are kept and read per configuration, never per library") {
  const std::string store = private_store("per_configuration");
  const fs::path library = kPlugins + "/geometric/audit_geometric.so";
  dptune::host::save_audit_record(crafted_record("geometric", library, "1.0", false), store);
  dptune::host::save_audit_record(crafted_record("geometric", library, "2.0", true), store);
  // A second audit of the same configuration replaces the first; other configurations stay.
  dptune::host::save_audit_record(crafted_record("geometric", library, "1.0", false), store);
  const auto records = dptune::host::read_audit_records(store);
  REQUIRE(records.size() == 2);

  dptune::host::MechanismUse use{"geometric", library, {}, {}, {}, "algorithm.use"};
  use.fixed.set("epsilon", dptune::Value{1.0});
  auto verdict = dptune::host::audit_verdict(use, records);
  CHECK_FALSE(verdict.violation);
  CHECK(verdict.statement.find("no violation found at alpha = 0.001 (params {epsilon: 1.0}") !=
        std::string::npos);
  CHECK(verdict.statement.find("violation certified") == std::string::npos);

  use.fixed.set("epsilon", dptune::Value{2.0});
  verdict = dptune::host::audit_verdict(use, records);
  CHECK(verdict.violation);
  CHECK(verdict.statement.find("violation certified") != std::string::npos);
  CHECK(verdict.statement.find("no violation found") == std::string::npos);

  use.fixed.set("epsilon", dptune::Value{3.0});
  verdict = dptune::host::audit_verdict(use, records);
  CHECK_FALSE(verdict.violation);
  CHECK(verdict.statement.find("not audited with these parameters (2 audit(s) of this library "
                               "used other parameters)") != std::string::npos);

  // A tuned epsilon may take either audited value: both verdicts apply, the violation refuses.
  dptune::host::MechanismUse tuned{"geometric", library, {}, {"epsilon"}, {}, "algorithm.use"};
  verdict = dptune::host::audit_verdict(tuned, records);
  CHECK(verdict.violation);
  CHECK(verdict.statement.find("covers only epsilon 1.0 of the values this run may use") !=
        std::string::npos);

  // A record without a configuration (written before verdicts were kept per configuration)
  // speaks for no run.
  auto old = crafted_record("geometric", library, "3.0", true);
  old.configuration.clear();
  verdict = dptune::host::audit_verdict(use, {old});
  CHECK_FALSE(verdict.violation);
  CHECK(verdict.statement.find("not audited with these parameters") != std::string::npos);
}

TEST_CASE("a certified violation refuses validate and run before anything is written") {
  const auto dir = dptune_test::fresh_dir("audit_refusal");
  const std::string store = private_store("refusal");
  write_geometric_example(dir);
  // The pipeline tunes epsilon over [0.5, 200]: a violation certified at epsilon 2 is a
  // configuration this run may use.
  dptune::host::save_audit_record(
      crafted_record("geometric", dir / "plug" / "audit_geometric.so", "2.0", true), store);
  const std::string pipeline = "'" + (dir / "pipeline.yaml").string() + "'";
  auto r = run_dptune("validate " + pipeline, "refusal_validate");
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("pipeline.yaml:13:8") != std::string::npos);  // algorithm: use: geometric
  CHECK(r.err.find("algorithm.use") != std::string::npos);
  CHECK(r.err.find("certified a privacy violation of 'geometric'") != std::string::npos);
  const std::string run =
      "run " + pipeline + " --no-progress -o '" + (dir / "results").string() + "'";
  r = run_dptune(run, "refusal_run");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--allow-audit-violation") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "results"));
  r = run_dptune(run + " --allow-audit-violation", "refusal_allowed");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("WARNING: run despite a certified violation (--allow-audit-violation)") !=
        std::string::npos);
  const std::string summary = dptune_test::slurp(dir / "results" / "summary.json");
  CHECK(summary.find("WARNING: run despite a certified violation") != std::string::npos);
}
