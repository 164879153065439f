// The pipeline's components as the host creates them for checking: the catalog of names and
// schemas, the configured tuner, and the algorithm probed at the search space's centre.
#include "dptune/host/configured.hpp"

#include <vector>

#include "dptune/host/data_source.hpp"

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

const std::pair<const std::string, SourceLocation>* parameter_named_by(
    const ComponentConfig& component, const std::string& reason) {
  const auto colon = reason.find(": ");
  if (colon == std::string::npos) return nullptr;
  const auto at = component.param_where.find(reason.substr(0, colon));
  return at == component.param_where.end() ? nullptr : &*at;
}

/// A plugin's refusal of its parameters, at the parameter it names (parameter_named_by), else at
/// the section.
namespace {
ConfigDiagnostic params_refused(const ComponentConfig& component, const std::string& section,
                                const std::string& role, const ParamsRejected& e) {
  const std::string message = role + " '" + e.plugin() + "' refused its parameters: " + e.reason();
  if (const auto* at = parameter_named_by(component, e.reason()))
    return {at->second, section + ".params." + at->first, message};
  return {component.where, section + ".params", message};
}
}  // namespace

std::shared_ptr<dptune::Tuner> create_configured_tuner(const PipelineConfig& config,
                                                       const PluginRegistry& registry) {
  try {
    return registry.create_tuner(config.tuner.use, config.tuner.params);
  } catch (const ParamsRejected& e) {
    throw params_refused(config.tuner, "tuner", "tuner", e);
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
    throw params_refused(config.algorithm, "algorithm", "algorithm", e);
  }
}

}  // namespace dptune::host
