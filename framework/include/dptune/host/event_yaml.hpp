// dptune host: DpEvents written in YAML, the syntax `dptune privacy` reads and DpEvent::to_string
// prints, with dp_accounting's names:
//   gaussian: {noise_multiplier}            laplace: {noise_multiplier}      pure_dp: {epsilon}
//   approx_dp: {epsilon, delta}             zcdp: {rho}                      no_op: {}
//   poisson_sampled: {rate, event}          sampled_without_replacement: {source_size, sample_size,
//   event} self_composed: {count, event}           composed: {events: [...]} repeat_and_select:
//   {mean, shape, event} (shape > -1, or inf for Poisson)
//   one_of: {events: [...]}                 repeat_until_accepted: {stop_probability, event}
#pragma once

#include <optional>
#include <string>

#include "dptune/dp_event.hpp"

namespace dptune::host {

struct EventParseOptions {
  /// When set, every noise_multiplier takes this value (calibration); noise_multiplier may then be
  /// left out of the YAML.
  std::optional<double> noise_multiplier;
};

/// Parses `text`; `file` names the source in errors ("file:line:col: key.path: message").  Throws
/// ConfigDiagnostic (exit code 2 in the CLI).  `noise_leaves`, when given, receives the number of
/// gaussian and laplace events seen.
dptune::DpEvent parse_event(const std::string& text, const std::string& file,
                            const EventParseOptions& options = {}, int* noise_leaves = nullptr);

}  // namespace dptune::host
