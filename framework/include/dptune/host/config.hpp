// dptune host: a pipeline, parsed from YAML and validated against the plugins' schemas.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dptune/host/data_layout.hpp"
#include "dptune/host/diagnostic.hpp"
#include "dptune/host/suggest.hpp"
#include "dptune/params.hpp"
#include "dptune/plugin.hpp"
#include "dptune/schema.hpp"
#include "dptune/search_space.hpp"

namespace dptune::host {

/// What a pipeline's component sections name.  Data sources are built into the host; the others are
/// plugins.
enum class ComponentKind { Data, Mechanism, Accountant, Utility, Trainer, Tuner };
const char* to_string(ComponentKind kind);

/// What the config loader needs to know about available components: names and schemas.
class Catalog {
 public:
  virtual ~Catalog() = default;
  virtual std::vector<std::string> names(ComponentKind kind) const = 0;
  /// Null when no component of that kind has that name.
  virtual const dptune::ParamSchema* schema(ComponentKind kind, const std::string& name) const = 0;
  /// What the plugin declares for complete `params` (dptune/traits.hpp).  Default: nothing, which
  /// holds a tuner to every private rule (the safe default).
  virtual dptune::PluginTraits traits(ComponentKind kind, const std::string& name,
                                      const dptune::Params& params) const {
    (void)kind;
    (void)name;
    (void)params;
    return {};
  }
};

struct ComponentConfig {
  ComponentKind kind = ComponentKind::Tuner;
  std::string use;
  /// Complete and typed (defaults filled in) for every component except the algorithm, whose
  /// params hold only the fixed values; candidates add the search-space values.
  dptune::Params params;
  SourceLocation where;      // of the section
  SourceLocation use_where;  // of the `use` value
  /// Where each parameter given in the file (or with --set) is; defaults have no entry.
  std::map<std::string, SourceLocation> param_where;
  /// What the plugin declares for `params` (dptune/traits.hpp); empty for data sources, for the
  /// algorithm (its params are completed per candidate) and for a plugin that declares nothing.
  dptune::PluginTraits traits;
};

struct ExecutionConfig {
  std::string executor = "threads";   // "inline", "threads" or "mpi" (docs/mpi.md)
  std::size_t threads = 0;            // 0: number of cores
  std::optional<std::uint64_t> seed;  // absent: cryptographically secure noise
};

/// `output: {test_score: ...}`: a score of the released model on held-out data, either private
/// (`epsilon`: the test split's score plus Laplace noise, its ε composed into the guarantee) or on
/// a test file the user declares public (`public: FILE`, no noise, no cost).  docs/walkthrough.md.
/// The one value of `output.test_score.mechanism`.  It names the host's own noise for a private
/// test score (an exact discrete Laplace release on a grid, grid_noise.hpp, drawn by the host),
/// not a mechanism plugin: no plugin of that name is loaded or called, and the value is part of
/// the public pipeline format, so it stays even if the bundled `laplace` plugin is removed.
inline constexpr const char* kTestScoreNoise = "laplace";

struct TestScoreConfig {
  std::optional<double> epsilon;      // private: pure ε of the Laplace release
  std::filesystem::path public_file;  // public: absolute; empty for a private score
  SourceLocation where, value_where;  // of the section and of its epsilon or public value
};

struct OutputConfig {
  std::filesystem::path dir;  // absolute
  bool plot = true;
  /// Opt-in to write per-trial results of private runs (marked sensitive).
  bool sensitive_trials = false;
  std::optional<TestScoreConfig> test_score;
};

/// The optional `ledger:` section: a privacy filter shared by the studies on one dataset.
struct LedgerConfig {
  std::filesystem::path path;  // absolute (given relative to the pipeline's folder)
  std::string dataset;
  double epsilon = 0, delta = 0;  // the budget
  SourceLocation where;           // of the section
};

struct PipelineConfig {
  std::filesystem::path file;  // absolute path of the YAML file
  std::string name;
  std::vector<std::filesystem::path> plugin_paths;  // absolute
  ComponentConfig data;
  /// The data section's `preprocessing` (default normalize_rows), docs/data.md.
  Preprocessing preprocessing;
  ComponentConfig algorithm;                 // kind Trainer or Mechanism
  std::optional<ComponentConfig> mechanism;  // noise source handed to trainers and tuners
  ComponentConfig accountant;
  double delta = 0;
  SourceLocation delta_where;  // of accountant.delta's value
  ComponentConfig utility;
  std::size_t repetitions = 1;  // R
  ScoreSplit score_split = ScoreSplit::Validation;
  dptune::SearchSpace space;
  ComponentConfig tuner;
  /// What the tuner declared for its params (dptune/traits.hpp); the defaults (a private tuner
  /// releasing no model) when it declares nothing.  The rules of a private tuner and of a map
  /// are enforced from this, never from the tuner's name.
  dptune::TunerTraits tuner_traits;
  ExecutionConfig execution;
  OutputConfig output;
  std::optional<LedgerConfig> ledger;
};

/// Reads only `plugin_paths:` (resolved against the file's folder), so plugins can be discovered
/// before the full validation.  Throws ConfigDiagnostic.
std::vector<std::filesystem::path> read_plugin_paths(const std::filesystem::path& file);
/// The same with the command line's `--set` overrides applied first (so `--set plugin_paths=[...]`
/// counts); bad override paths throw the same ConfigDiagnostic as load_pipeline.
std::vector<std::filesystem::path> read_plugin_paths(const std::filesystem::path& file,
                                                     const std::vector<Override>& overrides);

/// Parses and validates a pipeline.  Throws ConfigDiagnostic on the first problem.
PipelineConfig load_pipeline(const std::filesystem::path& file,
                             const std::vector<Override>& overrides, const Catalog& catalog);

/// The resolved configuration as YAML (defaults filled in, paths absolute), saved next to results.
std::string to_yaml(const PipelineConfig& config);

}  // namespace dptune::host
