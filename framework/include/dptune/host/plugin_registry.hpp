// dptune host: plugin discovery, pre-load checks, loading, and the registry by kind and name.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/params_rejected.hpp"
#include "dptune/plugin.hpp"

namespace dptune::host {

/// What the host knows of one plugin, read from its library's "dptune" section and descriptor.
struct PluginInfo {
  dptune::PluginKind kind = dptune::PluginKind::Mechanism;
  std::string name;
  std::string version;
  std::string description;
  int abi_major = 0, abi_minor = 0;
  std::filesystem::path library;
  dptune::ParamSchema schema;
};

/// A library that was not loaded, and why (foreign .so files are skipped without a warning entry
/// unless they were named explicitly).
struct SkippedLibrary {
  std::filesystem::path library;
  std::string reason;
};

class LoadedLibrary;  // a boost::dll::shared_library, shared by every object created from it

class PluginRegistry : public Catalog {
 public:
  PluginRegistry();
  ~PluginRegistry() override;
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  /// The default search path, in order: the build tree's plugin folder (when running from it), the
  /// install prefix's lib/dptune/plugins, then each folder of $DPTUNE_PLUGIN_PATH
  /// (colon-separated).
  static std::vector<std::filesystem::path> default_search_path();

  /// Scans a folder (recursively) or a single library file.  For each *.so: reads the "dptune"
  /// section without loading; skips libraries without it; rejects ABI major mismatch, plugin minor
  /// > host minor, another C++ ABI, unknown kind (recorded in skipped()); then loads with rtld_now
  /// | rtld_local, reads the descriptors, and registers them.  A second plugin of the same kind and
  /// name throws ConfigError naming both libraries.
  void scan(const std::filesystem::path& folder_or_file);

  const std::vector<SkippedLibrary>& skipped() const;
  std::vector<PluginInfo> plugins() const;  // sorted by kind, then name
  const PluginInfo* find(dptune::PluginKind kind, const std::string& name) const;
  /// Finds by name in any kind; null when absent.
  const PluginInfo* find_any(const std::string& name) const;

  // Catalog (for config validation).  Data sources are not plugins: the registry knows none.
  std::vector<std::string> names(ComponentKind kind) const override;
  const dptune::ParamSchema* schema(ComponentKind kind, const std::string& name) const override;
  /// What the plugin declares for complete `params` (its static traits()); empty when it declares
  /// nothing, is built for an ABI minor below 2.12, or is not loaded.  Throws PluginError when
  /// its traits() throws.
  dptune::PluginTraits traits(ComponentKind kind, const std::string& name,
                              const dptune::Params& params) const override;

  /// Creates a plugin instance with complete params.  The returned object (and everything it
  /// returns) keeps its library loaded; every call into it is wrapped so that an exception becomes
  /// a PluginError "plugin 'NAME' (LIBRARY) failed in Interface::method: what".
  std::shared_ptr<dptune::Mechanism> create_mechanism(const std::string& name,
                                                      const dptune::Params& params) const;
  std::shared_ptr<dptune::Accountant> create_accountant(const std::string& name,
                                                        const dptune::Params& params) const;
  std::shared_ptr<dptune::Utility> create_utility(const std::string& name,
                                                  const dptune::Params& params) const;
  std::shared_ptr<dptune::Trainer> create_trainer(const std::string& name,
                                                  const dptune::Params& params) const;
  std::shared_ptr<dptune::Tuner> create_tuner(const std::string& name,
                                              const dptune::Params& params) const;

 private:
  struct Entry;
  const Entry& entry(dptune::PluginKind kind, const std::string& name) const;
  std::map<std::pair<dptune::PluginKind, std::string>, std::unique_ptr<Entry>> entries_;
  std::vector<SkippedLibrary> skipped_;

  /// One library of scan(): registered whole, skipped with its reasons, or a duplicate refused.
  void scan_library(const std::filesystem::path& path, bool named_explicitly);
};

/// Parses an exported alias name "dptune_v1_0_cxx1017_1_k_mechanism_n_sparse_vector".  Returns
/// false when `symbol` is not a dptune export.
struct ExportName {
  int abi_major = 0, abi_minor = 0, cxx_abi = 0, cxx11_abi = 0;
  std::string kind, name;
};
bool parse_export_name(const std::string& symbol, ExportName& out);

}  // namespace dptune::host
