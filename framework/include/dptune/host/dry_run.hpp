// dptune host: what a tuner does before it spends any privacy, learnt by running it dry (every
// evaluation answered at once with a constant score and its true event; nothing trains).  The
// planner (`dptune plan`) asks the configured tuner this way instead of re-deriving its search.
#pragma once

#include <optional>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/plugin.hpp"

namespace dptune::host {

/// An event the tuner had the accountant price, and the accountant's answer.
struct PricedEvent {
  dptune::DpEvent event;
  dptune::PrivacyGuarantee guarantee;
};

/// What the tuner's dry run showed.  A private tuner's guarantee may not depend on the data or
/// its secret draws (it is public), so the dry run's is the real run's.
struct TunerDryRun {
  bool trusted_analyst_only = false;
  std::optional<dptune::PrivacyGuarantee> guarantee;
  /// The composed event the tuner released (TuningResult::event), when it returned one.
  std::optional<dptune::DpEvent> event;
  /// Every event the tuner priced (Accountant::epsilon or delta), in order.
  std::vector<PricedEvent> priced;
  /// The distinct candidates whose events the tuner asked the evaluator for before its first
  /// evaluation (e.g. the grid a repeat-and-select tuner draws from), in order.
  std::vector<dptune::Params> declared;
};

/// Runs `config`'s tuner dry (the pipeline's data is read for its sizes only).  Throws what the
/// tuner throws: a refusal of its configuration is a ConfigError (exit code 2).
TunerDryRun dry_run_tuner(const PipelineConfig& config, const PluginRegistry& registry);

}  // namespace dptune::host
