// Pieces every `dptune` command shares: exit codes, usage errors, option parsing, plugin scanning.
#pragma once

#include <boost/program_options.hpp>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/params.hpp"
#include "dptune/plugin.hpp"

namespace dptune::cli {

constexpr int kOk = 0, kFailure = 1, kUsage = 2;

// Every number a command prints goes through the host's formatting (dptune/host/format.hpp).
using dptune::host::full_precision;
using dptune::host::significant;

/// A bad command line: printed as "dptune: <message>", exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Scans the default plugin folders, then `extra` (--plugin-path), then a pipeline's plugin_paths.
void scan_plugins(dptune::host::PluginRegistry& registry, const std::vector<std::string>& extra,
                  const std::vector<std::filesystem::path>& pipeline_paths);

/// A command's positional argument: a hidden option `name` bound to `value` (po::value(&x); the
/// parser owns it once given) that takes `words` words of the command line (-1: all the rest).
struct Positional {
  const char* name;
  const boost::program_options::value_semantic* value;
  int words = 1;
};

/// Parses a command's `args`: the `visible` options (what --help prints) and the positional
/// arguments, in order.  On --help prints `visible` to standard output and returns nothing.
std::optional<boost::program_options::variables_map> parse_command(
    const boost::program_options::options_description& visible,
    const std::vector<std::string>& args, std::initializer_list<Positional> positionals);

/// The text of an event file, or of standard input for "-".  Throws UsageError when unreadable.
std::string read_event_file(const std::string& path);

/// The accountant `dptune privacy`, `dptune plan` and `dptune audit` price with when the command
/// line names none (--accountant): a configuration constant of the command-line tools, not a
/// dependency.  When no accountant of this name is loaded, create_accountant refuses with the
/// loaded accountants' names (a UsageError), as for any name the user gives.
inline constexpr const char* kDefaultAccountant = "rdp";

/// The accountant plugin `name` with `given` params completed by its schema; unknown names (with a
/// did-you-mean) and invalid params are UsageErrors.
std::shared_ptr<dptune::Accountant> create_accountant(const dptune::host::PluginRegistry& registry,
                                                      const std::string& name,
                                                      const dptune::Params& given = {});

/// --set key.path=value options as config overrides.
std::vector<dptune::host::Override> parse_sets(const std::vector<std::string>& sets);
/// Scans plugins (defaults, `plugin_paths`, the pipeline's own) and loads and validates PIPELINE.
dptune::host::PipelineConfig load(const std::string& pipeline, const std::vector<std::string>& sets,
                                  const std::vector<std::string>& plugin_paths,
                                  dptune::host::PluginRegistry& registry);

/// `dptune privacy`: the cost of a DpEvent, or the noise that meets a target (privacy.cpp).
int cmd_privacy(const std::vector<std::string>& args);
/// `dptune predict`: a released model.json applied to the rows of a CSV file (predict.cpp).
int cmd_predict(const std::vector<std::string>& args);
/// `dptune audit MECHANISM`: a statistical search for violations of a mechanism's claim
/// (audit.cpp).
int cmd_audit(const std::vector<std::string>& args);
/// `dptune audit trainer PIPELINE`: a one-run empirical ε lower bound of a trainer
/// (audit_trainer.cpp).
int cmd_audit_trainer(const std::vector<std::string>& args);
/// `dptune check accountant NAME | release PIPELINE`: the plugins' conformance kit (check.cpp).
int cmd_check(const std::vector<std::string>& args);
/// `dptune plan repetition`: the repetition tuner's distributions side by side (plan.cpp).
int cmd_plan(const std::vector<std::string>& args);
/// `dptune study show DIR` and `dptune ledger show FILE`: a study's and a ledger's state
/// (study.cpp).
int cmd_study(const std::vector<std::string>& args);
/// `dptune study list [DIR]` (cmd_study hands it the words after "list").
int study_list(const std::vector<std::string>& args);
int cmd_ledger(const std::vector<std::string>& args);

}  // namespace dptune::cli
