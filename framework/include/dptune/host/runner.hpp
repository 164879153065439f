// dptune host: runs a validated pipeline and writes its results.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace dptune::host {

struct MechanismUse;  // audit.hpp

class DataSource;  // data_source.hpp

/// The registry and the data-source catalogue, as one Catalog for the config loader.
class HostCatalog : public Catalog {
 public:
  explicit HostCatalog(const PluginRegistry& registry) : registry_(registry) {}
  std::vector<std::string> names(ComponentKind kind) const override;
  const dptune::ParamSchema* schema(ComponentKind kind, const std::string& name) const override;
  dptune::PluginTraits traits(ComponentKind kind, const std::string& name,
                              const dptune::Params& params) const override {
    return registry_.traits(kind, name, params);
  }

 private:
  const PluginRegistry& registry_;
};

struct RunOptions {
  bool show_progress = true;  // only ever shown on a terminal
  bool verbose = false;       // the console shows every derivation in full
  /// Keep the study store (study.db in the output folder): `dptune run` does.  A folder
  /// holding a study is refused unless `resume` (continue it) or `overwrite` (start again).
  bool study = false;
  bool resume = false;
  bool overwrite = false;
  /// Run although `dptune audit` certified a violation of a mechanism in a configuration the run
  /// may use (the report says so); refused by default.
  bool allow_audit_violation = false;
  /// The shell command that continues this study (printed when the run is interrupted); empty:
  /// a generic "dptune run PIPELINE --resume".
  std::string resume_command;
};

struct RunSummary {
  std::filesystem::path output_dir;
  std::size_t trials = 0;
  std::vector<std::string> files;  // written, relative to output_dir
  /// SIGINT or SIGTERM stopped the run (study runs only): the partial report was written.
  int interrupted_signal = 0;
};

/// Builds every component, runs the tuner, writes results under config.output.dir, prints a short
/// human summary to `out`.  Throws dptune::ConfigError for configuration problems found late and
/// dptune::Error / PluginError for runtime failures.
RunSummary run_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                        const RunOptions& options, std::ostream& out);

/// Creates the pipeline's tuner.  A tuner whose constructor refuses its parameters (a
/// dptune::InvalidArgument, e.g. a cross-parameter constraint the schema cannot state) gives a
/// ConfigDiagnostic at the tuner section, key tuner.params: exit code 2, like every other bad
/// configuration, also from `dptune validate`.
std::shared_ptr<dptune::Tuner> create_configured_tuner(const PipelineConfig& config,
                                                       const PluginRegistry& registry);

/// Creates the algorithm (a trainer) once with the search space's centre point, so that a
/// constructor refusing its parameters (e.g. the command trainer's event template naming an
/// unknown variable) gives a ConfigDiagnostic at the algorithm section, key algorithm.params:
/// exit code 2, also from `dptune validate`.  Mechanisms are not created here.
void check_configured_algorithm(const PipelineConfig& config, const PluginRegistry& registry);

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

/// The pipeline's third-party (not built-in) mechanisms as the run uses them, for audit verdicts.
std::vector<MechanismUse> mechanism_uses(const PipelineConfig& config,
                                         const PluginRegistry& registry);

}  // namespace dptune::host
