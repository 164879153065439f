// dptune host (internal): the study store — study.db in a run's output folder.
//
// A tuner is deterministic given its random stream and the evaluations it is answered, so a study
// keeps exactly those two: every random word drawn from the streams that are not per-evaluation
// (the tuner's own stream 0 and the data layout: split, partitions, client shards), and every
// evaluation as soon as all its runs are done.  `--resume` re-runs the tuner from the start: the
// recorded words are replayed (then fresh ones drawn and recorded), and every evaluation already
// stored is answered from the store, so the run continues where it stopped and a private tuner can
// never draw a fresh K or re-release (budget spent is never
// refunded).  A word is committed before any evaluation it can influence starts (the journal
// flushes at the start of every evaluate() and before the report): nothing that depends on an
// unrecorded word is ever observed.
//
// A failed evaluation of a private tuner is an output too (a function of the data and the run's
// randomness): it is stored, with every pending word, before the failure is reported, and a
// resumed study replays it instead of running that evaluation again (docs/studies.md, "Failures
// are outputs").
//
// The store is as sensitive as trials.SENSITIVE.csv: it holds per-run scores, failure messages and
// the tuner's secret draws (K).  It never leaves the trusted analyst's machine.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/interrupts.hpp"
#include "base/sqlite_db.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/random.hpp"
#include "dptune/host/study_status.hpp"
#include "dptune/model_files.hpp"
#include "dptune/plugin.hpp"

namespace dptune::host {

/// A failed evaluation as the store keeps it (EvaluationJournal::record_failure).
struct EvaluationFailure {
  std::uint64_t batch = 0;
  std::size_t index = 0;
  std::string request;  // request_key() of the failed request
  std::string message;  // SENSITIVE: the run's own error (a program's stderr, a value)
};

/// Where evaluations are stored and recalled (HostEvaluator calls it; the study implements it).
class EvaluationJournal {
 public:
  virtual ~EvaluationJournal() = default;
  /// Before batch `batch` computes anything: commits pending random words; a cancellation point.
  virtual void before_batch(std::uint64_t batch) = 0;
  /// Fills utilities, seconds, model and output of `into` (whose request, event and privacy are
  /// set) from the store; false when evaluation `index` of `batch` is not stored.  Throws
  /// dptune::Error when the stored request differs (the study diverged from its pipeline).
  virtual bool recall(std::uint64_t batch, std::size_t index, dptune::Evaluation& into) = 0;
  /// Stores a finished evaluation (thread-safe; committed before it returns).
  virtual void record(std::uint64_t batch, std::size_t index, const dptune::Evaluation& e) = 0;
  /// Whether the tuner may see the kept model of evaluation `e`, just run and recorded: false when
  /// a recalled one of its kind would have come back without it (Study::releasable_after_resume).
  virtual bool keeps_fresh_model(const dptune::Evaluation& e) const {
    (void)e;
    return true;
  }

  using Failure = EvaluationFailure;
  /// Stores a failure together with every pending random word, durable before it returns (the
  /// failure is reported only afterwards).  The first failure stored for a batch is kept.
  virtual void record_failure(const Failure& failure) = 0;
  /// The failure stored for batch `batch`, if any.  Throws dptune::Error when the stored request
  /// is not the one `requests` now asks for at its index (the study diverged from its pipeline).
  virtual std::optional<Failure> recall_failure(
      std::uint64_t batch, const std::vector<dptune::EvaluationRequest>& requests) = 0;
};

/// The text that identifies a request in the store.
std::string request_key(const dptune::EvaluationRequest& request);

/// A kept model as bytes: what the store keeps of it, and what an MPI worker rank sends rank 0
/// (exact doubles; read back only on the machine type that wrote it).
std::string encode_model(const dptune::ModelExport& model);
dptune::ModelExport decode_model(const std::string& bytes);
/// A model read back from its bytes: it exports exactly what the trainer's model exported (so
/// model.json is the same) and predicts through the plugin-free predictor of model_file.
std::shared_ptr<const dptune::Model> model_from_export(dptune::ModelExport model);

/// Makes a model kept in files back from a copy of its files (the pipeline's trainer, created with
/// the files' trainer parameters, loads them).
using FileModelLoader =
    std::function<std::shared_ptr<const dptune::Model>(const dptune::ModelFiles& files)>;

class Study final : public EvaluationJournal, public RandomStreamRecorder {
 public:
  static std::filesystem::path file_in(const std::filesystem::path& dir) {
    return dir / "study.db";
  }
  static bool exists_in(const std::filesystem::path& dir);
  /// The owner-only folder of the kept models that are files (a copy per stored run: SENSITIVE
  /// like study.db, their number can reveal a private tuner's secret count).
  static std::filesystem::path models_in(const std::filesystem::path& dir) {
    return dir / "study-models";
  }
  /// Deletes study.db, its WAL files and the stored model files (--overwrite).
  static void remove_in(const std::filesystem::path& dir);

  /// Creates a new study in `dir` (which must hold none) or opens the one there (`resume`).
  Study(const std::filesystem::path& dir, bool resume);

  /// A new study: writes its id, the resolved pipeline and the randomness, status "running".  A
  /// resumed one: checks the pipeline is the same (ConfigError otherwise), status "running".
  void begin(const std::string& resolved_pipeline, const std::string& tuner,
             const std::string& randomness);
  std::string id() const { return get("study_id").value_or(""); }
  void set(const std::string& key, const std::string& value);
  std::optional<std::string> get(const std::string& key) const;
  /// Commits every pending random word.
  void flush();
  /// flush(), then puts every commit on disk (before a report releases anything).
  void sync();
  void set_progress(std::size_t done, std::size_t total);

  // EvaluationJournal
  void before_batch(std::uint64_t batch) override;
  bool recall(std::uint64_t batch, std::size_t index, dptune::Evaluation& into) override;
  void record(std::uint64_t batch, std::size_t index, const dptune::Evaluation& e) override;
  bool keeps_fresh_model(const dptune::Evaluation& e) const override;
  /// A resumed private study: every fresh kept model passes releasable_after_resume before the
  /// tuner sees it (keeps_fresh_model), so that a run after the interrupt is answered as a
  /// recalled run of the same output would be.
  void settle_fresh_models_as_recalled() { settle_fresh_ = true; }
  bool settles_fresh_models() const { return settle_fresh_; }
  void record_failure(const Failure& failure) override;
  std::optional<Failure> recall_failure(
      std::uint64_t batch, const std::vector<dptune::EvaluationRequest>& requests) override;
  /// Every stored failure, in the order the tuner asked for the evaluations.
  std::vector<Failure> failures() const;
  /// Stored evaluations, recalled ones in this process.
  std::size_t stored_evaluations() const;
  std::size_t recalled() const { return recalled_.load(); }
  /// How a kept model that is files (dptune/model_files.hpp) comes back on resume: `algorithm` is
  /// the pipeline's trainer and `loader` loads such a model with it.  Without a loader such a
  /// model is stored as not restorable.
  void set_file_model_loader(std::string algorithm, FileModelLoader loader);
  /// Recalled evaluations of this process whose kept model could not be restored.  Such an
  /// evaluation of a private run is recalled without its model, never run again: running it again
  /// would draw its randomness anew (resampling, which no guarantee covers).
  std::size_t models_not_restored() const { return not_restored_.load(); }
  /// A new private study's folder of model copies, made when the study begins (before any run,
  /// so that its presence tells nothing of how many runs were stored), with a marker file whose
  /// absence on resume means the copies were removed.
  void make_model_copies_folder() const;
  /// Whether a resumed private study may release `model`, the selected run's kept model: only
  /// when the decision is a function of public facts and of that run's own output (docs/studies.md,
  /// "Models after a resume"): the model is of a kind the store keeps (exported numbers, or files
  /// with a loader), the copies folder is still there, and no stored copy failed to load back.
  bool releasable_after_resume(const dptune::Model& model) const;
  /// Every stored evaluation, in the order the tuner asked for them.
  struct Stored {
    std::uint64_t batch = 0;
    std::size_t index = 0;
    std::string request;
    std::vector<double> utilities;
    std::optional<double> epsilon;  // of one run; empty for a non-private run
    double seconds = 0;
  };
  std::vector<Stored> evaluations() const;

  // RandomStreamRecorder
  std::unique_ptr<dptune::RandomBitGenerator> wrap(
      std::uint64_t stream, std::unique_ptr<dptune::RandomBitGenerator> fresh) override;
  /// Called by the recording generators.
  void append_word(std::uint64_t stream, std::uint64_t seq, std::uint64_t word);

 private:
  /// Inserts the pending words inside the caller's transaction (mutex_ held).
  void write_pending_words();
  /// The bytes the model column stores for a finished evaluation, or none.
  std::optional<std::string> stored_model(std::uint64_t batch, std::size_t index,
                                          const dptune::Evaluation& e) const;
  /// Copies a kept model's files under models_in(dir) with a model.json naming them; returns that
  /// model.json relative to the study's folder.
  std::string store_model_files(std::uint64_t batch, std::size_t index,
                                const dptune::ModelFiles& files) const;
  /// The model a stored model column gives back, or null when it cannot be restored.
  std::shared_ptr<const dptune::Model> restored_model(const dptune::ModelExport& stored);

  std::filesystem::path dir_;
  std::string algorithm_;
  FileModelLoader load_files_;
  std::atomic<std::size_t> not_restored_{0};
  // Recalled copies of files that did not load back (rule 3 of releasable_after_resume).
  std::atomic<std::size_t> files_not_restored_{0};
  bool settle_fresh_ = false;  // settle_fresh_models_as_recalled
  mutable std::mutex mutex_;
  mutable SqliteDb db_;
  std::vector<std::array<std::uint64_t, 3>> pending_words_;
  std::atomic<std::size_t> recalled_{0};
};

}  // namespace dptune::host
