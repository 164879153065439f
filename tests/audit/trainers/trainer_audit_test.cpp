// `dptune audit trainer`: each deliberately broken trainer flagged (exit 3) at a claim of ε ≤ 2,
// the built-in DP-SGD and DP-Adam and the honest command example passing (exit 0), the report's
// parts, and configuration errors (exit 2, before training).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <regex>
#include <string>

#include "build_paths.hpp"
#include "cli_support.hpp"

using dptune_test::run_dptune;

namespace {

const std::string kPipelines =
    std::string(dptune_test::build_paths::trainer_audit_dir) + "/pipelines/";
const std::string kBrokenPlugins =
    std::string(dptune_test::build_paths::trainer_audit_plugin_dir) + "/broken_dp_sgd";

/// A number printed after `label` in `text` (-1 when absent).
double number_after(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return -1;
  return std::strtod(text.c_str() + at + label.size(), nullptr);
}

struct Audit {
  dptune_test::CommandResult run;
  double claimed = -1, lower = -1;
};

Audit audit(const std::string& pipeline, const std::string& extra, const std::string& tag) {
  const auto store = dptune_test::fresh_dir("trainer_audit_store_" + tag) / "audits.json";
  ::setenv("DPTUNE_AUDIT_STORE", store.c_str(), 1);
  Audit a;
  a.run = run_dptune(
      "audit trainer '" + kPipelines + pipeline + "' --seed 3 --param learning_rate=0.5 " + extra,
      "trainer_audit_" + tag);
  a.claimed = number_after(a.run.out, "claimed privacy: epsilon = ");
  a.lower = number_after(a.run.out, "empirical epsilon lower bound: ");
  return a;
}

std::string expect_flagged(const std::string& pipeline, const std::string& extra,
                           const std::string& tag) {
  const Audit a = audit(pipeline, extra, tag);
  CAPTURE(a.run.out);
  CAPTURE(a.run.err);
  CHECK(a.run.exit_code == 3);
  CHECK(a.claimed > 0);
  CHECK(a.claimed <= 2);
  // Certified by Steinke et al.'s bound above the claim, or by the f-DP test rejecting the claimed
  // profile (a violation at another delta of the curve).
  CHECK((a.lower > a.claimed ||
         a.run.out.find("the claimed profile is REJECTED") != std::string::npos));
  CHECK(a.run.out.find("result: VIOLATION certified") != std::string::npos);
  return a.run.out;
}

void expect_passes(const std::string& pipeline, const std::string& extra, const std::string& tag) {
  const Audit a = audit(pipeline, extra, tag);
  CAPTURE(a.run.out);
  CAPTURE(a.run.err);
  CHECK(a.run.exit_code == 0);
  CHECK(a.claimed > 0);
  CHECK(a.claimed <= 2);
  CHECK(a.lower >= 0);
  CHECK(a.lower <= a.claimed);
  CHECK(a.run.out.find("result: no violation found") != std::string::npos);
}

/// Runs `dptune ARGS` and checks that it is refused with exit 2 and an error naming each of `says`.
void check_refused(const std::string& args, const std::string& name,
                   std::initializer_list<const char*> says) {
  const auto r = run_dptune(args, name);
  CHECK(r.exit_code == 2);
  for (const char* text : says) {
    CAPTURE(text);
    CHECK(r.err.find(text) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("broken: DP-SGD without clipping is flagged") {
  expect_flagged("broken_noclip.yaml", "--canaries 400 --plugin-path '" + kBrokenPlugins + "'",
                 "noclip");
}
TEST_CASE("broken: DP-SGD with its noise divided by the lot size twice is flagged") {
  expect_flagged("broken_lot_squared.yaml", "--canaries 400 --plugin-path '" + kBrokenPlugins + "'",
                 "lot2");
}
TEST_CASE("broken: a command program declaring sigma 4 but adding sigma 0.5 is flagged") {
  // Poisson lots: the add/remove game (n varies with the canaries included).
  const std::string out =
      expect_flagged("command_low_noise.yaml", "--canaries 300", "command_low_noise");
  CHECK(out.find("game: add/remove, 300 canaries") != std::string::npos);
  // n = the 60 real rows + the canaries that are in.
  const double in = number_after(out, "300 canaries (");
  const double trained = number_after(out, "60 real rows, ");
  CHECK(in > 100);
  CHECK(in < 200);
  CHECK(trained == 60 + in);
}
TEST_CASE("built-in dp_sgd passes") { expect_passes("dp_sgd.yaml", "--canaries 400", "dp_sgd"); }
TEST_CASE("built-in dp_adam passes") { expect_passes("dp_adam.yaml", "--canaries 400", "dp_adam"); }
TEST_CASE("the honest command example passes") {
  expect_passes("command_honest.yaml", "--canaries 300", "command_honest");
}

TEST_CASE("a trainer audit's report: json, html histogram and the record per configuration") {
  const auto dir = dptune_test::fresh_dir("trainer_audit_report");
  const auto store = dir / "audits.json";
  ::setenv("DPTUNE_AUDIT_STORE", store.c_str(), 1);
  const auto html = (dir / "audit.html").string();
  const auto r = run_dptune("audit trainer '" + kPipelines +
                                "dp_sgd.yaml' --seed 3 --param learning_rate=0.5 --canaries 40 "
                                "--json --html '" +
                                html + "'",
                            "trainer_audit_json");
  CAPTURE(r.out);
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  for (const char* key :
       {"\"trainer\": \"dp_sgd\"", "\"sha256\": ", "\"epsilon_claimed\": ", "\"steinke\": {",
        "\"mahloujifar\": {", "\"neighbouring\": \"replace-one\"", "\"scores_in\": [",
        "\"scores_out\": [", "\"violation\": false",
        // Replace-one: every slot holds a canary or its twin, n = 60 + 40.
        "\"real_rows\": 60", "\"trained_rows\": 100"})
    CHECK(r.out.find(key) != std::string::npos);
  const std::string page = dptune_test::slurp(html);
  CHECK(page.find("<svg") != std::string::npos);
  CHECK(page.find("in (trained on)") != std::string::npos);
  CHECK(page.find("claimed epsilon") != std::string::npos);
  const std::string records = dptune_test::slurp(store);
  CHECK(records.find("\"dp_sgd\"") != std::string::npos);
  CHECK(records.find("learning_rate") != std::string::npos);
}

TEST_CASE("trainer audit: configuration errors exit 2 before training") {
  // A mechanism pipeline: the algorithm's `use` line is named.
  check_refused("audit trainer examples/pipelines/quickstart.yaml --no-record",
                "trainer_audit_mechanism",
                {"quickstart.yaml:", "algorithm.use", "audits trainers"});
  // A non-private trainer makes no claim: refused before training, naming its `use` line.
  check_refused(
      "audit trainer examples/pipelines/sgd_logreg_breast_cancer_baseline.yaml --no-record",
      "trainer_audit_non_private",
      {"sgd_logreg_breast_cancer_baseline.yaml:", "algorithm.use", "no claim to audit"});
  // Usage errors.
  check_refused("audit trainer '" + kPipelines + "dp_sgd.yaml' --canaries 3 --no-record",
                "trainer_audit_usage", {"--canaries"});
  check_refused("audit trainer '" + kPipelines + "dp_sgd.yaml' --param no_such=1 --no-record",
                "trainer_audit_param", {"no_such"});
  check_refused(
      "audit trainer '" + kPipelines + "dp_sgd.yaml' --canaries 20 --guesses 21 --no-record",
      "trainer_audit_guesses", {"--guesses"});
}

TEST_CASE("trainer audit: the split strategy flags the broken DP-SGD too") {
  const auto r = run_dptune("audit trainer '" + kPipelines +
                                "broken_noclip.yaml' --seed 3 --param learning_rate=0.5 "
                                "--canaries 400 --split --no-record --plugin-path '" +
                                kBrokenPlugins + "'",
                            "trainer_audit_split");
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("k chosen on the other half") != std::string::npos);
  check_refused("audit trainer '" + kPipelines + "dp_sgd.yaml' --split --guesses 4 --no-record",
                "trainer_audit_split_guesses", {"--split and --guesses"});
}

TEST_CASE("trainer audit: a fixed number of guesses runs one test per analysis") {
  const auto r = run_dptune("audit trainer '" + kPipelines +
                                "dp_sgd.yaml' --seed 3 --param learning_rate=0.5 --canaries 40 "
                                "--guesses 10 --no-record",
                            "trainer_audit_fixed_k");
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("on the top 10 scores (k fixed)") != std::string::npos);
  // Each analysis at half of 1 − 0.95.
  CHECK(r.out.find("of the top 10 guesses right, level 0.025)") != std::string::npos);
}

// ---- gradient canaries (white-box; docs/audit.md, "Gradient canaries") --------------------------

TEST_CASE("gradient canaries: built-in dp_sgd passes") {
  const Audit a = audit("dp_sgd.yaml", "--canaries 400 --canary-kind gradient", "grad_dp_sgd");
  CAPTURE(a.run.out);
  CAPTURE(a.run.err);
  CHECK(a.run.exit_code == 0);
  CHECK(a.run.out.find("canaries: gradient (white-box") != std::string::npos);
  CHECK(a.claimed > 0);
  CHECK(a.claimed <= 2);
  CHECK(a.lower >= 0);
  CHECK(a.lower <= a.claimed);
}
TEST_CASE("gradient canaries: built-in dp_adam passes") {
  const Audit a = audit("dp_adam.yaml", "--canaries 400 --canary-kind gradient", "grad_dp_adam");
  CAPTURE(a.run.out);
  CAPTURE(a.run.err);
  CHECK(a.run.exit_code == 0);
  CHECK(a.run.out.find("canaries: gradient (white-box") != std::string::npos);
  CHECK(a.claimed > 0);
  CHECK(a.claimed <= 2);
  CHECK(a.lower <= a.claimed);
}
TEST_CASE(
    "gradient canaries: noise divided by the lot size twice is flagged where input "
    "canaries find nothing") {
  const std::string plugins = "--canaries 400 --plugin-path '" + kBrokenPlugins + "'";
  const Audit input = audit("broken_lot_squared_lowdim.yaml", plugins, "lowdim_input");
  CAPTURE(input.run.out);
  CHECK(input.run.exit_code == 0);
  CHECK(input.claimed <= 2);
  CHECK(input.lower < input.claimed);
  const std::string out = expect_flagged("broken_lot_squared_lowdim.yaml",
                                         plugins + " --canary-kind gradient", "lowdim_gradient");
  CHECK(out.find("canaries: gradient (white-box") != std::string::npos);
  CHECK(out.find("1409 parameters") != std::string::npos);
}
TEST_CASE("gradient canaries: a DP-SGD that does not clip the canary is flagged") {
  // Canaries of 100 L: a trainer that clips them passes, one that does not leaks them.
  const std::string extra = "--canaries 400 --canary-kind gradient --canary-scale 100";
  const std::string out = expect_flagged(
      "broken_noclip.yaml", extra + " --plugin-path '" + kBrokenPlugins + "'", "grad_noclip");
  CHECK(out.find("norm 5,") != std::string::npos);
  expect_passes("dp_sgd.yaml", extra, "grad_clipped");
}
TEST_CASE("gradient canaries: a trainer that does not take them is refused before training") {
  check_refused(
      "audit trainer '" + kPipelines + "command_honest.yaml' --canary-kind gradient --no-record",
      "grad_refused",
      {"command_honest.yaml:8:8: algorithm.use: ", "does not take gradient canaries"});
  check_refused(
      "audit trainer examples/pipelines/quickstart.yaml --canary-kind gradient --no-record",
      "grad_mechanism", {"quickstart.yaml:", "audits trainers"});
  check_refused("audit trainer '" + kPipelines + "dp_sgd.yaml' --canary-kind weights --no-record",
                "grad_kind", {"--canary-kind"});
  check_refused("audit trainer '" + kPipelines +
                    "dp_sgd.yaml' --canary-kind gradient --canaries 6000 --no-record",
                "grad_too_many", {"5001 parameters, fewer than the 6000"});
}
TEST_CASE("gradient canaries: no context outside the gradient audit offers them") {
  // canary_probe fails its training when offered gradient canaries.  A whole `dptune run` (a
  // search, the final evaluations) and an input-space audit train it without complaint ...
  const auto dir = dptune_test::fresh_dir("canary_probe_run");
  const auto run = run_dptune("run '" + kPipelines + "canary_probe.yaml' --plugin-path '" +
                                  kBrokenPlugins + "' --set output.dir='" + dir.string() + "'",
                              "canary_probe_run");
  CAPTURE(run.err);
  CHECK(run.exit_code == 0);
  const auto input =
      run_dptune("audit trainer '" + kPipelines + "canary_probe.yaml' --seed 3 --canaries 40 " +
                     "--no-record --plugin-path '" + kBrokenPlugins + "'",
                 "canary_probe_input");
  CHECK(input.exit_code == 0);
  // ... and the gradient audit does reach it with them (so the probe can fail).
  const auto gradient =
      run_dptune("audit trainer '" + kPipelines + "canary_probe.yaml' --seed 3 --canaries 40 " +
                     "--canary-kind gradient --no-record --plugin-path '" + kBrokenPlugins + "'",
                 "canary_probe_gradient");
  CHECK(gradient.exit_code == 1);
  CHECK(gradient.err.find("this training context offers gradient canaries") != std::string::npos);
}
TEST_CASE("gradient canaries: the report and the record name the canary kind") {
  const auto dir = dptune_test::fresh_dir("gradient_audit_report");
  const auto store = dir / "audits.json";
  ::setenv("DPTUNE_AUDIT_STORE", store.c_str(), 1);
  const auto html = (dir / "audit.html").string();
  const auto r = run_dptune("audit trainer '" + kPipelines +
                                "dp_sgd.yaml' --seed 3 --param learning_rate=0.5 --canaries 40 "
                                "--canary-kind gradient --json --html '" +
                                html + "'",
                            "gradient_audit_json");
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  for (const char* key : {"\"canary_kind\": \"gradient\"", "\"parameters\": 5001",
                          "\"canary_norm\": 0.05", "\"trained_rows\": 100"})
    CHECK(r.out.find(key) != std::string::npos);
  CHECK(dptune_test::slurp(html).find("gradient (white-box") != std::string::npos);
  CHECK(dptune_test::slurp(store).find("\"canary_kind\": \"gradient\"") != std::string::npos);
}
TEST_CASE("gradient canaries: the add/remove game on Poisson lots") {
  // Only the canaries that are in are records: n = 60 + those in.
  const std::string extra =
      "--canaries 400 --canary-kind gradient --set algorithm.params.sampling=poisson";
  const std::string out = expect_flagged(
      "broken_lot_squared.yaml", extra + " --plugin-path '" + kBrokenPlugins + "'", "grad_poisson");
  CHECK(out.find("game: add/remove, 400 canaries") != std::string::npos);
  const double in = number_after(out, "400 canaries (");
  CHECK(number_after(out, "60 real rows, ") == 60 + in);
  expect_passes("dp_sgd.yaml", extra, "grad_poisson_dp_sgd");
}
