// A rank of a distributed run that keeps only the rows of the scopes its tuner evaluates there
// (Tuner::rank_scopes, ABI 2.10; HostEvaluator::confine, docs/mpi.md): the same runs give the same
// scores as on the whole data, other scopes are refused, and only the kept rows are stored.
#include <doctest/doctest.h>

#include <string>

#include "../../framework/src/evaluator.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/runner.hpp"
#include "temp_dir.hpp"

namespace {

const dptune::host::PluginRegistry& built_plugins() {
  static const dptune::host::PluginRegistry* registry = [] {
    auto* r = new dptune::host::PluginRegistry();  // never unloaded: models may outlive a test
    r->scan(DPTUNE_BUILT_PLUGIN_DIR);
    return r;
  }();
  return *registry;
}

/// A non-private run of one candidate on `scope`: its score.
double score_on(dptune::host::HostEvaluator& evaluator, const dptune::DataScope& scope) {
  dptune::EvaluationRequest request;
  request.candidate = dptune::Params{{"learning_rate", 0.5}};
  request.scope = scope;
  request.private_run = false;
  return evaluator.evaluate({request}).at(0).utility_mean;
}

}  // namespace

TEST_CASE("rank data: a confined evaluator runs its clients as on the whole data, and no other") {
  using namespace dptune::host;
  dptune_test::TempDir dir;
  // builtin:iris: 90 training rows, 3 iid clients of 30 rows, 6 of them each client's validation.
  const auto file = dir.write("p.yaml",
                              "name: rank_data\n"
                              "data: {use: 'builtin:iris', params: {clients_distribution: iid}}\n"
                              "algorithm: {use: sgd, params: {model: logistic, epochs: 2}}\n"
                              "mechanism: {use: gaussian}\n"
                              "accountant: {use: rdp, delta: 1.0e-5}\n"
                              "utility: {use: accuracy, repetitions: 1}\n"
                              "search_space: {learning_rate: {categorical: [0.5, 0.05]}}\n"
                              "tuner: {use: grid}\n"
                              "execution: {seed: 4}\n");
  const PluginRegistry& registry = built_plugins();
  HostCatalog catalog(registry);
  const PipelineConfig config = load_pipeline(file, {}, catalog);
  EvaluationStack whole(config, registry, "inline", 1, config.execution.seed);
  EvaluationStack confined(config, registry, "inline", 1, config.execution.seed);
  const auto one = dptune::DataScope::client(1, 3), two = dptune::DataScope::client(2, 3);
  const std::string before = whole.evaluator.held_rows({one, two});
  CHECK(before.find("stored_rows 150\n") != std::string::npos);  // the whole file
  confined.evaluator.confine({one, two});
  // The same rows, order and labels (checksums) as the whole data's views; only those are stored.
  const std::string after = confined.evaluator.held_rows({one, two});
  CHECK(after.substr(0, after.find("stored_rows")) == before.substr(0, before.find("stored_rows")));
  CHECK(after.find("scope client 1/3 train 24 scored 6 checksum ") == 0);
  CHECK(after.find("stored_rows 60\n") != std::string::npos);
  // The same first run (batch 1, task 0: the same stream) scores the same on either evaluator.
  const double expected = score_on(whole.evaluator, two);
  CHECK(score_on(confined.evaluator, two) == expected);
  CHECK(confined.evaluator.event_of(dptune::Params{{"learning_rate", 0.5}}, one) ==
        whole.evaluator.event_of(dptune::Params{{"learning_rate", 0.5}}, one));
  // The sizes stay public; the rows of other scopes are gone.
  CHECK(confined.evaluator.splits().train.rows == 90);
  CHECK(confined.evaluator.splits().train.labels.empty());
  CHECK_THROWS_WITH_AS(score_on(confined.evaluator, dptune::DataScope::client(0, 3)),
                       doctest::Contains("data scope client 0/3: this process holds only the "
                                         "rows of client 1/3, client 2/3"),
                       dptune::Error);
  CHECK_THROWS_WITH_AS(score_on(confined.evaluator, dptune::DataScope::whole()),
                       doctest::Contains("data scope whole: this process holds only"),
                       dptune::Error);
  // A rank that evaluates nothing holds nothing.
  EvaluationStack server(config, registry, "inline", 1, config.execution.seed);
  server.evaluator.confine({});
  CHECK(server.evaluator.held_rows({}) == "stored_rows 0\n");
}
