#include "run/evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "dptune/errors.hpp"
#include "dptune/event_walk.hpp"
#include "run/mpi_wire.hpp"
#include "study/study.hpp"

namespace dptune::host {

namespace {

/// The text of a failure, for the SENSITIVE record.
std::string failure_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

// Stream ids: 0 is the tuner's own generator, LayoutStreams (data_scopes.hpp) the data layout;
// evaluations use (batch + 1) << 32 | task, so a seeded run gives the same numbers whatever the
// thread count; a non-private run on a client's shard uses client_run_stream below.

/// The stream of repetition `repetition` of a non-private run of `candidate` on client scope
/// `scope`: 2^63 plus 63 bits of a hash of (client count, client index, candidate, repetition).
/// A function of the client and the candidate alone, not of the evaluate() call that asked or of
/// which process runs it: DP-Hype's clients evaluate on whichever MPI rank holds them (one process
/// batches many clients per call, a rank only its own), and a seeded run must give each client
/// the same local scores, hence votes, whatever the rank count.  Never used for a private run,
/// whose noise must be fresh at every evaluation.  Above every (batch + 1) << 32 | task of fewer
/// than 2^31 calls, and above 2^32, so never a layout stream (nor recorded for resume).
std::uint64_t client_run_stream(const dptune::DataScope& scope, const dptune::Params& candidate,
                                std::size_t repetition) {
  // FNV-1a over the text, then splitmix64's finaliser (Steele, Lea & Flood 2014) to spread it.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const std::string key = std::to_string(scope.count) + "/" + std::to_string(scope.index) + "/" +
                          std::to_string(repetition) + "/" + candidate.to_string();
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return (std::uint64_t{1} << 63) | (h >> 1);
}

class HostTrainingContext final : public dptune::TrainingContext {
 public:
  HostTrainingContext(dptune::RandomBitGenerator& rng, const MechanismFactory& mechanisms,
                      const dptune::Accountant& accountant, double delta, bool private_run)
      : rng_(rng),
        mechanisms_(mechanisms),
        accountant_(accountant),
        delta_(delta),
        private_run_(private_run) {}
  dptune::RandomBitGenerator& rng() override { return rng_; }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    return mechanisms_.make(overrides);
  }
  const dptune::Accountant& accountant() const override { return accountant_; }
  double delta() const override { return delta_; }
  bool private_run() const override { return private_run_; }

 private:
  dptune::RandomBitGenerator& rng_;
  const MechanismFactory& mechanisms_;
  const dptune::Accountant& accountant_;
  double delta_;
  bool private_run_;
};

/// `event` with each gaussian(σ) leaf replaced by what the pipeline's mechanism states for
/// noise_multiplier σ (MechanismNoise).
dptune::DpEvent state_noise(const MechanismFactory& mechanisms, const dptune::DpEvent& event) {
  using dptune::DpEvent;
  if (event.kind() != DpEvent::Kind::Gaussian)
    return dptune::map_children(
        event, [&](const DpEvent& child) { return state_noise(mechanisms, child); });
  const double sigma = event.noise_multiplier();
  const auto mechanism = mechanisms.make(dptune::Params{{"noise_multiplier", sigma}});
  DpEvent stated = mechanism->event();
  if (!MechanismNoise::fits(stated, event))
    throw dptune::PrivacyError("the pipeline's mechanism states " + stated.to_string() +
                               " where the trainer's noise " + event.to_string() +
                               " needs that event or the discrete Gaussian of the same "
                               "noise_multiplier");
  return stated;
}

/// The pipeline's accountant pricing every event with its Gaussian noise as the mechanism states
/// it: what a trainer drawing that noise calibrates against (MechanismNoise::accountant).
class StatedNoiseAccountant final : public dptune::Accountant {
 public:
  StatedNoiseAccountant(const MechanismFactory& mechanisms, const dptune::Accountant& accountant)
      : mechanisms_(mechanisms), accountant_(accountant) {}
  std::string unsupported_reason(const dptune::DpEvent& event) const override {
    return accountant_.unsupported_reason(state_noise(mechanisms_, event));
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    return accountant_.epsilon(state_noise(mechanisms_, event), delta);
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    return accountant_.delta(state_noise(mechanisms_, event), epsilon);
  }

 private:
  const MechanismFactory& mechanisms_;
  const dptune::Accountant& accountant_;
};

}  // namespace

MechanismNoise::MechanismNoise(const MechanismFactory& mechanisms,
                               const dptune::Accountant& accountant)
    : mechanisms_(mechanisms),
      accountant_(std::make_shared<StatedNoiseAccountant>(mechanisms, accountant)) {}

bool MechanismNoise::applies_to(const dptune::Trainer& trainer) {
  const auto request = trainer.mechanism_request();
  return request && request->expected.kind() == dptune::DpEvent::Kind::Gaussian;
}

bool MechanismNoise::fits(const dptune::DpEvent& stated, const dptune::DpEvent& expected) {
  if (stated == expected) return true;
  // The discrete Gaussian of the same σ on the grid release (docs/noise.md): the trainer's
  // analysis (sensitivity, sampling, composition) holds for either noise; the accountant prices
  // each by its own theorems.
  // With its minimum scale stated (discrete_gaussian_on_grid), any min_scale the mechanism vouches
  // for is a valid statement of the same σ.
  if (expected.kind() != dptune::DpEvent::Kind::Gaussian) return false;
  if (stated.kind() == dptune::DpEvent::Kind::DiscreteGaussianOnGrid)
    return stated.noise_multiplier() == expected.noise_multiplier();
  return stated == dptune::DpEvent::discrete_gaussian(expected.noise_multiplier());
}

dptune::DpEvent MechanismNoise::stated(const dptune::DpEvent& event) const {
  return state_noise(mechanisms_, event);
}

std::shared_ptr<const dptune::Mechanism> MechanismFactory::make(
    const dptune::Params& overrides) const {
  if (!config_.mechanism)
    throw dptune::ConfigError(config_.file.string() +
                              ": mechanism: the pipeline names no mechanism, but its algorithm or "
                              "tuner asks for one; add a `mechanism: {use: ...}` section");
  const auto& section = *config_.mechanism;
  {
    std::lock_guard<std::mutex> lock(overridden_mutex_);
    for (const auto& entry : overrides) overridden_.insert(entry.first);
  }
  const dptune::ParamSchema* schema = registry_.schema(ComponentKind::Mechanism, section.use);
  dptune::Params params;
  try {
    params = schema->complete(section.params.merged(overrides));
  } catch (const dptune::InvalidArgument& e) {
    throw dptune::ConfigError("mechanism '" + section.use + "': " + e.what());
  }
  return registry_.create_mechanism(section.use, params);
}

HostEvaluator::HostEvaluator(const PipelineConfig& config, const PluginRegistry& registry,
                             const DataSource& data, Executor& executor, const RandomSource& random,
                             std::shared_ptr<const dptune::Accountant> accountant,
                             std::shared_ptr<const dptune::Utility> utility,
                             const MechanismFactory& mechanisms)
    : config_(config),
      registry_(registry),
      data_(data),
      executor_(executor),
      random_(random),
      accountant_(std::move(accountant)),
      utility_(std::move(utility)),
      mechanisms_(mechanisms),
      noise_(mechanisms, *accountant_),
      algorithm_schema_(registry.schema(config.algorithm.kind, config.algorithm.use)) {
  if (!algorithm_schema_)
    throw dptune::ConfigError("algorithm '" + config.algorithm.use + "' is not a loaded plugin");
  // Read and split the data now, before any tuner runs: a malformed file is the data's error
  // (file:line), not something that seems to fail inside the tuner plugin.
  fixed_data();
}

dptune::Params HostEvaluator::complete_params(const dptune::Params& candidate) const {
  try {
    return algorithm_schema_->complete(config_.algorithm.params.merged(candidate));
  } catch (const dptune::InvalidArgument& e) {
    throw dptune::InvalidArgument("candidate " + candidate.to_string() + " for algorithm '" +
                                  config_.algorithm.use + "': " + e.what());
  }
}

HostEvaluator::Algorithm HostEvaluator::instantiate(const dptune::Params& candidate) const {
  const dptune::Params params = complete_params(candidate);
  Algorithm a;
  if (config_.algorithm.kind == ComponentKind::Mechanism)
    a.mechanism = registry_.create_mechanism(config_.algorithm.use, params);
  else
    a.trainer = registry_.create_trainer(config_.algorithm.use, params);
  return a;
}

const DataSplits& HostEvaluator::fixed_data() const {
  std::lock_guard lock(data_mutex_);
  if (!fixed_data_) {
    auto rng = random_.make(LayoutStreams::kSplit);
    // Under a seed the layout stream is a function of the seed: a source shared with the checks
    // before the run (check_pipeline) hands out the rows it read then.
    fixed_data_ = std::make_unique<DataSplits>(data_.make_fixed(*rng, random_.seed()));
  }
  return *fixed_data_;
}

const DataScopes& HostEvaluator::scopes() const {
  const DataSplits& fixed = fixed_data();
  std::lock_guard lock(data_mutex_);
  if (!scopes_)
    scopes_ =
        std::make_unique<DataScopes>(fixed.train, data_.sharding(),
                                     [this](std::uint64_t stream) { return random_.make(stream); });
  return *scopes_;
}

const ScopedData* HostEvaluator::confined_data(const dptune::DataScope& scope) const {
  std::lock_guard lock(data_mutex_);
  if (!confined_) return nullptr;
  std::string kept;
  for (const auto& [s, data] : *confined_) {
    if (same_scope(s, scope)) return &data;
    kept += (kept.empty() ? "" : ", ") + s.to_string();
  }
  throw dptune::Error("data scope " + scope.to_string() + ": this process holds only the rows of " +
                      (kept.empty() ? std::string("no scope") : kept) +
                      " (what the tuner evaluates here: Tuner::rank_scopes)");
}

ScopedData HostEvaluator::select(const DataSplits& all, const dptune::DataScope& scope) const {
  if (const ScopedData* kept = confined_data(scope)) return *kept;
  return scopes().select(all, scope, config_.score_split, data_.varies_per_run());
}

std::size_t HostEvaluator::train_rows(const dptune::DataScope& scope) const {
  if (const ScopedData* kept = confined_data(scope)) return kept->train->rows;
  return scopes().train_rows(scope);
}

namespace {
/// The splits' shapes without their rows: what a confined evaluator still answers (data_sizes).
dptune::Dataset shape_of(const dptune::Dataset& d) {
  dptune::Dataset out;
  out.name = d.name;
  out.rows = d.rows;
  out.cols = d.cols;
  out.num_classes = d.num_classes;
  out.feature_names = d.feature_names;
  return out;
}

/// FNV-1a (64 bits) of a set's shape, feature values (as stored) and labels, in row order.
std::uint64_t checksum(const dptune::Dataset& d) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const auto mix = [&h](const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      h ^= static_cast<const unsigned char*>(p)[i];
      h *= 0x100000001b3ULL;
    }
  };
  mix(&d.rows, sizeof d.rows);
  mix(&d.cols, sizeof d.cols);
  const dptune::FloatRows rows = dptune::as_float_rows(d);
  for (std::size_t i = 0; i < rows.rows() && d.cols > 0; ++i)
    mix(rows.row(i), d.cols * sizeof(float));
  mix(d.labels.data(), d.labels.size() * sizeof(double));
  return h;
}
}  // namespace

void HostEvaluator::confine(const std::vector<dptune::DataScope>& scopes) {
  if (data_.varies_per_run()) return;
  for (const auto& s : scopes)
    if (s.kind == dptune::DataScope::Kind::Whole) return;
  const DataSplits& all = fixed_data();
  std::vector<ScopedData> selected;
  selected.reserve(scopes.size());
  for (const auto& s : scopes) selected.push_back(select(all, s));
  selected = keep_only(selected);
  std::lock_guard lock(data_mutex_);
  confined_.emplace();
  for (std::size_t i = 0; i < scopes.size(); ++i)
    confined_->emplace_back(scopes[i], std::move(selected[i]));
  // Only the shapes stay; the layouts go too (they hold every training row's label).
  auto shapes = std::make_unique<DataSplits>();
  shapes->train = shape_of(fixed_data_->train);
  shapes->validation = shape_of(fixed_data_->validation);
  shapes->test = shape_of(fixed_data_->test);
  shapes->sensitivity = fixed_data_->sensitivity;
  shapes->preprocessing = fixed_data_->preprocessing;
  fixed_data_ = std::move(shapes);
  scopes_.reset();
  data_.forget();
}

std::string HostEvaluator::held_rows(const std::vector<dptune::DataScope>& scopes) const {
  std::ostringstream out;
  std::vector<const dptune::Dataset*> sets;
  for (const auto& s : scopes) {
    const ScopedData d = select(fixed_data(), s);
    out << "scope " << s.to_string() << " train " << d.train->rows << " scored " << d.scored->rows
        << " checksum " << std::hex << (checksum(*d.train) ^ (checksum(*d.scored) * 31)) << std::dec
        << "\n";
  }
  {
    std::lock_guard lock(data_mutex_);
    if (confined_) {
      for (const auto& [s, d] : *confined_)
        sets.insert(sets.end(), {d.train.get(), d.scored.get()});
    } else if (fixed_data_) {
      sets = {&fixed_data_->train, &fixed_data_->validation, &fixed_data_->test};
    }
  }
  out << "stored_rows " << stored_rows(sets) << "\n";
  return out.str();
}

dptune::DpEvent HostEvaluator::event_of(const dptune::Params& candidate,
                                        const dptune::DataScope& scope) const {
  return run_event(instantiate(candidate), scope);
}

namespace {

/// The noise multipliers of the gaussian(σ) leaves of `event`, each once, in order.
std::vector<double> gaussian_multipliers(const dptune::DpEvent& event) {
  std::vector<double> sigmas;
  dptune::for_each_event(event, [&sigmas](const dptune::DpEvent& e) {
    if (e.kind() == dptune::DpEvent::Kind::Gaussian &&
        std::find(sigmas.begin(), sigmas.end(), e.noise_multiplier()) == sigmas.end())
      sigmas.push_back(e.noise_multiplier());
  });
  return sigmas;
}

}  // namespace

std::string HostEvaluator::release_refusal(const dptune::Params& candidate,
                                           const dptune::DataScope& scope) const {
  if (data_.varies_per_run()) return {};  // a workload drawn per run: no fixed shape to ask about
  const Algorithm algorithm = instantiate(candidate);
  const std::size_t rows = train_rows(scope);
  if (algorithm.mechanism) {
    const ScopedData data = select(fixed_data(), scope);
    const std::string why = algorithm.mechanism->release_refusal(rows, data.sensitivity);
    return why.empty() ? why
                       : "mechanism '" + config_.algorithm.use + "' would refuse its release of " +
                             std::to_string(rows) + " answers: " + why;
  }
  const dptune::Trainer& trainer = *algorithm.trainer;
  const auto request = trainer.mechanism_request();
  if (!request || !config_.mechanism) return {};
  const DataSplits& splits = fixed_data();
  const auto releases =
      trainer.mechanism_releases({rows, splits.train.cols, splits.train.num_classes});
  if (releases.empty()) return {};  // none declared: nothing to ask (and no σ to calibrate)
  // The mechanism as train() configures it: for Gaussian noise, with each σ of the exact event
  // (a target-ε trainer's calibrated σ*), as MechanismNoise states it; otherwise as requested.
  std::vector<dptune::Params> configurations;
  if (MechanismNoise::applies_to(trainer)) {
    for (const double sigma :
         gaussian_multipliers(trainer.exact_event(rows, noise_.accountant(), config_.delta)))
      configurations.push_back(dptune::Params{{"noise_multiplier", sigma}});
  } else {
    configurations.push_back(request->overrides);
  }
  for (const auto& overrides : configurations) {
    const auto mechanism = mechanisms_.make(overrides);
    for (const auto& release : releases)
      if (const std::string why = mechanism->release_refusal(release.count, release.sensitivity);
          !why.empty())
        return "mechanism '" + config_.mechanism->use + "' would refuse every release of " +
               config_.algorithm.use +
               (candidate.empty() ? std::string() : " with " + candidate.to_string()) + " on " +
               std::to_string(rows) + " training rows (" + std::to_string(release.count) +
               " values a release" +
               (overrides.empty() ? std::string() : ", " + overrides.to_string()) + "): " + why;
  }
  return {};
}

dptune::DpEvent HostEvaluator::run_event(const Algorithm& algorithm,
                                         const dptune::DataScope& scope) const {
  if (algorithm.mechanism) return algorithm.mechanism->event();
  return trainer_event(*algorithm.trainer, train_rows(scope));
}

dptune::DpEvent HostEvaluator::trainer_event(const dptune::Trainer& trainer,
                                             std::size_t train_rows) const {
  // The exact event given the pipeline's accountant and δ (what a target-ε trainer calibrates
  // against in train(), through HostTrainingContext).  A trainer drawing Gaussian noise through
  // the mechanism calibrates on, and reports, the mechanism's own event for that noise
  // (MechanismNoise).
  if (!MechanismNoise::applies_to(trainer))
    return trainer.exact_event(train_rows, *accountant_, config_.delta);
  return noise_.stated(trainer.exact_event(train_rows, noise_.accountant(), config_.delta));
}

/// One call of evaluate(): its requests, their runs (tasks: R per request) and what is known of
/// them as the batch proceeds.
struct HostEvaluator::Batch {
  struct Prepared {
    Algorithm algorithm;
    std::size_t repetitions = 0;
    std::size_t first_task = 0;
  };
  Batch(std::uint64_t batch_number, const std::vector<dptune::EvaluationRequest>& asked)
      : number(batch_number),
        requests(asked),
        results(asked.size()),
        recalled(asked.size(), 0),
        remaining(asked.size()) {}

  std::uint64_t number;
  const std::vector<dptune::EvaluationRequest>& requests;
  std::vector<Prepared> prepared;
  std::vector<dptune::Evaluation> results;
  std::size_t tasks = 0;
  std::vector<double> seconds;                      // per task
  std::vector<std::size_t> owner;                   // per task: its request
  std::vector<std::uint64_t> stream;                // per task: its random stream
  std::vector<char> recalled;                       // per request: answered by the study store
  std::vector<std::size_t> pending;                 // the tasks to run
  std::vector<std::atomic<std::size_t>> remaining;  // per request: runs not finished
  std::mutex keep_mutex;
  std::atomic<bool> failed{false};  // a private tuner's run failed: no other run starts

  /// The last run of a request that keeps its output keeps it.
  bool keeps(std::size_t task) const {
    const std::size_t i = owner[task];
    return requests[i].keep_output && task + 1 == prepared[i].first_task + prepared[i].repetitions;
  }
  void summarise(std::size_t i) {
    auto& r = results[i];
    const auto& u = r.utilities;
    r.utility_min = *std::min_element(u.begin(), u.end());
    r.utility_max = *std::max_element(u.begin(), u.end());
    // Rounding in the sum can put the mean of R equal scores a few ulps outside [min, max].
    r.utility_mean =
        std::clamp(std::accumulate(u.begin(), u.end(), 0.0) / static_cast<double>(u.size()),
                   r.utility_min, r.utility_max);
  }
};

void HostEvaluator::prepare(Batch& b) const {
  const auto& requests = b.requests;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto& request = requests[i];
    const std::size_t reps = request.repetitions ? request.repetitions : config_.repetitions;
    b.prepared.push_back({instantiate(request.candidate), reps, b.tasks});
    b.tasks += reps;
    auto& result = b.results[i];
    result.request = request;
    result.request.repetitions = reps;
    result.utilities.assign(reps, std::numeric_limits<double>::quiet_NaN());
    if (!request.private_run) {
      result.event = dptune::DpEvent::non_private();
      result.privacy.epsilon = std::numeric_limits<double>::infinity();
      result.privacy.delta = 1;
      result.privacy.derivation = "non-private run: no guarantee";
    }
  }
  // Predict and price each private request once, not once per repetition, in parallel: both may
  // be expensive (a target-ε trainer calibrates σ by a root-find over accountant calls).
  executor_.parallel_for(requests.size(), [&](std::size_t i) {
    if (!requests[i].private_run) return;
    b.results[i].event = run_event(b.prepared[i].algorithm, requests[i].scope);
    b.results[i].privacy = accountant_->epsilon(b.results[i].event, config_.delta);
  });
  b.seconds.assign(b.tasks, 0.0);
  b.owner.resize(b.tasks);
  b.stream.resize(b.tasks);
  for (std::size_t i = 0; i < b.prepared.size(); ++i)
    for (std::size_t r = 0; r < b.prepared[i].repetitions; ++r) {
      const std::size_t task = b.prepared[i].first_task + r;
      b.owner[task] = i;
      const bool client_run =
          !requests[i].private_run && requests[i].scope.kind == dptune::DataScope::Kind::Client;
      b.stream[task] = client_run ? client_run_stream(requests[i].scope, requests[i].candidate, r)
                                  : (b.number << 32) | task;
    }
  for (std::size_t i = 0; i < requests.size(); ++i) b.remaining[i] = b.prepared[i].repetitions;
}

// The study store answers what an earlier process of this study computed; the others run with the
// task numbers (and so, under a seed, the streams) of an uninterrupted run.
void HostEvaluator::recall_stored(Batch& b) {
  if (journal_) {
    journal_->before_batch(b.number);
    // A batch in which a private tuner's evaluation failed ends as it ended then: replayed, never
    // run again (a fresh run would resample the failure away: docs/studies.md).
    if (auto stored = journal_->recall_failure(b.number, b.requests)) {
      report_failure(*stored, true);
      throw PrivateEvaluationFailed();
    }
    for (std::size_t i = 0; i < b.requests.size(); ++i)
      b.recalled[i] = journal_->recall(b.number, i, b.results[i]) ? 1 : 0;
  }
  for (std::size_t task = 0; task < b.tasks; ++task)
    if (!b.recalled[b.owner[task]]) b.pending.push_back(task);
}

void HostEvaluator::finish_task(Batch& b, std::size_t task, double score, double task_seconds) {
  const std::size_t i = b.owner[task];
  b.results[i].utilities[task - b.prepared[i].first_task] = score;
  b.seconds[task] = task_seconds;
  // The last run of a request stores the whole evaluation, committed before it is used.
  if (b.remaining[i].fetch_sub(1) == 1 && journal_) {
    std::lock_guard lock(b.keep_mutex);
    for (std::size_t t = 0; t < b.prepared[i].repetitions; ++t)
      b.results[i].seconds += b.seconds[b.prepared[i].first_task + t];
    b.summarise(i);
    journal_->record(b.number, i, b.results[i]);
    // Stored as it is; the tuner sees it as a recalled run of the same output would be seen.
    if (!journal_->keeps_fresh_model(b.results[i])) b.results[i].model = nullptr;
  }
}

void HostEvaluator::fail_request(Batch& b, std::size_t i, const std::exception_ptr& error) {
  b.failed = true;
  report_failure({b.number, i, request_key(b.requests[i]), failure_text(error)}, false);
}

void HostEvaluator::run_task_here(Batch& b, std::size_t slot) {
  // A cancellation point between runs: a run that started finishes and is stored.
  if (journal_) check_interrupt();
  if (b.failed) throw PrivateEvaluationFailed();
  const std::size_t task = b.pending[slot];
  const std::size_t i = b.owner[task];
  const auto started = std::chrono::steady_clock::now();
  RunOutcome outcome;
  try {
    outcome = run_once(b.stream[task], b.requests[i], b.prepared[i].algorithm, b.results[i].event,
                       b.keeps(task));
  } catch (...) {
    // Whatever it threw (an Interrupted too: the plugin proxy turns any failure into one while a
    // signal is pending, and no cancellation point lies inside a run), the run failed.
    if (!private_failures_) throw;
    fail_request(b, i, std::current_exception());
    throw PrivateEvaluationFailed();  // the executor hands out nothing more
  }
  if (b.keeps(task)) {
    std::lock_guard lock(b.keep_mutex);
    b.results[i].output = std::move(outcome.output);
    b.results[i].model = std::move(outcome.model);
  }
  finish_task(b, task, outcome.score,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

// Another process runs the same task with the same stream (its two halves).  A trained model it
// keeps travels back as exported numbers with its score, so the runs of a tuner that keeps every
// run's model (repetition) spread over the ranks too; a mechanism's kept release, or a model that
// cannot be exported, is made here.
void HostEvaluator::run_remote(Batch& b, RemoteTasks& remote) {
  std::vector<RemoteTask> remote_tasks;
  std::vector<char> local_only;
  for (std::size_t task : b.pending) {
    const std::size_t i = b.owner[task];
    RemoteTask remote_task{b.stream[task] >> 32, b.stream[task] & 0xFFFFFFFFULL, b.requests[i]};
    remote_task.request.keep_output = b.keeps(task);
    remote_tasks.push_back(std::move(remote_task));
    const bool travels = b.prepared[i].algorithm.trainer && !models_stay_;
    local_only.push_back(b.keeps(task) && !travels ? 1 : 0);
  }
  try {
    remote.run(
        remote_tasks, local_only, [&](std::size_t slot) { run_task_here(b, slot); },
        [&](std::size_t slot, const RemoteResult& r) {
          const std::size_t task = b.pending[slot];
          if (r.model_stayed) {  // run it here instead; the other rank's run is not used
            models_stay_ = true;
            run_task_here(b, slot);
            return;
          }
          if (r.model) {
            std::lock_guard lock(b.keep_mutex);
            b.results[b.owner[task]].model = model_from_export(decode_model(*r.model));
          }
          finish_task(b, task, r.score, r.seconds);
        },
        [&] {
          if (journal_) check_interrupt();
        });
  } catch (const Interrupted&) {
    throw;
  } catch (...) {
    // A run on another rank failed (or a rank was lost with runs in flight): for a private tuner,
    // the failure of the first evaluation not done.
    if (!private_failures_ || b.failed) throw;
    std::size_t i = 0;
    while (i + 1 < b.requests.size() && (b.recalled[i] || b.remaining[i] == 0)) ++i;
    fail_request(b, i, std::current_exception());
  }
}

std::vector<dptune::Evaluation> HostEvaluator::evaluate(
    const std::vector<dptune::EvaluationRequest>& requests) {
  Batch b(batches_.fetch_add(1) + 1, requests);
  prepare(b);
  recall_stored(b);
  try {
    if (RemoteTasks* remote = executor_.remote())
      run_remote(b, *remote);
    else
      executor_.parallel_for(b.pending.size(), [&](std::size_t slot) { run_task_here(b, slot); });
  } catch (const Interrupted&) {
    if (!b.failed) throw;  // a stored failure outranks the interruption: it is the batch's outcome
  } catch (const PrivateEvaluationFailed&) {
  }
  if (b.failed) throw PrivateEvaluationFailed();

  for (std::size_t i = 0; i < b.results.size(); ++i) {
    b.summarise(i);
    if (b.recalled[i] || journal_) continue;  // seconds recalled, or summed when stored
    for (std::size_t t = 0; t < b.prepared[i].repetitions; ++t)
      b.results[i].seconds += b.seconds[b.prepared[i].first_task + t];
  }
  {
    std::lock_guard lock(kept_mutex_);
    for (const auto& r : b.results)
      if (r.model) kept_.push_back({r.request.candidate, r.utility_mean, r.model});
  }
  return std::move(b.results);
}

std::size_t HostEvaluator::scopes_changed_by_one_record(const dptune::DataScope& layout) const {
  // client_layout (data_layout.hpp): a Dirichlet shard assignment reads the record's label, so
  // replacing the record may move it from one client to another (and nothing else); every other
  // layout places rows by their slot alone.
  const bool by_label =
      data_.sharding().options.distribution == ShardOptions::Distribution::Dirichlet;
  return layout.kind == dptune::DataScope::Kind::Client && layout.count >= 2 && by_label ? 2 : 1;
}

void HostEvaluator::report_failure(const EvaluationFailure& failure, bool replayed) {
  std::lock_guard lock(failure_mutex_);
  if (private_failure_ && private_failure_->failure.batch == failure.batch) return;  // its first
  // Stored (with the pending random words, on disk) before anything reports it.
  if (journal_ && !replayed) journal_->record_failure(failure);
  private_failure_ = ReportedFailure{failure, replayed};
}

HostEvaluator::RunOutcome HostEvaluator::run_once(std::uint64_t stream,
                                                  const dptune::EvaluationRequest& request,
                                                  const Algorithm& a,
                                                  const dptune::DpEvent& expected,
                                                  bool keep) const {
  auto rng = random_.make(stream);
  DataSplits fresh;
  const DataSplits* all = nullptr;
  if (data_.varies_per_run()) {
    fresh = data_.make(*rng);
    all = &fresh;
  } else {
    all = &fixed_data();
  }
  const ScopedData data = select(*all, request.scope);
  RunOutcome outcome;
  double score;
  if (a.mechanism) {
    dptune::Predictions released;
    if (request.private_run)
      released.values = a.mechanism->release(data.train->labels, data.sensitivity, *rng);
    else
      released.values = data.train->labels;  // the exact answers: what a non-private run returns
    if (released.values.size() != data.train->labels.size())
      throw dptune::PluginError("mechanism '" + config_.algorithm.use + "' released " +
                                std::to_string(released.values.size()) + " values for " +
                                std::to_string(data.train->labels.size()) + " queries");
    released.num_classes = data.train->num_classes;
    score = utility_->score(data.scored->labels, released);
    if (keep) outcome.output = std::move(released);
  } else {
    HostTrainingContext context(
        *rng, mechanisms_,
        MechanismNoise::applies_to(*a.trainer) ? noise_.accountant() : *accountant_, config_.delta,
        request.private_run);
    dptune::TrainedModel trained = a.trainer->train(*data.train, context);
    if (!(trained.event == expected))
      throw dptune::PluginError("trainer '" + config_.algorithm.use + "' reported the event " +
                                trained.event.to_string() + " but exact_event() predicted " +
                                expected.to_string() + "; refusing to account for either");
    if (!trained.model)
      throw dptune::PluginError("trainer '" + config_.algorithm.use + "' returned no model");
    score = utility_->score(data.scored->labels, trained.model->predict(*data.scored));
    if (keep) outcome.model = trained.model;
  }
  if (!(score >= 0.0 && score <= 1.0))
    throw dptune::PluginError("utility '" + config_.utility.use + "' returned " +
                              std::to_string(score) + ", outside [0, 1]");
  outcome.score = score;
  return outcome;
}

dptune::TrainedModel HostEvaluator::train_once(const dptune::Trainer& trainer,
                                               const dptune::Dataset& train,
                                               std::uint64_t stream) const {
  const dptune::DpEvent expected = trainer_event(trainer, train.rows);
  auto rng = random_.make(stream);
  HostTrainingContext context(
      *rng, mechanisms_, MechanismNoise::applies_to(trainer) ? noise_.accountant() : *accountant_,
      config_.delta, true);
  dptune::TrainedModel trained = trainer.train(train, context);
  if (!(trained.event == expected))
    throw dptune::PluginError("trainer '" + config_.algorithm.use + "' reported the event " +
                              trained.event.to_string() + " but exact_event() predicted " +
                              expected.to_string() + "; refusing to account for either");
  if (!trained.model)
    throw dptune::PluginError("trainer '" + config_.algorithm.use + "' returned no model");
  return trained;
}

RemoteResult HostEvaluator::run_task(const RemoteTask& task) const {
  // The runs of one request mostly reach a worker one after another: they share one instance and
  // its predicted event, as on rank 0 (a target-epsilon trainer then calibrates once, not per run).
  // The event is the one rank 0 predicted: the same pure function of the same inputs.  Whether
  // the task keeps its model (the request's last run) is not part of the instance.
  RemoteTask shared = task;
  shared.request.keep_output = false;
  const std::string key = mpi::encode_task(0, {0, 0, shared.request});
  std::shared_ptr<const RemoteRequest> entry;
  {
    std::lock_guard lock(remote_mutex_);
    entry = remote_last_;
  }
  if (!entry || entry->key != key) {
    auto fresh = std::make_shared<RemoteRequest>();
    fresh->key = key;
    fresh->algorithm = instantiate(task.request.candidate);
    fresh->event = task.request.private_run ? run_event(fresh->algorithm, task.request.scope)
                                            : dptune::DpEvent::non_private();
    entry = fresh;
    std::lock_guard lock(remote_mutex_);
    remote_last_ = entry;
  }
  const bool keep = task.request.keep_output && entry->algorithm.trainer;
  RunOutcome outcome =
      run_once((task.batch << 32) | task.task, task.request, entry->algorithm, entry->event, keep);
  RemoteResult result;
  result.score = outcome.score;
  if (keep) {
    if (const auto exported = outcome.model->export_model())
      result.model = encode_model(*exported);
    else
      result.model_stayed = true;
  }
  return result;
}

std::vector<HostEvaluator::KeptModel> HostEvaluator::kept_models() const {
  std::lock_guard lock(kept_mutex_);
  return kept_;
}

}  // namespace dptune::host
