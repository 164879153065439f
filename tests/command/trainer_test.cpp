// The command trainer driven directly: the request a program receives, and every failure mode
// (crash, hang, garbage, non-zero exit, a different event, a short answer) as a clear error.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "../unit/temp_dir.hpp"
#include "build_paths.hpp"
#include "command/command_trainer.hpp"
#include "dptune/rng.hpp"
#include "error_of.hpp"

using namespace dptune;
using namespace dptune::command;
namespace fs = std::filesystem;

namespace {

const std::string kEventTemplate =
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

/// Sets TMPDIR for the scope (fs::temp_directory_path reads it).
class TmpDirVariable {
 public:
  explicit TmpDirVariable(const fs::path& dir) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpDirVariable() {
    if (old_.empty())
      unsetenv("TMPDIR");
    else
      setenv("TMPDIR", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

/// The run folders (dptune-command-*) in `dir`.
std::vector<fs::path> run_folders(const fs::path& dir) {
  std::vector<fs::path> runs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("dptune-command-", 0) == 0) runs.push_back(e.path());
  return runs;
}

Params params(const std::string& mode, const std::string& keep = "", double timeout = 20) {
  return command_schema().complete(
      Params{{"run", std::string("/usr/bin/python3 behave.py ") + mode},
             {"event", kEventTemplate},
             {"timeout", timeout},
             {"pipeline_dir", std::string(dptune_test::build_paths::source_dir) + "/tests/command"},
             {"keep_dir", keep},
             {"steps", std::int64_t{40}},
             {"batch_size", std::int64_t{1}},
             {"noise_multiplier", 1.25},
             {"noise", std::string("fast")},
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

using dptune_test::error_of;

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("command trainer: protocol round trip") {
  dptune_test::TempDir tmp;
  TmpDirVariable variable(tmp.path());
  const auto config = make_config(params("ok"));
  Context context;
  const TrainedModel trained = train(config, data(), context);
  // The event is the template at n = 4 training rows.
  CHECK(trained.event ==
        DpEvent::self_composed(DpEvent::poisson_sampled(0.25, DpEvent::gaussian(1.25)), 40));
  // The run folder (alive with its model) holds what the program received.
  const std::vector<fs::path> runs = run_folders(tmp.path());
  REQUIRE(runs.size() == 1);
  const Json got = parse_json(read(runs[0] / "received.json"));
  const Json& request = *got.find("request");
  CHECK(request.find("protocol")->number == 1);
  CHECK(request.find("action")->text == "train");
  CHECK(request.find("private")->boolean);
  CHECK(request.find("event")->text == trained.event.to_string());
  CHECK(request.find("delta")->number == 1e-5);
  CHECK(request.find("noise")->text == "fast");
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
  CHECK(env.find("DPTUNE_NOISE")->text == "fast");
  CHECK(env.find("DPTUNE_PARAM_STEPS")->text == "40");
  CHECK(env.find("DPTUNE_PARAM_NOISE_MULTIPLIER")->text == "1.25");
  CHECK(env.find("DPTUNE_SEED")->text == std::to_string(static_cast<std::uint64_t>(seed)));
  CHECK(env.find("DPTUNE_DATA")->text == request.find("data")->find("train_csv")->text);
  CHECK(fs::equivalent(got.find("cwd")->text,
                       std::string(dptune_test::build_paths::source_dir) + "/tests/command"));
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
  const std::string prefix = "command: program `/usr/bin/python3 " +
                             std::string(dptune_test::build_paths::source_dir) +
                             "/tests/command/behave.py ";
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
  CHECK(error_of([&] { make_config(p); }) == "run: program " +
                                                 std::string(dptune_test::build_paths::source_dir) +
                                                 "/tests/command/missing.py is not an executable "
                                                 "file (relative to the pipeline's folder)");
  // An interpreter's script that does not exist: found when the plugin is built (validate), not
  // at the first training.
  p.set("run", std::string("/bin/sh no_such_script.sh --out model.txt"));
  CHECK(error_of([&] { make_config(p); }) ==
        "run: script 'no_such_script.sh' does not exist (relative to the pipeline's folder)");
  // Arguments that are not scripts may name files the program creates.
  p.set("run", std::string("/bin/sh -c true out.txt"));
  CHECK(error_of([&] { make_config(p); }) == "no error");
}

namespace {

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

/// Starts `python3 -c` in the background holding an flock on `folder` (as a dptune process holds
/// its run folders); returns its pid once the lock is held.
pid_t hold_lock(const fs::path& folder, const fs::path& ready) {
  const std::string script = "import fcntl, os, time; fd = os.open('" + folder.string() +
                             "', os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); open('" +
                             ready.string() + "', 'w').write(str(os.getpid())); time.sleep(60)";
  REQUIRE(std::system(("/usr/bin/python3 -c \"" + script + "\" &").c_str()) == 0);
  for (int i = 0; i < 500 && !fs::exists(ready); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the pid written in full
  pid_t pid = 0;
  std::ifstream(ready) >> pid;
  REQUIRE(pid > 0);
  return pid;
}

}  // namespace

TEST_CASE("command trainer: run folders are private and the seed never reaches a file") {
  dptune_test::TempDir base;
  TmpDirVariable variable(base.path());
  const auto config = make_config(params("ok"));
  Context context;
  // behave.py ok exits with code 4 if any file of the run folder holds the seed's digits, in
  // train and in predict (the request reaches it through a pipe).
  const TrainedModel trained = train(config, data(), context);
  CHECK(trained.model->predict(data()).values == std::vector<double>{1, 0, 1, 0});
  const std::vector<fs::path> runs = run_folders(base.path());
  REQUIRE(runs.size() == 1);
  CHECK(mode_of(runs[0]) == 0700);
  CHECK(mode_of(runs[0] / "train.csv") == 0600);
  CHECK(mode_of(runs[0] / "train-request.json") == 0600);
  // The request on disk is the request without its seed.
  const Json on_disk = parse_json(read(runs[0] / "train-request.json"));
  CHECK(on_disk.find("seed") == nullptr);
  CHECK(on_disk.find("action")->text == "train");
  const Json received = parse_json(read(runs[0] / "received.json"));
  CHECK(received.find("request")->find("seed")->number ==
        static_cast<double>(Xoshiro256(7).next_u64() >> 11));
  for (const auto& e : fs::recursive_directory_iterator(runs[0]))
    if (e.is_directory()) {
      CHECK(mode_of(e.path()) == 0700);
    } else if (e.path().filename() != "received.json" && e.path().filename() != "model.txt") {
      CAPTURE(e.path());
      CHECK(mode_of(e.path()) == 0600);
    }
}

TEST_CASE("command trainer: stale run folders of dead processes are removed, live ones kept") {
  dptune_test::TempDir tmp;
  const fs::path dead = tmp.path() / "dptune-command-dead01";
  const fs::path killed = tmp.path() / "dptune-command-kill01";
  const fs::path live = tmp.path() / "dptune-command-live01";
  const fs::path other = tmp.path() / "other-command-x";
  for (const auto& dir : {dead, killed, live, other}) {
    fs::create_directories(dir);
    std::ofstream(dir / "train.csv") << "a,label\n1,0\n";
  }
  // `killed` was held by a process that died of SIGKILL; `live` is held by a running one.
  const pid_t victim = hold_lock(killed, tmp.path() / "killed.pid");
  const pid_t holder = hold_lock(live, tmp.path() / "live.pid");
  REQUIRE(kill(victim, SIGKILL) == 0);
  for (int i = 0; i < 200 && kill(victim, 0) == 0; ++i) {
    // A zombie (its parent shell gone, init slow to reap) has closed its files already.
    std::ifstream stat("/proc/" + std::to_string(victim) + "/stat");
    std::string pid_text, name, state;
    if (stat >> pid_text >> name >> state && state == "Z") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(remove_stale_run_folders(tmp.path()) == 2);
  CHECK(!fs::exists(dead));
  CHECK(!fs::exists(killed));
  CHECK(fs::exists(live / "train.csv"));
  CHECK(fs::exists(other / "train.csv"));
  kill(holder, SIGKILL);

  // A run of the trainer removes the stale folders of its temp folder before it starts, and
  // holds its own folder locked while it lives.
  dptune_test::TempDir tmp2;
  const fs::path stale = tmp2.path() / "dptune-command-stale1";
  fs::create_directories(stale);
  std::ofstream(stale / "train.csv") << "a,label\n1,0\n";
  TmpDirVariable variable(tmp2.path());
  Context context;
  const TrainedModel trained = train(make_config(params("ok")), data(), context);
  CHECK(!fs::exists(stale));
  std::vector<fs::path> runs;
  for (const auto& e : fs::directory_iterator(tmp2.path())) runs.push_back(e.path());
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].filename().string().rfind("dptune-command-", 0) == 0);
  CHECK(remove_stale_run_folders(tmp2.path()) == 0);  // locked by this process: alive
  CHECK(fs::exists(runs[0] / "train.csv"));
}

TEST_CASE("command trainer: a prediction that depends on the other rows fails the run") {
  Context context;
  const TrainedModel row_local = train(make_config(params("ok")), data(), context);
  Dataset many = data();
  many.rows = 12;
  many.features.clear();
  many.labels.clear();
  for (std::size_t i = 0; i < many.rows; ++i) {
    many.features.push_back(static_cast<double>(i) - 3.5);  // 8 of 12 positive
    many.features.push_back(1);
    many.labels.push_back(1);
  }
  CHECK(row_local.model->predict(many).values ==
        std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
  // batch_mean: class 1 iff the first feature is above the mean of the rows it was given.
  const TrainedModel batch = train(make_config(params("batch_mean")), data(), context);
  const std::string e = error_of([&] { batch.model->predict(many); });
  // Resent: rows 11, 9, 7, 6, 4, 2, 1 (1-based), first features 6.5 … -3.5, mean 8.5 / 7 ≈ 1.21
  // against the whole set's 2: row 6 (first feature 1.5) flips from 0 to 1.
  CHECK(e ==
        "command: program `/usr/bin/python3 " + std::string(dptune_test::build_paths::source_dir) +
            "/tests/command/behave.py batch_mean` (predict): its prediction of row 6 depends on "
            "the other rows it was given: 0 among all 12 rows, 1 among 7 of them.  Private "
            "scoring assumes each prediction depends only on its own row and the model (its "
            "sensitivity, e.g. 1/n for accuracy); docs/command-trainer.md, \"Row-local "
            "prediction\"");
}

TEST_CASE("command trainer: the noise is declared, sent, and checked against the answer") {
  Params without;
  for (const auto& [name, value] : params("ok"))
    if (name != "noise") without.set(name, value);
  CHECK(error_of([&] { command_schema().complete(without); }).find("noise") != std::string::npos);
  auto p = params("ok");
  p.set("noise", std::string("exact"));
  CHECK(error_of([&] { command_schema().complete(p); }).find("noise") != std::string::npos);
  Context context;
  CHECK(error_of([&] {
          train(make_config(params("wrong_noise")), data(), context);
        }).find("(train): it reports noise: secure, the pipeline declares noise: fast") !=
        std::string::npos);
  p = params("ok");
  p.set("noise", std::string("secure"));
  const TrainedModel secure = train(make_config(p), data(), context);
  CHECK(secure.model->describe().find("exact discrete noise (noise: secure)") != std::string::npos);
  const TrainedModel fast = train(make_config(params("ok")), data(), context);
  CHECK(fast.model->describe().find("floating-point noise (noise: fast, INSECURE NOISE)") !=
        std::string::npos);
}

TEST_CASE("command trainer: the model files the answer declares are checked") {
  dptune_test::TempDir dir;
  const fs::path& run = dir.path();
  fs::create_directories(run / "sub");
  std::ofstream(run / "model.npy") << "weights";
  std::ofstream(run / "sub" / "scaler.json") << "{}";
  fs::create_symlink("/etc/passwd", run / "link");
  fs::create_symlink(run / "sub", run / "linked");
  std::ofstream(dir.path().parent_path() / (dir.path().filename().string() + "-outside"))
      << "private";
  const auto files_of = [&](const std::string& answer) {
    return model_files_of(parse_json(answer), run);
  };
  const auto refused = [&](const std::string& answer) {
    return error_of([&] { files_of(answer); });
  };
  CHECK(files_of(R"({"predictions": []})").empty());
  CHECK(files_of(R"({"model_files": null})").empty());
  CHECK(files_of(R"({"model_files": ["model.npy", "sub/scaler.json"]})") ==
        std::vector<std::string>{"model.npy", "sub/scaler.json"});
  CHECK(refused(R"({"model_files": "model.npy"})") ==
        "\"model_files\" must be a list of file names in its output_dir");
  CHECK(refused(R"({"model_files": [3]})") == "\"model_files\"[0] must be a file name");
  CHECK(refused(R"({"model_files": [""]})") == "\"model_files\"[0] must be a file name");
  CHECK(refused(R"({"model_files": ["/etc/passwd"]})") ==
        "\"model_files\"[0] (/etc/passwd) must be relative to its output_dir");
  CHECK(refused(R"({"model_files": ["model.npy", "../)" + dir.path().filename().string() +
                R"(-outside"]})")
            .find("\"model_files\"[1] (../") == 0);
  CHECK(refused(R"({"model_files": ["sub/../model.npy"]})") ==
        "\"model_files\"[0] (sub/../model.npy) must not contain '..': the model's files are "
        "inside its output_dir");
  CHECK(refused(R"({"model_files": ["./model.npy"]})").find("must not contain '.'") !=
        std::string::npos);
  CHECK(refused(R"({"model_files": ["missing.bin"]})") ==
        "\"model_files\"[0] (missing.bin) does not exist in its output_dir");
  CHECK(refused(R"({"model_files": ["link"]})") ==
        "\"model_files\"[0] (link) is a symbolic link; name the file itself");
  CHECK(refused(R"({"model_files": ["linked/scaler.json"]})") ==
        "\"model_files\"[0] (linked/scaler.json) is a symbolic link; name the file itself");
  CHECK(refused(R"({"model_files": ["sub"]})") == "\"model_files\"[0] (sub) is not a regular file");
  CHECK(refused(R"({"model_files": ["model.npy", "model.npy"]})") ==
        "\"model_files\"[1] (model.npy) is named twice");
  std::string many = R"({"model_files": [)";
  for (std::size_t k = 0; k <= kMaxModelFiles; ++k) many += (k ? ", " : "") + std::string("\"m\"");
  CHECK(refused(many + "]}") == "\"model_files\" names 65 files; at most 64 are released");
  // The size cap: a sparse file one byte over 1 GiB (no disk is used).
  { std::ofstream big(run / "big.bin"); }
  fs::resize_file(run / "big.bin", kMaxModelBytes + 1);
  CHECK(refused(R"({"model_files": ["big.bin"]})") ==
        "\"model_files\" hold 1073741825 bytes; at most 1073741824 bytes (1 GiB) are released");
  fs::remove(dir.path().parent_path() / (dir.path().filename().string() + "-outside"));
}

TEST_CASE("command trainer: the model's files, released and loaded back for predict") {
  dptune_test::TempDir tmp;
  TmpDirVariable variable(tmp.path());
  const Params p = params("ok", "/nowhere/kept");
  const auto config = make_config(p);
  Context context;
  ModelFiles files;
  std::vector<double> trained_predictions;
  {
    const TrainedModel trained = train(config, data(), context);
    const auto* file_model = dynamic_cast<const FileModel*>(trained.model.get());
    REQUIRE(file_model != nullptr);
    files = file_model->model_files();
    const std::vector<fs::path> runs = run_folders(tmp.path());
    REQUIRE(runs.size() == 1);
    CHECK(files.folder == runs[0].string());
    CHECK(files.files == std::vector<std::string>{"model.txt"});
    CHECK(files.features == 2);
    CHECK(files.num_classes == 2);
    CHECK(files.trainer_params == p);
    CHECK(files.keep_folder == "/nowhere/kept");  // the host copies; the trainer never keeps
    CHECK(files.description.find("model model.txt of the external program") == 0);
    trained_predictions = trained.model->predict(data()).values;
    // The release: the host's copy of the files elsewhere.
    fs::create_directories(tmp.path() / "results" / "model");
    fs::copy_file(runs[0] / "model.txt", tmp.path() / "results" / "model" / "model.txt");
  }
  // The run folder goes with its model, keep_dir or not: nothing of the run is left.
  CHECK(run_folders(tmp.path()).empty());
  CHECK(!fs::exists("/nowhere/kept"));
  files.folder = (tmp.path() / "results" / "model").string();
  const auto loaded = load_model(config, files);
  CHECK(loaded->predict(data()).values == trained_predictions);
  // Its scratch folder goes with it too.
  const std::vector<fs::path> scratch = run_folders(tmp.path());
  CHECK(scratch.size() == 1);
  // A release whose file is gone is refused, naming it.
  fs::remove(tmp.path() / "results" / "model" / "model.txt");
  CHECK(error_of([&] { load_model(config, files); }).find("model.txt is missing") !=
        std::string::npos);
  // A program without a predict mode fails clearly.
  std::ofstream(tmp.path() / "results" / "model" / "model.txt") << "threshold 0\n";
  const auto no_predict = load_model(make_config(params("no_predict")), files);
  CHECK(error_of([&] {
          no_predict->predict(data());
        }).find("(predict) exited with code 2; its stderr ends:\nbehave.py: no predict mode") !=
        std::string::npos);
}

TEST_CASE(
    "command trainer: without model files nothing can be released, and a stray model is refused") {
  Context context;
  const TrainedModel trained = train(make_config(params("no_files")), data(), context);
  const auto* file_model = dynamic_cast<const FileModel*>(trained.model.get());
  REQUIRE(file_model != nullptr);
  CHECK(file_model->model_files().files.empty());
  CHECK(trained.model->describe().find("no \"model_files\" in its train answer: it cannot be "
                                       "released") != std::string::npos);
  CHECK(error_of([&] { train(make_config(params("stray_model")), data(), context); })
            .find("(train): \"model\" (received.json) is not one of its \"model_files\" (the run "
                  "is charged") != std::string::npos);
}
