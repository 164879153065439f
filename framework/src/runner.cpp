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

RunSummary run_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                        const RunOptions& options, std::ostream& out) {
  const auto started = std::chrono::steady_clock::now();
  const RandomSource random(config.execution.seed);
  auto executor = make_executor(config.execution.executor, config.execution.threads);
  auto data = make_data_source(config.data.use, config.data.params);
  std::shared_ptr<const dptune::Accountant> accountant =
      registry.create_accountant(config.accountant.use, config.accountant.params);
  std::shared_ptr<const dptune::Utility> utility =
      registry.create_utility(config.utility.use, config.utility.params);
  auto tuner = registry.create_tuner(config.tuner.use, config.tuner.params);
  MechanismFactory mechanisms(config, registry);
  HostEvaluator evaluator(config, registry, *data, *executor, random, accountant, utility,
                          mechanisms);
  TerminalProgress progress(options.show_progress);
  auto tuner_rng = random.make(0);
  HostTunerContext context(config, evaluator, *accountant, mechanisms, progress, *tuner_rng,
                           *executor);

  dptune::TuningResult result = tuner->tune(context);
  progress.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  ReportInput input{config,           result,  random.description(), random.secure(),
                    executor->name(), seconds, data->describe()};
  // Only the selected run's model is released (model.json); the other kept models are dropped.
  input.released_model = released_model(result, evaluator.kept_models());
  if (input.released_model) input.standardizer = evaluator.standardizer();
  return write_report(input, out);
}

std::vector<dptune::DpEvent> candidate_events(const PipelineConfig& config,
                                              const PluginRegistry& registry,
                                              const std::vector<dptune::Params>& candidates) {
  const RandomSource random(0);
  auto executor = make_executor("inline", 1);
  auto data = make_data_source(config.data.use, config.data.params);
  std::shared_ptr<const dptune::Accountant> accountant =
      registry.create_accountant(config.accountant.use, config.accountant.params);
  std::shared_ptr<const dptune::Utility> utility =
      registry.create_utility(config.utility.use, config.utility.params);
  MechanismFactory mechanisms(config, registry);
  HostEvaluator evaluator(config, registry, *data, *executor, random, accountant, utility,
                          mechanisms);
  std::vector<dptune::DpEvent> events;
  events.reserve(candidates.size());
  for (const auto& c : candidates)
    events.push_back(evaluator.event_of(c, dptune::DataScope::whole()));
  return events;
}

}  // namespace dptune::host
