// What the two trainer audits (input-space canaries: trainer_audit.cpp; gradient canaries:
// gradient_audit.cpp) share: the pipeline's refusals, the trainer's identity and the game's
// neighbouring relation, the claimed privacy profile, and the analyses of the canaries' scores.
#pragma once

#include <string_view>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/host/audit_one_run.hpp"
#include "dptune/host/trainer_audit.hpp"
#include "dptune/plugin.hpp"
#include "dptune/rng.hpp"
#include "run/evaluator.hpp"

namespace dptune::host {

/// Refusals that come from the pipeline, before anything is trained: a mechanism, data drawn anew
/// per run, data without classes or features.
void check_auditable(const PipelineConfig& config, const EvaluationStack& stack);

/// The audited candidate: `options.candidate` completed with the algorithm's defaults; a missing
/// value is a diagnostic at algorithm.params that says how to give it.
dptune::Params audited_params(const PipelineConfig& config, const HostEvaluator& evaluator,
                              const TrainerAuditOptions& options);

/// The trainer's identity, the data's shape and the game's neighbouring relation (that of the
/// trainer's event for the real rows plus `m` canaries), into `r`; the relation is returned.
dptune::Neighbouring describe_audited_run(const PipelineConfig& config,
                                          const PluginRegistry& registry, EvaluationStack& stack,
                                          const dptune::Trainer& trainer, std::size_t m,
                                          TrainerAuditResult& r);

/// The claimed privacy profile: ε(δ) of `event` at the pipeline's δ and at δ = 10^-10 ... 0.5
/// (the points where the accountant gives a finite ε), each an upper bound, so the trade-off curve
/// through them lies below the true one and MMC's test of it stays valid.
std::vector<ProfilePoint> claimed_profile(const dptune::Accountant& accountant,
                                          const dptune::DpEvent& event, double delta);

/// Both analyses of the canaries' scores (Steinke, Nasr & Jagielski 2023; Mahloujifar, Melis &
/// Chaudhuri 2025) and the verdict, into `r` (its claimed ε and profile already set);
/// `canary_kind` ends the analysis's description when not empty.
void analyse_canaries(const std::vector<double>& scores, const std::vector<bool>& included,
                      const PipelineConfig& config, const TrainerAuditOptions& options,
                      dptune::RandomBitGenerator& rng, std::string_view canary_kind,
                      TrainerAuditResult& r);

}  // namespace dptune::host
