// dptune host: runs a validated pipeline and writes its results.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/configured.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/run_options.hpp"
#include "dptune/host/run_summary.hpp"

namespace dptune::host {

struct MechanismUse;  // audit.hpp

class DataSource;  // data_source.hpp

/// The registry and the data-source catalogue, as one Catalog for the config loader.

/// Builds every component, runs the tuner, writes results under config.output.dir, prints a short
/// human summary to `out`.  Throws dptune::ConfigError for configuration problems found late and
/// dptune::Error / PluginError for runtime failures.
RunSummary run_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                        const RunOptions& options, std::ostream& out);

/// Every check that can be made before any run trains: what `dptune validate` reports
/// and `dptune run` does first, before it touches its output folder.  Throws ConfigDiagnostic
/// (exit code 2) naming file:line:col and key; reads the data for its sizes only.  Returns how
/// output.test_score is priced (validate prints it), or "" without one.  `data` (when given)
/// receives the data source the checks read, for the run to read the same rows (once per process).
/// A third-party mechanism whose audit certified a violation in a configuration the run may use
/// is refused unless `allow_audit_violation`.  `warnings` (when given) receives what is not an
/// error but makes the run useless, from public inputs only: one run's ε so small that its output
/// is nearly independent of the data, a tuner's own warning before its first evaluation (DP-Hype:
/// vote noise that swamps the votes).
std::string check_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                           std::shared_ptr<const DataSource>* data = nullptr,
                           bool allow_audit_violation = false,
                           std::vector<std::string>* warnings = nullptr);

/// `dptune validate`'s ledger check: what `dptune run` would charge the pipeline's ledger
/// write-ahead (the dry run's guarantee and the worst-case supplement the tuner states), composed
/// with the ledger's rows without writing them.  Throws LedgerRefused (exit 2) exactly when the
/// run would be refused; returns the line validate prints ("" without a ledger).
std::string check_ledger_fit(const PipelineConfig& config, const PluginRegistry& registry);

/// check_ledger_fit as `validate` and `run` make it before anything is written: a refusal is a
/// ConfigDiagnostic at the ledger section (file:line:col, key ledger.budget, exit code 2), and
/// `run` refuses before it creates its output folder.
std::string check_ledger_before_charge(const PipelineConfig& config,
                                       const PluginRegistry& registry);

/// What `dptune validate` prints beside "valid": how output.test_score is priced and the ledger's
/// write-ahead fit ("" when the pipeline has none).
struct PreflightLines {
  std::string test_score;
  std::string ledger;
};

/// check_pipeline and check_ledger_before_charge together, as `dptune run` makes them, on one dry
/// run of the tuner (the private test score and the ledger's charge both price it).
PreflightLines validate_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                                 bool allow_audit_violation = false,
                                 std::vector<std::string>* warnings = nullptr);

/// The pipeline's third-party (not built-in) mechanisms as the run uses them, for audit verdicts.
std::vector<MechanismUse> mechanism_uses(const PipelineConfig& config,
                                         const PluginRegistry& registry);

}  // namespace dptune::host
