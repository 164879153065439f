// dptune host: the pipeline's components created for checking, before any data is read: the
// catalog of names and schemas (`dptune validate`), the configured tuner, the algorithm probed.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace dptune::host {

class HostCatalog : public Catalog {
 public:
  explicit HostCatalog(const PluginRegistry& registry) : registry_(registry) {}
  std::vector<std::string> names(ComponentKind kind) const override;
  const dptune::ParamSchema* schema(ComponentKind kind, const std::string& name) const override;
  dptune::PluginTraits traits(ComponentKind kind, const std::string& name,
                              const dptune::Params& params) const override {
    return registry_.traits(kind, name, params);
  }

 private:
  const PluginRegistry& registry_;
};

/// The parameter a plugin's refusal names: its reason starts with "NAME: " and the pipeline gives
/// NAME in `component`'s section.  Its name and where it was given; nullptr otherwise (the caller
/// then locates the refusal at the section).
const std::pair<const std::string, SourceLocation>* parameter_named_by(
    const ComponentConfig& component, const std::string& reason);

/// Creates the pipeline's tuner.  A tuner whose constructor refuses its parameters (a
/// dptune::InvalidArgument, e.g. a cross-parameter constraint the schema cannot state) gives a
/// ConfigDiagnostic at the tuner section, key tuner.params: exit code 2, like every other bad
/// configuration, also from `dptune validate`.
std::shared_ptr<dptune::Tuner> create_configured_tuner(const PipelineConfig& config,
                                                       const PluginRegistry& registry);

/// Creates the algorithm (a trainer) once with the search space's centre point, so that a
/// constructor refusing its parameters (e.g. the command trainer's event template naming an
/// unknown variable) gives a ConfigDiagnostic at the algorithm section, key algorithm.params:
/// exit code 2, also from `dptune validate`.  Mechanisms are not created here.
void check_configured_algorithm(const PipelineConfig& config, const PluginRegistry& registry);

}  // namespace dptune::host
