#include "dptune/host/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "dptune/abi.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/executor.hpp"
#include "dptune/host/random.hpp"
#include "dptune/pareto.hpp"
#include "evaluator.hpp"
#include "json.hpp"
#include "model_file.hpp"
#include "progress.hpp"
#include "report.hpp"

namespace dptune::host {

std::vector<std::string> HostCatalog::names(ComponentKind kind) const {
  if (kind != ComponentKind::Data) return registry_.names(kind);
  std::vector<std::string> out;
  for (const auto& info : data_sources()) out.push_back(info.name);
  return out;
}

const dptune::ParamSchema* HostCatalog::schema(ComponentKind kind, const std::string& name) const {
  if (kind != ComponentKind::Data) return registry_.schema(kind, name);
  const DataSourceInfo* info = find_data_source(name);
  return info ? &info->schema : nullptr;
}

std::shared_ptr<dptune::Tuner> create_configured_tuner(const PipelineConfig& config,
                                                       const PluginRegistry& registry) {
  try {
    return registry.create_tuner(config.tuner.use, config.tuner.params);
  } catch (const ParamsRejected& e) {
    throw ConfigDiagnostic(config.tuner.where, "tuner.params",
                           "tuner '" + e.plugin() + "' refused its parameters: " + e.reason());
  }
}

void check_configured_algorithm(const PipelineConfig& config, const PluginRegistry& registry) {
  if (config.algorithm.kind != ComponentKind::Trainer) return;
  const dptune::ParamSchema* schema = registry.schema(ComponentKind::Trainer, config.algorithm.use);
  if (!schema) return;
  const dptune::Params centre =
      config.space.from_unit(std::vector<double>(config.space.size(), 0.5));
  try {
    registry.create_trainer(config.algorithm.use,
                            schema->complete(config.algorithm.params.merged(centre)));
  } catch (const ParamsRejected& e) {
    throw ConfigDiagnostic(config.algorithm.where, "algorithm.params",
                           "algorithm '" + e.plugin() + "' refused its parameters: " + e.reason());
  }
}

RunSummary run_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                        const RunOptions& options, std::ostream& out) {
  const auto started = std::chrono::steady_clock::now();
  auto tuner = create_configured_tuner(config, registry);
  check_configured_algorithm(config, registry);
  EvaluationStack stack(config, registry, config.execution.executor, config.execution.threads,
                        config.execution.seed);
  TerminalProgress progress(options.show_progress);
  auto tuner_rng = stack.random.make(0);
  HostTunerContext context(config, stack.evaluator, *stack.accountant, stack.mechanisms, progress,
                           *tuner_rng, *stack.executor);

  dptune::TuningResult result = tuner->tune(context);
  progress.finish();
  // The config loader refuses fitted_standardize for the bundled private tuners; a private tuner
  // of another plugin is caught here: its guarantee cannot cover the fitted scaling, so nothing of
  // the run is released (the privacy it spent is spent).
  if (result.guarantee && stack.evaluator.preprocessing().fitted())
    throw dptune::Error("tuner '" + config.tuner.use +
                        "' returned a privacy guarantee, which cannot cover preprocessing "
                        "fitted_standardize (fitted on the private data): nothing is released");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  ReportInput input{config,
                    result,
                    stack.random.description(),
                    stack.random.secure(),
                    stack.executor->name(),
                    seconds,
                    stack.data->describe()};
  // Only the selected run's model is released (model.json); the other kept models are dropped.
  input.released_model = released_model(result, stack.evaluator.kept_models());
  input.preprocessing = stack.evaluator.preprocessing();
  input.verbose = options.verbose;
  input.mechanism_trust = mechanism_trust(config, registry);
  return write_report(input, out);
}

std::vector<dptune::DpEvent> candidate_events(const PipelineConfig& config,
                                              const PluginRegistry& registry,
                                              const std::vector<dptune::Params>& candidates) {
  EvaluationStack stack(config, registry, "inline", 1, 0);
  std::vector<dptune::DpEvent> events;
  events.reserve(candidates.size());
  for (const auto& c : candidates)
    events.push_back(stack.evaluator.event_of(c, dptune::DataScope::whole()));
  return events;
}

}  // namespace dptune::host
