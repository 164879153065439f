#include "dptune/host/runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "dptune/abi.hpp"
#include "dptune/errors.hpp"
#include "dptune/helpers/pareto.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/executor.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/ledger.hpp"
#include "dptune/host/model_file.hpp"
#include "dptune/host/random.hpp"
#include "report/report.hpp"
#include "run/evaluator.hpp"
#include "run/mpi_wire.hpp"
#include "run/preflight.hpp"
#include "run/progress.hpp"
#include "run/study_run.hpp"
#include "run/test_score.hpp"
#include "study/study.hpp"

namespace dptune::host {

namespace {

/// Forwards to the terminal and remembers how far the tuner said it got (for "interrupted at
/// 16/60"; a private tuner's progress never shows secret counts: threat model).
class CountingProgress final : public dptune::ProgressSink {
 public:
  explicit CountingProgress(TerminalProgress& terminal) : terminal_(terminal) {}
  void start(std::string_view phase, std::size_t total) override {
    total_ = total;
    done_ = 0;
    terminal_.start(phase, total);
  }
  void advance(std::size_t done, std::optional<double> best) override {
    done_ = done;
    terminal_.advance(done, best);
  }
  void message(std::string_view text) override { terminal_.message(text); }
  std::size_t done() const { return done_; }
  std::size_t total() const { return total_; }

 private:
  TerminalProgress& terminal_;
  std::atomic<std::size_t> done_{0}, total_{0};
};

/// What a resumed run reused.  A private tuner's count would tell how far its secret number of
/// runs had got, so it is not shown; nor is whether a stored run's model could not be restored
/// (whether the kept run was stored before the interrupt depends on that number too): the line
/// states the rule instead, the same in every resumed private study.
std::string resumed_line(const Study& study, bool map) {
  const std::string lost =
      study.models_not_restored() == 0
          ? ""
          : "; a stored run's model could not be restored (its trainer keeps it neither as "
            "numbers nor as files that load back): that run is recalled without it, not run "
            "again, and if it is the selected run no model is written";
  if (!map)
    return "resumed: every stored evaluation and secret draw was replayed, none drawn again (a "
           "private tuner's counts are not shown); a resumed private study releases the "
           "selected run's model only if the study store keeps models of its kind (exported "
           "numbers, or files that load back) and every stored copy is still there";
  const std::size_t reused = study.recalled();
  const std::size_t stored = study.stored_evaluations();
  return "resumed: " + std::to_string(reused) + " evaluations reused from the study store, " +
         std::to_string(stored > reused ? stored - reused : 0) + " run now" + lost;
}

/// How the study store loads back a stored model kept in files (dptune/model_files.hpp): a
/// trainer of the pipeline's algorithm, made with the model's parameters, which lives as long as
/// the model it loaded.
void set_file_model_loader(Study& study, const PipelineConfig& config,
                           const PluginRegistry& registry) {
  if (config.algorithm.kind != ComponentKind::Trainer) return;
  const std::string name = config.algorithm.use;
  study.set_file_model_loader(
      name,
      [&registry, name](const dptune::ModelFiles& files) -> std::shared_ptr<const dptune::Model> {
        std::shared_ptr<dptune::Trainer> trainer =
            registry.create_trainer(name, files.trainer_params);
        const auto* loader = dynamic_cast<const dptune::ModelFileLoader*>(trainer.get());
        if (loader == nullptr) return nullptr;
        using Pair =
            std::pair<std::shared_ptr<dptune::Trainer>, std::shared_ptr<const dptune::Model>>;
        auto both = std::make_shared<Pair>(trainer, loader->load_model(files));
        return {both, both->second.get()};
      });
}

/// Installs the SIGINT/SIGTERM handlers for the lifetime of a study run.
struct InterruptScope {
  explicit InterruptScope(bool active) : active_(active) {
    if (active_) install_interrupt_handlers();
  }
  ~InterruptScope() {
    if (active_) restore_interrupt_handlers();
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  bool active_;
};

/// Rank 0 of the MPI executor (docs/mpi.md) starts the workers.  Under secure randomness every rank
/// must draw the same split and shards, so they are drawn from a secret key rank 0 makes, sends
/// and keeps in the study (a resumed study shares it again; the study holds the words it draws
/// anyway).
std::optional<LayoutKey> start_mpi_workers(const PipelineConfig& config, Study* study,
                                           bool resume) {
  std::optional<LayoutKey> key;
  if (!config.execution.seed) {
    if (!study)
      throw dptune::ConfigError("executor 'mpi' under secure randomness needs the study store");
    if (const auto hex = study->get("mpi_layout_key")) {
      key = mpi::key_from_hex(*hex);
    } else if (resume) {
      throw dptune::ConfigError(
          config.output.dir.string() +
          ": --resume with executor 'mpi': this study did not start with the MPI executor, so "
          "its data layout (drawn from secure randomness) cannot be shared with other ranks; "
          "resume it with the executor it started with");
    } else {
      key.emplace();
      SecureRandom source;
      for (std::size_t i = 0; i < key->size(); i += 8) {
        const std::uint64_t word = source.next_u64();
        for (std::size_t b = 0; b < 8; ++b)
          (*key)[i + b] = static_cast<unsigned char>(word >> (8 * b));
      }
      study->set("mpi_layout_key", mpi::key_to_hex(*key));
    }
  }
  start_mpi_run(to_yaml(config), key);
  return key;
}

/// output.test_score once the tuning is done: the released model (null: none) scored on the test
/// split with noise, or on the public file without.  A private score's ε joins the guarantee
/// whether or not a model was released: the guarantee is public and may not depend on the release.
std::optional<TestScore> release_test_score(const PipelineConfig& config, EvaluationStack& stack,
                                            dptune::TuningResult& result,
                                            const dptune::Model* model) {
  const bool noisy = config.output.test_score->epsilon.has_value();
  // check_pipeline refused a tuner whose dry run claims no guarantee; a tuner that claims one
  // there and none here gets no private score (there is nothing to compose it into).
  if (noisy && !result.guarantee) {
    result.notes.push_back("test score: not released: tuner '" + config.tuner.use +
                           "' returned no privacy guarantee to compose it into");
    return std::nullopt;
  }
  auto rng = stack.random.make(kTestScoreStream);
  const DataSplits& splits = stack.evaluator.splits();
  TestScore score =
      score_released_model(config, *stack.utility, splits, splits.preprocessing, model, *rng);
  if (noisy) {
    result.guarantee = compose_test_score(*result.guarantee, result.event, *score.noise,
                                          *stack.accountant, config.delta);
    if (result.event)
      result.event = dptune::DpEvent::composed({*result.event, score.noise->event()});
  }
  return score;
}

}  // namespace

namespace {

/// The ledger's write-ahead charge (with the private test score and a tuner's reserved worst
/// case), made before any run trains on the data; a refusal leaves the study marked so.
/// `checked`: the plan preflight checked against the ledger (its one dry run), charged as checked;
/// without one (a resumed study), the dry run is made here.
PlannedCharge charge_write_ahead(const PipelineConfig& config, const PluginRegistry& registry,
                                 EvaluationStack& stack, Study* study, std::ostream& out,
                                 const std::optional<PlannedCharge>& checked) {
  if (!study)
    throw dptune::ConfigError(config.ledger->where.to_string() +
                              ": ledger: a ledger needs the study store (dptune run)");
  try {
    PlannedCharge plan = checked ? *checked : plan_ledger_charge(config, registry, stack);
    const std::string charged = charge_ledger(config, *study, *stack.accountant, plan);
    study->set("ledger", charged);
    out << charged << "\n";
    return plan;
  } catch (const LedgerRefused&) {
    study->set("status", "refused by the ledger (nothing trained)");
    throw;
  }
}

/// What the tuning gave, for its release.
struct Tuned {
  dptune::TuningResult& result;
  bool map = false;
  std::size_t done = 0, total = 0;  // the tuner's progress (a map's trials)
  std::chrono::steady_clock::time_point started;
  const std::vector<std::string>* printed_warnings = nullptr;  // preflight's, on the console
};

/// After the tuning: the checks a result must pass, the released model and test score, the
/// ledger settled, and the report written.
RunSummary release_run(const PipelineConfig& config, const PluginRegistry& registry,
                       const RunOptions& options, EvaluationStack& stack, Study* study,
                       const std::optional<PlannedCharge>& plan, const Tuned& tuned,
                       std::ostream& out) {
  dptune::TuningResult& result = tuned.result;
  const bool map = tuned.map;
  // A signal after a map's last run had started stops nothing: the study is complete, and its
  // result is the uninterrupted one, so it is released as usual.  (A private tuner's is reported
  // as interrupted: run_pipeline.)
  if (interrupt_signal() != 0 && map)
    out << "dptune: the interrupt came after the last run had started: the study completed and "
           "its results are written as usual\n";
  if (study && options.resume) out << resumed_line(*study, map) << "\n";
  if (study) study->sync();  // every word the result depends on, before anything is released
  check_result_as_declared(config, result.trusted_analyst_only);
  // The config loader refuses fitted_standardize for every tuner that does not declare itself a
  // map; a guarantee returned anyway cannot cover the fitted scaling, so nothing of the run is
  // released (defence in depth: check_result_as_declared refuses such a map first).
  if (result.guarantee && stack.evaluator.preprocessing().fitted())
    throw dptune::Error("tuner '" + config.tuner.use +
                        "' returned a privacy guarantee, which cannot cover preprocessing "
                        "fitted_standardize (fitted on the private data): nothing is released");
  // Only the selected run's model is released (model.json); the other kept models are dropped.
  // A tuner releases a model only when it declares that its guarantee covers one.
  std::shared_ptr<const dptune::Model> model =
      config.tuner_traits.releases_model ? released_model(result, stack.evaluator.kept_models())
                                         : nullptr;
  // A resumed private study: the model is written only when that decision cannot tell on which
  // side of the interrupt the selected run lies (Study::releasable_after_resume).  No note says
  // so: a model withheld here looks exactly like one the store lost.
  if (model && study && study->settles_fresh_models() && !study->releasable_after_resume(*model))
    model = nullptr;
  std::optional<TestScore> test_score;
  if (config.output.test_score) test_score = release_test_score(config, stack, result, model.get());
  if (study && test_score) study->sync();  // the test score's noise words, before its release
  // The write-ahead charge came from a dry run; a guarantee above it is charged as a supplement,
  // in full even past the budget (never under-report), and then nothing is released.  A reserved
  // worst case is settled to what the run needed (a plan exists only with a study).
  if (plan && result.guarantee && study != nullptr)
    settle_ledger(config, *study, *stack.accountant, *plan, *result.guarantee, out);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - tuned.started).count();

  ReportInput input{config,
                    result,
                    stack.random.description(),
                    stack.random.secure(),
                    stack.executor->name(),
                    seconds,
                    stack.data->describe()};
  input.released_model = model;
  input.test_score = std::move(test_score);
  input.preprocessing = stack.evaluator.preprocessing();
  input.feature_names = stack.evaluator.splits().train.feature_names;
  input.categorical = declared_categorical(config.data.use, config.data.params);
  input.verbose = options.verbose;
  input.mechanism_trust = mechanism_trust(mechanism_uses(config, registry));
  input.mechanism_set_at_run_time = stack.mechanisms.set_at_run_time();
  if (tuned.printed_warnings) input.printed_warnings = *tuned.printed_warnings;
  RunSummary summary = write_report(input, out);
  if (study) {
    // The partial trials of an earlier interrupted process are superseded by the full report.
    std::filesystem::remove(config.output.dir / "trials.partial.csv");
    if (result.trusted_analyst_only) study->set_progress(tuned.done, tuned.total);
    study->set("status", "finished");
  }
  return summary;
}

}  // namespace

RunSummary run_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                        const RunOptions& options, std::ostream& out) {
  const auto started = std::chrono::steady_clock::now();
  // Every check `dptune validate` makes, before the output folder is touched; the study reads
  // the data source the checks read (its files are read once).
  std::shared_ptr<const DataSource> data;
  std::vector<std::string> warnings;
  // A ledger that cannot take the run's charge refuses it here too, before the output folder
  // exists (the charge itself is made write-ahead below, against the ledger as it is then, of the
  // plan checked here: the tuner's dry run is made once).
  const Preflight checked = preflight(config, registry, &data, options.allow_audit_violation,
                                      &warnings, config.ledger && !options.resume);
  for (const auto& warning : warnings) out << "warning: " << warning << "\n";
  auto tuner = create_configured_tuner(config, registry);
  // The study store: refuse a folder holding one unless resuming or overwriting.  Under secure
  // randomness the tuner's and the layout's streams are recorded (replayed on resume); a seeded
  // run replays from its seed.
  std::unique_ptr<Study> study = options.study ? open_study(config, options) : nullptr;
  // From here a signal is turned into a clean stop at the next cancellation point.
  InterruptScope interrupts(study != nullptr);
  RandomStreamRecorder* recorder = study && !config.execution.seed ? study.get() : nullptr;
  std::optional<LayoutKey> layout_key;
  if (config.execution.executor == "mpi")
    layout_key = start_mpi_workers(config, study.get(), options.resume);
  EvaluationStack stack(config, registry, config.execution.executor, config.execution.threads,
                        config.execution.seed, recorder, layout_key, std::move(data));
  if (study) {
    // A private study's folder of model copies is made before the study has begun (a study that
    // stopped before that resumes as a new one), so that it is there whenever runs were stored;
    // a study that had begun is answered as the store answers recalled runs (docs/studies.md,
    // "Models after a resume").
    const bool begun = study->get("pipeline").has_value();
    if (!declared_map(config) && !begun) study->make_model_copies_folder();
    study->begin(to_yaml(config), config.tuner.use, stack.random.description());
    if (!declared_map(config) && begun) study->settle_fresh_models_as_recalled();
    set_file_model_loader(*study, config, registry);
    stack.evaluator.set_journal(study.get());
  }
  // The ledger is charged write-ahead, before any run trains on the data.
  const std::optional<PlannedCharge> plan =
      config.ledger ? std::optional(charge_write_ahead(config, registry, stack, study.get(), out,
                                                       checked.ledger_plan))
                    : std::nullopt;
  // A private tuner's failed evaluation is an output: stored, replayed on resume, never shown.
  const bool map = declared_map(config);
  stack.evaluator.set_private_failures(!map);
  // Over MPI ranks, each rank keeps only the rows the tuner evaluates there (rank 0 too).
  if (dptune::PeerChannel* peers = stack.executor->peers())
    keep_rank_data(config, *tuner, stack, 0, peers->size());
  TerminalProgress terminal(options.show_progress);
  // A private tuner's counts are secret (threat model); the terminal still shows it is working.
  if (!map) terminal.hide_counts("private tuning");
  CountingProgress progress(terminal);
  auto tuner_rng = stack.random.make(0);
  HostTunerContext context(config, stack.evaluator, *stack.accountant, stack.mechanisms, progress,
                           *tuner_rng, *stack.executor);

  // The study stopped by signal `signal`: nothing released, the hint to resume it.
  auto interrupted = [&](int signal) {
    study->set("status", "interrupted");
    const std::string resume = options.resume_command.empty()
                                   ? "dptune run " + config.file.string() + " --resume"
                                   : options.resume_command;
    return write_interrupted_report(config, *study, map,
                                    Interruption{signal, progress.total(), resume}, out);
  };
  dptune::TuningResult result;
  try {
    result = tuner->tune(context);
  } catch (const Interrupted& e) {
    terminal.finish();
    if (const auto failure = stack.evaluator.private_failure())
      fail_private_run(config, study.get(), *failure);
    return interrupted(e.signal_number());
  } catch (...) {
    // Whatever the tuner made of it (the plugin proxy wraps what crosses it), a private
    // evaluation's failure ends the run with none of its text.
    if (const auto failure = stack.evaluator.private_failure()) {
      terminal.finish();
      fail_private_run(config, study.get(), *failure);
    }
    if (study) study->set("status", "failed");
    throw;
  }
  terminal.finish();
  // A private tuner's study that a signal reached after its last run had started is reported as
  // interrupted like any other: whether the signal came before or after that run started depends
  // on the secret number of runs, so the console, the files and the exit code may not tell.  Its
  // evaluations are stored: --resume replays them, completes and releases (a map's study
  // completes now, release_run says so).
  if (interrupt_signal() != 0 && !map && study) return interrupted(interrupt_signal());
  return release_run(config, registry, options, stack, study.get(), plan,
                     {result, map, progress.done(), progress.total(), started, &warnings}, out);
}

}  // namespace dptune::host
