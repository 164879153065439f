#include "run/trainer_audit_parts.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dptune/errors.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace dptune::host {

void check_auditable(const PipelineConfig& config, const EvaluationStack& stack) {
  if (config.algorithm.kind != ComponentKind::Trainer)
    throw ConfigDiagnostic(config.algorithm.use_where, "algorithm.use",
                           "'" + config.algorithm.use +
                               "' is a mechanism; `dptune audit trainer` audits trainers (audit a "
                               "mechanism with `dptune audit " +
                               config.algorithm.use + "`)");
  if (stack.data->varies_per_run())
    throw ConfigDiagnostic(config.data.use_where, "data.use",
                           "data source '" + config.data.use +
                               "' draws new data per run; a trainer audit needs fixed training "
                               "rows to add its canaries to");
  const dptune::Dataset& train = stack.evaluator.splits().train;
  if (train.num_classes < 2 || train.cols == 0)
    throw ConfigDiagnostic(config.data.use_where, "data.use",
                           "a trainer audit needs classification data with features (input "
                           "canaries are labelled rows); this data has " +
                               std::to_string(train.num_classes) + " classes and " +
                               std::to_string(train.cols) + " features");
}

dptune::Params audited_params(const PipelineConfig& config, const HostEvaluator& evaluator,
                              const TrainerAuditOptions& options) {
  try {
    return evaluator.complete_params(options.candidate);
  } catch (const dptune::InvalidArgument& e) {
    throw ConfigDiagnostic(config.algorithm.where, "algorithm.params",
                           std::string(e.what()) + " (give a value with --param NAME=VALUE)");
  }
}

dptune::Neighbouring describe_audited_run(const PipelineConfig& config,
                                          const PluginRegistry& registry, EvaluationStack& stack,
                                          const dptune::Trainer& trainer, std::size_t m,
                                          TrainerAuditResult& r) {
  if (const auto* info = registry.find(dptune::PluginKind::Trainer, config.algorithm.use)) {
    r.trainer = info->name;
    r.trainer_version = info->version;
    r.library = info->library.string();
    r.sha256 = sha256_file(info->library);
  }
  const dptune::Dataset& real = stack.evaluator.splits().train;
  r.real_rows = real.rows;
  r.features = real.cols;
  r.classes = real.num_classes;
  r.delta = config.delta;
  r.randomness = stack.random.description();
  // The relation of the claim decides the game: add/remove (n varies) or replace-one (n fixed;
  // slot i holds canary i or its twin).
  try {
    const dptune::DpEvent predicted = stack.evaluator.trainer_event(trainer, real.rows + m);
    // No claim, nothing to audit against (a non-private trainer, an event the accountant refuses).
    if (const auto why = stack.accountant->unsupported_reason(predicted); !why.empty())
      throw ConfigDiagnostic(config.algorithm.use_where, "algorithm.use",
                             "the pipeline's accountant '" + config.accountant.use +
                                 "' cannot price the trainer's event " + predicted.to_string() +
                                 " (" + why + "): there is no claim to audit");
    const dptune::Neighbouring relation = dptune::neighbouring_of(predicted);
    r.neighbouring = dptune::to_string(relation);
    return relation;
  } catch (const dptune::PrivacyError& e) {
    throw ConfigDiagnostic(config.algorithm.use_where, "algorithm.use",
                           std::string("the trainer's event cannot be audited: ") + e.what());
  }
}

std::vector<ProfilePoint> claimed_profile(const dptune::Accountant& accountant,
                                          const dptune::DpEvent& event, double delta) {
  std::vector<double> deltas{delta};
  for (const double d : {1e-10, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.2, 0.5})
    if (d != delta) deltas.push_back(d);
  std::vector<ProfilePoint> profile;
  for (const double d : deltas) {
    const double eps = accountant.epsilon(event, d).epsilon;
    if (std::isfinite(eps)) profile.push_back({std::max(0.0, eps), d});
  }
  return profile;
}

void analyse_canaries(const std::vector<double>& scores, const std::vector<bool>& included,
                      const PipelineConfig& config, const TrainerAuditOptions& options,
                      dptune::RandomBitGenerator& rng, std::string_view canary_kind,
                      TrainerAuditResult& r) {
  const std::size_t m = scores.size();
  r.canaries.resize(m);
  for (std::size_t i = 0; i < m; ++i) r.canaries[i] = {included[i], scores[i]};
  r.analysis =
      "Steinke, Nasr & Jagielski (2023) (epsilon, delta) test and Mahloujifar, Melis & "
      "Chaudhuri (2025) f-DP test (Algorithm 3; the claimed profile and (epsilon, delta) "
      "hypotheses), each at half the level; one-sided guesses";
  if (!canary_kind.empty()) r.analysis.append("; ").append(canary_kind);
  if (options.split) {
    r.bounds = analyse_one_run_split(scores, included, config.delta, options.confidence,
                                     r.claimed_profile, rng);
    r.analysis += " on the top k of a random half of the canaries, k chosen on the other half";
  } else {
    const std::vector<std::size_t> ks =
        options.guesses ? std::vector<std::size_t>{*options.guesses} : guess_ladder(m);
    r.bounds = analyse_one_run(rank_canaries(scores, rng), included, ks, config.delta,
                               options.confidence, r.claimed_profile);
    r.analysis += options.guesses
                      ? " on the top " + std::to_string(*options.guesses) + " scores (k fixed)"
                      : " on the top k scores for k in the ladder m/2, m/4, ... (" +
                            std::to_string(ks.size()) + " tests each, Bonferroni)";
  }
  r.epsilon_lower = r.bounds.epsilon_lower();
  r.violation = r.bounds.snj.epsilon_lower > r.epsilon_claimed || r.bounds.fdp_rejects_claim;
}

}  // namespace dptune::host
