// dptune host: the noise of a private test score (`output.test_score.epsilon`) and its
// composition with the tuning's guarantee, fixed by public numbers only: what `dptune plan` adds
// to every planned epsilon and what a run releases with its model.  The score itself (drawing it,
// the public-file variant, the checks of validate) is internal to the host:
// framework/src/run/test_score.hpp, which states the privacy argument.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "dptune/dp_event.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/privacy.hpp"

namespace dptune::host {

/// The noise of a private test score: fixed by public numbers only (ε, the test split's size, the
/// utility's per-record sensitivity), never by the data.
struct TestScoreNoise {
  double epsilon = 0;      // pure ε of the release
  double sensitivity = 0;  // Δ: how far one record moves the utility on the test split
  std::string sensitivity_derivation;
  std::size_t test_rows = 0;
  /// b = 1/ε, the Laplace scale ÷ Δ: ε = Δ/scale (Dwork, McSherry, Nissim & Smith 2006).
  double multiplier() const { return 1 / epsilon; }
  /// The grid step of grid_noise.hpp's rule for one coordinate.
  double grid() const;
  /// The scale the integer sampler is given, back in score units: Δ/ε + grid/ε (the rounding's
  /// inflation of the sensitivity, grid_noise.hpp), rounded up, so never below Δ/ε.
  double scale() const;
  dptune::DpEvent event() const { return dptune::DpEvent::laplace(multiplier()); }
  /// One line for the report: the split, its size, Δ, ε and the scale.
  std::string describe() const;
};

/// The noise for `config`'s private test score (output.test_score.epsilon) on `test_rows` rows.
/// Throws ConfigDiagnostic at output.test_score.epsilon when the utility has no sensitivity bound
/// (utility_sensitivity) or the test split is empty.
/// What the report states about the test score.
struct TestScore {
  bool is_public = false;
  std::string source;           // "the test split (N rows)" or "the public test set FILE (N rows)"
  std::optional<double> value;  // absent: no released model to score
  std::optional<TestScoreNoise> noise;  // private only
  std::string public_file;              // public only
  /// The tuner scored its candidates on the test split too (utility.split: test).
  bool split_selected_on = false;
  /// The release line: the value (noisy or not) or why there is none.
  std::string statement(const std::string& utility) const;
  /// Data-independent: how the score is made (the split, the noise scale, the composition), or
  /// the assumed-public declaration of the test file.
  std::string method(const std::string& utility) const;
};

TestScoreNoise test_score_noise(const PipelineConfig& config, std::size_t test_rows);

/// The tuning followed by the test score (sequential composition, the release being adaptive: it
/// scores the released model), at max(`delta`, the tuning's δ).
///  * With the tuner's event (TuningResult::event, of which `tuning` is the accountant's price):
///    the smaller of the accountant's prices of composed({tuning_event, the score's Laplace event})
///    and of composed({approx_dp(tuning), the score's event}) (basic composition): events only,
///    no curve added by the host.
///  * Without (a tuner that returns a guarantee only): the guarantee is taken as stated, and the
///    result is the smaller of basic composition (ε + ε_test, δ) and, when the guarantee has an
///    RDP curve, the curves added at shared orders (Mironov 2017, Proposition 1; Laplace's curve in
///    closed form, Proposition 6) converted at `delta` — the ledger's composition of charges
///    (compose_charges).
/// With the rdp accountant both give the same ε (the accountant adds the same curves the guarantee
/// route adds and converts them by the same rule).  The result keeps the summed curve, so that
/// later charges compose with it.
dptune::PrivacyGuarantee compose_test_score(const dptune::PrivacyGuarantee& tuning,
                                            const std::optional<dptune::DpEvent>& tuning_event,
                                            const TestScoreNoise& noise,
                                            const dptune::Accountant& accountant, double delta);

/// test_score_noise for a pipeline whose split is not built yet (`dptune plan`): reads the data
/// for its test split's size only.
TestScoreNoise planned_test_score_noise(const PipelineConfig& config,
                                        const PluginRegistry& registry);

}  // namespace dptune::host
