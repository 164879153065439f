#include "command/command_trainer.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "command/process.hpp"
#include "dptune/rng.hpp"

namespace dptune::command {

namespace fs = std::filesystem;

/// Temporary run folders are $TMPDIR/dptune-command-XXXXXX.
constexpr const char* kRunFolderPrefix = "dptune-command";

namespace {

// ---- the program's files ------------------------------------------------------------------

std::string sha256_of(const fs::path& file) {
  // Cached by (path, size, mtime): the host makes one trainer per candidate, and an interpreter
  // such as python3 is megabytes.
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::uintmax_t, std::int64_t>, std::string> cache;
  struct stat st {};
  require(stat(file.c_str(), &st) == 0, "run: cannot read " + file.string());
  const auto key = std::make_tuple(
      file.string(), static_cast<std::uintmax_t>(st.st_size),
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
  std::lock_guard lock(mutex);
  if (auto found = cache.find(key); found != cache.end()) return found->second;
  require(sodium_init() >= 0, "run: libsodium failed to initialise");
  std::ifstream in(file, std::ios::binary);
  require(static_cast<bool>(in), "run: cannot read " + file.string());
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    crypto_hash_sha256_update(&state, reinterpret_cast<const unsigned char*>(buffer.data()),
                              static_cast<unsigned long long>(in.gcount()));
  }
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  std::string hex;
  static const char* digits = "0123456789abcdef";
  for (const unsigned char b : digest) {
    hex += digits[b >> 4];
    hex += digits[b & 0xF];
  }
  cache.emplace(key, hex);
  return hex;
}

bool regular_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

/// Whether a program argument names a script by its extension (python3 train.py, Rscript fit.R):
/// such an argument is a file the program must open, never an output it creates.
bool names_a_script(const fs::path& arg) {
  static const std::set<std::string> extensions{".py", ".R",  ".r",  ".jl",  ".sh", ".bash",
                                                ".pl", ".rb", ".js", ".mjs", ".lua"};
  return extensions.count(arg.extension().string()) != 0;
}

/// argv[0] as execve needs it: with a '/', relative to the pipeline's folder; otherwise searched
/// on PATH, as a shell would (but there is no shell).
fs::path resolve_executable(const std::string& name, const fs::path& base) {
  if (name.find('/') != std::string::npos) {
    const fs::path p = fs::path(name).is_relative() ? base / name : fs::path(name);
    require(regular_file(p) && access(p.c_str(), X_OK) == 0,
            "run: program " + p.lexically_normal().string() + " is not an executable file" +
                (fs::path(name).is_relative() ? " (relative to the pipeline's folder)" : ""));
    return fs::absolute(p).lexically_normal();
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
    if (regular_file(p) && access(p.c_str(), X_OK) == 0) return fs::absolute(p);
  }
  throw InvalidArgument("run: program '" + name + "' not found on PATH");
}

// ---- run folders ----------------------------------------------------------------------------

/// Creates `file` empty with mode 0600 (owner only), whatever the umask, so that what dptune
/// writes into a run folder is private even if the folder is later copied or its mode changed.
void create_private_file(const fs::path& file) {
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  require(fd >= 0, "command: cannot create " + file.string() + ": " + std::strerror(errno));
  fchmod(fd, 0600);  // an existing file keeps its mode through O_CREAT
  close(fd);
}

/// The run folders of dptune processes that are gone are removed once per parent folder and
/// process, before its first run folder there (a kill -9 leaves them holding private rows).
void remove_stale_once(const fs::path& parent) {
  static std::mutex mutex;
  static std::set<std::string> done;
  std::lock_guard lock(mutex);
  if (done.insert(parent.string()).second) remove_stale_run_folders(parent);
}

/// A run's folder: mode 0700 (mkdtemp), removed when the last model of the run goes (only the
/// released run's model files leave it, copied by the host).  A temporary one is locked (flock on
/// the folder, held open, close-on-exec) for as long as this process lives: the kernel drops the
/// lock when the process dies, however it dies, which is how the next run tells a stale folder from
/// a live one (remove_stale_run_folders).
class RunDir {
 public:
  // Nested: a scratch folder inside a run folder (the rows one predict call scores).
  enum class Kind { Temporary, Nested };

  RunDir(Kind kind, const fs::path& parent, const std::string& prefix) {
    if (kind == Kind::Temporary) remove_stale_once(parent);
    // A cleaner in another process may take a folder in the moment between mkdtemp and flock
    // (it finds it unlocked): it deletes it while holding the lock, so after our lock the folder
    // must still be the one at the path; otherwise make another.
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::string pattern = (parent / (prefix + "-XXXXXX")).string();
      if (mkdtemp(pattern.data()) == nullptr)
        throw Error("command: cannot create a run folder in " + parent.string() + ": " +
                    std::strerror(errno));
      path_ = pattern;
      if (kind != Kind::Temporary || lock_if_still_there()) return;
    }
    throw Error("command: cannot create a run folder in " + parent.string() +
                " (taken by another process's cleanup eight times)");
  }
  ~RunDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (lock_ >= 0) close(lock_);
  }
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  int lock_ = -1;

  /// Locks the new folder; false if a cleaner removed it before the lock (then it is gone).
  bool lock_if_still_there() {
    lock_ = open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock_ < 0) return false;
    while (flock(lock_, LOCK_EX) != 0 && errno == EINTR) {
    }
    struct stat held {};
    struct stat named {};
    if (fstat(lock_, &held) == 0 && lstat(path_.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino)
      return true;
    close(lock_);
    lock_ = -1;
    return false;
  }
};

void write_text(const fs::path& file, const std::string& text) {
  create_private_file(file);
  std::ofstream out(file, std::ios::binary);
  out << text;
  require(static_cast<bool>(out.flush()), "command: cannot write " + file.string());
}

/// Rows as CSV: a header of feature names, then one row per example; `labels` adds a last column.
/// `order`, when given, lists the rows to write (the row-local spot check's sample).
void write_csv(const fs::path& file, const Dataset& data, bool labels,
               const std::vector<std::size_t>* order = nullptr) {
  create_private_file(file);
  std::ofstream out(file, std::ios::binary);
  for (std::size_t j = 0; j < data.cols; ++j)
    out << (j ? "," : "")
        << (data.feature_names.size() == data.cols ? data.feature_names[j]
                                                   : "x" + std::to_string(j));
  if (labels) out << (data.cols ? "," : "") << "label";
  out << "\n";
  char buffer[32];
  const std::size_t count = order ? order->size() : data.rows;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t i = order ? (*order)[k] : k;
    for (std::size_t j = 0; j < data.cols; ++j) {
      // Float rows (the host's storage, ABI 2.7) print exactly as the doubles they widen to.
      const double x = data.float_rows.empty() ? data.row(i)[j] : data.float_rows.row(i)[j];
      std::snprintf(buffer, sizeof buffer, "%.17g", x);
      out << (j ? "," : "") << buffer;
    }
    if (labels) {
      std::snprintf(buffer, sizeof buffer, "%.17g", data.labels[i]);
      out << (data.cols ? "," : "") << buffer;
    }
    out << "\n";
  }
  require(static_cast<bool>(out.flush()), "command: cannot write " + file.string());
}

std::string params_json(const Params& params) {
  std::string out = "{";
  for (const auto& [name, value] : params) {
    out += (out.size() > 1 ? ", " : "") + json_quote(name) + ": ";
    if (const auto* d = std::get_if<double>(&value))
      out += json_number(*d);
    else if (const auto* i = std::get_if<std::int64_t>(&value))
      out += std::to_string(*i);
    else if (const auto* b = std::get_if<bool>(&value))
      out += *b ? "true" : "false";
    else
      out += json_quote(std::get<std::string>(value));
  }
  return out + "}";
}

std::string join_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

/// A request as JSON with `seed` (a "seed" member) or without it (the copy on disk).
using RequestText = std::function<std::string(const std::string& seed_member)>;

/// A released model read back knows no seed (it is never stored): its requests say null.
std::string seed_member(std::optional<std::uint64_t> seed) {
  return "\"seed\": " + (seed ? std::to_string(*seed) : std::string("null")) + ", ";
}

/// Runs one action; returns the program's answer or throws Error with the status and stderr.
/// The program reads the request, seed included, from a pipe on its standard input; the copy in
/// the run folder (DPTUNE_REQUEST) has no seed: the noise seed never reaches a disk
/// (docs/command-trainer.md, "Run folders").
Json run_action(const Config& config, const std::string& action, const fs::path& dir,
                const RequestText& request, std::optional<std::uint64_t> seed,
                std::vector<std::string> environment) {
  const fs::path request_file = dir / (action + "-request.json");
  write_text(request_file, request("") + "\n");
  ProcessSpec spec;
  spec.executable = config.executable;
  spec.argv = config.argv;
  spec.working_directory = config.pipeline_dir;
  spec.stdin_text = request(seed_member(seed)) + "\n";
  spec.timeout_seconds = config.timeout;
  environment.push_back("DPTUNE_PROTOCOL=" + std::to_string(kProtocolVersion));
  environment.push_back("DPTUNE_ACTION=" + action);
  environment.push_back("DPTUNE_REQUEST=" + request_file.string());
  environment.push_back("DPTUNE_OUTPUT_DIR=" + dir.string());
  spec.extra_environment = std::move(environment);
  const ProcessResult r = run_process(spec);
  const auto failure = [&](const std::string& what) {
    std::string message =
        "command: program `" + join_argv(config.argv) + "` (" + action + ") " + what;
    if (!r.err.empty())
      message += "; its stderr ends:\n" + r.err;
    else if (r.started)
      message += "; its stderr was empty";
    return Error(message);
  };
  if (!r.succeeded()) throw failure(r.status());
  if (r.stdout_truncated) throw failure("wrote more standard output than dptune reads");
  try {
    return answer_of(r.out);
  } catch (const InvalidArgument& e) {
    throw failure(std::string("gave no valid answer: ") + e.what());
  }
}

// ---- the model ------------------------------------------------------------------------------

/// Rows the row-local spot check sends again, and how far its probabilities may differ (a BLAS
/// may sum a row's products in another order when the batch is smaller).
constexpr std::size_t kRowLocalSample = 7;
constexpr double kProbabilityTolerance = 1e-6;

/// What a run produced: its folder and the model file the program named.  predict() runs the
/// program again with action "predict" on the rows to score; the utility is dptune's oracle on
/// the predictions, so every tuner knows its sensitivity (e.g. 1/n for accuracy).
class CommandModel final : public Model, public FileModel {
 public:
  /// `files`: the model files the program declared, relative to `base` (the run folder, or the
  /// release's copy), the one `model` names first; empty when it declared none.  A `released` model
  /// (read back for `dptune predict`) knows no training seed and is not spot-checked: its
  /// predictions score nothing private.
  CommandModel(std::shared_ptr<const Config> config, std::shared_ptr<RunDir> dir, std::string model,
               fs::path base, std::vector<std::string> files, std::optional<std::uint64_t> seed,
               std::size_t features, std::size_t classes, bool released = false)
      : config_(std::move(config)),
        dir_(std::move(dir)),
        model_(std::move(model)),
        base_(std::move(base)),
        files_(std::move(files)),
        seed_(seed),
        features_(features),
        classes_(classes),
        checked_(released) {}

  Predictions predict(const Dataset& data) const override {
    Predictions all = run_predict(data, nullptr);
    bool first = false;
    {
      std::lock_guard lock(mutex_);
      first = !checked_ && data.rows >= 2;
      checked_ = checked_ || first;
    }
    if (first) check_row_local(data, all);
    return all;
  }

  std::string describe() const override {
    std::string names;
    for (const auto& f : files_) names += (names.empty() ? "" : ", ") + f;
    const std::string what =
        files_.empty() ? "a model the program declared no files of (no \"model_files\" in its "
                         "train answer: it cannot be released)"
                       : "model " + names;
    return what + " of the external program `" + join_argv(config_->argv) + "`; " +
           config_->trust_statement();
  }

  /// The model as its files (docs/command-trainer.md, "The release"): the host copies them out
  /// for the released run only.  No files when the program declared none.
  ModelFiles model_files() const override {
    ModelFiles out;
    if (files_.empty()) return out;
    out.folder = base_.string();
    out.files = files_;
    out.description = describe();
    out.features = features_;
    out.num_classes = classes_;
    out.trainer_params = config_->params;
    out.keep_folder = config_->keep_dir;
    return out;
  }

 private:
  std::shared_ptr<const Config> config_;
  std::shared_ptr<RunDir> dir_;
  std::string model_;
  fs::path base_;
  std::vector<std::string> files_;
  std::optional<std::uint64_t> seed_;
  std::size_t features_;
  std::size_t classes_;
  mutable std::mutex mutex_;
  mutable bool checked_ = false;

  /// The request's "model_files": the model's files as absolute paths.
  std::string files_json() const {
    std::string out = "[";
    for (const auto& f : files_)
      out += (out.size() > 1 ? ", " : "") + json_quote((base_ / f).string());
    return out + "]";
  }

  /// The program's predictions for `data`'s rows, or for the rows `order` lists, in that order.
  Predictions run_predict(const Dataset& data, const std::vector<std::size_t>* order) const {
    RunDir scratch(RunDir::Kind::Nested, dir_->path(), "predict");
    const fs::path rows = scratch.path() / "rows.csv";
    write_csv(rows, data, false, order);
    const std::size_t count = order ? order->size() : data.rows;
    const RequestText request = [&](const std::string& seed) {
      return "{\"protocol\": " + std::to_string(kProtocolVersion) +
             ", \"action\": \"predict\", \"model\": " + json_quote(model_) +
             ", \"model_files\": " + files_json() +
             ", \"params\": " + params_json(config_->hyperparameters) + ", " + seed +
             "\"noise\": " + json_quote(config_->noise) +
             ", \"data\": {\"rows_csv\": " + json_quote(rows.string()) +
             ", \"rows\": " + std::to_string(count) +
             ", \"features\": " + std::to_string(data.cols) +
             ", \"classes\": " + std::to_string(classes_) +
             "}, \"output_dir\": " + json_quote(scratch.path().string()) + "}";
    };
    const Json answer = run_action(*config_, "predict", scratch.path(), request, seed_,
                                   {"DPTUNE_DATA=" + rows.string(), "DPTUNE_MODEL=" + model_});
    return predictions_of(answer, count);
  }

  /// The row-local spot check (docs/command-trainer.md, "Row-local prediction"): private
  /// scoring's sensitivity (1/n for accuracy) holds only if a row's prediction depends on that
  /// row and the model alone.  A second start of the program predicts a few of the rows, spread
  /// over the set and in reverse order, without the others; a row-local, deterministic program
  /// answers exactly as before.  Which rows are resent depends only on the public row count.
  void check_row_local(const Dataset& data, const Predictions& all) const {
    const std::size_t sample = std::min<std::size_t>(kRowLocalSample, data.rows - 1);
    std::vector<std::size_t> order;
    for (std::size_t k = sample; k-- > 0;) order.push_back(k * data.rows / sample);
    const Predictions some = run_predict(data, &order);
    const std::size_t classes = all.probabilities.empty() ? 0 : classes_;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      bool same = some.values[k] == all.values[i];
      if (classes > 0 && some.probabilities.size() == order.size() * classes)
        for (std::size_t c = 0; c < classes; ++c)
          same = same && std::abs(some.probabilities[k * classes + c] -
                                  all.probabilities[i * classes + c]) <= kProbabilityTolerance;
      if (!same)
        throw Error("command: program `" + join_argv(config_->argv) + "` (predict): its " +
                    "prediction of row " + std::to_string(i + 1) + " depends on the other rows " +
                    "it was given: " + json_number(all.values[i]) + " among all " +
                    std::to_string(data.rows) + " rows, " + json_number(some.values[k]) +
                    " among " + std::to_string(order.size()) + " of them.  Private scoring " +
                    "assumes each prediction depends only on its own row and the model (its " +
                    "sensitivity, e.g. 1/n for accuracy); docs/command-trainer.md, \"Row-local " +
                    "prediction\"");
    }
  }

  Predictions predictions_of(const Json& answer, std::size_t rows) const {
    const auto bad = [&](const std::string& what) {
      return Error("command: program `" + join_argv(config_->argv) + "` (predict): " + what);
    };
    const Json* values = answer.find("predictions");
    if (!values || values->type != Json::Type::Array)
      throw bad("its answer has no \"predictions\" array");
    if (values->items.size() != rows)
      throw bad("it predicted " + std::to_string(values->items.size()) + " rows, expected " +
                std::to_string(rows));
    Predictions p;
    p.num_classes = classes_;
    for (const auto& v : values->items) {
      if (v.type != Json::Type::Number || !std::isfinite(v.number))
        throw bad("a prediction is not a finite number");
      if (classes_ > 0 && !(v.number >= 0 && v.number < static_cast<double>(classes_) &&
                            v.number == std::floor(v.number)))
        throw bad("prediction " + json_number(v.number) + " is not a class index in [0, " +
                  std::to_string(classes_) + ")");
      p.values.push_back(v.number);
    }
    if (const Json* probs = answer.find("probabilities");
        probs && probs->type != Json::Type::Null) {
      if (probs->type != Json::Type::Array || probs->items.size() != rows)
        throw bad("\"probabilities\" must be an array of one row per prediction");
      for (const auto& row : probs->items) {
        if (row.type != Json::Type::Array || row.items.size() != classes_)
          throw bad("each row of \"probabilities\" must hold " + std::to_string(classes_) +
                    " numbers");
        for (const auto& x : row.items) {
          if (x.type != Json::Type::Number || !(x.number >= 0 && x.number <= 1))
            throw bad("a probability is not a number in [0, 1]");
          p.probabilities.push_back(x.number);
        }
      }
    }
    return p;
  }
};

}  // namespace

// ---- configuration --------------------------------------------------------------------------

const std::vector<std::string>& vocabulary() {
  static const std::vector<std::string> names{"learning_rate",
                                              "noise_multiplier",
                                              "clip_norm",
                                              "momentum",
                                              "lr_decay",
                                              "l2",
                                              "dropout",
                                              "x1",
                                              "x2",
                                              "x3",
                                              "epochs",
                                              "steps",
                                              "batch_size",
                                              "hidden",
                                              "k1",
                                              "k2",
                                              "model",
                                              "variant"};
  return names;
}

const std::set<std::string>& public_size_names() {
  static const std::set<std::string> names{"n"};
  return names;
}

ParamSchema command_schema() {
  ParamSchema s;
  s.add_string("run",
               "the program and its arguments, e.g. \"python3 train.py\": words split at blanks, "
               "'…' or \"…\" group; no shell.  A relative program or file argument is relative to "
               "the pipeline's folder");
  s.add_string("event",
               "the event ONE run does, as `dptune privacy` reads it, over ${candidate} values and "
               "${n} (training rows), e.g. \"self_composed: {count: ${steps}, event: "
               "{poisson_sampled: {rate: ${batch_size}/${n}, event: {gaussian: {noise_multiplier: "
               "${noise_multiplier}}}}}}\"");
  s.add_string("noise",
               "the noise the program draws: fast (floating-point, e.g. numpy's normal: labelled "
               "INSECURE NOISE in every report, Mironov 2012) or secure (exact discrete noise on "
               "a power-of-two grid, as dptune's own noise: secure); required")
      .one_of({"fast", "secure"});
  s.add_float("timeout",
              "seconds one start of the program may take (then its process group is "
              "killed and the run fails)")
      .min_exclusive(0)
      .default_to(600.0);
  s.add_string("pipeline_dir",
               "the pipeline's folder (filled in by dptune): relative paths of `run` resolve "
               "against it, and the program runs in it")
      .default_to(std::string());
  s.add_string("keep_dir",
               "copy the released run's folder (its request, training rows and model) to "
               "KEEP_DIR/released-run; SENSITIVE: it holds that run's private training rows.  "
               "No other run's folder is ever kept")
      .default_to(std::string());
  // The hyperparameters passed through to the program: a schema names its parameters, so the
  // command trainer offers a fixed vocabulary (docs/command-trainer.md).
  s.add_float("learning_rate", "passed to the program").default_to(0.1);
  s.add_float("noise_multiplier", "passed to the program").min(0).default_to(1.0);
  s.add_float("clip_norm", "passed to the program").min_exclusive(0).default_to(1.0);
  s.add_float("momentum", "passed to the program").default_to(0.0);
  s.add_float("lr_decay", "passed to the program").default_to(0.0);
  s.add_float("l2", "passed to the program").default_to(0.0);
  s.add_float("dropout", "passed to the program").default_to(0.0);
  for (const char* name : {"x1", "x2", "x3"})
    s.add_float(name, "a free float passed to the program").default_to(0.0);
  s.add_int("epochs", "passed to the program").min(0).default_to(std::int64_t{1});
  s.add_int("steps", "passed to the program").min(0).default_to(std::int64_t{100});
  s.add_int("batch_size", "passed to the program").min(1).default_to(std::int64_t{64});
  s.add_int("hidden", "passed to the program").min(0).default_to(std::int64_t{0});
  for (const char* name : {"k1", "k2"})
    s.add_int(name, "a free int passed to the program").default_to(std::int64_t{0});
  s.add_string("model", "passed to the program").default_to(std::string());
  s.add_string("variant", "a free string passed to the program").default_to(std::string());
  return s;
}

std::string Config::trust_statement() const {
  std::string out = "privacy depends on the external program honouring the declared event " +
                    event.text() + " with " +
                    (noise == "secure" ? "exact discrete noise (noise: secure)"
                                       : "floating-point noise (noise: fast, INSECURE NOISE)") +
                    "; program: " + join_argv(argv) + " (";
  for (std::size_t i = 0; i < files.size(); ++i)
    out += (i ? ", " : "") + files[i].path + " sha256 " + files[i].sha256;
  return out + ")";
}

std::shared_ptr<const Config> make_config(const Params& p) {
  auto config = std::make_shared<Config>(Config{{},
                                                {},
                                                {},
                                                EventTemplate(p.get_string("event")),
                                                p.get_double("timeout"),
                                                p.get_string("pipeline_dir"),
                                                p.get_string("keep_dir"),
                                                {},
                                                {},
                                                p.get_string("noise"),
                                                p});
  const fs::path base =
      config->pipeline_dir.empty() ? fs::current_path() : fs::path(config->pipeline_dir);
  config->argv = split_argv(p.get_string("run"));
  config->executable = resolve_executable(config->argv[0], base).string();
  config->files.push_back({config->executable, sha256_of(config->executable)});
  for (std::size_t i = 1; i < config->argv.size(); ++i) {
    const fs::path arg(config->argv[i]);
    if (config->argv[i].empty() || config->argv[i][0] == '-') continue;
    const fs::path file = arg.is_relative() ? base / arg : arg;
    // A script the interpreter would fail to open is found now, by `dptune validate`, not after
    // a ledger has been charged for the run.
    require(regular_file(file) || !names_a_script(arg),
            "run: script '" + config->argv[i] + "' does not exist" +
                (arg.is_relative() ? " (relative to the pipeline's folder)" : ""));
    if (!regular_file(file)) continue;
    config->argv[i] = fs::absolute(file).lexically_normal().string();
    config->files.push_back({config->argv[i], sha256_of(config->argv[i])});
  }
  for (const auto& name : vocabulary()) {
    const Value& v = p.at(name);
    config->hyperparameters.set(name, v);
    if (const auto* d = std::get_if<double>(&v)) config->numbers[name] = *d;
    if (const auto* i = std::get_if<std::int64_t>(&v))
      config->numbers[name] = static_cast<double>(*i);
  }
  std::set<std::string> known = public_size_names();
  for (const auto& [name, value] : config->numbers) known.insert(name);
  try {
    config->event.check_variables(known);
    // Kinds and fields now; values (a rate above 1, a non-integer count) depend on the run's
    // scope (${n}) and are checked when a run's event is made, before anything runs.
    config->event.check_structure();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("event: ") + e.what());
  }
  return config;
}

DpEvent declared_event(const Config& config, std::size_t train_rows) {
  std::map<std::string, double> values = config.numbers;
  values["n"] = static_cast<double>(train_rows);
  return config.event.instantiate(values);
}

std::size_t remove_stale_run_folders(const fs::path& parent) {
  std::size_t removed = 0;
  std::error_code ec;
  const std::string prefix = std::string(kRunFolderPrefix) + "-";
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const fs::path& path = entry.path();
    if (path.filename().string().rfind(prefix, 0) != 0) continue;
    struct stat named {};
    if (lstat(path.c_str(), &named) != 0 || !S_ISDIR(named.st_mode) || named.st_uid != geteuid())
      continue;
    const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat held {};
    // Locked: its process is alive.  Otherwise remove it while holding the lock, if the path
    // still names the folder opened.
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &held) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      std::error_code removing;
      fs::remove_all(path, removing);
      if (!removing) ++removed;
    }
    close(fd);
  }
  return removed;
}

Json answer_of(const std::string& out) {
  std::size_t end = out.size();
  while (end > 0 && std::isspace(static_cast<unsigned char>(out[end - 1]))) --end;
  if (end == 0) throw InvalidArgument("its standard output is empty (expected one JSON line)");
  const std::size_t start = out.rfind('\n', end - 1);
  const std::string line = out.substr(start == std::string::npos ? 0 : start + 1,
                                      end - (start == std::string::npos ? 0 : start + 1));
  Json answer;
  try {
    answer = parse_json(line);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("its last line is not JSON (" + std::string(e.what()) +
                          "): " + line.substr(0, 200));
  }
  if (answer.type != Json::Type::Object)
    throw InvalidArgument("its last line is not a JSON object: " + line.substr(0, 200));
  return answer;
}

namespace {

/// Checks the train answer's optional fields against what dptune declared: the event the program
/// ran, the noise it drew, its utility's range.  Throws Error naming the program.
void check_train_answer(const Config& config, const Json& answer, bool private_run,
                        const DpEvent& declared) {
  const auto bad = [&](const std::string& what) {
    return Error("command: program `" + join_argv(config.argv) + "` (train): " + what +
                 (private_run ? " (the run is charged: its privacy is spent)" : ""));
  };
  if (const Json* e = answer.find("event"); e && e->type != Json::Type::Null && private_run) {
    if (e->type != Json::Type::String) throw bad("\"event\" must be a string");
    DpEvent reported;
    try {
      reported = EventTemplate(e->text).instantiate({});
    } catch (const InvalidArgument& error) {
      throw bad(std::string("its reported event is not an event: ") + error.what());
    }
    if (!(reported == declared))
      throw bad("it reports the event " + reported.to_string() +
                ", which differs from the declared " + declared.to_string() +
                "; dptune accounts only for the declared event");
  }
  if (const Json* noise = answer.find("noise"); noise && noise->type != Json::Type::Null) {
    if (noise->type != Json::Type::String) throw bad("\"noise\" must be \"fast\" or \"secure\"");
    if (noise->text != config.noise)
      throw bad("it reports noise: " + noise->text + ", the pipeline declares noise: " +
                config.noise + "; the report labels the noise the pipeline declares");
  }
  if (const Json* u = answer.find("utility"); u && u->type != Json::Type::Null)
    if (u->type != Json::Type::Number || !(u->number >= 0 && u->number <= 1))
      throw bad("\"utility\" must be a number in [0, 1]");
}

}  // namespace

TrainedModel train(const std::shared_ptr<const Config>& config, const Dataset& data,
                   TrainingContext& context) {
  const bool private_run = context.private_run();
  const DpEvent declared =
      private_run ? declared_event(*config, data.rows) : DpEvent::non_private();
  const std::uint64_t seed = context.rng().next_u64() >> 11;  // < 2^53: exact in any JSON reader
  // Every run folder is temporary: only the released run's model files leave it (copied by the
  // host), and keep_dir receives the released run's folder alone, so nothing kept depends on the
  // number of runs (repetition's secret K, Papernot & Steinke 2022).
  auto dir = std::make_shared<RunDir>(RunDir::Kind::Temporary, fs::temp_directory_path(),
                                      kRunFolderPrefix);
  const fs::path train_csv = dir->path() / "train.csv";
  write_csv(train_csv, data, true);
  const RequestText request = [&](const std::string& seed_text) {
    return "{\"protocol\": " + std::to_string(kProtocolVersion) +
           ", \"action\": \"train\", \"private\": " + (private_run ? "true" : "false") +
           ", \"params\": " + params_json(config->hyperparameters) + ", " + seed_text +
           "\"noise\": " + json_quote(config->noise) +
           ", \"data\": {\"train_csv\": " + json_quote(train_csv.string()) +
           ", \"name\": " + json_quote(data.name) + ", \"rows\": " + std::to_string(data.rows) +
           ", \"features\": " + std::to_string(data.cols) +
           ", \"classes\": " + std::to_string(data.num_classes) +
           "}, \"sizes\": {\"n\": " + std::to_string(data.rows) +
           "}, \"event\": " + (private_run ? json_quote(declared.to_string()) : "null") +
           ", \"delta\": " + json_number(context.delta()) +
           ", \"output_dir\": " + json_quote(dir->path().string()) + "}";
  };
  std::vector<std::string> environment{
      "DPTUNE_DATA=" + train_csv.string(), "DPTUNE_SEED=" + std::to_string(seed),
      "DPTUNE_NOISE=" + config->noise, std::string("DPTUNE_PRIVATE=") + (private_run ? "1" : "0")};
  for (const auto& [name, value] : config->hyperparameters) {
    std::string upper = name;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    environment.push_back("DPTUNE_PARAM_" + upper + "=" + to_string(value));
  }
  const Json answer = run_action(*config, "train", dir->path(), request, seed, environment);

  check_train_answer(*config, answer, private_run, declared);
  const auto bad = [&](const std::string& what) {
    return Error("command: program `" + join_argv(config->argv) + "` (train): " + what +
                 (private_run ? " (the run is charged: its privacy is spent)" : ""));
  };
  std::vector<std::string> files;
  try {
    files = model_files_of(answer, dir->path());
  } catch (const InvalidArgument& e) {
    throw bad(e.what());
  }
  std::string model = files.empty() ? dir->path().string() : (dir->path() / files[0]).string();
  if (const Json* m = answer.find("model"); m && m->type != Json::Type::Null) {
    if (m->type != Json::Type::String) throw bad("\"model\" must be a path");
    const fs::path path(m->text);
    model = (path.is_relative() ? dir->path() / path : path).lexically_normal().string();
    // The file `model` names goes first: a release read back hands the first file as "model".
    const auto named = std::find_if(files.begin(), files.end(), [&](const std::string& f) {
      return (dir->path() / f).lexically_normal().string() == model;
    });
    if (!files.empty() && named == files.end())
      throw bad("\"model\" (" + m->text + ") is not one of its \"model_files\"");
    if (named != files.end()) std::rotate(files.begin(), named, named + 1);
  }
  const fs::path base = dir->path();
  return {std::make_shared<CommandModel>(config, std::move(dir), model, base, std::move(files),
                                         seed, data.cols, data.num_classes),
          declared};
}

std::shared_ptr<const Model> load_model(const std::shared_ptr<const Config>& config,
                                        const ModelFiles& released) {
  require(!released.files.empty(), "command: the released model names no files");
  const fs::path base(released.folder);
  for (const auto& f : released.files)
    require(regular_file(base / f), "command: the released model's file " + (base / f).string() +
                                        " is missing (keep the model's files beside model.json)");
  // A scratch folder for the rows to predict: temporary and private like a run folder.
  auto scratch = std::make_shared<RunDir>(RunDir::Kind::Temporary, fs::temp_directory_path(),
                                          kRunFolderPrefix);
  return std::make_shared<CommandModel>(
      config, std::move(scratch), (base / released.files[0]).string(), base, released.files,
      std::nullopt, released.features, released.num_classes, true);
}

std::vector<std::string> model_files_of(const Json& answer, const fs::path& dir) {
  const Json* list = answer.find("model_files");
  if (!list || list->type == Json::Type::Null) return {};
  if (list->type != Json::Type::Array)
    throw InvalidArgument("\"model_files\" must be a list of file names in its output_dir");
  if (list->items.size() > kMaxModelFiles)
    throw InvalidArgument("\"model_files\" names " + std::to_string(list->items.size()) +
                          " files; at most " + std::to_string(kMaxModelFiles) + " are released");
  std::vector<std::string> names;
  std::uintmax_t total = 0;
  for (std::size_t k = 0; k < list->items.size(); ++k) {
    const Json& item = list->items[k];
    const std::string at = "\"model_files\"[" + std::to_string(k) + "]";
    if (item.type != Json::Type::String || item.text.empty())
      throw InvalidArgument(at + " must be a file name");
    const fs::path name(item.text);
    // Inside the run folder by construction: relative, no "..", and every component a real
    // folder or file (lstat, no links), so that the release copies what the run folder holds.
    if (name.is_absolute() || item.text.find('\0') != std::string::npos)
      throw InvalidArgument(at + " (" + item.text + ") must be relative to its output_dir");
    fs::path walked = dir;
    for (const auto& part : name) {
      if (part == ".." || part == ".")
        throw InvalidArgument(at + " (" + item.text + ") must not contain '" + part.string() +
                              "': the model's files are inside its output_dir");
      walked /= part;
      struct stat st {};
      if (lstat(walked.c_str(), &st) != 0)
        throw InvalidArgument(at + " (" + item.text + ") does not exist in its output_dir");
      if (S_ISLNK(st.st_mode))
        throw InvalidArgument(at + " (" + item.text + ") is a symbolic link; name the file itself");
    }
    struct stat file {};
    if (lstat((dir / name).c_str(), &file) != 0 || !S_ISREG(file.st_mode))
      throw InvalidArgument(at + " (" + item.text + ") is not a regular file");
    total += static_cast<std::uintmax_t>(file.st_size);
    const std::string normal = name.lexically_normal().string();
    if (std::find(names.begin(), names.end(), normal) != names.end())
      throw InvalidArgument(at + " (" + item.text + ") is named twice");
    names.push_back(normal);
  }
  if (total > kMaxModelBytes)
    throw InvalidArgument("\"model_files\" hold " + std::to_string(total) + " bytes; at most " +
                          std::to_string(kMaxModelBytes) + " bytes (1 GiB) are released");
  return names;
}

}  // namespace dptune::command
