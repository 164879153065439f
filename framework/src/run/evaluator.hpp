// dptune host (internal): the evaluation service tuners call, and the contexts handed to plugins.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/data_scopes.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/executor.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/random.hpp"
#include "dptune/host/utility_sensitivity.hpp"
#include "dptune/plugin.hpp"
#include "study/study.hpp"

namespace dptune::host {

/// What a private tuner's failed evaluation throws into the tuner: a fixed text, because the
/// run's own error can depend on the private data and its secret draws (HostEvaluator::
/// private_failure() has the detail).
class PrivateEvaluationFailed : public dptune::Error {
 public:
  PrivateEvaluationFailed()
      : dptune::Error(
            "an evaluation of a private tuner failed (its message is SENSITIVE and withheld)") {}
};

/// Creates the pipeline's mechanism with overridden params (complete, validated).
class MechanismFactory {
 public:
  MechanismFactory(const PipelineConfig& config, const PluginRegistry& registry)
      : config_(config), registry_(registry) {}
  std::shared_ptr<const dptune::Mechanism> make(const dptune::Params& overrides) const;
  /// The mechanism parameters the algorithm or the tuner set at run time (their names only):
  /// resolved_config.yaml leaves them out, since the pipeline's value of them is not what ran.
  std::set<std::string> set_at_run_time() const {
    std::lock_guard<std::mutex> lock(overridden_mutex_);
    return overridden_;
  }

 private:
  const PipelineConfig& config_;
  const PluginRegistry& registry_;
  mutable std::mutex overridden_mutex_;
  mutable std::set<std::string> overridden_;
};

/// The event of the noise a trainer draws through the pipeline's mechanism.  A trainer
/// whose mechanism_request() expects gaussian(σ) (DP-SGD, DP-Adam, output perturbation) states
/// each noisy release as the leaf gaussian(σ), because it predicts its event before it sees the
/// mechanism.  The numbers released carry the mechanism's own event for noise_multiplier σ:
/// gaussian(σ) under `noise: fast`, discrete_gaussian(σ) under `noise: secure` (exact discrete
/// Gaussian noise on a grid, priced by its own theorems: docs/accounting.md, "The discrete
/// Gaussian").  stated() puts that event in place of every gaussian leaf, and accountant() prices
/// every event as stated, so that the trainer's target-ε calibration holds for the event the run
/// actually reports.  Where a continuous leaf is stated as discrete, every accountant prices it at
/// least as high (rdp) or refuses it (pld): never lower.
class MechanismNoise {
 public:
  MechanismNoise(const MechanismFactory& mechanisms, const dptune::Accountant& accountant);
  /// True when `trainer` draws Gaussian noise through the pipeline's mechanism.
  static bool applies_to(const dptune::Trainer& trainer);
  /// True when a mechanism stating `stated` gives the Gaussian noise `expected` (gaussian(σ))
  /// asks for: gaussian(σ) itself or the discrete Gaussian of the same σ; otherwise stated ==
  /// expected.
  static bool fits(const dptune::DpEvent& stated, const dptune::DpEvent& expected);
  /// `event` with every gaussian(σ) leaf replaced by the mechanism's event for σ; throws
  /// PrivacyError when the mechanism states something that does not fit.
  dptune::DpEvent stated(const dptune::DpEvent& event) const;
  /// The pipeline's accountant on stated(event): what a trainer calibrates with.
  const dptune::Accountant& accountant() const { return *accountant_; }

 private:
  const MechanismFactory& mechanisms_;
  std::shared_ptr<const dptune::Accountant> accountant_;
};

class HostEvaluator final : public dptune::Evaluator {
 public:
  HostEvaluator(const PipelineConfig& config, const PluginRegistry& registry,
                const DataSource& data, Executor& executor, const RandomSource& random,
                std::shared_ptr<const dptune::Accountant> accountant,
                std::shared_ptr<const dptune::Utility> utility, const MechanismFactory& mechanisms);

  std::vector<dptune::Evaluation> evaluate(
      const std::vector<dptune::EvaluationRequest>& requests) override;
  dptune::DpEvent event_of(const dptune::Params& candidate,
                           const dptune::DataScope& scope) const override;
  std::size_t default_repetitions() const override { return config_.repetitions; }
  /// TunerContext::scopes_changed_by_one_record for this pipeline's layouts: 2 for Dirichlet
  /// client shards of two or more clients, 1 otherwise (client_layout, data_layout.hpp).
  std::size_t scopes_changed_by_one_record(const dptune::DataScope& layout) const;

  /// What `trainer` reports on `train_rows` rows: its exact_event() given the pipeline's accountant
  /// and δ, with its Gaussian noise stated as the pipeline's mechanism states it (MechanismNoise).
  dptune::DpEvent trainer_event(const dptune::Trainer& trainer, std::size_t train_rows) const;

  /// One private training of `trainer` (an instance of the pipeline's trainer) on `train`, rows
  /// the caller assembled (`dptune audit trainer`: canaries among the training rows), on random
  /// stream `stream`, exactly as an evaluation's run trains: the same context (accountant, δ,
  /// mechanism), the reported event checked against trainer_event(trainer, train.rows), a model
  /// required.  Returns the model and the event it reported.
  dptune::TrainedModel train_once(const dptune::Trainer& trainer, const dptune::Dataset& train,
                                  std::uint64_t stream) const;

  /// Why the pipeline's mechanism would refuse a release that one private run of `candidate` on
  /// `scope` makes, whatever the data's values (Mechanism::release_refusal of each release the
  /// trainer declares, Trainer::mechanism_releases, with the mechanism configured as train() will
  /// configure it; an algorithm that is a mechanism: its release of the scope's answers); empty
  /// when none would be.  Public inputs only: the configuration and the scope's row count.
  std::string release_refusal(const dptune::Params& candidate,
                              const dptune::DataScope& scope) const;
  /// The algorithm's complete params for a candidate (fixed params + candidate, schema-checked).
  dptune::Params complete_params(const dptune::Params& candidate) const;
  /// The pipeline's fixed split (read in the constructor) and whether runs draw their own.
  const DataSplits& splits() const { return fixed_data(); }
  bool data_varies_per_run() const { return data_.varies_per_run(); }

  /// A model an evaluation kept (EvaluationRequest::keep_output), with what identifies it in a
  /// tuner's result: the request's candidate and the evaluation's mean utility.
  struct KeptModel {
    dptune::Params candidate;
    double utility_mean = 0;
    std::shared_ptr<const dptune::Model> model;
  };
  /// Every kept model, in the order of evaluate() calls and, within one, of the requests.
  std::vector<KeptModel> kept_models() const;
  /// Runs task `task.task` of evaluate() call `task.batch` on `task.request` exactly as that call
  /// would (same stream (task.batch << 32) | task.task, same checks) and returns its score, and
  /// its model when the task keeps it (`task.request.keep_output`): what an MPI worker rank does.
  RemoteResult run_task(const RemoteTask& task) const;
  /// From now on every evaluation is first looked up in `journal` and stored there as soon as
  /// its runs are done (the study store); null: none.
  void set_journal(EvaluationJournal* journal) { journal_ = journal; }
  /// Whether the tuner is private (not a map for trusted analysts): then a failed evaluation is an
  /// output of the data and its runs' randomness.  It is stored in the journal with the pending
  /// random words before anything reports it, no other run of its batch starts afterwards, the
  /// tuner gets PrivateEvaluationFailed (no private text), and a resumed study replays the stored
  /// failure instead of running the evaluation again (docs/studies.md, "Failures are outputs").
  void set_private_failures(bool on) { private_failures_ = on; }
  /// The failure of a private tuner's evaluation this evaluator reported, and whether it was
  /// replayed from the journal (not run in this process).
  struct ReportedFailure {
    EvaluationFailure failure;
    bool replayed = false;
  };
  std::optional<ReportedFailure> private_failure() const {
    std::lock_guard lock(failure_mutex_);
    return private_failure_;
  }
  /// Keeps the rows of `scopes` only (a rank of a distributed run that evaluates nothing else:
  /// Tuner::rank_scopes, ABI 2.10).  Their train and scored sets are copied out of the fixed
  /// data (keep_only); the fixed rows, the layouts (which hold every training label) and what the
  /// data source kept are dropped, the splits' sizes and preprocessing stay (data_sizes, the
  /// report).  From then on a run or an event on another scope throws.  Nothing to do for a
  /// workload drawn per run (it holds nothing between runs) or a list holding the whole scope.
  void confine(const std::vector<dptune::DataScope>& scopes);
  /// What this evaluator holds, one line each (tests/mpi sees it: TestSeams::rank_holds): each of
  /// `scopes` with its train and scored rows and a checksum of their values and labels
  /// ("scope client 0/6 train 179 scored 36 checksum 5f..."), then "stored_rows N", the rows of
  /// every storage it keeps.
  std::string held_rows(const std::vector<dptune::DataScope>& scopes) const;
  /// The standardisation of the fixed data (fitted on the training split), when there is one.
  /// What ran on every row (a generated workload has no rows to preprocess: none).
  Preprocessing preprocessing() const {
    if (data_.varies_per_run()) return Preprocessing{Preprocessing::Kind::None};
    return fixed_data().preprocessing;
  }

 private:
  struct Algorithm {
    std::shared_ptr<const dptune::Mechanism> mechanism;
    std::shared_ptr<const dptune::Trainer> trainer;
  };
  Algorithm instantiate(const dptune::Params& candidate) const;
  /// One run on random stream `stream` (run_stream); `expected` is the event it must report.
  struct RunOutcome {
    double score = 0;
    std::shared_ptr<const dptune::Model> model;  // when keep (a trainer)
    dptune::Predictions output;                  // when keep (a mechanism)
  };
  RunOutcome run_once(std::uint64_t stream, const dptune::EvaluationRequest& request,
                      const Algorithm& a, const dptune::DpEvent& expected, bool keep) const;
  /// What one private run of `algorithm` on `scope` does to the data.
  dptune::DpEvent run_event(const Algorithm& algorithm, const dptune::DataScope& scope) const;
  /// The steps of evaluate() on one batch (evaluator.cpp): its runs and their streams, what the
  /// study store answers, each run here or on another rank, a run's end, a private failure.
  struct Batch;
  void prepare(Batch& b) const;
  void recall_stored(Batch& b);
  void run_task_here(Batch& b, std::size_t slot);
  void run_remote(Batch& b, RemoteTasks& remote);
  void finish_task(Batch& b, std::size_t task, double score, double task_seconds);
  void fail_request(Batch& b, std::size_t i, const std::exception_ptr& error);
  /// The fixed data and the layouts of its scopes, made on first use (layout streams).
  const DataSplits& fixed_data() const;
  const DataScopes& scopes() const;
  /// The data of a run on `scope`: from the layouts, or what confine() kept.
  ScopedData select(const DataSplits& all, const dptune::DataScope& scope) const;
  std::size_t train_rows(const dptune::DataScope& scope) const;
  /// What confine() kept for `scope`; null when not confined; throws for a scope it dropped.
  const ScopedData* confined_data(const dptune::DataScope& scope) const;

  const PipelineConfig& config_;
  const PluginRegistry& registry_;
  const DataSource& data_;
  Executor& executor_;
  const RandomSource& random_;
  std::shared_ptr<const dptune::Accountant> accountant_;
  std::shared_ptr<const dptune::Utility> utility_;
  const MechanismFactory& mechanisms_;
  MechanismNoise noise_;
  const dptune::ParamSchema* algorithm_schema_;
  std::atomic<std::uint64_t> batches_{0};
  mutable std::mutex data_mutex_;
  mutable std::unique_ptr<DataSplits> fixed_data_;
  mutable std::unique_ptr<DataScopes> scopes_;
  /// Set once by confine(), before any run: the only scopes this evaluator runs, with their data.
  std::optional<std::vector<std::pair<dptune::DataScope, ScopedData>>> confined_;
  mutable std::mutex kept_mutex_;
  std::vector<KeptModel> kept_;
  /// The request a worker rank ran last (run_task): its instance and event, reused by its next
  /// runs.
  struct RemoteRequest {
    std::string key;
    Algorithm algorithm;
    dptune::DpEvent event;
  };
  mutable std::mutex remote_mutex_;
  /// A worker kept a model that cannot be exported: from then on tasks that keep a model run here
  /// (a property of the trainer's models, not of the data).
  mutable std::atomic<bool> models_stay_{false};
  mutable std::shared_ptr<const RemoteRequest> remote_last_;
  /// Stores `failure` (first of its batch) and keeps it for private_failure(); thread-safe.
  void report_failure(const EvaluationFailure& failure, bool replayed);

  EvaluationJournal* journal_ = nullptr;
  bool private_failures_ = false;
  mutable std::mutex failure_mutex_;
  std::optional<ReportedFailure> private_failure_;
};

/// The evaluator a tuner is handed: the host's, refusing an evaluation on a kind of data scope
/// the tuner does not declare (TunerTraits::scopes; the whole data when it declares nothing).
class DeclaredScopesEvaluator final : public dptune::Evaluator {
 public:
  DeclaredScopesEvaluator(HostEvaluator& real, const PipelineConfig& config)
      : real_(real), config_(config) {}
  std::vector<dptune::Evaluation> evaluate(
      const std::vector<dptune::EvaluationRequest>& requests) override {
    const auto& declared = config_.tuner_traits.scopes;
    for (const auto& request : requests)
      if (std::find(declared.begin(), declared.end(), request.scope.kind) == declared.end())
        throw dptune::Error("tuner '" + config_.tuner.use +
                            "' asked for an evaluation on data scope " + request.scope.to_string() +
                            ", a kind of scope it does not declare (TunerTraits::scopes)");
    return real_.evaluate(requests);
  }
  dptune::DpEvent event_of(const dptune::Params& candidate,
                           const dptune::DataScope& scope) const override {
    return real_.event_of(candidate, scope);
  }
  std::size_t default_repetitions() const override { return real_.default_repetitions(); }

 private:
  HostEvaluator& real_;
  const PipelineConfig& config_;
};

class HostTunerContext final : public dptune::TunerContext {
 public:
  HostTunerContext(const PipelineConfig& config, HostEvaluator& evaluator,
                   const dptune::Accountant& accountant, const MechanismFactory& mechanisms,
                   dptune::ProgressSink& progress, dptune::RandomBitGenerator& rng,
                   Executor& executor)
      : config_(config),
        evaluator_(evaluator),
        declared_scopes_(evaluator, config),
        accountant_(accountant),
        mechanisms_(mechanisms),
        progress_(progress),
        rng_(rng),
        executor_(executor) {}
  const dptune::SearchSpace& space() const override { return config_.space; }
  dptune::Evaluator& evaluator() override { return declared_scopes_; }
  const dptune::Accountant& accountant() const override { return accountant_; }
  double delta() const override { return config_.delta; }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    return mechanisms_.make(overrides);
  }
  dptune::ProgressSink& progress() override { return progress_; }
  dptune::RandomBitGenerator& rng() override { return rng_; }
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    executor_.parallel_for(n, body);
  }
  dptune::DataSizes data_sizes() const override {
    const DataSplits& d = evaluator_.splits();
    dptune::DataSizes sizes;
    sizes.train = d.train.rows;
    sizes.validation = d.validation.rows;
    sizes.test = d.test.rows;
    sizes.scored = config_.score_split == ScoreSplit::Test ? sizes.test : sizes.validation;
    sizes.varies_per_run = evaluator_.data_varies_per_run();
    return sizes;
  }
  dptune::UtilitySensitivity utility_sensitivity(std::size_t scored_rows) const override {
    return host::utility_sensitivity(config_.utility, scored_rows);
  }
  dptune::PeerChannel* peers() override { return executor_.peers(); }
  std::size_t scopes_changed_by_one_record(const dptune::DataScope& layout) const override {
    return evaluator_.scopes_changed_by_one_record(layout);
  }

 private:
  const PipelineConfig& config_;
  HostEvaluator& evaluator_;
  DeclaredScopesEvaluator declared_scopes_;
  const dptune::Accountant& accountant_;
  const MechanismFactory& mechanisms_;
  dptune::ProgressSink& progress_;
  dptune::RandomBitGenerator& rng_;
  Executor& executor_;
};

/// Hands every call to another evaluator: the dry runs (the ledger's plan, the preflight probe)
/// derive from it and replace `evaluate` only, so events and repetitions stay the real ones.
class ForwardingEvaluator : public dptune::Evaluator {
 public:
  explicit ForwardingEvaluator(const dptune::Evaluator& real) : real_(real) {}
  dptune::DpEvent event_of(const dptune::Params& candidate,
                           const dptune::DataScope& scope) const override {
    return real_.event_of(candidate, scope);
  }
  std::size_t default_repetitions() const override { return real_.default_repetitions(); }

 protected:
  const dptune::Evaluator& real() const { return real_; }

 private:
  const dptune::Evaluator& real_;
};

/// Hands every call to another tuner context; the dry runs override what they replace.
class ForwardingTunerContext : public dptune::TunerContext {
 public:
  explicit ForwardingTunerContext(dptune::TunerContext& real) : real_(real) {}
  const dptune::SearchSpace& space() const override { return real_.space(); }
  dptune::Evaluator& evaluator() override { return real_.evaluator(); }
  const dptune::Accountant& accountant() const override { return real_.accountant(); }
  double delta() const override { return real_.delta(); }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    return real_.mechanism(overrides);
  }
  dptune::ProgressSink& progress() override { return real_.progress(); }
  dptune::RandomBitGenerator& rng() override { return real_.rng(); }
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    real_.parallel_for(n, body);
  }
  dptune::DataSizes data_sizes() const override { return real_.data_sizes(); }
  dptune::UtilitySensitivity utility_sensitivity(std::size_t scored_rows) const override {
    return real_.utility_sensitivity(scored_rows);
  }
  std::size_t scopes_changed_by_one_record(const dptune::DataScope& layout) const override {
    return real_.scopes_changed_by_one_record(layout);
  }

 private:
  dptune::TunerContext& real_;
};

/// Progress that goes nowhere (dry runs).
class SilentProgress final : public dptune::ProgressSink {
 public:
  void start(std::string_view, std::size_t) override {}
  void advance(std::size_t, std::optional<double>) override {}
  void message(std::string_view) override {}
};

/// The parts an evaluation needs, built from a pipeline and owned together (the evaluator holds
/// references to the others): what `dptune run`, the planners and tests assemble.  `shared_data`:
/// the pipeline's data source of another stack (what it read is not read again); null: a new one.
struct EvaluationStack {
  EvaluationStack(const PipelineConfig& config, const PluginRegistry& registry,
                  const std::string& executor_kind, std::size_t threads,
                  std::optional<std::uint64_t> seed, RandomStreamRecorder* recorder = nullptr,
                  std::optional<LayoutKey> layout_key = std::nullopt,
                  std::shared_ptr<const DataSource> shared_data = nullptr)
      : random(seed, recorder, layout_key),
        executor(make_executor(executor_kind, threads)),
        data(shared_data
                 ? std::move(shared_data)
                 // The run's threads, not this stack's executor: the checks' inline stack
                 // reads the data a seeded run then shares (check_pipeline).
                 : make_data_source(
                       config.data.use, config.data.params, config.preprocessing,
                       executor_threads(config.execution.executor, config.execution.threads))),
        accountant(registry.create_accountant(config.accountant.use, config.accountant.params)),
        utility(registry.create_utility(config.utility.use, config.utility.params)),
        mechanisms(config, registry),
        evaluator(config, registry, *data, *executor, random, accountant, utility, mechanisms) {}

  RandomSource random;
  std::unique_ptr<Executor> executor;
  std::shared_ptr<const DataSource> data;
  std::shared_ptr<const dptune::Accountant> accountant;
  std::shared_ptr<const dptune::Utility> utility;
  MechanismFactory mechanisms;
  HostEvaluator evaluator;
};

/// Rank `rank` of a distributed run of `ranks` processes keeps only the rows of the scopes `tuner`
/// evaluates there (Tuner::rank_scopes, ABI 2.10: HostEvaluator::confine), and rank 0 tells its
/// executor what every worker holds, so that no run goes to a rank without its rows.  Rank 0 keeps
/// the whole data when the pipeline asks for a test score (scored there after the tuning).  A test
/// build observes what the rank holds, or keeps every row (TestSeams, test_seams.hpp).
void keep_rank_data(const PipelineConfig& config, const dptune::Tuner& tuner,
                    EvaluationStack& stack, int rank, int ranks);

}  // namespace dptune::host
