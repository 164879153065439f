#include "dptune/host/plugin_registry.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "base/build_paths.hpp"
#include "dptune/abi.hpp"
#include "dptune/errors.hpp"
#include "plugins/elf_exports.hpp"
#include "plugins/plugin_proxies.hpp"

#ifndef DPTUNE_PLUGIN_SUBDIR
#define DPTUNE_PLUGIN_SUBDIR "lib/dptune/plugins"
#endif

namespace dptune::host {

namespace fs = std::filesystem;

struct PluginRegistry::Entry {
  PluginInfo info;
  std::shared_ptr<LoadedLibrary> library;
  std::unique_ptr<dptune::Plugin> (*create)(const dptune::Params&) = nullptr;
  dptune::PluginTraits (*traits)(const dptune::Params&) = nullptr;  // null: declares nothing
};

namespace {

// ---- export names -------------------------------------------------------------------------------

bool parse_int(std::string_view text, int& out) {
  if (text.empty() || text.size() > 9) return false;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  out = value;
  return true;
}

/// Kinds and names are lower-case letters, digits and underscores.
bool is_identifier(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::optional<dptune::PluginKind> kind_from_string(std::string_view kind) {
  for (auto k :
       {dptune::PluginKind::Mechanism, dptune::PluginKind::Accountant, dptune::PluginKind::Utility,
        dptune::PluginKind::Trainer, dptune::PluginKind::Tuner}) {
    if (kind == dptune::to_string(k)) return k;
  }
  return std::nullopt;
}

std::optional<dptune::PluginKind> plugin_kind(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::Mechanism:
      return dptune::PluginKind::Mechanism;
    case ComponentKind::Accountant:
      return dptune::PluginKind::Accountant;
    case ComponentKind::Utility:
      return dptune::PluginKind::Utility;
    case ComponentKind::Trainer:
      return dptune::PluginKind::Trainer;
    case ComponentKind::Tuner:
      return dptune::PluginKind::Tuner;
    case ComponentKind::Data:
      return std::nullopt;
  }
  return std::nullopt;
}

// ---- paths --------------------------------------------------------------------------------------

fs::path canonical_or_absolute(const fs::path& path) {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (!ec) return canonical;
  return fs::absolute(path, ec).lexically_normal();
}

/// "ABI 1.0"
std::string abi_string(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

/// Takes the dlerror text out of Boost.DLL's std::system_error, whose what() is
/// "boost::dll::shared_library::load() failed (dlerror system message: TEXT): <errno message>"; the
/// text names the file and the problem.
std::string dlerror_text(const std::system_error& error) {
  std::string what = error.what();
  const std::string errno_suffix = ": " + error.code().message();
  if (what.ends_with(errno_suffix)) what.erase(what.size() - errno_suffix.size());
  const std::string marker = "(dlerror system message: ";
  const auto begin = what.find(marker);
  if (begin == std::string::npos || !what.ends_with(')')) return error.what();
  return what.substr(begin + marker.size(), what.size() - 1 - begin - marker.size());
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::string known_kinds() { return "mechanism, accountant, utility, trainer, tuner"; }

}  // namespace

bool parse_export_name(const std::string& symbol, ExportName& out) {
  // dptune_v<major>_<minor>_cxx<gxx abi>_<cxx11 abi>_k_<kind>_n_<name>
  static constexpr std::string_view prefix = "dptune_v";
  std::string_view rest(symbol);
  if (!rest.starts_with(prefix)) return false;
  rest.remove_prefix(prefix.size());
  const auto take_number = [&rest](std::string_view terminator, int& value) {
    const auto end = rest.find(terminator);
    if (end == std::string_view::npos || !parse_int(rest.substr(0, end), value)) return false;
    rest.remove_prefix(end + terminator.size());
    return true;
  };
  ExportName parsed;
  if (!take_number("_", parsed.abi_major) || !take_number("_cxx", parsed.abi_minor) ||
      !take_number("_", parsed.cxx_abi) || !take_number("_k_", parsed.cxx11_abi)) {
    return false;
  }
  const auto name_at = rest.find("_n_");
  if (name_at == std::string_view::npos) return false;
  const std::string_view kind = rest.substr(0, name_at);
  const std::string_view name = rest.substr(name_at + 3);
  if (!is_identifier(kind) || !is_identifier(name)) return false;
  parsed.kind = std::string(kind);
  parsed.name = std::string(name);
  out = std::move(parsed);
  return true;
}

PluginRegistry::PluginRegistry() = default;
PluginRegistry::~PluginRegistry() = default;

std::vector<fs::path> PluginRegistry::default_search_path() {
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::error_code exists_error;
  const fs::path beside_exe =
      ec || exe.empty() ? fs::path() : exe.parent_path() / ".." / DPTUNE_PLUGIN_SUBDIR;
  if (!beside_exe.empty() && fs::is_directory(beside_exe, exists_error)) {
    candidates.push_back(beside_exe);
  } else if (*build_paths::install_plugin_dir != '\0') {
    // Only when no plugin folder sits beside the executable: a build-tree dptune must not also load
    // the built-in plugins of an installed dptune (every name would be a duplicate).
    candidates.emplace_back(build_paths::install_plugin_dir);
  }
  if (const char* env = std::getenv("DPTUNE_PLUGIN_PATH")) {
    std::string_view rest(env);
    while (true) {
      const auto colon = rest.find(':');
      const std::string_view folder = rest.substr(0, colon);
      if (!folder.empty()) candidates.emplace_back(std::string(folder));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  std::vector<fs::path> result;
  for (const auto& candidate : candidates) {
    std::error_code status_error;
    if (!fs::is_directory(candidate, status_error)) continue;
    fs::path canonical = canonical_or_absolute(candidate);
    if (std::find(result.begin(), result.end(), canonical) == result.end()) {
      result.push_back(std::move(canonical));
    }
  }
  return result;
}

namespace {

/// One export of a library that passed the checks made before loading.
struct Candidate {
  std::string symbol;
  ExportName name;
  dptune::PluginKind kind;
};

/// Checks one export name against the host's ABI; empty when it may be loaded, else why not.
std::string check_export(const ExportName& name) {
  const std::string plugin = "plugin '" + name.name + "' (" + name.kind + "): ";
  // Until 1.0 the ABI is one contract: any change bumps the version and every plugin is rebuilt
  // (abi.hpp), so a plugin of any other major or minor may lack what the host calls.
  if (name.abi_major != dptune::kAbiMajor || name.abi_minor != dptune::kAbiMinor) {
    return plugin + "ABI " + abi_string(name.abi_major, name.abi_minor) +
           " of plugin, host has ABI " + abi_string(dptune::kAbiMajor, dptune::kAbiMinor) +
           " (until dptune 1.0 every ABI change needs every plugin rebuilt against the host's "
           "SDK)";
  }
  if (name.cxx_abi != dptune::kCxxAbiVersion || name.cxx11_abi != dptune::kCxx11StringAbi) {
    return plugin + "C++ ABI of plugin is __GXX_ABI_VERSION " + std::to_string(name.cxx_abi) +
           " with _GLIBCXX_USE_CXX11_ABI " + std::to_string(name.cxx11_abi) + ", host has " +
           std::to_string(dptune::kCxxAbiVersion) + " with " +
           std::to_string(dptune::kCxx11StringAbi);
  }
  if (!kind_from_string(name.kind)) {
    return plugin + "unknown plugin kind '" + name.kind + "' (host knows " + known_kinds() + ")";
  }
  return {};
}

/// Parses and checks every export; rejections are added to `problems`.
std::vector<Candidate> check_exports(const std::vector<std::string>& symbols,
                                     std::vector<std::string>& problems) {
  std::vector<Candidate> candidates;
  for (const auto& symbol : symbols) {
    ExportName name;
    if (!parse_export_name(symbol, name)) {
      problems.push_back("symbol '" + symbol + "' in ELF section \"" + dptune::kExportSection +
                         "\" is not a dptune export name");
      continue;
    }
    if (std::string problem = check_export(name); !problem.empty()) {
      problems.push_back(std::move(problem));
      continue;
    }
    const auto kind = *kind_from_string(name.kind);
    candidates.push_back({symbol, std::move(name), kind});
  }
  return candidates;
}

struct LoadedPlugin {
  PluginInfo info;
  std::unique_ptr<dptune::Plugin> (*create)(const dptune::Params&) = nullptr;
  dptune::PluginTraits (*traits)(const dptune::Params&) = nullptr;
};

/// Calls the descriptor function of every candidate (the library is loaded) and checks it against
/// the export name.  Problems are added to `problems`.
std::vector<LoadedPlugin> read_descriptors(const LoadedLibrary& library,
                                           const std::vector<Candidate>& candidates,
                                           std::vector<std::string>& problems) {
  std::vector<LoadedPlugin> loaded;
  for (const auto& candidate : candidates) {
    const std::string plugin =
        "plugin '" + candidate.name.name + "' (" + candidate.name.kind + "): ";
    dptune::PluginDescriptor descriptor;
    try {
      descriptor = library.descriptor_function(candidate.symbol)();
    } catch (const std::exception& e) {
      problems.push_back(plugin + "descriptor failed: " + e.what());
      continue;
    } catch (...) {
      problems.push_back(plugin + "descriptor failed: unknown exception");
      continue;
    }
    const std::string name = descriptor.name != nullptr ? descriptor.name : "";
    if (descriptor.abi_major != candidate.name.abi_major ||
        descriptor.abi_minor != candidate.name.abi_minor || descriptor.kind != candidate.kind ||
        name != candidate.name.name) {
      std::string problem = plugin;
      problem.append("descriptor says ").append(dptune::to_string(descriptor.kind));
      problem += " '" + name + "' ABI ";
      problem += abi_string(descriptor.abi_major, descriptor.abi_minor);
      problem +=
          ", export name says " + candidate.name.kind + " '" + candidate.name.name + "' ABI ";
      problem += abi_string(candidate.name.abi_major, candidate.name.abi_minor);
      problems.push_back(std::move(problem));
      continue;
    }
    if (descriptor.schema == nullptr || descriptor.create == nullptr) {
      problems.push_back(plugin + "descriptor lacks its schema or create function");
      continue;
    }
    LoadedPlugin plugin_info;
    try {
      plugin_info.info.schema = descriptor.schema();
    } catch (const std::exception& e) {
      problems.push_back(plugin + "schema() failed: " + e.what());
      continue;
    } catch (...) {
      problems.push_back(plugin + "schema() failed: unknown exception");
      continue;
    }
    plugin_info.info.kind = candidate.kind;
    plugin_info.info.name = name;
    plugin_info.info.version = descriptor.version != nullptr ? descriptor.version : "";
    plugin_info.info.description = descriptor.description != nullptr ? descriptor.description : "";
    plugin_info.info.abi_major = descriptor.abi_major;
    plugin_info.info.abi_minor = descriptor.abi_minor;
    plugin_info.info.library = library.path();
    plugin_info.create = descriptor.create;
    plugin_info.traits = descriptor.traits;
    loaded.push_back(std::move(plugin_info));
  }
  return loaded;
}

/// The libraries to scan: the file named, or every regular *.so under the folder, sorted.
std::vector<fs::path> libraries_in(const fs::path& folder_or_file, bool& named_explicitly) {
  std::error_code ec;
  const auto status = fs::status(folder_or_file, ec);
  if (ec || !fs::exists(status))
    throw dptune::ConfigError("plugin path '" + folder_or_file.string() + "' does not exist");
  named_explicitly = !fs::is_directory(status);
  if (named_explicitly) return {folder_or_file};
  std::vector<fs::path> libraries;
  fs::recursive_directory_iterator it(folder_or_file, fs::directory_options::skip_permission_denied,
                                      ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code file_error;
    const fs::path& path = it->path();
    if (path.extension() == ".so" && it->is_regular_file(file_error)) libraries.push_back(path);
  }
  std::sort(libraries.begin(), libraries.end());
  return libraries;
}

/// A second plugin of the same kind and name, in this library or registered from another
/// (`registered_in(candidate)` names that library, "" when none), is a configuration error,
/// refused before the library is loaded.
template <class RegisteredIn>
void refuse_duplicates(const std::vector<Candidate>& candidates, const std::string& file,
                       const RegisteredIn& registered_in) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& candidate = candidates[i];
    std::string other = registered_in(candidate);
    for (std::size_t j = 0; j < i && other.empty(); ++j)
      if (candidates[j].kind == candidate.kind && candidates[j].name.name == candidate.name.name)
        other = file;
    if (other.empty()) continue;
    std::string what = "duplicate " + candidate.name.kind + " plugin '";
    what.append(candidate.name.name).append("': exported by ").append(other);
    throw dptune::ConfigError(what.append(" and by ").append(file));
  }
}

/// The library loaded, or null with why not.
std::shared_ptr<LoadedLibrary> load_library(const fs::path& path, std::string& why_not) {
  try {
    return std::make_shared<LoadedLibrary>(path);
  } catch (const std::system_error& e) {
    why_not = "cannot load library: " + dlerror_text(e);
  } catch (const std::exception& e) {
    why_not = std::string("cannot load library: ") + e.what();
  } catch (...) {
    why_not = "cannot load library: unknown error";
  }
  return nullptr;
}

}  // namespace

void PluginRegistry::scan(const fs::path& folder_or_file) {
  bool named_explicitly = false;
  for (const auto& given : libraries_in(folder_or_file, named_explicitly))
    scan_library(canonical_or_absolute(given), named_explicitly);
}

void PluginRegistry::scan_library(const fs::path& path, bool named_explicitly) {
  const std::string file = path.string();
  // Scanning a library again is a no-op, whether it was registered or skipped.
  const bool seen =
      std::any_of(entries_.begin(), entries_.end(),
                  [&](const auto& item) { return item.second->info.library == path; }) ||
      std::any_of(skipped_.begin(), skipped_.end(),
                  [&](const SkippedLibrary& skipped) { return skipped.library == path; });
  if (seen) return;
  const auto skip = [&](const std::vector<std::string>& reasons, const char* outcome) {
    for (const auto& reason : reasons) {
      std::string why = file;
      why.append(": ").append(reason).append(outcome);
      skipped_.push_back({path, std::move(why)});
    }
  };

  // 1. Read the exports without loading.  Files that are not dptune plugins are skipped silently
  //    unless named explicitly.
  const SectionExports exports = read_section_exports(path, dptune::kExportSection);
  if (!exports.unreadable.empty() || exports.symbols.empty()) {
    if (named_explicitly)
      skip({!exports.unreadable.empty()
                ? exports.unreadable
                : std::string("not a dptune plugin (no exports in ELF section \"") +
                      dptune::kExportSection + "\")"},
           "");
    return;
  }

  // 2. Check every export's ABI and kind from its name, before any code of the library runs.  A
  //    library is registered whole or not at all.
  std::vector<std::string> problems;
  const std::vector<Candidate> candidates = check_exports(exports.symbols, problems);
  if (!problems.empty()) return skip(problems, "; library not loaded");

  // 3. A second plugin of the same kind and name is a configuration error.
  refuse_duplicates(candidates, file, [&](const Candidate& candidate) {
    const auto found = entries_.find(std::make_pair(candidate.kind, candidate.name.name));
    return found == entries_.end() ? std::string() : found->second->info.library.string();
  });

  // 4. Load, read the descriptors and check them against the export names.
  std::string why_not;
  const std::shared_ptr<LoadedLibrary> library = load_library(path, why_not);
  if (!library) return skip({why_not}, "");
  std::vector<LoadedPlugin> loaded = read_descriptors(*library, candidates, problems);
  if (!problems.empty()) {
    loaded.clear();
    return skip(problems, "; library unloaded");
  }
  for (auto& plugin : loaded) {
    auto entry = std::make_unique<Entry>();
    entry->info = std::move(plugin.info);
    entry->library = library;
    entry->create = plugin.create;
    entry->traits = plugin.traits;
    auto key = std::make_pair(entry->info.kind, entry->info.name);
    entries_.emplace(std::move(key), std::move(entry));
  }
}

const std::vector<SkippedLibrary>& PluginRegistry::skipped() const { return skipped_; }

std::vector<PluginInfo> PluginRegistry::plugins() const {
  std::vector<PluginInfo> result;
  result.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) result.push_back(entry->info);
  return result;
}

const PluginInfo* PluginRegistry::find(dptune::PluginKind kind, const std::string& name) const {
  auto it = entries_.find(std::make_pair(kind, name));
  if (it != entries_.end()) return &it->second->info;
  return nullptr;
}

const PluginInfo* PluginRegistry::find_any(const std::string& name) const {
  for (const auto& [key, entry] : entries_) {
    if (key.second == name) return &entry->info;
  }
  return nullptr;
}

std::vector<std::string> PluginRegistry::names(ComponentKind kind) const {
  std::vector<std::string> result;
  const auto plugin = plugin_kind(kind);
  if (!plugin) return result;
  for (const auto& [key, entry] : entries_) {
    if (key.first == *plugin) result.push_back(key.second);
  }
  return result;
}

const dptune::ParamSchema* PluginRegistry::schema(ComponentKind kind,
                                                  const std::string& name) const {
  const auto plugin = plugin_kind(kind);
  if (!plugin) return nullptr;
  const PluginInfo* info = find(*plugin, name);
  return info == nullptr ? nullptr : &info->schema;
}

dptune::PluginTraits PluginRegistry::traits(ComponentKind kind, const std::string& name,
                                            const dptune::Params& params) const {
  const auto plugin = plugin_kind(kind);
  if (!plugin) return {};
  const auto it = entries_.find(std::make_pair(*plugin, name));
  if (it == entries_.end() || it->second->traits == nullptr) return {};
  const Entry& found = *it->second;
  try {
    return found.traits(params);
  } catch (const std::exception& e) {
    throw dptune::PluginError("plugin '" + name + "' (" + found.info.library.string() +
                              ") failed in traits(): " + e.what());
  } catch (...) {
    throw dptune::PluginError("plugin '" + name + "' (" + found.info.library.string() +
                              ") failed in traits(): unknown exception");
  }
}

const PluginRegistry::Entry& PluginRegistry::entry(dptune::PluginKind kind,
                                                   const std::string& name) const {
  auto it = entries_.find(std::make_pair(kind, name));
  if (it != entries_.end()) return *it->second;
  std::vector<std::string> available;
  for (const auto& [key, value] : entries_) {
    if (key.first == kind) available.push_back(key.second);
  }
  throw dptune::ConfigError(
      "unknown " + std::string(dptune::to_string(kind)) + " plugin '" + name + "' (" +
      (available.empty() ? std::string("none is loaded") : "available: " + join(available)) + ")");
}

namespace {

template <class Make>
auto create_with(const PluginInfo& info, const std::shared_ptr<LoadedLibrary>& library,
                 std::unique_ptr<dptune::Plugin> (*create)(const dptune::Params&),
                 const dptune::Params& params, Make make) {
  PluginOrigin origin{info.name, library};
  auto object = create_plugin_object(origin, create, params);
  return make(std::move(origin), std::move(object));
}

}  // namespace

std::shared_ptr<dptune::Mechanism> PluginRegistry::create_mechanism(
    const std::string& name, const dptune::Params& params) const {
  const Entry& found = entry(dptune::PluginKind::Mechanism, name);
  return create_with(found.info, found.library, found.create, params, make_mechanism_proxy);
}

std::shared_ptr<dptune::Accountant> PluginRegistry::create_accountant(
    const std::string& name, const dptune::Params& params) const {
  const Entry& found = entry(dptune::PluginKind::Accountant, name);
  return create_with(found.info, found.library, found.create, params, make_accountant_proxy);
}

std::shared_ptr<dptune::Utility> PluginRegistry::create_utility(
    const std::string& name, const dptune::Params& params) const {
  const Entry& found = entry(dptune::PluginKind::Utility, name);
  return create_with(found.info, found.library, found.create, params, make_utility_proxy);
}

std::shared_ptr<dptune::Trainer> PluginRegistry::create_trainer(
    const std::string& name, const dptune::Params& params) const {
  const Entry& found = entry(dptune::PluginKind::Trainer, name);
  return create_with(found.info, found.library, found.create, params, make_trainer_proxy);
}

std::shared_ptr<dptune::Tuner> PluginRegistry::create_tuner(const std::string& name,
                                                            const dptune::Params& params) const {
  const Entry& found = entry(dptune::PluginKind::Tuner, name);
  return create_with(found.info, found.library, found.create, params, make_tuner_proxy);
}

}  // namespace dptune::host
