// dptune host (internal): the checks before a run, with what they found for the run to reuse.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dptune/host/runner.hpp"
#include "run/study_run.hpp"

namespace dptune::host {

/// What preflight found: the lines `dptune validate` prints, and the ledger's write-ahead plan
/// from the tuner's one dry run (with a ledger), which the run charges as checked.
struct Preflight {
  PreflightLines lines;
  std::optional<PlannedCharge> ledger_plan;
};

/// check_pipeline and, when `with_ledger` and the pipeline names a ledger, the ledger's fit
/// (check_ledger_before_charge's refusal, at ledger.budget), on one dry run of the tuner shared by
/// the private test score's pricing and the ledger's plan.
Preflight preflight(const PipelineConfig& config, const PluginRegistry& registry,
                    std::shared_ptr<const DataSource>* data, bool allow_audit_violation,
                    std::vector<std::string>* warnings, bool with_ledger);

}  // namespace dptune::host
