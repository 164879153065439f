// ABI minor versioning of appended virtuals: a trainer plugin built for ABI 2.1 (whose Trainer and
// Model vtables end before Trainer::exact_event and Model::export_model) loads into this 2.2 host
// and works, with the host falling back to event(n) and exporting nothing; the same source built
// for 2.2 gets the new calls.  tests/test_plugins/versioned_trainer.cpp is built both ways.
#include <doctest/doctest.h>

#include <filesystem>
#include <tuple>

#include "../../framework/src/evaluator.hpp"
#include "cli_support.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/runner.hpp"
#include "dptune/rng.hpp"
#include "dptune/testing.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

/// Never consulted by the versioned trainer: any call is a test failure.
class UnusedAccountant final : public dptune::Accountant {
 public:
  std::string unsupported_reason(const dptune::DpEvent&) const override {
    throw std::logic_error("accountant called");
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent&, double) const override {
    throw std::logic_error("accountant called");
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent&, double) const override {
    throw std::logic_error("accountant called");
  }
};

class Context final : public dptune::TrainingContext {
 public:
  Context(const dptune::Accountant& accountant, double delta)
      : accountant_(accountant), delta_(delta) {}
  dptune::RandomBitGenerator& rng() override { return rng_; }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params&) override {
    throw std::logic_error("no mechanism in this test");
  }
  const dptune::Accountant& accountant() const override { return accountant_; }
  double delta() const override { return delta_; }
  bool private_run() const override { return true; }

 private:
  const dptune::Accountant& accountant_;
  double delta_;
  dptune::Xoshiro256 rng_{3};
};

dptune::host::PluginRegistry& versioned_registry() {
  static dptune::host::PluginRegistry* registry = [] {
    auto* r = new dptune::host::PluginRegistry();  // never unloaded: models may outlive a test
    r->scan(fs::path(DPTUNE_TEST_PLUGIN_DIR) / "versioned_trainer");
    r->scan(DPTUNE_BUILT_PLUGIN_DIR);  // rdp, accuracy, grid for the evaluator test
    return r;
  }();
  return *registry;
}

}  // namespace

TEST_CASE("abi minor: both builds of the versioned trainer load and declare their minor") {
  auto& registry = versioned_registry();
  CHECK(registry.skipped().empty());
  const auto* v21 = registry.find(dptune::PluginKind::Trainer, "versioned_trainer_v2_1");
  const auto* v22 = registry.find(dptune::PluginKind::Trainer, "versioned_trainer_v2_2");
  REQUIRE(v21 != nullptr);
  REQUIRE(v22 != nullptr);
  CHECK(v21->abi_minor == 1);
  CHECK(v22->abi_minor == 2);
  CHECK(v21->description == "test: a trainer built for ABI 2.1");
  CHECK(v22->description == "test: a trainer built for ABI 2.2");
  CHECK(dptune::kAbiMinor == 12);
}

TEST_CASE("abi minor: a 2.1 trainer gets event(n), its model exports nothing") {
  auto trainer = versioned_registry().create_trainer("versioned_trainer_v2_1", {{"lie", false}});
  UnusedAccountant accountant;
  // The proxy must not call the slot a 2.1 vtable does not have: event(n) instead.
  CHECK(trainer->exact_event(500, accountant, 1e-5) == dptune::DpEvent::pure_dp(1.0));
  CHECK(trainer->event(500) == dptune::DpEvent::pure_dp(1.0));
  Context context(accountant, 1e-5);
  dptune::Dataset data;
  data.rows = 500;
  const dptune::TrainedModel trained = trainer->train(data, context);
  CHECK(trained.event == dptune::DpEvent::pure_dp(1.0));
  REQUIRE(trained.model != nullptr);
  CHECK(trained.model->describe() == "constant 1.000000");
  CHECK_FALSE(trained.model->export_model().has_value());
}

TEST_CASE("abi minor: a trainer older than 2.6 has no mechanism_request slot: none is asked") {
  // The proxy must not call past the end of a 2.1 or 2.2 Trainer vtable: it answers empty, and
  // the host learns of a missing mechanism only when train() asks (as before ABI 2.6).
  for (const std::string name : {"versioned_trainer_v2_1", "versioned_trainer_v2_2"}) {
    CAPTURE(name);
    const auto trainer = versioned_registry().create_trainer(name, {{"lie", false}});
    CHECK_FALSE(trainer->mechanism_request().has_value());
  }
}

TEST_CASE("abi minor: trainers older than 2.7 get the host's float rows as double features") {
  // Three rows of two features, held as the host holds its data since ABI 2.7: a view (here
  // rows 2, 0, 1) of a shared float storage, and no doubles.
  dptune::Dataset data;
  data.rows = 3;
  data.cols = 2;
  data.labels = {0, 1, 0};
  data.num_classes = 2;
  auto values = std::make_shared<std::vector<float>>(std::vector<float>{0.5F, -1, 2, 0.25F, 3, 4});
  data.float_rows = dptune::FloatRows(values, 2).select({2, 0, 1});
  UnusedAccountant accountant;
  for (const char* name : {"versioned_trainer_v2_1", "versioned_trainer_v2_2"}) {
    CAPTURE(name);
    auto trainer = versioned_registry().create_trainer(name, {{"lie", false}});
    Context context(accountant, 1e-5);
    const dptune::TrainedModel trained = trainer->train(data, context);  // refused without doubles
    REQUIRE(trained.model != nullptr);
    const dptune::Predictions echoed = trained.model->predict(data);
    CHECK(echoed.probabilities == std::vector<double>{3, 4, 0.5, -1, 2, 0.25});
  }
}

TEST_CASE("abi minor: a 2.2 trainer gets exact_event(n, accountant, δ), its model exports") {
  auto trainer = versioned_registry().create_trainer("versioned_trainer_v2_2", {{"lie", false}});
  UnusedAccountant accountant;
  CHECK(trainer->exact_event(500, accountant, 1e-5) == dptune::DpEvent::approx_dp(0.5, 1e-5));
  CHECK(trainer->exact_event(2000, accountant, 1e-7) == dptune::DpEvent::approx_dp(2.0, 1e-7));
  CHECK(trainer->event(500) == dptune::DpEvent::pure_dp(1.0));
  Context context(accountant, 1e-6);
  dptune::Dataset data;
  data.rows = 250;
  const dptune::TrainedModel trained = trainer->train(data, context);
  CHECK(trained.event == dptune::DpEvent::approx_dp(0.25, 1e-6));
  REQUIRE(trained.model != nullptr);
  const auto exported = trained.model->export_model();
  REQUIRE(exported.has_value());
  CHECK(exported->kind == "test_constant");
  CHECK(exported->description == "constant 1.000000");
  REQUIRE(exported->layers.size() == 1);
  CHECK(exported->layers[0].weights == std::vector<double>{1.0});
  CHECK(exported->layers[0].bias == std::vector<double>{-0.5});
  CHECK(exported->output == "sigmoid");
}

TEST_CASE("abi minor: through the HostEvaluator, each build is priced by what it predicts") {
  // The evaluator prices exact_event(n, accountant, δ) — event(n) for the 2.1 build — and refuses
  // a train() that reports anything else.
  dptune_test::TempDir dir;
  using namespace dptune::host;
  const PluginRegistry& registry = versioned_registry();
  HostCatalog catalog(registry);
  for (const auto& [name, lie, expected, epsilon] :
       {std::tuple{std::string("versioned_trainer_v2_1"), false, dptune::DpEvent::pure_dp(1.0),
                   1.0},
        std::tuple{std::string("versioned_trainer_v2_2"), false,
                   dptune::DpEvent::approx_dp(0.12, 1e-5), 0.12},
        std::tuple{std::string("versioned_trainer_v2_2"), true, dptune::DpEvent::no_op(), 0.0}}) {
    CAPTURE(name);
    CAPTURE(lie);
    const auto file =
        dir.write("p.yaml",
                  "name: versioned\n"
                  "data: {use: blobs, params: {samples: 200, features: 2, classes: 2}}\n"
                  "algorithm: {use: " +
                      name +
                      "}\n"
                      "accountant: {use: rdp, delta: 1.0e-5}\n"
                      "utility: {use: accuracy, repetitions: 2}\n"
                      "search_space: {lie: {categorical: [false, true]}}\n"
                      "tuner: {use: grid}\n"
                      "execution: {seed: 1}\n");
    const PipelineConfig config = load_pipeline(file, {}, catalog);
    EvaluationStack stack(config, registry, "inline", 1, config.execution.seed);
    HostEvaluator& evaluator = stack.evaluator;
    dptune::EvaluationRequest request;  // 120 training rows (60% of 200)
    request.candidate = dptune::Params{{"lie", lie}};
    if (lie) {
      CHECK_THROWS_WITH_AS(evaluator.evaluate({request}),
                           doctest::Contains("reported the event {pure_dp: {epsilon: 2.0}} but "
                                             "exact_event() predicted"),
                           dptune::PluginError);
      continue;
    }
    CHECK(evaluator.event_of(request.candidate, dptune::DataScope::whole()) == expected);
    const auto results = evaluator.evaluate({request});
    REQUIRE(results.size() == 1);
    CHECK(results[0].event == expected);
    CHECK(results[0].privacy.epsilon == doctest::Approx(epsilon));
  }
}

TEST_CASE("abi minor: a tuner built for every supported minor loads and runs on this host") {
  // tests/test_plugins/versioned_tuner.cpp, built for 2.1 .. 2.<this SDK's minor>; each build
  // reaches exactly the calls its minor declares and says so in its notes.
  const std::string dir = std::string(DPTUNE_TEST_PLUGIN_DIR) + "/versioned_tuner";
  for (int minor = 1; minor <= dptune::kAbiMinor; ++minor) {
    INFO("ABI 2." << minor);
    const std::string tag = "versioned_tuner_v2_" + std::to_string(minor);
    const auto r = dptune_test::run_dptune(
        "run tests/test_plugins/versioned_tuner.yaml --seed 1 --no-progress --plugin-path '" + dir +
            "' --set tuner.use=" + tag + " --out '" +
            (dptune_test::fresh_dir("out_" + tag)).string() + "'",
        tag);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("built for ABI 2." + std::to_string(minor)) != std::string::npos);
    CHECK((r.out.find("data_sizes: scored ") != std::string::npos) == (minor >= 2));
    CHECK((r.out.find("calibrated count 20") != std::string::npos) == (minor >= 4));
    CHECK((r.out.find("peers: none") != std::string::npos) == (minor >= 9));
    CHECK((r.out.find("clients changed by one record: 1") != std::string::npos) == (minor >= 11));
  }
}

TEST_CASE("abi minor: a tuner's rank_scopes is asked only of builds for 2.10 or later") {
  // The proxy must not call past the end of an older Tuner vtable: such a tuner's ranks hold the
  // whole data (nullopt), as before ABI 2.10.
  dptune::host::PluginRegistry registry;
  registry.scan(fs::path(DPTUNE_TEST_PLUGIN_DIR) / "versioned_tuner");
  for (int minor = 1; minor <= dptune::kAbiMinor; ++minor) {
    INFO("ABI 2." << minor);
    const auto tuner = registry.create_tuner("versioned_tuner_v2_" + std::to_string(minor), {});
    const auto scopes = tuner->rank_scopes(2, 3);
    REQUIRE(scopes.has_value() == (minor >= 10));
    if (!scopes) continue;
    REQUIRE(scopes->size() == 1);
    CHECK(scopes->front().to_string() == "client 1/2");
    CHECK(tuner->rank_scopes(0, 3)->empty());
  }
}

TEST_CASE("abi minor: a tuner's worst_case_event is asked only of builds for 2.12 or later") {
  // The proxy must not call past the end of an older Tuner vtable: such a tuner states no worst
  // case (nothing is reserved in the ledger), as before ABI 2.12.
  dptune::host::PluginRegistry registry;
  registry.scan(fs::path(DPTUNE_TEST_PLUGIN_DIR) / "versioned_tuner");
  // Nothing to evaluate or price: the versioned tuner states its worst case from its build alone.
  struct Context final : dptune::testing::StubTunerContext {
    Context() : StubTunerContext(dptune::testing::integer_choices("c", 2), 1) {}
    dptune::Evaluator& evaluator() override { throw dptune::Error("test: no evaluator"); }
    const dptune::Accountant& accountant() const override {
      throw dptune::Error("test: no accountant");
    }
  } context;
  for (int minor = 1; minor <= dptune::kAbiMinor; ++minor) {
    INFO("ABI 2." << minor);
    const auto tuner = registry.create_tuner("versioned_tuner_v2_" + std::to_string(minor), {});
    const auto worst = tuner->worst_case_event(context, true);
    REQUIRE(worst.has_value() == (minor >= 12));
    CHECK_FALSE(tuner->worst_case_event(context, false).has_value());
    if (worst) CHECK(worst->to_string() == dptune::DpEvent::pure_dp(3.0).to_string());
  }
}

TEST_CASE("sdk split: a plugin linked to libdptune_sdk alone still resolves the moved helpers") {
  // tests/test_plugins/pre_split_helpers.cpp: old header paths, linked as plugins were before the
  // helpers moved to libdptune_helpers.  Its dynamic section must name libdptune_sdk and not the
  // helper library, so every helper symbol it calls can only come from libdptune_sdk.
  const std::string dir = std::string(DPTUNE_TEST_PLUGIN_DIR) + "/pre_split_helpers";
  const auto needed_file = dptune_test::fresh_dir("pre_split_needed") / "needed";
  const std::string readelf =
      "readelf -d '" + dir + "/test_plugin_pre_split_helpers.so' > '" + needed_file.string() + "'";
  REQUIRE(std::system(readelf.c_str()) == 0);
  const std::string needed = dptune_test::slurp(needed_file);
  CHECK(needed.find("[libdptune_sdk.so.1]") != std::string::npos);
  CHECK(needed.find("libdptune_helpers") == std::string::npos);

  const auto r = dptune_test::run_dptune(
      "run tests/test_plugins/versioned_tuner.yaml --seed 1 --no-progress --plugin-path '" + dir +
          "' --set tuner.use=pre_split_helpers --out '" +
          dptune_test::fresh_dir("out_pre_split_helpers").string() + "'",
      "pre_split_helpers");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* note : {"hypervolume 6.000000", "front size 3", "geometric pmf(1) 0.100000",
                           "calibrated count 20", "uniform_below(1) 0", "grid release 3.500000"})
    CHECK_MESSAGE(r.out.find(note) != std::string::npos, note);
}
