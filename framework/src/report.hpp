// dptune host (internal): writes a run's results (JSON, CSV, SVG, resolved config) and a terminal
// summary.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/data_layout.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/plots.hpp"
#include "dptune/host/runner.hpp"
#include "dptune/plugin.hpp"
#include "test_score.hpp"

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
};

/// Above this ε the console warns that the guarantee says little (exp(10) ≈ 22 000).
inline constexpr double kLooseEpsilon = 10.0;

/// The anti-ideal point of Avent et al. 2020 (§3, "(10, 1)"): ε = 10, error = 1.
inline constexpr double kReferenceEpsilon = 10.0;
inline constexpr double kReferenceError = 1.0;

/// Indices of trials on the empirical Pareto front of (ε, 1 − mean utility), sorted by ε.
std::vector<std::size_t> trial_front(const std::vector<dptune::Trial>& trials);

RunSummary write_report(const ReportInput& input, std::ostream& out);

/// trials.csv's text for the trials of an interrupted map: the same columns, `on_front` empty
/// (no front was computed), `seconds` 0 where the store has no time.
std::string partial_trials_csv(const PipelineConfig& config,
                               const std::vector<dptune::Trial>& trials, bool fitted_preprocessing);

}  // namespace dptune::host
