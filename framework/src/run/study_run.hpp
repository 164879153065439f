// dptune host (internal): what `dptune run` does around the tuner when it keeps a study:
// open or refuse the output folder's study, charge the ledger write-ahead, write the report of an
// interrupted run.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "dptune/host/config.hpp"
#include "dptune/host/run_options.hpp"
#include "dptune/host/run_summary.hpp"
#include "run/evaluator.hpp"
#include "study/study.hpp"

namespace dptune::host {

/// Opens the study in config.output.dir: refuses (ConfigError, exit 2) a folder that holds one
/// unless `resume` or `overwrite`, and `resume` without one.
std::unique_ptr<Study> open_study(const PipelineConfig& config, const RunOptions& options);

/// What the run will charge, found before any evaluation by running a fresh copy of the tuner
/// against an evaluator that trains nothing (constant scores, the true events).  A private tuner's
/// guarantee may not depend on the data or its secret draws (it is public), so the dry
/// run's guarantee is the real run's; runner checks that afterwards.
struct PlannedCharge {
  bool trusted_analyst_only = false;
  std::optional<dptune::PrivacyGuarantee> guarantee;
  /// The event `guarantee` prices (TuningResult::event), when the tuner returned one.
  std::optional<dptune::DpEvent> event;
  /// The worst case of the final guarantee the tuner stated before any evaluation
  /// (Tuner::worst_case_event, priced by the pipeline's accountant), when it stated one.
  std::optional<dptune::PrivacyGuarantee> worst_case;
  std::optional<dptune::DpEvent> worst_case_event;
  /// A worst case above the guarantee: reserved in the ledger beside the charge.
  bool reserves() const;
};
PlannedCharge plan_charge(const PipelineConfig& config, const PluginRegistry& registry,
                          EvaluationStack& stack);

/// plan_charge with the private test score composed into the guarantee and the worst case, as
/// the run charges them write-ahead.
PlannedCharge plan_ledger_charge(const PipelineConfig& config, const PluginRegistry& registry,
                                 EvaluationStack& stack);
/// The same from a plan_charge already made (the tuner's one dry run, reused).
PlannedCharge ledger_charge_of(const PipelineConfig& config, EvaluationStack& stack,
                               PlannedCharge plan);

/// Whether the checks before a run need the tuner's dry run: a ledger to charge, or a private
/// test score to compose into its guarantee.
bool needs_dry_run(const PipelineConfig& config);

/// check_ledger_fit (runner.hpp) of `plan` (ledger_charge_of's): the line validate prints;
/// throws LedgerRefused exactly when the run would be refused.
std::string ledger_fit(const PipelineConfig& config, const dptune::Accountant& accountant,
                       const PlannedCharge& plan);

/// Charges the pipeline's ledger for `plan` (once per study: a resumed study is not charged again).
/// Throws LedgerRefused (exit 2) when the budget would be exceeded.  Returns the line to print.
std::string charge_ledger(const PipelineConfig& config, const Study& study,
                          const dptune::Accountant& accountant, const PlannedCharge& plan,
                          const std::string& kind = "charge");

/// After the run: a final guarantee above `plan`'s charge is charged as a supplement (settling a
/// reservation), in full even past the budget: budget spent is never under-reported.  Prints the
/// ledger's line.  Past the budget nothing is released: summary.json says so ("status":
/// "withheld") and dptune::Error is thrown (exit 1).
void settle_ledger(const PipelineConfig& config, Study& study, const dptune::Accountant& accountant,
                   const PlannedCharge& plan, const dptune::PrivacyGuarantee& final_guarantee,
                   std::ostream& out);

/// Whether the pipeline's tuner declares itself a map for trusted analysts (its partial results
/// may be written, its failures shown); a tuner that declares nothing is private.
bool declared_map(const PipelineConfig& config);

/// Refuses (dptune::Error, nothing released) a declared map whose result is not marked as a map:
/// the report would present it as private although the map's looser rules applied.
void check_result_as_declared(const PipelineConfig& config, bool returned_map);

/// Ends a run whose private tuner's evaluation failed (`failure`, stored or replayed): writes
/// summary.json ("status": "failed", nothing released) and the failure's text to
/// failure.SENSITIVE.txt (owner-only), sets the study's status, and throws dptune::Error with a
/// message that holds nothing of the run's text (it may depend on the private data and on secret
/// draws): the console says that an evaluation failed and where the SENSITIVE detail is.
[[noreturn]] void fail_private_run(const PipelineConfig& config, Study* study,
                                   const HostEvaluator::ReportedFailure& failure);

/// What the host knows of a run a signal stopped.
struct Interruption {
  int signal_number = 0;
  std::size_t total = 0;       // the evaluations the tuner's last phase announced
  std::string resume_command;  // the command that continues the study
};

/// summary.json (and, for maps, trials.partial.csv with the columns of trials.csv) of an
/// interrupted run.  The evaluations done are counted from the study store, so the console,
/// summary.json and `dptune study show` say the same number.
RunSummary write_interrupted_report(const PipelineConfig& config, Study& study, bool map,
                                    const Interruption& stop, std::ostream& out);

}  // namespace dptune::host
