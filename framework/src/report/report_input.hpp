// dptune host (internal): what a run hands the report (report.hpp) and the HTML page
// (report_html.hpp).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/data_layout.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/test_score_noise.hpp"
#include "dptune/plugin.hpp"

namespace dptune::host {

struct ReportInput {
  const PipelineConfig& config;
  const dptune::TuningResult& result;
  std::string randomness;
  bool randomness_secure;
  std::string executor;
  double seconds;
  std::string data_description;
  /// The model of the tuner's selected run (the only model a private tuner releases), when the
  /// tuner kept one; written as model.json with the preprocessing (its public statistics only).
  std::shared_ptr<const dptune::Model> released_model = nullptr;
  /// The preprocessing that ran (prepared), stated in the report (preprocessing_statement).
  Preprocessing preprocessing{};
  /// The console prints derivations in full (otherwise it points to summary.json).
  bool verbose = false;
  /// One line per mechanism plugin from outside the built-ins: whether `dptune audit` checked this
  /// very library (audit.hpp, trust_statement).  Printed and written as "mechanism_audits".
  std::vector<std::string> mechanism_trust{};
  /// output.test_score's result: a private tuner releases it with the model (json_release), a map
  /// reports it like its selection.
  std::optional<TestScore> test_score{};
  /// The training data's feature names in column order, written into model.json.
  std::vector<std::string> feature_names{};
  std::vector<CategoricalColumn> categorical{};  // the data's one-hot encoded columns
  /// The mechanism parameters the algorithm or the tuner set at run time (e.g. DP-SGD's
  /// noise_multiplier): the pipeline's default of them did not run, so the resolved config
  /// leaves them out (resolved_config).
  std::set<std::string> mechanism_set_at_run_time{};
  /// The warnings the console printed before the report (`warning: ...`): a note that repeats
  /// one ("WARNING: " and the same text) is not printed again (report.html keeps it).
  std::vector<std::string> printed_warnings{};
};

/// The pipeline as it ran (resolved_config.yaml and report.html): the preprocessing that ran
/// (unless fitted on the private data), and without the mechanism parameters that were set at run
/// time, which a comment names.  Run again, it gives the same results.
std::string resolved_config(const ReportInput& in);

/// Above this ε the console warns that the guarantee says little (exp(10) ≈ 22 000).
inline constexpr double kLooseEpsilon = 10.0;

/// The anti-ideal point of Avent et al. 2020 (§3, "(10, 1)"): ε = 10, error = 1.
inline constexpr double kReferenceEpsilon = 10.0;
inline constexpr double kReferenceError = 1.0;

}  // namespace dptune::host
