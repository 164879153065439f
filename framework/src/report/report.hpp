// dptune host (internal): writes a run's results (JSON, CSV, SVG, resolved config) and a terminal
// summary.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/run_summary.hpp"
#include "dptune/plugin.hpp"
#include "report/report_input.hpp"

namespace dptune::host {

/// Indices of trials on the empirical Pareto front of (ε, 1 − mean utility), sorted by ε.
std::vector<std::size_t> trial_front(const std::vector<dptune::Trial>& trials);

RunSummary write_report(const ReportInput& input, std::ostream& out);

/// trials.csv's text for the trials of an interrupted map: the same columns, `on_front` empty
/// (no front was computed), `seconds` 0 where the store has no time.
std::string partial_trials_csv(const PipelineConfig& config,
                               const std::vector<dptune::Trial>& trials, bool fitted_preprocessing);

}  // namespace dptune::host
