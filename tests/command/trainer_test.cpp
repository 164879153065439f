// The command trainer driven directly: the request a program receives, and every failure mode
// (crash, hang, garbage, non-zero exit, a different event, a short answer) as a clear error.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../unit/temp_dir.hpp"
#include "command/command_trainer.hpp"
#include "dptune/rng.hpp"

using namespace dptune;
using namespace dptune::command;
namespace fs = std::filesystem;

namespace {

const std::string kEvent =
    "self_composed: {count: ${steps}, event: {poisson_sampled: {rate: ${batch_size}/${n}, "
    "event: {gaussian: {noise_multiplier: ${noise_multiplier}}}}}}";

class Context final : public TrainingContext {
 public:
  explicit Context(bool private_run = true) : rng_(7), private_(private_run) {}
  RandomBitGenerator& rng() override { return rng_; }
  std::shared_ptr<const Mechanism> mechanism(const Params&) override {
    throw Error("no mechanism here");
  }
  const Accountant& accountant() const override { throw Error("no accountant here"); }
  double delta() const override { return 1e-5; }
  bool private_run() const override { return private_; }

 private:
  Xoshiro256 rng_;
  bool private_;
};

Params params(const std::string& mode, const std::string& keep = "", double timeout = 20) {
  return command_schema().complete(
      Params{{"run", std::string("/usr/bin/python3 behave.py ") + mode},
             {"event", kEvent},
             {"timeout", timeout},
             {"pipeline_dir", std::string(DPTUNE_SOURCE_DIR "/tests/command")},
             {"keep_dir", keep},
             {"steps", std::int64_t{40}},
             {"batch_size", std::int64_t{1}},
             {"noise_multiplier", 1.25},
             {"variant", std::string("a \"quoted\" value")}});
}

Dataset data() {
  Dataset d;
  d.name = "tiny";
  d.rows = 4;
  d.cols = 2;
  d.features = {0.5, -1, -0.25, 2, 1e-17, 3, -3, 0.1};
  d.labels = {1, 0, 1, 0};
  d.num_classes = 2;
  d.feature_names = {"a", "b"};
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("command trainer: protocol round trip") {
  dptune_test::TempDir keep;
  const auto config = make_config(params("ok", keep.path().string()));
  Context context;
  const TrainedModel trained = train(config, data(), context);
  // The event is the template at n = 4 training rows.
  CHECK(trained.event ==
        DpEvent::self_composed(DpEvent::poisson_sampled(0.25, DpEvent::gaussian(1.25)), 40));
  // The kept run folder holds what the program received.
  std::vector<fs::path> runs;
  for (const auto& e : fs::directory_iterator(keep.path())) runs.push_back(e.path());
  REQUIRE(runs.size() == 1);
  const Json got = parse_json(read(runs[0] / "received.json"));
  const Json& request = *got.find("request");
  CHECK(request.find("protocol")->number == 1);
  CHECK(request.find("action")->text == "train");
  CHECK(request.find("private")->boolean);
  CHECK(request.find("event")->text == trained.event.to_string());
  CHECK(request.find("delta")->number == 1e-5);
  CHECK(request.find("params")->find("steps")->number == 40);
  CHECK(request.find("params")->find("noise_multiplier")->number == 1.25);
  CHECK(request.find("params")->find("learning_rate")->number == 0.1);  // the default
  CHECK(request.find("params")->find("variant")->text == "a \"quoted\" value");
  CHECK(request.find("params")->find("run") == nullptr);  // the trainer's own settings stay home
  CHECK(request.find("sizes")->find("n")->number == 4);
  CHECK(request.find("data")->find("rows")->number == 4);
  CHECK(request.find("data")->find("features")->number == 2);
  CHECK(request.find("data")->find("classes")->number == 2);
  CHECK(request.find("output_dir")->text == runs[0].string());
  const double seed = request.find("seed")->number;
  CHECK(seed == static_cast<double>(Xoshiro256(7).next_u64() >> 11));
  // The rows, exactly (%.17g), header and label column.
  CHECK(read(request.find("data")->find("train_csv")->text) ==
        "a,b,label\n0.5,-1,1\n-0.25,2,0\n1.0000000000000001e-17,3,1\n-3,0.10000000000000001,0\n");
  // The same content in the environment; the program runs in the pipeline's folder.
  const Json& env = *got.find("env");
  CHECK(env.find("DPTUNE_PROTOCOL")->text == "1");
  CHECK(env.find("DPTUNE_ACTION")->text == "train");
  CHECK(env.find("DPTUNE_PRIVATE")->text == "1");
  CHECK(env.find("DPTUNE_PARAM_STEPS")->text == "40");
  CHECK(env.find("DPTUNE_PARAM_NOISE_MULTIPLIER")->text == "1.25");
  CHECK(env.find("DPTUNE_SEED")->text == std::to_string(static_cast<std::uint64_t>(seed)));
  CHECK(env.find("DPTUNE_DATA")->text == request.find("data")->find("train_csv")->text);
  CHECK(fs::equivalent(got.find("cwd")->text, DPTUNE_SOURCE_DIR "/tests/command"));
  // predict: class 1 iff the first feature > 0, in row order.
  const Predictions p = trained.model->predict(data());
  CHECK(p.values == std::vector<double>{1, 0, 1, 0});
  CHECK(p.num_classes == 2);
  CHECK(trained.model->describe().find(
            "privacy depends on the external program honouring the declared event") !=
        std::string::npos);
  CHECK(trained.model->describe().find("behave.py sha256 ") != std::string::npos);
}

TEST_CASE("command trainer: a non-private run is told so and reports no event") {
  const auto config = make_config(params("ok"));
  Context context(false);
  const TrainedModel trained = train(config, data(), context);
  CHECK(trained.event == DpEvent::non_private());
}

TEST_CASE("command trainer: every failure is an error with the program's stderr") {
  Context context;
  const auto fails = [&](const std::string& mode, double timeout = 20) {
    return error_of([&] { train(make_config(params(mode, "", timeout)), data(), context); });
  };
  const std::string prefix =
      "command: program `/usr/bin/python3 " DPTUNE_SOURCE_DIR "/tests/command/behave.py ";
  std::string e = fails("crash");
  CHECK(e.find(prefix + "crash` (train) was killed by signal 11 (SIGSEGV); its stderr ends:\n"
                        "about to crash\n") == 0);
  e = fails("fail");
  CHECK(e == prefix +
                 "fail` (train) exited with code 3; its stderr ends:\n"
                 "boom: the training diverged\n");
  const auto start = std::chrono::steady_clock::now();
  e = fails("hang", 1.0);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5);
  CHECK(e.find(prefix + "hang` (train) did not finish within its timeout (killed after 1") == 0);
  CHECK(e.find("its stderr ends:\nhanging\n") != std::string::npos);
  e = fails("garbage");
  CHECK(e == prefix +
                 "garbage` (train) gave no valid answer: its last line is not JSON (at column 1: "
                 "expected a JSON value, got 'hello, this '): hello, this is not JSON; its "
                 "stderr was empty");
  e = fails("silent");
  CHECK(e == prefix +
                 "silent` (train) gave no valid answer: its standard output is empty (expected "
                 "one JSON line); its stderr was empty");
  e = fails("wrong_event");
  CHECK(e == prefix +
                 "wrong_event` (train): it reports the event {gaussian: {noise_multiplier: 0.5}}, "
                 "which differs from the declared {self_composed: {count: 40, event: "
                 "{poisson_sampled: {rate: 0.25, event: {gaussian: {noise_multiplier: 1.25}}}}}}; "
                 "dptune accounts only for the declared event (the run is charged: its privacy "
                 "is spent)");
  // A short answer to predict.
  const TrainedModel trained = train(make_config(params("short")), data(), context);
  CHECK(error_of([&] { trained.model->predict(data()); }) ==
        prefix + "short` (predict): it predicted 3 rows, expected 4");
}

TEST_CASE("command trainer: configuration errors") {
  auto p = params("ok");
  p.set("event", std::string("{gaussian: {noise_multiplier: ${sigma}}}"));
  CHECK(error_of([&] { make_config(p); })
            .find("event: event template, column 31: unknown variable ${sigma}; known: "
                  "${batch_size}, ${clip_norm}, ${dropout}, ${epochs}, ${hidden}") == 0);
  p = params("ok");
  p.set("event", std::string("{self_composed: {count: ${n}/3, event: {gaussian: "
                             "{noise_multiplier: 1}}}}"));
  // Values depend on the run's n: checked when a run's event is made, not at configuration.
  const auto thirds = make_config(p);
  Context context;
  CHECK(error_of([&] { train(thirds, data(), context); }) ==
        "event template, column 25: self_composed.count: evaluates to 1.3333333333333333, not an "
        "integer; round it explicitly, e.g. ceil(...) (rounding a count up is the conservative "
        "choice)");
  CHECK(declared_event(*thirds, 30) == DpEvent::self_composed(DpEvent::gaussian(1), 10));
  // A sample larger than some n is fine until a run has that n.
  p.set("event", std::string("{sampled_without_replacement: {source_size: ${n}, sample_size: "
                             "2000, event: {gaussian: {noise_multiplier: 1}}}}"));
  CHECK_NOTHROW(make_config(p));
  // Kinds and fields are checked at configuration (dptune validate).
  p.set("event",
        std::string("{self_composed: {count: 3, event: {gausian: {noise_multiplier: 1}}}}"));
  CHECK(error_of([&] { make_config(p); }) ==
        "event: event template, column 35: self_composed.event.gausian: unknown event kind "
        "'gausian'");
  p.set("event", std::string("{poisson_sampled: {rate: 0.5}}"));
  CHECK(error_of([&] { make_config(p); }) ==
        "event: event template, column 19: poisson_sampled: missing field 'event'");
  p.set("event", std::string("{composed: {events: {gaussian: {noise_multiplier: 1}}}}"));
  CHECK(error_of([&] { make_config(p); }) ==
        "event: event template, column 21: composed.events: expected a list");
  p = params("ok");
  p.set("run", std::string("no-such-program-dptune x"));
  CHECK(error_of([&] { make_config(p); }) ==
        "run: program 'no-such-program-dptune' not found on PATH");
  p.set("run", std::string("./missing.py"));
  CHECK(error_of([&] { make_config(p); }) ==
        "run: program " DPTUNE_SOURCE_DIR
        "/tests/command/missing.py is not an executable file (relative to the pipeline's folder)");
}
