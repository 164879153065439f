// dptune host (internal): every check that can be made before training (issue 16, part 3), the
// one path `dptune validate` and `dptune run` share.
#pragma once

#include "dptune/host/config.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "study_run.hpp"

namespace dptune::host {

/// Checks the pipeline as far as it can be known before any run trains: the tuner's and the
/// algorithm's constructors, the mechanism the trainer asks for, public statistics against the
/// data's width, the privacy of one run (δ = 0 without a pure-DP bound, a target ε no noise
/// reaches), and a dry run of the tuner (constant scores, the true events) that meets every
/// constraint the tuner checks while it runs.  Reads the data for its sizes (the events need the
/// training split's row count), never trains.  Throws ConfigDiagnostic (exit code 2).  Returns
/// the dry run's plan: what a ledger is charged.
PlannedCharge preflight(const PipelineConfig& config, const PluginRegistry& registry);

}  // namespace dptune::host
