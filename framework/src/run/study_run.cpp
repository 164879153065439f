#include "run/study_run.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

#include "dptune/errors.hpp"
#include "dptune/host/configured.hpp"
#include "dptune/host/diagnostic.hpp"
#include "dptune/host/dry_run.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/ledger.hpp"
#include "dptune/host/test_score_noise.hpp"
#include "report/report.hpp"

namespace dptune::host {

namespace fs = std::filesystem;

std::unique_ptr<Study> open_study(const PipelineConfig& config, const RunOptions& options) {
  const fs::path& dir = config.output.dir;
  const bool exists = Study::exists_in(dir);
  if (options.resume && options.overwrite)
    throw dptune::ConfigError("dptune run: --resume and --overwrite exclude each other");
  if (exists && !options.resume && !options.overwrite)
    throw dptune::ConfigError(
        Study::file_in(dir).string() +
        ": the output folder holds a study; continue it with --resume, or start again with "
        "--overwrite (a private study's ledger charge is kept: budget spent is never refunded), "
        "or choose another folder with --out");
  if (options.resume && !exists)
    throw dptune::ConfigError(dir.string() + ": --resume: no study to resume here (no study.db)");
  if (exists && options.overwrite) Study::remove_in(dir);
  fs::create_directories(dir);
  return std::make_unique<Study>(dir, options.resume);
}

namespace {

/// Answers every request without training: constant scores (0.5, data-independent) and the true
/// event and price of each private run (the events need the public row counts only).  Keeps, for
/// the planner, the candidates whose events the tuner asked for before its first evaluation.
class DryRunEvaluator final : public ForwardingEvaluator {
 public:
  DryRunEvaluator(const HostEvaluator& real, const dptune::Accountant& accountant, double delta,
                  const ComponentConfig& tuner)
      : ForwardingEvaluator(real), accountant_(accountant), delta_(delta), tuner_(tuner) {}
  dptune::DpEvent event_of(const dptune::Params& candidate,
                           const dptune::DataScope& scope) const override {
    if (!evaluated_ && std::find(declared_.begin(), declared_.end(), candidate) == declared_.end())
      declared_.push_back(candidate);
    return real().event_of(candidate, scope);
  }
  std::vector<dptune::Evaluation> evaluate(
      const std::vector<dptune::EvaluationRequest>& requests) override {
    evaluated_ = true;
    if (++batches_ > kMaxBatches) throw endless();
    std::vector<dptune::Evaluation> out;
    for (const auto& request : requests) {
      dptune::Evaluation e;
      e.request = request;
      if (!e.request.repetitions) e.request.repetitions = real().default_repetitions();
      e.utilities.assign(e.request.repetitions, 0.5);
      e.utility_mean = e.utility_min = e.utility_max = 0.5;
      if (request.private_run) {
        e.event = real().event_of(request.candidate, request.scope);
        e.privacy = accountant_.epsilon(e.event, delta_);
      } else {
        e.event = dptune::DpEvent::non_private();
        e.privacy.epsilon = std::numeric_limits<double>::infinity();
        e.privacy.delta = 1;
      }
      out.push_back(std::move(e));
    }
    return out;
  }
  std::vector<dptune::Params> declared() const { return declared_; }

 private:
  /// A tuner that keeps asking in the dry run (e.g. repetition's threshold variant with
  /// stop_probability 0 and a threshold the constant score never reaches) would hang `plan`, a
  /// ledgered `run` and a private test score's pricing: the dry run gives up, naming the tuner.
  /// Batches are counted, not requests: a map asks for its whole grid in one.
  static constexpr std::size_t kMaxBatches = 10000;
  ConfigDiagnostic endless() const {
    return {tuner_.where, "tuner",
            "tuner " + tuner_.use +
                " did not finish a dry run (constant scores of 0.5, no training) within " +
                std::to_string(kMaxBatches) +
                " rounds of evaluations, so its guarantee cannot be checked before running; "
                "bound its run time (for repetition's threshold variant: stop_probability > 0)"};
  }

  const dptune::Accountant& accountant_;
  double delta_;
  const ComponentConfig& tuner_;
  std::size_t batches_ = 0;
  bool evaluated_ = false;
  mutable std::vector<dptune::Params> declared_;
};

/// The accountant as the tuner sees it in a dry run: it keeps every event the tuner has priced,
/// with its guarantee.
class RecordingAccountant final : public dptune::Accountant {
 public:
  explicit RecordingAccountant(const dptune::Accountant& real) : real_(real) {}
  std::string unsupported_reason(const dptune::DpEvent& event) const override {
    return real_.unsupported_reason(event);
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    dptune::PrivacyGuarantee g = real_.epsilon(event, delta);
    priced_.push_back({event, g});
    return g;
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    dptune::PrivacyGuarantee g = real_.delta(event, epsilon);
    priced_.push_back({event, g});
    return g;
  }
  std::vector<PricedEvent> priced() const { return priced_; }

 private:
  const dptune::Accountant& real_;
  mutable std::vector<PricedEvent> priced_;
};

/// The pipeline's mechanism as a tuner's own releases use it in the dry run (DP-Hype's noisy
/// votes, svt_doubling's noisy threshold and queries): before each release it asks the mechanism
/// whether it refuses `count` values of this sensitivity whatever they are
/// (Mechanism::release_refusal).  The count and the sensitivity are the real run's (they depend on
/// the configuration and the public row counts only), so a refusal here is one the real run would
/// meet after the ledger was charged.  The first refusal is kept for the dry run's caller (what
/// the tuner makes of the thrown error crosses the plugin proxy).
class RefusalCheckingMechanism final : public dptune::Mechanism {
 public:
  RefusalCheckingMechanism(std::shared_ptr<const dptune::Mechanism> real, std::string& refusal)
      : real_(std::move(real)), refusal_(refusal) {}
  std::vector<double> release(std::span<const double> values,
                              const dptune::Sensitivity& sensitivity,
                              dptune::RandomBitGenerator& rng) const override {
    if (std::string why = real_->release_refusal(values.size(), sensitivity); !why.empty()) {
      why = "its release of " + std::to_string(values.size()) + " value" +
            (values.size() == 1 ? "" : "s") + " (sensitivity L1 " + significant(sensitivity.l1) +
            ", L2 " + significant(sensitivity.l2) + ") would be refused: " + why;
      if (refusal_.empty()) refusal_ = why;
      throw dptune::Error(why);
    }
    return real_->release(values, sensitivity, rng);
  }
  dptune::DpEvent event() const override { return real_->event(); }
  std::string release_refusal(std::size_t count,
                              const dptune::Sensitivity& sensitivity) const override {
    return real_->release_refusal(count, sensitivity);
  }

 private:
  std::shared_ptr<const dptune::Mechanism> real_;
  std::string& refusal_;
};

class DryRunContext final : public ForwardingTunerContext {
 public:
  DryRunContext(HostTunerContext& real, DryRunEvaluator& evaluator,
                const RecordingAccountant& accountant)
      : ForwardingTunerContext(real),
        evaluator_(evaluator),
        accountant_(accountant),
        rng_(0x5eedULL, 0) {}
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    return std::make_shared<RefusalCheckingMechanism>(ForwardingTunerContext::mechanism(overrides),
                                                      refusal_);
  }
  /// The first release of the tuner's own that the mechanism refused, or empty.
  const std::string& refusal() const { return refusal_; }
  dptune::Evaluator& evaluator() override { return evaluator_; }
  const dptune::Accountant& accountant() const override { return accountant_; }
  dptune::ProgressSink& progress() override { return progress_; }
  // Its own public stream: the dry run's draws shape nothing that is run or released.
  dptune::RandomBitGenerator& rng() override { return rng_; }

 private:
  DryRunEvaluator& evaluator_;
  const RecordingAccountant& accountant_;
  dptune::Xoshiro256 rng_;
  SilentProgress progress_;
  std::string refusal_;
};

/// A release of the tuner's own that the pipeline's mechanism refuses whatever the values: refused
/// before any charge, at the mechanism the release would use.
[[noreturn]] void refuse_tuner_release(const PipelineConfig& config, const std::string& why) {
  const std::string message =
      "tuner '" + config.tuner.use + "' draws its own noise from mechanism '" +
      (config.mechanism ? config.mechanism->use : std::string("?")) + "', and " + why +
      ". Nothing was charged or run: give the tuner a larger privacy "
      "budget, or the mechanism's `noise: fast` (floating-point, labelled "
      "INSECURE NOISE)";
  if (config.mechanism)
    throw ConfigDiagnostic(config.mechanism->use_where, "mechanism.use", message);
  throw ConfigDiagnostic(config.tuner.where, "tuner.use", message);
}

/// Calls `ask(tuner, context, evaluator, accountant)` on a fresh copy of the pipeline's tuner in
/// the dry run's context: nothing trains, every evaluation is answered at once with its true
/// event, the random stream is public.
template <class Ask>
auto in_dry_run(const PipelineConfig& config, const PluginRegistry& registry,
                EvaluationStack& stack, Ask&& ask) {
  auto tuner = create_configured_tuner(config, registry);
  SilentProgress progress;
  dptune::Xoshiro256 unused(0);
  HostTunerContext real(config, stack.evaluator, *stack.accountant, stack.mechanisms, progress,
                        unused, *stack.executor);
  DryRunEvaluator evaluator(stack.evaluator, *stack.accountant, config.delta, config.tuner);
  RecordingAccountant accountant(*stack.accountant);
  DryRunContext context(real, evaluator, accountant);
  return ask(*tuner, context, evaluator, accountant);
}

TunerDryRun dry_run(const PipelineConfig& config, const PluginRegistry& registry,
                    EvaluationStack& stack) {
  return in_dry_run(
      config, registry, stack,
      [&config](dptune::Tuner& tuner, DryRunContext& context, const DryRunEvaluator& evaluator,
                const RecordingAccountant& accountant) {
        dptune::TuningResult result;
        try {
          result = tuner.tune(context);
        } catch (...) {
          if (!context.refusal().empty()) refuse_tuner_release(config, context.refusal());
          throw;
        }
        return TunerDryRun{result.trusted_analyst_only, result.guarantee, result.event,
                           accountant.priced(), evaluator.declared()};
      });
}

/// The worst case of the final guarantee that the tuner states before any evaluation
/// (Tuner::worst_case_event); nullopt when it states none.  Asked of a fresh copy of the tuner in
/// the dry run's context.  `distributed`: the run places work on other processes (the MPI
/// executor).
std::optional<dptune::DpEvent> stated_worst_case(const PipelineConfig& config,
                                                 const PluginRegistry& registry,
                                                 EvaluationStack& stack) {
  return in_dry_run(config, registry, stack,
                    [&](dptune::Tuner& tuner, DryRunContext& context, const DryRunEvaluator&,
                        const RecordingAccountant&) {
                      return tuner.worst_case_event(context, config.execution.executor == "mpi");
                    });
}

/// The ledger reservation of `plan`: its worst case as a second approx_dp event beside the charge
/// (what a supplement would be charged as), when the worst case exceeds the guarantee.
std::optional<LedgerReservation> reservation_of(const PlannedCharge& plan) {
  if (!plan.reserves()) return std::nullopt;
  return LedgerReservation{
      dptune::DpEvent::approx_dp(plan.worst_case->epsilon, plan.worst_case->delta),
      *plan.worst_case};
}

}  // namespace

bool PlannedCharge::reserves() const {
  return guarantee && worst_case &&
         (worst_case->epsilon > guarantee->epsilon || worst_case->delta > guarantee->delta);
}

PlannedCharge plan_charge(const PipelineConfig& config, const PluginRegistry& registry,
                          EvaluationStack& stack) {
  const TunerDryRun run = dry_run(config, registry, stack);
  check_result_as_declared(config, run.trusted_analyst_only);
  // The ledger records a map (no charge) only for a tuner that declares itself one.
  PlannedCharge plan{declared_map(config), run.guarantee, run.event, std::nullopt, std::nullopt};
  if (run.guarantee && !plan.trusted_analyst_only) {
    plan.worst_case_event = stated_worst_case(config, registry, stack);
    // Priced by the pipeline's accountant like every event.
    if (plan.worst_case_event)
      plan.worst_case = stack.accountant->epsilon(*plan.worst_case_event, config.delta);
  }
  return plan;
}

PlannedCharge plan_ledger_charge(const PipelineConfig& config, const PluginRegistry& registry,
                                 EvaluationStack& stack) {
  return ledger_charge_of(config, stack, plan_charge(config, registry, stack));
}

bool needs_dry_run(const PipelineConfig& config) {
  return config.ledger || (config.output.test_score && config.output.test_score->epsilon);
}

PlannedCharge ledger_charge_of(const PipelineConfig& config, EvaluationStack& stack,
                               PlannedCharge plan) {
  // The private test score is charged with the tuning, write-ahead like it, and is released on
  // top of whatever final guarantee the run needs: it joins the worst case too.
  if (plan.guarantee && config.output.test_score && config.output.test_score->epsilon) {
    const TestScoreNoise noise = test_score_noise(config, stack.evaluator.splits().test.rows);
    plan.guarantee =
        compose_test_score(*plan.guarantee, plan.event, noise, *stack.accountant, config.delta);
    if (plan.event) plan.event = dptune::DpEvent::composed({*plan.event, noise.event()});
    if (plan.worst_case) {
      plan.worst_case = compose_test_score(*plan.worst_case, plan.worst_case_event, noise,
                                           *stack.accountant, config.delta);
      plan.worst_case_event = dptune::DpEvent::composed({*plan.worst_case_event, noise.event()});
    }
  }
  return plan;
}

std::string check_ledger_fit(const PipelineConfig& config, const PluginRegistry& registry) {
  if (!config.ledger) return {};
  EvaluationStack stack(config, registry, "inline", 1, config.execution.seed.value_or(0));
  return ledger_fit(config, *stack.accountant, plan_ledger_charge(config, registry, stack));
}

std::string ledger_fit(const PipelineConfig& config, const dptune::Accountant& accountant,
                       const PlannedCharge& plan) {
  const LedgerConfig& l = *config.ledger;
  const std::string head = "ledger " + l.path.string() + ", dataset '" + l.dataset + "': ";
  if (plan.trusted_analyst_only || !plan.guarantee)
    return head + "nothing to charge (" +
           (plan.trusted_analyst_only ? "a map for trusted analysts" : "no guarantee claimed") +
           ")";
  const std::optional<LedgerReservation> reservation = reservation_of(plan);
  const LedgerCharge fit =
      Ledger::check(l.path, l.dataset, {l.epsilon, l.delta},
                    dptune::DpEvent::approx_dp(plan.guarantee->epsilon, plan.guarantee->delta),
                    *plan.guarantee, accountant, reservation);
  return head + "the write-ahead charge (epsilon, delta) = (" +
         significant(plan.guarantee->epsilon) + ", " + significant(plan.guarantee->delta) + ")" +
         (reservation ? " with its reserved worst-case supplement (" +
                            significant(reservation->guarantee.epsilon) + ", " +
                            significant(reservation->guarantee.delta) + ")"
                      : std::string()) +
         " fits: composed epsilon " + significant(fit.entry.total_epsilon) + " of the budget (" +
         significant(fit.budget.epsilon) + ", " + significant(fit.budget.delta) + ")";
}

TunerDryRun dry_run_tuner(const PipelineConfig& config, const PluginRegistry& registry) {
  EvaluationStack stack(config, registry, "inline", 1, 0);
  return dry_run(config, registry, stack);
}

std::string charge_ledger(const PipelineConfig& config, const Study& study,
                          const dptune::Accountant& accountant, const PlannedCharge& plan,
                          const std::string& kind) {
  const LedgerConfig& l = *config.ledger;
  Ledger ledger(l.path);
  std::optional<dptune::DpEvent> event;
  std::string row_kind = kind, note;
  if (plan.trusted_analyst_only) {
    row_kind = "map";
    note = "not DP, trusted analysts: a privacy-utility map of tuner " + config.tuner.use +
           " (every ε it reports is one run's; its trials and choice are not DP outputs)";
  } else if (!plan.guarantee) {
    row_kind = "none";
    note = "tuner " + config.tuner.use + " claims no guarantee and releases nothing under DP";
  } else {
    // The run's whole guarantee as an approx_dp event, with its RDP curve when it has one: the
    // ledger composes the charges by the smaller of basic composition and RDP composition of the
    // curves (compose_charges in ledger.hpp; docs/studies.md).
    event = dptune::DpEvent::approx_dp(plan.guarantee->epsilon, plan.guarantee->delta);
    note = "tuner " + config.tuner.use + ", pipeline " + config.file.string() + ": " +
           plan.guarantee->derivation.substr(0, 300);
  }
  const LedgerCharge charged =
      ledger.charge(l.dataset, {l.epsilon, l.delta}, study.id(), config.output.dir.string(),
                    row_kind, event, plan.guarantee.value_or(dptune::PrivacyGuarantee{}),
                    accountant, note, event ? reservation_of(plan) : std::nullopt);
  std::string line = "ledger " + l.path.string() + ", dataset '" + l.dataset + "': ";
  if (charged.entry.kind == "map")
    line += "recorded as not DP (trusted analysts), no charge";
  else if (charged.entry.kind == "none")
    line += "recorded, no guarantee claimed";
  else
    line += "charged (epsilon, delta) = (" + significant(charged.entry.epsilon) + ", " +
            significant(charged.entry.delta) + ") write-ahead";
  if (charged.already_charged) line += " when this study started (not again on resume)";
  line += "; composed epsilon " + significant(charged.entry.total_epsilon) + " of the budget (" +
          significant(charged.budget.epsilon) + ", " + significant(charged.budget.delta) + ")";
  if (charged.reservation)
    line += "; reserved write-ahead: the tuner's worst-case supplement (epsilon, delta) = (" +
            significant(charged.reservation->epsilon) + ", " +
            significant(charged.reservation->delta) + "), composed epsilon " +
            significant(charged.reservation->total_epsilon) + " with it, settled after the run";
  return line;
}

namespace {

/// summary.json of a private run that releases nothing: `status` and why.
void write_unreleased_summary(const PipelineConfig& config, const std::string& status,
                              const std::string& note) {
  fs::create_directories(config.output.dir);
  fs::remove(config.output.dir / "model.json");  // an earlier study's, overwritten
  std::ofstream file(config.output.dir / "summary.json");
  JsonWriter w(file);
  w.begin_object();
  w.key("status").value(status);
  w.key("tuner").value(config.tuner.use);
  w.key("released").null();
  w.key("note").value(note);
  w.end_object();
  file << "\n";
}

}  // namespace

void settle_ledger(const PipelineConfig& config, Study& study, const dptune::Accountant& accountant,
                   const PlannedCharge& plan, const dptune::PrivacyGuarantee& final_guarantee,
                   std::ostream& out) {
  const bool above = !plan.guarantee || final_guarantee.epsilon > plan.guarantee->epsilon ||
                     final_guarantee.delta > plan.guarantee->delta;
  // Nothing needed and nothing reserved: the charge covers the run.
  if (!above && !plan.reserves()) return;
  const LedgerConfig& l = *config.ledger;
  Ledger ledger(l.path);
  std::optional<dptune::DpEvent> needed;
  if (above) needed = dptune::DpEvent::approx_dp(final_guarantee.epsilon, final_guarantee.delta);
  const LedgerCharge settled = ledger.settle(
      l.dataset, study.id(), config.output.dir.string(), needed, final_guarantee, accountant,
      above ? "supplement: tuner " + config.tuner.use +
                  "'s final guarantee exceeded its write-ahead charge"
            : "the reserved worst-case supplement was not needed");
  const std::string head = "ledger " + l.path.string() + ", dataset '" + l.dataset + "': ";
  const std::string total = "; composed epsilon " + significant(settled.entry.total_epsilon) +
                            " of the budget (" + significant(settled.budget.epsilon) + ", " +
                            significant(settled.budget.delta) + ")";
  if (!above) {
    if (settled.entry.kind.empty()) return;  // settled when this study first ended
    // An unneeded reservation stops counting (a reservation is not spent privacy).
    out << head << "the reserved worst-case supplement was not needed: settled, it counts nothing"
        << total << "\n";
    return;
  }
  const std::string line =
      head + "supplement charged (epsilon, delta) = (" + significant(settled.entry.epsilon) + ", " +
      significant(settled.entry.delta) +
      ") after the run: the tuner's final guarantee exceeded its dry run's" +
      (plan.reserves() ? " (within its reserved worst case)" : "") +
      (settled.already_charged ? " (when this study first ended)" : "") + total;
  out << line << "\n";
  study.set("ledger_supplement", line);
  // A tuner that stated a worst case and needed more broke its statement: its guarantee cannot be
  // trusted, and the ledger may now be past what it admitted.  A supplement nobody reserved is
  // released only while the ledger stays within its budget.
  const bool broke_worst_case = plan.worst_case && settled.over_reservation;
  if (!settled.over_budget && !broke_worst_case) return;
  const std::string why =
      broke_worst_case
          ? "the run's final guarantee exceeds the worst case tuner '" + config.tuner.use +
                "' stated before it ran (the supplement is recorded: budget spent is never "
                "under-reported); nothing is released"
          : "the run's final guarantee needed a supplement that takes the ledger past its budget "
            "(the supplement is recorded: budget spent is never under-reported); nothing is "
            "released";
  write_unreleased_summary(config, "withheld", why);
  study.set("status", broke_worst_case
                          ? "withheld (the supplement exceeded the tuner's stated worst case)"
                          : "withheld (the supplement exceeded the ledger's budget)");
  throw dptune::Error("tuner '" + config.tuner.use + "': " + why + " (" + line + ")");
}

bool declared_map(const PipelineConfig& config) {
  return config.tuner_traits.outputs == dptune::TunerOutputs::Map;
}

void check_result_as_declared(const PipelineConfig& config, bool returned_map) {
  // A private tuner (or one that declares nothing) that returns a map only labels its outputs
  // more cautiously, after being held to the stricter rules; the other way round, a declared map
  // was allowed what no guarantee covers (a stratified split, fitted preprocessing), so a result
  // presented as private must not be released.
  if (returned_map || !declared_map(config)) return;
  throw dptune::Error("tuner '" + config.tuner.use +
                      "' declares itself a privacy-utility map (TunerTraits::outputs) but returned "
                      "a result that is not marked trusted_analyst_only: nothing is released");
}

[[noreturn]] void fail_private_run(const PipelineConfig& config, Study* study,
                                   const HostEvaluator::ReportedFailure& reported) {
  const fs::path& dir = config.output.dir;
  const EvaluationFailure& f = reported.failure;
  const fs::path detail = dir / "failure.SENSITIVE.txt";
  {
    fs::create_directories(dir);
    std::ofstream(detail).close();  // created empty, made owner-only, then written
    fs::permissions(detail, fs::perms::owner_read | fs::perms::owner_write);
    std::ofstream file(detail);
    file << "SENSITIVE: the failure of an evaluation of private tuner '" << config.tuner.use
         << "'.\nIts text can depend on the private data and on the run's secret randomness (a "
            "program's stderr, a seed, a value): the privacy guarantee does not cover it. Keep it "
            "like study.db: never publish it.\n"
         << "study: " << (study ? study->id() : std::string("(none)")) << "\n"
         << "batch " << f.batch << ", evaluation " << f.index + 1 << " of that batch\n"
         << "request: " << f.request << "\n"
         << (reported.replayed ? "replayed from study.db (not run again)\n" : "") << "message:\n"
         << f.message << "\n";
  }
  write_unreleased_summary(
      config, "failed",
      "an evaluation of the private tuner failed: nothing is released, the run's privacy is spent "
      "(charged in full); the failure is stored and --resume replays it (SENSITIVE detail: "
      "failure.SENSITIVE.txt)");
  if (study) study->set("status", "failed (a private evaluation failed; --resume replays it)");
  throw dptune::Error(
      std::string(reported.replayed ? "(replayed from the study store, not run again) " : "") +
      "an evaluation of private tuner '" + config.tuner.use +
      "' failed: nothing is released, and the run's privacy is spent (a ledger's charge covers "
      "it). Its message is not shown: it can depend on the private data and on the run's secret "
      "randomness; it is in " +
      detail.string() +
      " (SENSITIVE, like study.db). The failure is stored in the study: --resume replays it and "
      "never runs that evaluation again; --overwrite starts a new study (a new charge)");
}

namespace {

/// The candidate of a stored request (request_key: "{a: 0.1, b: x} | scope | ..."), its values
/// as the text trials.csv prints, for the search space's `names`.
dptune::Params stored_candidate(const std::string& request, const std::vector<std::string>& names) {
  const std::string text = request.substr(0, request.find(" | "));
  std::vector<std::pair<std::size_t, std::string>> starts;  // where each "name: " begins
  for (const auto& name : names)
    for (const char* before : {"{", ", "}) {
      const std::string token = before + name + ": ";
      if (const auto at = text.find(token); at != std::string::npos)
        starts.emplace_back(at + std::string(before).size(), name);
    }
  std::sort(starts.begin(), starts.end());
  dptune::Params candidate;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const auto& [at, name] = starts[k];
    const std::size_t from = at + name.size() + 2;
    const std::size_t to = k + 1 < starts.size() ? starts[k + 1].first - 2 : text.rfind('}');
    if (to != std::string::npos && to >= from) candidate.set(name, text.substr(from, to - from));
  }
  return candidate;
}

/// The stored evaluations of a map as trials (in the order they were requested).
std::vector<dptune::Trial> stored_trials(const PipelineConfig& config,
                                         const std::vector<Study::Stored>& stored) {
  std::vector<std::string> names;
  for (const auto& d : config.space.dimensions()) names.push_back(d.name);
  std::vector<dptune::Trial> trials;
  for (const auto& e : stored) {
    dptune::Trial t;
    t.id = trials.size();
    t.params = stored_candidate(e.request, names);
    t.privacy.epsilon = e.epsilon.value_or(std::numeric_limits<double>::infinity());
    t.privacy.delta = e.epsilon ? config.delta : 1.0;  // non-private: no guarantee (ε ∞, δ 1)
    t.repetitions = e.utilities.size();
    if (!e.utilities.empty()) {
      t.utility_min = *std::min_element(e.utilities.begin(), e.utilities.end());
      t.utility_max = *std::max_element(e.utilities.begin(), e.utilities.end());
      double sum = 0;
      for (double u : e.utilities) sum += u;
      t.utility_mean = sum / static_cast<double>(e.utilities.size());
    }
    trials.push_back(std::move(t));
  }
  return trials;
}

void write_interrupted_summary(const PipelineConfig& config, bool map, const Interruption& stop,
                               std::size_t done, const std::string& progress) {
  std::ofstream file(config.output.dir / "summary.json");
  JsonWriter w(file);
  w.begin_object();
  w.key("status").value("interrupted");
  w.key("signal").value(stop.signal_number);
  w.key("tuner").value(config.tuner.use);
  if (map) {
    w.key("progress").value(progress);
    w.key("completed_evaluations").value(done);
    w.key("trusted_analyst_only").value(true);
    w.key("note").value(
        "partial results of a privacy-utility map for trusted analysts (not DP outputs): "
        "trials.partial.csv; continue with: " +
        stop.resume_command);
  } else {
    fs::remove(config.output.dir / "model.json");  // an earlier study's, overwritten
    w.key("released").null();
    w.key("note").value(
        "a private tuner releases nothing partial; the run's privacy is spent (charged in full); "
        "continue with: " +
        stop.resume_command + " (it reuses the run's secret draws)");
  }
  w.key("resume_command").value(stop.resume_command);
  w.end_object();
  file << "\n";
}

}  // namespace

RunSummary write_interrupted_report(const PipelineConfig& config, Study& study, bool map,
                                    const Interruption& stop, std::ostream& out) {
  RunSummary summary;
  summary.output_dir = config.output.dir;
  summary.interrupted_signal = stop.signal_number;
  // Counted from the store, the one truth: what a resume will reuse.
  const auto stored = study.evaluations();
  const std::size_t done = stored.size();
  const std::string progress =
      "interrupted at " + std::to_string(done) + "/" + std::to_string(std::max(done, stop.total));
  write_interrupted_summary(config, map, stop, done, progress);
  summary.files.push_back("summary.json");
  if (map) {
    std::ofstream csv(config.output.dir / "trials.partial.csv");
    csv << partial_trials_csv(config, stored_trials(config, stored), config.preprocessing.fitted());
    summary.files.push_back("trials.partial.csv");
    study.set_progress(done, std::max(done, stop.total));
    out << progress << " evaluations; partial map (trusted analysts) in "
        << (config.output.dir / "trials.partial.csv").string() << "\n";
  } else {
    out << "interrupted: nothing released (a private tuner releases nothing partial; its privacy "
           "is spent)\n";
  }
  out << "resume with: " << stop.resume_command << "\n";
  summary.trials = stored.size();
  return summary;
}

}  // namespace dptune::host
