// The checks `dptune validate` and `dptune run` share before training: what
// the trainers ask of the mechanism (ABI 2.6), the CSV header reader, and check_pipeline on
// pipelines that must pass or fail with a located message.  The bad-pipeline corpus
// (tests/bad_pipelines) covers the messages end to end through the CLI.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "built_plugins.hpp"
#include "dptune/dptune.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/runner.hpp"
#include "temp_dir.hpp"

namespace {

namespace host = dptune::host;

std::optional<dptune::MechanismRequest> request_of(const std::string& trainer,
                                                   const dptune::Params& params) {
  const auto* schema = dptune_test::built_plugins().schema(host::ComponentKind::Trainer, trainer);
  REQUIRE(schema != nullptr);
  return dptune_test::built_plugins()
      .create_trainer(trainer, schema->complete(params))
      ->mechanism_request();
}

// A small DP-SGD pipeline on the bundled breast_cancer data (341 training rows); `extra` is
// appended (more sections), `algorithm_params` replaces its params.
std::string preflight_pipeline(const std::string& accountant_delta, const std::string& mechanism,
                               const std::string& algorithm_params = "{epochs: 1, lot_size: 64}") {
  return "data: {use: 'builtin:breast_cancer'}\n"
         "algorithm: {use: dp_sgd, params: " +
         algorithm_params + "}\n" + mechanism +
         "accountant: {use: rdp, delta: " + accountant_delta +
         "}\n"
         "utility: {use: accuracy}\n"
         "search_space: {learning_rate: {float: [0.01, 1.0], log: true}}\n"
         "tuner: {use: grid, params: {points_per_dimension: 2}}\n";
}

/// check_pipeline's message for `text` (with --set `overrides`), or "" when it passes.
std::string preflight_message(const std::string& text,
                              const std::vector<host::Override>& overrides = {}) {
  dptune_test::TempDir dir;
  const auto file = dir.write("p.yaml", text);
  host::HostCatalog catalog(dptune_test::built_plugins());
  const host::PipelineConfig config = host::load_pipeline(file, overrides, catalog);
  try {
    host::check_pipeline(config, dptune_test::built_plugins());
  } catch (const host::ConfigDiagnostic& e) {
    const std::string what = e.what();
    return what.substr(what.find("p.yaml") == std::string::npos ? 0 : what.find("p.yaml"));
  }
  return "";
}

}  // namespace

TEST_CASE("preflight: the DP trainers ask for a Gaussian mechanism with their noise multiplier") {
  for (const std::string trainer : {"dp_sgd", "dp_adam", "output_perturbation"}) {
    CAPTURE(trainer);
    const auto fixed = request_of(trainer, {{"noise_multiplier", 2.5}});
    REQUIRE(fixed.has_value());
    CHECK(fixed->overrides == dptune::Params{{"noise_multiplier", 2.5}});
    CHECK(fixed->expected == dptune::DpEvent::gaussian(2.5));
    // Target-ε mode calibrates σ per run: the kind of noise is what is asked, at σ = 1.
    const auto target = request_of(trainer, {{"noise_multiplier", 2.5}, {"target_epsilon", 1.0}});
    REQUIRE(target.has_value());
    CHECK(target->expected == dptune::DpEvent::gaussian(1.0));
  }
  // The non-private baseline never asks for a mechanism.
  CHECK_FALSE(request_of("sgd", {}).has_value());
}

TEST_CASE("preflight: read_csv_header reads the first record only") {
  dptune_test::TempDir dir;
  const auto file = dir.write("h.csv",
                              "\xEF\xBB\xBF# a comment\n\n"
                              "a, \"b,c\" ,label\n"
                              "1,2,not a number: never read\n");
  const host::CsvHeader header = host::read_csv_header(file, ',');
  CHECK(header.line == 3);
  CHECK(header.names == std::vector<std::string>{"a", "b,c", "label"});
  const host::CsvHeader empty = host::read_csv_header(dir.write("e.csv", "# only\n\n"), ',');
  CHECK(empty.names.empty());
  CHECK(empty.line == 0);
}

TEST_CASE("preflight: a good DP-SGD pipeline passes, and so does a parameter the trainer keeps") {
  CHECK(preflight_message(preflight_pipeline("1.0e-5", "mechanism: {use: gaussian}\n")) == "");
  // `noise` is not overridden by dp_sgd: it is used, not ignored.
  CHECK(preflight_message(preflight_pipeline(
            "1.0e-5", "mechanism: {use: gaussian, params: {noise: fast}}\n")) == "");
}

TEST_CASE("preflight: every mechanism problem names its place, also for --set values") {
  CHECK(preflight_message(preflight_pipeline("1.0e-5", "")) ==
        "p.yaml:2:1: mechanism: dp_sgd needs a gaussian mechanism (its privacy analysis "
        "assumes the event {gaussian: {noise_multiplier: 1.0}} for noise_multiplier 1.0), and "
        "the pipeline names none: add `mechanism: {use: gaussian}`");
  CHECK(preflight_message(preflight_pipeline("1.0e-5", "mechanism: {use: gaussian}\n"),
                          {{"mechanism.params.noise_multiplier", "2"}}) ==
        "--set: mechanism.params.noise_multiplier: algorithm 'dp_sgd' sets the mechanism's "
        "noise_multiplier for every run, so this value would be ignored; remove it (set "
        "noise_multiplier in algorithm.params or search_space)");
  // The sparse vector mechanism has no noise_multiplier at all.
  const std::string svt = preflight_message(preflight_pipeline("1.0e-5",
                                                               "mechanism: {use: sparse_vector, "
                                                               "params: {b: 1, C: 1}}\n"));
  CHECK(svt.rfind("p.yaml:3:18: mechanism.use: dp_sgd needs a gaussian mechanism", 0) == 0);
  CHECK(svt.find("but 'sparse_vector' takes no parameter 'noise_multiplier'; use `mechanism: "
                 "{use: gaussian}`") != std::string::npos);
}

TEST_CASE("preflight: δ = 0 is refused for Gaussian noise, accepted for pure-DP events") {
  CHECK(preflight_message(preflight_pipeline("0", "mechanism: {use: gaussian}\n")) ==
        "p.yaml:4:31: accountant.delta: δ = 0 asks for pure ε-DP, but one run of dp_sgd uses "
        "discrete_gaussian_on_grid noise, which has no pure-DP bound (the rdp accountant's ε at "
        "δ = 0 is "
        "infinite): set δ > 0, e.g. 1e-5, well below 1/n for n = 341 training rows");
  // The sparse vector technique is ε-DP (Lyu, Su & Li 2017): δ = 0 has a finite ε.
  CHECK(preflight_message("data: {use: binary_queries, params: {queries: 20, positives: 2}}\n"
                          "algorithm: {use: sparse_vector}\n"
                          "accountant: {use: pure_dp, delta: 0}\n"
                          "utility: {use: f1}\n"
                          "search_space: {b: {float: [1.0, 2.0]}, C: {int: [1, 2]}}\n"
                          "tuner: {use: grid, params: {points_per_dimension: 2}}\n") == "");
}

TEST_CASE("preflight: a tuner's own checks run before its first evaluation") {
  // dp_hype's k > |grid| is checked inside tune(), before the clients train: reported at the
  // tuner section without training anything.
  const std::string text =
      "data: {use: 'builtin:digits', params: {clients_distribution: iid}}\n"
      "algorithm: {use: sgd, params: {epochs: 1}}\n"
      "mechanism: {use: gaussian}\n"
      "accountant: {use: rdp, delta: 1.0e-5}\n"
      "utility: {use: accuracy}\n"
      "search_space: {learning_rate: {categorical: [0.5, 0.1]}}\n"
      "tuner: {use: dp_hype, params: {clients: 10, k: 3, epsilon: 1.0}}\n";
  CHECK(preflight_message(text) ==
        "p.yaml:7:1: tuner: tuner 'dp_hype' refuses the pipeline: dp_hype: k = 3 exceeds the 2 "
        "candidates of the search space grid");
  CHECK(preflight_message(text, {{"tuner.params.k", "2"}}) == "");
}

TEST_CASE("preflight: an unreachable target ε is refused with the floor the accountant proves") {
  // Orders up to α = 32: as σ grows the RDP of every order goes to 0, and the improved conversion
  // (Canonne, Kamath & Steinke 2020) leaves ε ≥ log((α-1)/α) - (log δ + log α)/(α-1) at α = 32,
  // the smallest over the orders: the floor, computed here independently of the accountant.
  const double alpha = 32, delta = 1e-5;
  const double floor =
      std::log((alpha - 1) / alpha) - (std::log(delta) + std::log(alpha)) / (alpha - 1);
  CHECK(floor == doctest::Approx(0.227838).epsilon(1e-5));
  std::string text = preflight_pipeline("1.0e-5", "mechanism: {use: gaussian}\n",
                                        "{epochs: 2, lot_size: 32, target_epsilon: 0.1}");
  text.replace(text.find("accountant: {use: rdp,"), 22,
               "accountant: {use: rdp, params: {orders: '2, 4, 8, 16, 32'},");
  const std::string message = preflight_message(text);
  CAPTURE(message);
  CHECK(message.rfind("p.yaml:2:76: algorithm.params.target_epsilon: no noise reaches ε = 0.1 at "
                      "δ = 1e-05 with sampling without_replacement: ε stays at 0.22784 or above",
                      0) == 0);
  CHECK(message.find("raise target_epsilon above 0.22784 (no sampling reaches it)") !=
        std::string::npos);
  // A target above the floor is calibrated as usual.
  text.replace(text.find("target_epsilon: 0.1"), 19, "target_epsilon: 0.3");
  CHECK(preflight_message(text) == "");
}
