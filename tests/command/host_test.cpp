// The command trainer as the host runs it: the event charged is the accountant's price of the
// template, runs go in parallel on the executor, and a script implementing the built-in sgd
// trainer's algorithm gets the same utilities on the same split.
#include <doctest/doctest.h>

#include <chrono>

#include "../unit/temp_dir.hpp"
#include "build_paths.hpp"
#include "dptune/host/runner.hpp"
#include "run/evaluator.hpp"

using namespace dptune;
using namespace dptune::host;

namespace {

const PluginRegistry& registry() {
  static PluginRegistry* r = [] {
    auto* reg = new PluginRegistry();
    reg->scan(dptune_test::build_paths::built_plugin_dir);
    return reg;
  }();
  return *r;
}

/// A HostEvaluator built from a pipeline file as run_pipeline builds it.
struct Host {
  Host(const std::filesystem::path& file, const std::string& executor, std::size_t threads)
      : catalog(registry()),
        config(load_pipeline(file, {}, catalog)),
        stack(config, registry(), executor, threads, config.execution.seed) {}
  HostCatalog catalog;
  PipelineConfig config;
  EvaluationStack stack;
};

std::string pipeline(const std::string& algorithm, const std::string& data) {
  return "name: command_host\n"
         "data: " +
         data +
         "\n"
         "algorithm:\n" +
         algorithm +
         "accountant: {use: rdp, delta: 1.0e-5}\n"
         "utility: {use: accuracy, repetitions: 1}\n"
         "search_space:\n"
         "  learning_rate: {float: [0.05, 2.0], log: true}\n"
         "tuner: {use: grid, params: {points_per_dimension: 3}}\n"
         "execution: {seed: 11}\n"
         "output: {dir: out}\n";
}

const char* kQuotedEventTemplate =
    "\"self_composed: {count: ${steps}, event: {poisson_sampled: {rate: ${batch_size}/${n}, "
    "event: {gaussian: {noise_multiplier: ${noise_multiplier}}}}}}\"";

}  // namespace

TEST_CASE("command host: the event charged is the accountant's price of the template") {
  dptune_test::TempDir dir;
  const std::string algorithm =
      "  use: command\n"
      "  params:\n"
      "    run: /usr/bin/python3 " +
      std::string(dptune_test::build_paths::source_dir) +
      "/tests/command/behave.py ok\n"
      "    noise: fast\n"
      "    event: " +
      std::string(kQuotedEventTemplate) +
      "\n"
      "    steps: 120\n"
      "    batch_size: 25\n"
      "    noise_multiplier: 1.3\n";
  Host host(dir.write("p.yaml", pipeline(algorithm, "{use: builtin:breast_cancer}")), "inline", 1);
  const std::size_t train_rows = host.stack.evaluator.splits().train.rows;
  CHECK(train_rows == 341);  // 60% of 569
  EvaluationRequest request;
  request.candidate = Params{{"learning_rate", 0.5}};
  request.repetitions = 2;
  const Evaluation e = host.stack.evaluator.evaluate({request}).front();
  const DpEvent expected =
      DpEvent::self_composed(DpEvent::poisson_sampled(25.0 / 341.0, DpEvent::gaussian(1.3)), 120);
  CHECK(e.event == expected);
  const PrivacyGuarantee price = host.stack.accountant->epsilon(expected, 1e-5);
  CHECK(e.privacy.epsilon == price.epsilon);
  CHECK(e.privacy.delta == 1e-5);
  CHECK(e.privacy.epsilon > 0.5);
  CHECK(e.privacy.epsilon < 5);
  CHECK(host.stack.evaluator.event_of(request.candidate, DataScope::whole()) == expected);
  // Partitions (subsample-and-aggregate) and client shards: n is the scope's training rows.
  const DpEvent part = host.stack.evaluator.event_of(request.candidate, DataScope::partition(0, 5));
  const double q = part.inner().sampling_probability();  // 341 rows in 5 parts: 68 or 69
  CHECK((q == 25.0 / 68.0 || q == 25.0 / 69.0));
  // The behave.py predictor (class 1 iff the first feature > 0) scores the same on every run.
  CHECK(e.utilities.size() == 2);
  CHECK(e.utilities[0] == e.utilities[1]);
  const Dataset& validation = host.stack.evaluator.splits().validation;
  double correct = 0;
  for (std::size_t i = 0; i < validation.rows; ++i)
    correct += (validation.float_rows.row(i)[0] > 0 ? 1.0 : 0.0) == validation.labels[i];
  CHECK(e.utility_mean ==
        doctest::Approx(correct / static_cast<double>(validation.rows)).epsilon(1e-12));
}

TEST_CASE("command host: runs go in parallel up to the executor's width") {
  dptune_test::TempDir dir;
  const std::string algorithm =
      "  use: command\n"
      "  params:\n"
      "    run: /bin/sh " +
      std::string(dptune_test::build_paths::source_dir) +
      "/tests/command/slow.sh\n"
      "    noise: fast\n"
      "    event: \"{gaussian: {noise_multiplier: ${noise_multiplier}}}\"\n";
  Host host(dir.write("p.yaml", pipeline(algorithm, "{use: builtin:breast_cancer}")), "threads", 2);
  std::vector<EvaluationRequest> requests(4);
  for (std::size_t i = 0; i < requests.size(); ++i)
    requests[i].candidate = Params{{"learning_rate", 0.1 * static_cast<double>(i + 1)}};
  const auto start = std::chrono::steady_clock::now();
  const auto results = host.stack.evaluator.evaluate(requests);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // 4 runs of 3 x 0.4 s (train, predict, the row-local spot check's predict) on 2 threads:
  // 2.4 s; in sequence 4.8 s.
  CHECK(seconds > 2.3);
  CHECK(seconds < 4.3);
  for (const auto& r : results) CHECK(r.utility_mean == results[0].utility_mean);
}

TEST_CASE("command host: a script of sgd's algorithm scores what the sgd trainer scores") {
  dptune_test::TempDir dir;
  // Full-batch GD from zero weights: no randomness, so the two agree run for run.
  const std::string common = "    epochs: 25\n    batch_size: 100000\n";
  const std::string command =
      "  use: command\n  params:\n"
      "    run: /usr/bin/python3 " +
      std::string(dptune_test::build_paths::source_dir) +
      "/tests/command/full_batch_gd.py\n"
      "    noise: fast\n"
      "    event: \"{non_private: {}}\"\n" +
      common;
  const std::string sgd = "  use: sgd\n  params:\n    model: logistic\n" + common;
  Host a(dir.write("command.yaml", pipeline(command, "{use: builtin:breast_cancer}")), "inline", 1);
  Host b(dir.write("sgd.yaml", pipeline(sgd, "{use: builtin:breast_cancer}")), "inline", 1);
  std::vector<EvaluationRequest> requests;
  for (const double lr : {0.01, 0.1, 1.0}) {
    EvaluationRequest r;
    r.candidate = Params{{"learning_rate", lr}};
    r.private_run = false;
    requests.push_back(r);
  }
  const auto ra = a.stack.evaluator.evaluate(requests);
  const auto rb = b.stack.evaluator.evaluate(requests);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(i);
    CHECK(ra[i].utility_mean == rb[i].utility_mean);
    CHECK(ra[i].utility_mean > 0.85);
  }
  CHECK(ra[0].utility_mean != ra[2].utility_mean);  // the learning rate matters: not a constant
}
