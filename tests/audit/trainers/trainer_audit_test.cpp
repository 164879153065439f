// `dptune audit trainer`: each deliberately broken trainer flagged (exit 3) at a claim of ε ≤ 2,
// the built-in DP-SGD and DP-Adam and the honest command example passing (exit 0), the report's
// parts, and configuration errors (exit 2, before training).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "cli_support.hpp"

using dptune_test::run_dptune;

namespace {

const std::string kPipelines = std::string(DPTUNE_TRAINER_AUDIT_DIR) + "/pipelines/";
const std::string kBrokenPlugins = std::string(DPTUNE_TRAINER_AUDIT_PLUGIN_DIR) + "/broken_dp_sgd";

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
  a.run = run_dptune("audit trainer '" + kPipelines + pipeline + "' --seed 3 " + extra,
                     "trainer_audit_" + tag);
  a.claimed = number_after(a.run.out, "claimed privacy: epsilon = ");
  a.lower = number_after(a.run.out, "empirical epsilon lower bound: ");
  return a;
}

void expect_flagged(const std::string& pipeline, const std::string& extra, const std::string& tag) {
  const Audit a = audit(pipeline, extra, tag);
  CAPTURE(a.run.out);
  CAPTURE(a.run.err);
  CHECK(a.run.exit_code == 3);
  CHECK(a.claimed > 0);
  CHECK(a.claimed <= 2);
  CHECK(a.lower > a.claimed);
  CHECK(a.run.out.find("result: VIOLATION certified") != std::string::npos);
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

}  // namespace

TEST_CASE("broken: DP-SGD without clipping is flagged") {
  expect_flagged("broken_noclip.yaml", "--plugin-path '" + kBrokenPlugins + "'", "noclip");
}
TEST_CASE("broken: DP-SGD with its noise divided by the lot size twice is flagged") {
  expect_flagged("broken_lot_squared.yaml", "--plugin-path '" + kBrokenPlugins + "'", "lot2");
}
TEST_CASE("broken: a command program declaring sigma 4 but adding sigma 0.5 is flagged") {
  expect_flagged("command_low_noise.yaml", "", "command_low_noise");
}
TEST_CASE("built-in dp_sgd passes") { expect_passes("dp_sgd.yaml", "", "dp_sgd"); }
TEST_CASE("built-in dp_adam passes") { expect_passes("dp_adam.yaml", "", "dp_adam"); }
TEST_CASE("the honest command example passes") {
  expect_passes("command_honest.yaml", "", "command_honest");
}
