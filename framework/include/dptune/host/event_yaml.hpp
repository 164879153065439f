// dptune host: DpEvents written in YAML, the syntax `dptune privacy` reads and DpEvent::to_string
// prints, with dp_accounting's names, e.g. {self_composed: {count: 10, event: {gaussian:
// {noise_multiplier: 1.1}}}}.  The kinds and their fields are those of the SDK's kind table
// (dptune/event_kinds.hpp; listed in docs/events.md).
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
