// Test helper: the plugins of this build, loaded once through the plugin registry (as `dptune`
// loads them; never unloaded, since plugin objects may outlive a test), and its accountants
// created by name, for tests that compare them with independent numerics.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "build_paths.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace dptune_test {

inline const dptune::host::PluginRegistry& built_plugins() {
  static const auto* registry = [] {
    auto* out = new dptune::host::PluginRegistry();
    out->scan(dptune_test::build_paths::built_plugin_dir);
    return out;
  }();
  return *registry;
}

inline std::shared_ptr<dptune::Accountant> built_accountant(const std::string& name) {
  const auto* info = built_plugins().find(dptune::PluginKind::Accountant, name);
  REQUIRE(info != nullptr);
  return built_plugins().create_accountant(name, info->schema.complete({}));
}

}  // namespace dptune_test
