#include "study/study.hpp"

#include <unistd.h>

#include <sodium.h>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>
#include <sstream>

#include "base/output_files.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/model_file.hpp"

namespace dptune::host {

namespace fs = std::filesystem;

// ---- encoding of stored values ------------------------------------------------------------------

namespace {

// Doubles and sizes are stored as raw bytes: exact, and the store is read back only on the machine
// that wrote it (the study is resumed where it ran).
class Writer {
 public:
  void u64(std::uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void f64(double v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes_ += s;
  }
  void doubles(const std::vector<double>& v) {
    u64(v.size());
    for (double x : v) f64(x);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  std::uint64_t u64() {
    std::uint64_t v;
    take(&v, sizeof v);
    return v;
  }
  double f64() {
    double v;
    take(&v, sizeof v);
    return v;
  }
  std::string str() {
    const auto n = u64();
    if (n > bytes_.size() - at_) throw dptune::Error("study.db: a stored value is truncated");
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::vector<double> doubles() {
    const auto n = u64();
    if (n > (bytes_.size() - at_) / 8) throw dptune::Error("study.db: a stored value is truncated");
    std::vector<double> v(n);
    for (auto& x : v) x = f64();
    return v;
  }

 private:
  void take(void* out, std::size_t n) {
    if (n > bytes_.size() - at_) throw dptune::Error("study.db: a stored value is truncated");
    std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

/// Replays a stream's recorded words, then draws fresh ones and hands them to the study.
class RecordingRandom final : public dptune::RandomBitGenerator {
 public:
  RecordingRandom(Study& study, std::uint64_t stream, std::vector<std::uint64_t> replay,
                  std::unique_ptr<dptune::RandomBitGenerator> fresh)
      : study_(study), stream_(stream), replay_(std::move(replay)), fresh_(std::move(fresh)) {}
  std::uint64_t next_u64() override {
    if (next_ < replay_.size()) return replay_[next_++];
    const std::uint64_t word = fresh_->next_u64();
    study_.append_word(stream_, next_++, word);
    return word;
  }
  bool cryptographically_secure() const override { return fresh_->cryptographically_secure(); }
  std::string description() const override { return fresh_->description(); }

 private:
  Study& study_;
  std::uint64_t stream_;
  std::vector<std::uint64_t> replay_;
  std::unique_ptr<dptune::RandomBitGenerator> fresh_;
  std::uint64_t next_ = 0;
};

std::string random_id() {
  unsigned char bytes[16];
  randombytes_buf(bytes, sizeof bytes);
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id += hex[b >> 4];
    id += hex[b & 15];
  }
  return id;
}

}  // namespace

std::string encode_model(const dptune::ModelExport& m) {
  Writer w;
  w.str(m.kind);
  w.str(m.description);
  w.u64(m.features);
  w.u64(m.num_classes);
  w.str(m.input_map);
  w.str(m.output);
  w.u64(m.layers.size());
  for (const auto& l : m.layers) {
    w.u64(l.inputs);
    w.u64(l.outputs);
    w.doubles(l.weights);
    w.doubles(l.bias);
    w.str(l.activation);
  }
  return w.bytes();
}

dptune::ModelExport decode_model(const std::string& bytes) {
  Reader r(bytes);
  dptune::ModelExport m;
  m.kind = r.str();
  m.description = r.str();
  m.features = r.u64();
  m.num_classes = r.u64();
  m.input_map = r.str();
  m.output = r.str();
  m.layers.resize(r.u64());
  for (auto& l : m.layers) {
    l.inputs = r.u64();
    l.outputs = r.u64();
    l.weights = r.doubles();
    l.bias = r.doubles();
    l.activation = r.str();
  }
  return m;
}

namespace {
class StoredModel final : public dptune::Model {
 public:
  explicit StoredModel(dptune::ModelExport model) { exported_.model = std::move(model); }
  dptune::Predictions predict(const dptune::Dataset& data) const override {
    return predict_exported(exported_, data);
  }
  std::string describe() const override { return exported_.model.description; }
  std::optional<dptune::ModelExport> export_model() const override { return exported_.model; }

 private:
  ExportedModel exported_;
};
}  // namespace

std::shared_ptr<const dptune::Model> model_from_export(dptune::ModelExport model) {
  return std::make_shared<StoredModel>(std::move(model));
}

std::string request_key(const dptune::EvaluationRequest& request) {
  return request.candidate.to_string() + " | " + request.scope.to_string() + " | " +
         (request.private_run ? "private" : "non-private") +
         " | R=" + std::to_string(request.repetitions) + (request.keep_output ? " | keep" : "");
}

// ---- the study ----------------------------------------------------------------------------------

bool Study::exists_in(const fs::path& dir) { return fs::exists(file_in(dir)); }

void Study::remove_in(const fs::path& dir) {
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(fs::path(file_in(dir).string() + suffix));
  fs::remove_all(models_in(dir));
}

// Not power-safe per commit (an fsync per evaluation tripled the time of a 900-evaluation grid):
// a crash of the process keeps every commit; a power loss may drop a suffix of them, which only
// loses work — an evaluation is committed after the random words it used, so a kept evaluation
// never outlives its words.  Study::sync makes everything durable before a report is written.
Study::Study(const fs::path& dir, bool resume) : dir_(dir), db_(file_in(dir), !resume, false) {
  db_.exec(
      "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS evaluations (batch INTEGER NOT NULL, idx INTEGER NOT NULL,"
      " request TEXT NOT NULL, utilities BLOB NOT NULL, seconds REAL NOT NULL, event TEXT NOT NULL,"
      " epsilon REAL, model BLOB, output BLOB, finished TEXT NOT NULL, PRIMARY KEY (batch, idx));"
      "CREATE TABLE IF NOT EXISTS random_words (stream INTEGER NOT NULL, seq INTEGER NOT NULL,"
      " word INTEGER NOT NULL, PRIMARY KEY (stream, seq));"
      "CREATE TABLE IF NOT EXISTS failures (batch INTEGER NOT NULL, idx INTEGER NOT NULL,"
      " request TEXT NOT NULL, message TEXT NOT NULL, failed TEXT NOT NULL,"
      " PRIMARY KEY (batch));");
}

void Study::set(const std::string& key, const std::string& value) {
  std::lock_guard lock(mutex_);
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")
      .bind(1, key)
      .bind(2, value)
      .run();
  tx.commit();
}

std::optional<std::string> Study::get(const std::string& key) const {
  std::lock_guard lock(mutex_);
  SqliteStatement s(db_, "SELECT value FROM meta WHERE key = ?");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  return s.text_at(0);
}

void Study::begin(const std::string& resolved_pipeline, const std::string& tuner,
                  const std::string& randomness) {
  if (const auto stored = get("pipeline")) {
    if (*stored != resolved_pipeline)
      throw dptune::ConfigError(
          file_in(fs::path(db_.file()).parent_path()).string() +
          ": the pipeline differs from the one this study started with (see `dptune study show`); "
          "--resume continues a study only with the same pipeline, seed and overrides; use "
          "--overwrite to start a new study (a private study's ledger charge is kept)");
    set("status", "running");
    set("resumed_at", now_utc());
    return;
  }
  std::lock_guard lock(mutex_);
  SqliteTransaction tx(db_);
  const std::pair<const char*, std::string> rows[] = {
      {"study_id", random_id()},  {"pipeline", resolved_pipeline}, {"tuner", tuner},
      {"randomness", randomness}, {"status", "running"},           {"started_at", now_utc()}};
  for (const auto& [key, value] : rows) {
    SqliteStatement(db_, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")
        .bind(1, std::string(key))
        .bind(2, value)
        .run();
  }
  tx.commit();
}

void Study::write_pending_words() {
  for (const auto& [stream, seq, word] : pending_words_) {
    SqliteStatement(db_, "INSERT INTO random_words (stream, seq, word) VALUES (?, ?, ?)")
        .bind(1, static_cast<std::int64_t>(stream))
        .bind(2, static_cast<std::int64_t>(seq))
        .bind(3, static_cast<std::int64_t>(word))
        .run();
  }
}

void Study::flush() {
  std::lock_guard lock(mutex_);
  if (pending_words_.empty()) return;
  SqliteTransaction tx(db_);
  write_pending_words();
  tx.commit();
  pending_words_.clear();
}

void Study::sync() {
  flush();
  std::lock_guard lock(mutex_);
  db_.exec("PRAGMA wal_checkpoint(FULL)");
}

void Study::set_progress(std::size_t done, std::size_t total) {
  set("progress", std::to_string(done) + "/" + std::to_string(total));
}

void Study::before_batch(std::uint64_t) {
  // Every word drawn so far may shape the requests of this batch: durable before any run starts.
  flush();
  check_interrupt();
}

bool Study::recall(std::uint64_t batch, std::size_t index, dptune::Evaluation& into) {
  std::lock_guard lock(mutex_);
  SqliteStatement s(db_,
                    "SELECT request, utilities, seconds, model, output FROM evaluations"
                    " WHERE batch = ? AND idx = ?");
  s.bind(1, static_cast<std::int64_t>(batch)).bind(2, static_cast<std::int64_t>(index));
  if (!s.step()) return false;
  const std::string key = request_key(into.request);
  if (s.text_at(0) != key)
    throw dptune::Error("study.db: evaluation " + std::to_string(index + 1) + " of batch " +
                        std::to_string(batch) + " was stored for the request '" + s.text_at(0) +
                        "', but the resumed tuner asks for '" + key +
                        "': the tuner is not deterministic given its random stream; nothing of "
                        "the resumed run is released");
  // Only a non-private run stores nothing for a kept model it could not keep: it is run again.
  if (into.request.keep_output && s.null_at(3) && s.null_at(4)) return false;
  const std::string utilities = s.text_at(1);
  into.utilities = Reader(utilities).doubles();
  into.seconds = s.double_at(2);
  if (!s.null_at(3)) into.model = restored_model(decode_model(s.text_at(3)));
  if (!s.null_at(4)) {
    const std::string bytes = s.text_at(4);
    Reader r(bytes);
    into.output.values = r.doubles();
    into.output.probabilities = r.doubles();
    into.output.num_classes = r.u64();
  }
  ++recalled_;
  return true;
}

namespace {
/// Model kinds only the study store writes: a kept model stored as a copy of its files (the
/// description names the copy's model.json), and one that could not be stored at all.
constexpr const char* kStoredFilesKind = "study-files";
constexpr const char* kNotStoredKind = "study-not-stored";

dptune::ModelExport stored_marker(const char* kind, std::string description) {
  dptune::ModelExport m;
  m.kind = kind;
  m.description = std::move(description);
  return m;
}
}  // namespace

void Study::set_file_model_loader(std::string algorithm, FileModelLoader loader) {
  algorithm_ = std::move(algorithm);
  load_files_ = std::move(loader);
}

// A private run is never run again on resume (its randomness would be drawn anew: resampling,
// which no selection theorem covers, Papernot & Steinke 2022), so whatever it kept is stored in
// the one form that comes back: the exported numbers, a copy of the model's files, or a marker
// that the model is lost (the evaluation is then recalled without it).
std::optional<std::string> Study::stored_model(std::uint64_t batch, std::size_t index,
                                               const dptune::Evaluation& e) const {
  if (!e.model) return std::nullopt;
  if (const auto exported = e.model->export_model()) return encode_model(*exported);
  const auto* kept = dynamic_cast<const dptune::FileModel*>(e.model.get());
  const dptune::ModelFiles files = kept ? kept->model_files() : dptune::ModelFiles{};
  if (!files.files.empty() && load_files_)
    return encode_model(stored_marker(kStoredFilesKind, store_model_files(batch, index, files)));
  if (e.request.private_run) return encode_model(stored_marker(kNotStoredKind, ""));
  return std::nullopt;
}

std::string Study::store_model_files(std::uint64_t batch, std::size_t index,
                                     const dptune::ModelFiles& files) const {
  const fs::path models = models_in(dir_);
  fs::create_directories(models);
  fs::permissions(models, fs::perms::owner_all, fs::perm_options::replace);
  const fs::path folder = models / ("b" + std::to_string(batch) + "-" + std::to_string(index));
  fs::remove_all(folder);
  ExportedModel copy;
  copy.model = stored_marker(kFilesModelKind, files.description);
  copy.model.features = files.features;
  copy.model.num_classes = files.num_classes;
  copy.trainer_params = files.trainer_params;
  copy.files = copy_released_files(files, folder);
  std::ostringstream text;
  JsonWriter w(text);
  w.begin_object();
  w.key("format").value(kModelFileFormat);
  w.key("algorithm").value(algorithm_);
  write_model_fields(w, copy);
  w.end_object();
  write_text_file(folder / "model.json", text.str());
  return (folder / "model.json").lexically_relative(dir_).generic_string();
}

std::shared_ptr<const dptune::Model> Study::restored_model(const dptune::ModelExport& stored) {
  if (stored.kind != kStoredFilesKind && stored.kind != kNotStoredKind)
    return model_from_export(stored);
  if (stored.kind == kStoredFilesKind && load_files_) {
    try {
      const fs::path file = dir_ / stored.description;
      if (auto model = load_files_(files_of(read_model_file(file), file))) return model;
    } catch (const dptune::Error&) {
      // Not restorable (a file removed, a program that no longer loads it): recalled without it.
    }
  }
  if (stored.kind == kStoredFilesKind) ++files_not_restored_;
  ++not_restored_;
  return nullptr;
}

namespace {
/// The marker of an intact folder of model copies (make_model_copies_folder).
constexpr const char* kCopiesMarker = "README.txt";
}  // namespace

void Study::make_model_copies_folder() const {
  const fs::path models = models_in(dir_);
  fs::create_directories(models);
  fs::permissions(models, fs::perms::owner_all, fs::perm_options::replace);
  write_text_file(models / kCopiesMarker,
                  "SENSITIVE: the kept models of this study's runs, for --resume.  Removing this "
                  "folder makes a resumed private study release no model.\n");
}

// Why a resumed private study decides so (Papernot & Steinke 2022, Theorem 6, release the selected
// run's output, not its position among the runs): every run before the interrupt is recalled from
// the store, every run after it is fresh.  Releasing a fresh model that the store could not have
// kept, while a stored run of the same kind comes back without its model, would make the presence
// of model.json tell whether the selected run came before the interrupt.  So (1) a model is
// released only if it is of a kind the store keeps: a function of the selected run's own output,
// whichever side of the interrupt it lies on (a recalled model of that kind comes back whole);
// (2) a removed copies folder withholds every model: the folder is made when the study begins,
// so its absence is the operator's act, not a count of runs; (3) a copy that is present in the
// store but does not load back withholds every model too, whatever run is selected.
bool Study::keeps_fresh_model(const dptune::Evaluation& e) const {
  return !settle_fresh_ || !e.model || releasable_after_resume(*e.model);
}

bool Study::releasable_after_resume(const dptune::Model& model) const {
  if (!fs::exists(models_in(dir_) / kCopiesMarker) || files_not_restored_.load() > 0) return false;
  if (model.export_model()) return true;
  const auto* kept = dynamic_cast<const dptune::FileModel*>(&model);
  return kept != nullptr && load_files_ && !kept->model_files().files.empty();
}

void Study::record(std::uint64_t batch, std::size_t index, const dptune::Evaluation& e) {
  Writer utilities;
  utilities.doubles(e.utilities);
  const std::optional<std::string> model = stored_model(batch, index, e);
  std::optional<std::string> output;
  if (e.request.keep_output && !e.model) {
    Writer w;
    w.doubles(e.output.values);
    w.doubles(e.output.probabilities);
    w.u64(e.output.num_classes);
    output = w.bytes();
  }
  std::lock_guard lock(mutex_);
  SqliteTransaction tx(db_);
  // Any word drawn since the batch began (a lazily drawn layout) is committed with the evaluation
  // that may depend on it: a stored evaluation never outlives its words.
  write_pending_words();
  SqliteStatement put(
      db_,
      "INSERT OR REPLACE INTO evaluations (batch, idx, request, utilities, seconds,"
      " event, epsilon, model, output, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  put.bind(1, static_cast<std::int64_t>(batch))
      .bind(2, static_cast<std::int64_t>(index))
      .bind(3, request_key(e.request))
      .bind_blob(4, utilities.bytes())
      .bind(5, e.seconds)
      .bind(6, e.event.to_string());
  if (std::isfinite(e.privacy.epsilon))
    put.bind(7, e.privacy.epsilon);
  else
    put.bind_null(7);
  if (model)
    put.bind_blob(8, *model);
  else
    put.bind_null(8);
  if (output)
    put.bind_blob(9, *output);
  else
    put.bind_null(9);
  put.bind(10, now_utc()).run();
  tx.commit();
  pending_words_.clear();
}

void Study::record_failure(const Failure& failure) {
  std::lock_guard lock(mutex_);
  {
    SqliteTransaction tx(db_);
    // The words the failed evaluation may depend on go in with it, in one commit.
    write_pending_words();
    SqliteStatement(db_,
                    "INSERT OR IGNORE INTO failures (batch, idx, request, message, failed)"
                    " VALUES (?, ?, ?, ?, ?)")
        .bind(1, static_cast<std::int64_t>(failure.batch))
        .bind(2, static_cast<std::int64_t>(failure.index))
        .bind(3, failure.request)
        .bind(4, failure.message)
        .bind(5, now_utc())
        .run();
    tx.commit();
    pending_words_.clear();
  }
  // On disk before the failure is reported (a power loss must not let a resume redraw it).
  db_.exec("PRAGMA wal_checkpoint(FULL)");
}

std::optional<EvaluationJournal::Failure> Study::recall_failure(
    std::uint64_t batch, const std::vector<dptune::EvaluationRequest>& requests) {
  std::lock_guard lock(mutex_);
  SqliteStatement s(db_, "SELECT idx, request, message FROM failures WHERE batch = ?");
  s.bind(1, static_cast<std::int64_t>(batch));
  if (!s.step()) return std::nullopt;
  Failure f{batch, static_cast<std::size_t>(s.int_at(0)), s.text_at(1), s.text_at(2)};
  const std::string asked =
      f.index < requests.size() ? request_key(requests[f.index]) : std::string("nothing");
  if (asked != f.request)
    throw dptune::Error("study.db: evaluation " + std::to_string(f.index + 1) + " of batch " +
                        std::to_string(batch) +
                        " was stored as failed for another request than the resumed tuner asks "
                        "for: the tuner is not deterministic given its random stream; nothing of "
                        "the resumed run is released");
  return f;
}

std::vector<EvaluationJournal::Failure> Study::failures() const {
  std::lock_guard lock(mutex_);
  SqliteStatement s(db_, "SELECT batch, idx, request, message FROM failures ORDER BY batch, idx");
  std::vector<Failure> out;
  while (s.step())
    out.push_back({static_cast<std::uint64_t>(s.int_at(0)), static_cast<std::size_t>(s.int_at(1)),
                   s.text_at(2), s.text_at(3)});
  return out;
}

std::size_t Study::stored_evaluations() const {
  std::lock_guard lock(mutex_);
  SqliteStatement s(db_, "SELECT COUNT(*) FROM evaluations");
  s.step();
  return static_cast<std::size_t>(s.int_at(0));
}

std::vector<Study::Stored> Study::evaluations() const {
  std::lock_guard lock(mutex_);
  SqliteStatement s(db_,
                    "SELECT batch, idx, request, utilities, epsilon, seconds FROM evaluations"
                    " ORDER BY batch, idx");
  std::vector<Stored> out;
  while (s.step()) {
    Stored e;
    e.batch = static_cast<std::uint64_t>(s.int_at(0));
    e.index = static_cast<std::size_t>(s.int_at(1));
    e.request = s.text_at(2);
    const std::string bytes = s.text_at(3);
    e.utilities = Reader(bytes).doubles();
    if (!s.null_at(4)) e.epsilon = s.double_at(4);
    e.seconds = s.double_at(5);
    out.push_back(std::move(e));
  }
  return out;
}

std::unique_ptr<dptune::RandomBitGenerator> Study::wrap(
    std::uint64_t stream, std::unique_ptr<dptune::RandomBitGenerator> fresh) {
  std::vector<std::uint64_t> replay;
  {
    std::lock_guard lock(mutex_);
    SqliteStatement s(db_, "SELECT seq, word FROM random_words WHERE stream = ? ORDER BY seq");
    s.bind(1, static_cast<std::int64_t>(stream));
    while (s.step()) {
      if (static_cast<std::size_t>(s.int_at(0)) != replay.size())
        throw dptune::Error("study.db: the recorded random stream " + std::to_string(stream) +
                            " has a gap");
      replay.push_back(static_cast<std::uint64_t>(s.int_at(1)));
    }
  }
  return std::make_unique<RecordingRandom>(*this, stream, std::move(replay), std::move(fresh));
}

void Study::append_word(std::uint64_t stream, std::uint64_t seq, std::uint64_t word) {
  std::lock_guard lock(mutex_);
  pending_words_.push_back({stream, seq, word});
}

StudyStatus read_study(const fs::path& dir) {
  if (!Study::exists_in(dir))
    throw dptune::ConfigError(dir.string() + ": no study here (no study.db)");
  SqliteDb db(Study::file_in(dir), false);
  StudyStatus status;
  SqliteStatement m(db, "SELECT key, value FROM meta ORDER BY key");
  while (m.step()) status.meta[m.text_at(0)] = m.text_at(1);
  SqliteStatement e(db, "SELECT COUNT(*) FROM evaluations");
  e.step();
  status.evaluations = static_cast<std::size_t>(e.int_at(0));
  SqliteStatement w(db, "SELECT COUNT(*) FROM random_words");
  w.step();
  status.random_words = static_cast<std::size_t>(w.int_at(0));
  // A study written before failures were stored has no such table: none stored.
  SqliteStatement t(
      db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'failures'");
  t.step();
  if (t.int_at(0) > 0) {
    SqliteStatement f(db, "SELECT COUNT(*) FROM failures");
    f.step();
    status.failures = static_cast<std::size_t>(f.int_at(0));
  }
  return status;
}

}  // namespace dptune::host
