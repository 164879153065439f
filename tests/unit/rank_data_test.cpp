// A rank of a distributed run that keeps only the rows of the scopes its tuner evaluates there
// (Tuner::rank_scopes, ABI 2.10; HostEvaluator::confine, docs/mpi.md): the same runs give the same
// scores as on the whole data, other scopes are refused, and only the kept rows are stored.
#include <doctest/doctest.h>

#include <string>

#include "build_paths.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/runner.hpp"
#include "run/evaluator.hpp"
#include "temp_dir.hpp"

namespace {

const dptune::host::PluginRegistry& built_plugins() {
  static const dptune::host::PluginRegistry* registry = [] {
    auto* r = new dptune::host::PluginRegistry();  // never unloaded: models may outlive a test
    r->scan(dptune_test::build_paths::built_plugin_dir);
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

namespace {

/// Class probabilities that a kept model of a non-private run on `scope` predicts for the
/// validation split: continuous, so two runs agree only if they drew the same randomness.
std::vector<double> kept_probabilities(
    dptune::host::HostEvaluator& evaluator, const dptune::DataScope& scope,
    const std::vector<dptune::EvaluationRequest>& before_in_the_same_call = {}) {
  std::vector<dptune::EvaluationRequest> requests = before_in_the_same_call;
  dptune::EvaluationRequest request;
  request.candidate = dptune::Params{{"learning_rate", 0.5}};
  request.scope = scope;
  request.private_run = false;
  request.keep_output = true;
  requests.push_back(request);
  const auto evaluations = evaluator.evaluate(requests);
  REQUIRE(evaluations.back().model);
  return evaluations.back().model->predict(evaluator.splits().validation).probabilities;
}

}  // namespace

TEST_CASE("rank data: a client's runs draw from the client and candidate, not from the call") {
  // DP-Hype's clients evaluate on whichever MPI rank holds them: one process batches many clients
  // per evaluate() call, a rank only its own.  Under a seed a client's local runs must not depend
  // on that (else its vote depends on the rank count), while other runs keep their per-call
  // streams.
  using namespace dptune::host;
  dptune_test::TempDir dir;
  const auto file = dir.write("p.yaml",
                              "name: client_streams\n"
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
  const auto client2 = dptune::DataScope::client(2, 3);
  EvaluationStack alone(config, registry, "inline", 1, config.execution.seed);
  const auto first = kept_probabilities(alone.evaluator, client2);
  REQUIRE(!first.empty());

  // Another process: two calls earlier, and client 2 batched after client 1.
  EvaluationStack batched(config, registry, "inline", 1, config.execution.seed);
  kept_probabilities(batched.evaluator, dptune::DataScope::client(0, 3));
  kept_probabilities(batched.evaluator, dptune::DataScope::client(1, 3));
  dptune::EvaluationRequest other;
  other.candidate = dptune::Params{{"learning_rate", 0.05}};
  other.scope = dptune::DataScope::client(1, 3);
  other.private_run = false;
  CHECK(kept_probabilities(batched.evaluator, client2, {other}) == first);

  // The whole data's runs still draw per call: the same run in a later call differs.
  EvaluationStack whole(config, registry, "inline", 1, config.execution.seed);
  const auto call1 = kept_probabilities(whole.evaluator, dptune::DataScope::whole());
  CHECK(kept_probabilities(whole.evaluator, dptune::DataScope::whole()) != call1);
}

TEST_CASE("rank data: one record changes two Dirichlet clients, one scope of every other layout") {
  // What the host tells a tuner (TunerContext::scopes_changed_by_one_record, ABI 2.11): DP-Hype
  // prices its vote for this many clients.
  using namespace dptune::host;
  dptune_test::TempDir dir;
  const PluginRegistry& registry = built_plugins();
  HostCatalog catalog(registry);
  for (const std::string distribution : {"iid", "dirichlet"}) {
    CAPTURE(distribution);
    const auto file = dir.write("p_" + distribution + ".yaml",
                                "name: one_record\n"
                                "data: {use: 'builtin:iris', params: {clients_distribution: " +
                                    distribution +
                                    "}}\n"
                                    "algorithm: {use: sgd, params: {model: logistic, epochs: 1}}\n"
                                    "mechanism: {use: gaussian}\n"
                                    "accountant: {use: rdp, delta: 1.0e-5}\n"
                                    "utility: {use: accuracy, repetitions: 1}\n"
                                    "search_space: {learning_rate: {categorical: [0.5, 0.05]}}\n"
                                    "tuner: {use: grid}\n");
    const PipelineConfig config = load_pipeline(file, {}, catalog);
    EvaluationStack stack(config, registry, "inline", 1, std::uint64_t{1});
    SilentProgress progress;
    dptune::Xoshiro256 rng(1);
    HostTunerContext context(config, stack.evaluator, *stack.accountant, stack.mechanisms, progress,
                             rng, *stack.executor);
    const std::size_t clients = distribution == "dirichlet" ? 2 : 1;
    CHECK(context.scopes_changed_by_one_record(dptune::DataScope::client(0, 5)) == clients);
    CHECK(context.scopes_changed_by_one_record(dptune::DataScope::client(0, 1)) == 1);
    CHECK(context.scopes_changed_by_one_record(dptune::DataScope::partition(0, 5)) == 1);
    CHECK(context.scopes_changed_by_one_record(dptune::DataScope::whole()) == 1);
  }
}
