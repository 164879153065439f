// Declared properties (dptune/traits.hpp): the host enforces the rules of a private tuner from what
// the tuner declares, never from its name.  A third party's tuner (tests/test_plugins/
// declaring_tuner.cpp) that declares nothing, or declares private outputs, is refused a stratified
// split and fitted_standardize by `dptune validate` and `dptune run` alike (exit 2) before anything
// runs: its tune() is never called and no results folder is made.  The same tuner declaring a map
// is allowed both, as grid is.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "build_paths.hpp"
#include "cli_support.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace fs = std::filesystem;
using dptune::host::ComponentKind;
using dptune_test::run_dptune;

namespace {

/// A pipeline of `tuner` on the bundled breast-cancer data with dp_sgd, in a fresh folder; `data`
/// is the data section's extra lines.  The tuner appends to dir/marker when its tune() starts.
struct Pipeline {
  fs::path dir, file, marker, results;
};

Pipeline write_pipeline(const std::string& tag, const std::string& tuner, const std::string& data,
                        const std::string& output = "output: {dir: results}\n") {
  Pipeline p;
  p.dir = dptune_test::fresh_dir("declared_" + tag);
  p.file = p.dir / "p.yaml";
  p.marker = p.dir / "marker";
  p.results = p.dir / "results";
  std::ofstream(p.file) << "name: declared\n"
                        << "plugin_paths: ['" << dptune_test::build_paths::test_plugin_dir
                        << "/declared_traits']\n"
                        << "data:\n  use: builtin:breast_cancer\n"
                        << data << "algorithm:\n  use: dp_sgd\n"
                        << "  params: {target_epsilon: 1.0, model: logistic, epochs: 1}\n"
                        << "mechanism: {use: gaussian}\n"
                        << "accountant: {use: rdp, delta: 1.0e-5}\n"
                        << "utility: {use: accuracy}\n"
                        << "search_space:\n  learning_rate: {float: [0.05, 0.5], log: true}\n"
                        << "tuner:\n  use: " << tuner << "\n"
                        << "  params: {marker: '" << p.marker.string() << "'}\n"
                        << "execution: {seed: 3}\n"
                        << output;
  return p;
}

const std::string kStratified = "  params: {stratify: true}\n";
const std::string kFitted = "  preprocessing: fitted_standardize\n";

/// Both commands refuse the pipeline with exit 2 at `key`, naming the private tuner, and nothing
/// ran: the tuner's tune() was never called and no results folder exists.
void check_refused_before_anything(const std::string& tag, const std::string& tuner,
                                   const std::string& data, const std::string& key) {
  for (const std::string command : {"validate", "run"}) {
    CAPTURE(command);
    const Pipeline p = write_pipeline(tag + "_" + command, tuner, data);
    const auto r = run_dptune(command + " '" + p.file.string() + "'", tag + "_" + command);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(key + ": ") != std::string::npos);
    CHECK(r.err.find("the private tuner '" + tuner + "'") != std::string::npos);
    CHECK_FALSE(fs::exists(p.marker));
    CHECK_FALSE(fs::exists(p.results));
  }
}

}  // namespace

TEST_CASE(
    "declared traits: a third party's tuner that declares nothing is held to the private rules") {
  check_refused_before_anything("undeclared_stratify", "undeclared_tuner", kStratified,
                                "data.params.stratify");
  check_refused_before_anything("undeclared_fitted", "undeclared_tuner", kFitted,
                                "data.preprocessing");
}

TEST_CASE("declared traits: a tuner declaring private outputs is refused like repetition") {
  check_refused_before_anything("private_stratify", "private_tuner", kStratified,
                                "data.params.stratify");
  check_refused_before_anything("private_fitted", "private_tuner", kFitted, "data.preprocessing");
}

TEST_CASE("declared traits: the same tuner declaring a map may use both, as grid may") {
  const Pipeline p =
      write_pipeline("map_both", "map_tuner", kFitted + "  params: {stratify: true}\n");
  const auto v = run_dptune("validate '" + p.file.string() + "'", "map_both_validate");
  CHECK_MESSAGE(v.exit_code == 0, v.err);
  const auto r = run_dptune("run '" + p.file.string() + "'", "map_both_run");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(dptune_test::slurp(p.marker).find("tune() started") != std::string::npos);
  CHECK(YAML::LoadFile((p.results / "summary.json").string())["trusted_analyst_only"].as<bool>());
}

TEST_CASE("declared traits: the undeclared tuner runs when it keeps the private rules") {
  // The control of the refusals above: the same plugin loads and runs, so they are the rules'.
  const Pipeline p = write_pipeline("undeclared_runs", "undeclared_tuner", "");
  const auto r = run_dptune("run '" + p.file.string() + "'", "undeclared_runs");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(dptune_test::slurp(p.marker).find("tune() started") != std::string::npos);
  // It declares no model release: none is written, whatever it selected.
  CHECK_FALSE(fs::exists(p.results / "model.json"));
}

TEST_CASE("declared traits: a test score needs a tuner that declares a released model") {
  const Pipeline p = write_pipeline("undeclared_test_score", "undeclared_tuner", "",
                                    "output:\n  dir: results\n  test_score: {epsilon: 1.0}\n");
  const auto r = run_dptune("run '" + p.file.string() + "'", "undeclared_test_score");
  CHECK(r.exit_code == 2);
  // The tuners offered instead are the loaded ones that declare a released model.
  CHECK(r.err.find("output.test_score: tuner 'undeclared_tuner' releases no model to score (the "
                   "selected candidate only); use a tuner that releases one (dp_hypo, "
                   "expost, repetition, subsampled, svt_doubling)") != std::string::npos);
  CHECK_FALSE(fs::exists(p.marker));
}

TEST_CASE("preflight: a ledgered run makes one dry run of the tuner, checked and then charged") {
  // The tuner appends a line whenever its tune() starts: the probe before the first evaluation,
  // the dry run the ledger's check and charge share, and the run itself.  Charging a second dry
  // run (after the check's) would add a line; so would pricing the check and the charge apart.
  const Pipeline p = write_pipeline(
      "one_dry_run", "private_tuner", "",
      "output: {dir: results}\n"
      "ledger: {path: ledger.db, dataset: breast_cancer, budget: {epsilon: 100, delta: 1.0e-3}}\n");
  auto starts = [&] {
    const std::string text = fs::exists(p.marker) ? dptune_test::slurp(p.marker) : "";
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  };
  const auto v = run_dptune("validate '" + p.file.string() + "'", "one_dry_run_validate");
  REQUIRE_MESSAGE(v.exit_code == 0, v.err);
  CHECK(v.out.find("the write-ahead charge") != std::string::npos);
  CHECK(starts() == 2);  // the probe and the dry run
  fs::remove(p.marker);
  const auto r = run_dptune("run '" + p.file.string() + "' --no-progress", "one_dry_run_run");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("write-ahead") != std::string::npos);
  CHECK(starts() == 3);  // the probe, the dry run, the run
}

TEST_CASE("declared traits: what the registry reads from each plugin") {
  dptune::host::PluginRegistry registry;
  registry.scan(fs::path(dptune_test::build_paths::test_plugin_dir) / "declared_traits");
  registry.scan(dptune_test::build_paths::built_plugin_dir);
  auto tuner = [&](const std::string& name) {
    return registry.traits(ComponentKind::Tuner, name, {}).tuner;
  };
  CHECK_FALSE(tuner("undeclared_tuner").has_value());
  REQUIRE(tuner("private_tuner").has_value());
  CHECK(tuner("private_tuner")->outputs == dptune::TunerOutputs::Private);
  REQUIRE(tuner("map_tuner").has_value());
  CHECK(tuner("map_tuner")->outputs == dptune::TunerOutputs::Map);
  for (const char* map : {"grid", "random", "dpareto"}) {
    CAPTURE(map);
    REQUIRE(tuner(map).has_value());
    CHECK(tuner(map)->outputs == dptune::TunerOutputs::Map);
    CHECK_FALSE(tuner(map)->releases_model);
  }
  for (const char* releasing : {"repetition", "svt_doubling", "expost"}) {
    CAPTURE(releasing);
    REQUIRE(tuner(releasing).has_value());
    CHECK(tuner(releasing)->outputs == dptune::TunerOutputs::Private);
    CHECK(tuner(releasing)->releases_model);
    CHECK(tuner(releasing)->unit == dptune::GuaranteeUnit::Record);
  }
  REQUIRE(tuner("dp_hype").has_value());
  CHECK(tuner("dp_hype")->outputs == dptune::TunerOutputs::Private);
  CHECK_FALSE(tuner("dp_hype")->releases_model);
  CHECK(tuner("dp_hype")->unit == dptune::GuaranteeUnit::Client);
  // log_loss_score's bound depends on its floor: ln(1/floor).
  dptune::Params floor;
  floor.set("floor", 0.01);
  const auto loss = registry.traits(ComponentKind::Utility, "log_loss_score", floor).utility;
  REQUIRE(loss.has_value());
  CHECK(loss->sensitivity == dptune::UtilityTraits::Sensitivity::MeanOfRecords);
  CHECK(loss->scale == doctest::Approx(std::log(100.0)));
  const auto dp_sgd = registry.traits(ComponentKind::Trainer, "dp_sgd", {}).trainer;
  REQUIRE(dp_sgd.has_value());
  CHECK(dp_sgd->target_epsilon == "target_epsilon");
  CHECK(dp_sgd->sampling == "sampling");
}
