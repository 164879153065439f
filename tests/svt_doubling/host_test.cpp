// protect_validation end to end: the host's TunerContext reports the real size of the scored split
// and the configured utility's sensitivity to one of its records, and the tuner's sensitivity is
// max(1/k, Δ_util(n_val)).  The expected n_val is computed independently of the TunerContext, from
// the data source itself; the expected Δ_util from the utility's definition.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>

#include "build_paths.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/random.hpp"
#include "dptune/host/runner.hpp"
#include "dptune/host/utility_sensitivity.hpp"

namespace fs = std::filesystem;

namespace {

std::string fmt6(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

struct Pipeline {
  dptune::host::PluginRegistry registry;
  Pipeline() {
    registry.scan(fs::path(dptune_test::build_paths::svt_doubling_plugin).parent_path());
  }

  dptune::host::PipelineConfig load(std::vector<dptune::host::Override> overrides,
                                    const std::string& out) {
    overrides.push_back({"output.dir", out});
    overrides.push_back({"execution.seed", "5"});
    // Two candidates and short training: this test is about the sensitivity, not the search.
    overrides.push_back({"tuner.params.candidates", "list"});
    overrides.push_back({"tuner.params.candidate_list",
                         "\"learning_rate=0.1, clipping_norm=1; learning_rate=0.5, "
                         "clipping_norm=1\""});
    overrides.push_back({"algorithm.params.epochs", "2"});
    overrides.push_back({"tuner.params.protect_validation", "true"});
    dptune::host::HostCatalog catalog(registry);
    return dptune::host::load_pipeline(
        fs::path(dptune_test::build_paths::source_dir) /
            "examples/pipelines/svt_doubling_dp_sgd_fixed_privacy.yaml",
        overrides, catalog);
  }

  std::string run(const dptune::host::PipelineConfig& config) {
    std::ostringstream out;
    dptune::host::RunOptions options;
    options.show_progress = false;
    options.verbose = true;  // every note in full (the console shortens notes otherwise)
    dptune::host::run_pipeline(config, registry, options, out);
    // The console wraps long notes at 100 columns: join continuation lines to search phrases.
    std::string text;
    for (const char c : out.str()) {
      if (c == ' ' && !text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        if (text.back() == '\n') text.back() = ' ';
        continue;
      }
      text += c;
    }
    return text;
  }
};

/// Rows of the split the pipeline scores on, straight from its data source (the evaluator draws
/// the split from the same layout stream).
std::size_t scored_rows(const dptune::host::PipelineConfig& config) {
  auto source = dptune::host::make_data_source(config.data.use, config.data.params);
  const dptune::host::RandomSource random(config.execution.seed);
  auto rng = random.make(1);  // LayoutStreams::kSplit
  const auto splits = source->make(*rng);
  return config.score_split == dptune::host::ScoreSplit::Test ? splits.test.rows
                                                              : splits.validation.rows;
}

}  // namespace

TEST_CASE(
    "host: utility sensitivity as the utility declares it (accuracy 1/n, log_loss_score, f1)") {
  dptune::host::PluginRegistry registry;
  registry.scan(fs::path(dptune_test::build_paths::svt_doubling_plugin).parent_path());
  // The utility section as the config loader makes it: complete params, and the declaration.
  auto section = [&](const std::string& use, const dptune::Params& given) {
    dptune::host::ComponentConfig u;
    u.kind = dptune::host::ComponentKind::Utility;
    u.use = use;
    const dptune::ParamSchema* schema = registry.schema(u.kind, use);
    u.params = schema ? schema->complete(given) : given;
    u.traits = registry.traits(u.kind, use, u.params);
    return u;
  };
  const auto accuracy = section("accuracy", {});
  CHECK(*dptune::host::utility_sensitivity(accuracy, 114).per_record == doctest::Approx(1.0 / 114));
  const auto loss = section("log_loss_score", dptune::Params{{"floor", 1e-6}});  // ln(1e6) = 13.8
  CHECK(*dptune::host::utility_sensitivity(loss, 100).per_record ==
        doctest::Approx(std::log(1e6) / 100));
  CHECK(*dptune::host::utility_sensitivity(loss, 5).per_record == 1.0);  // capped at 1
  CHECK(*dptune::host::utility_sensitivity(section("f1", {}), 1000).per_record == 1.0);
  // A utility that declares nothing has no bound, whatever its name.
  const auto unknown = dptune::host::utility_sensitivity(section("test_utility", {}), 100);
  CHECK_FALSE(unknown.per_record.has_value());
  CHECK(unknown.derivation.find("'test_utility' declares no per-record sensitivity") !=
        std::string::npos);
  dptune::host::ComponentConfig undeclared_accuracy = accuracy;
  undeclared_accuracy.traits = {};
  CHECK_FALSE(dptune::host::utility_sensitivity(undeclared_accuracy, 100).per_record.has_value());
  CHECK_FALSE(dptune::host::utility_sensitivity(accuracy, 0).per_record.has_value());
}

TEST_CASE(
    "protect_validation end to end: Delta = max(1/k, Delta_util(n_val)) with the real n_val") {
  Pipeline p;
  const fs::path out = fs::temp_directory_path() / "dptune_svt_doubling_host_test";
  fs::remove_all(out);

  SUBCASE("accuracy, k = 10: 1/k binds, the real n_val is named") {
    const auto config = p.load({}, out.string());
    const std::size_t n_val = scored_rows(config);
    REQUIRE(n_val > 10);
    const std::string text = p.run(config);
    CAPTURE(text);
    CHECK(text.find("sensitivity 0.1 = max(1/k, " + fmt6(1.0 / static_cast<double>(n_val)) +
                    " = the utility's sensitivity to one of the " + std::to_string(n_val) +
                    " held-out rows)") != std::string::npos);
  }
  SUBCASE("accuracy on a small validation split: 1/n_val binds") {
    const auto config = p.load({{"data.params.validation_fraction", "0.015"}}, out.string());
    const std::size_t n_val = scored_rows(config);
    REQUIRE(n_val < 10);
    const double delta = 1.0 / static_cast<double>(n_val);
    const std::string text = p.run(config);
    CAPTURE(text);
    CHECK(text.find("sensitivity " + fmt6(delta) + " = max(1/k, " + fmt6(delta) +
                    " = the utility's sensitivity to one of the " + std::to_string(n_val) +
                    " held-out rows)") != std::string::npos);
    CHECK(text.find("Laplace scales " + fmt6(2 * delta / 0.25) + " (threshold") !=
          std::string::npos);
  }
  SUBCASE("log_loss_score: ln(1/floor) / n_val binds") {
    const auto config = p.load({{"utility.use", "log_loss_score"}}, out.string());
    const std::size_t n_val = scored_rows(config);
    const double util = std::min(1.0, -std::log(1e-15) / static_cast<double>(n_val));
    REQUIRE(util > 0.1);
    const std::string text = p.run(config);
    CAPTURE(text);
    CHECK(text.find("sensitivity " + fmt6(util) + " = max(1/k, " + fmt6(util)) !=
          std::string::npos);
    // Laplace scales 2 Delta / eps and 4 Delta / eps at epsilon_svt = 0.25.
    CHECK(text.find("Laplace scales " + fmt6(2 * util / 0.25) + " (threshold") !=
          std::string::npos);
  }
  SUBCASE("the test split when the utility scores on it") {
    const auto config =
        p.load({{"utility.split", "test"}, {"data.params.test_fraction", "0.1"}}, out.string());
    const std::size_t n_test = scored_rows(config);
    auto validation_config = config;
    validation_config.score_split = dptune::host::ScoreSplit::Validation;
    REQUIRE(n_test != scored_rows(validation_config));  // so the check below tells them apart
    const std::string text = p.run(config);
    CAPTURE(text);
    CHECK(text.find("one of the " + std::to_string(n_test) + " held-out rows") !=
          std::string::npos);
  }
  SUBCASE("a consistent validation_rows is accepted, another refused") {
    auto config = p.load({}, out.string());
    const std::size_t n_val = scored_rows(config);
    config = p.load({{"tuner.params.validation_rows", std::to_string(n_val + 1)}}, out.string());
    const std::string expected = "does not match the " + std::to_string(n_val) + " rows";
    CHECK_THROWS_WITH(p.run(config), doctest::Contains(expected.c_str()));
    // A configuration problem: the CLI exits with code 2 for it.
    CHECK_THROWS_AS(p.run(config), dptune::ConfigError);
  }
  fs::remove_all(out);
}
