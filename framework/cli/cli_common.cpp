#include "cli_common.hpp"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "dptune/errors.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/runner.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dptune::cli {

void scan_plugins(dptune::host::PluginRegistry& registry, const std::vector<std::string>& extra,
                  const std::vector<fs::path>& pipeline_paths) {
  for (const auto& dir : dptune::host::PluginRegistry::default_search_path()) registry.scan(dir);
  for (const auto& p : extra) {
    if (!fs::exists(p)) throw UsageError("--plugin-path " + p + ": no such file or folder");
    registry.scan(fs::absolute(p));
  }
  for (const auto& p : pipeline_paths) registry.scan(p);
}

std::optional<po::variables_map> parse_command(const po::options_description& visible,
                                               const std::vector<std::string>& args,
                                               std::initializer_list<Positional> positionals) {
  po::options_description all;
  all.add(visible);
  po::positional_options_description pos;
  for (const auto& p : positionals) {
    all.add_options()(p.name, p.value);
    pos.add(p.name, p.words);
  }
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << visible << "\n";
    return std::nullopt;
  }
  return vm;
}

std::string read_event_file(const std::string& path) {
  if (path == "-")
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open the event file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<dptune::Accountant> create_accountant(const dptune::host::PluginRegistry& registry,
                                                      const std::string& name,
                                                      const dptune::Params& given) {
  const auto* info = registry.find(dptune::PluginKind::Accountant, name);
  if (!info) {
    std::vector<std::string> names;
    for (const auto& p : registry.plugins())
      if (p.kind == dptune::PluginKind::Accountant) names.push_back(p.name);
    const auto hint = dptune::host::did_you_mean(name, names);
    throw UsageError("--accountant " + name + ": no such accountant plugin" +
                     (hint ? " (did you mean '" + *hint + "'?)" : std::string()));
  }
  dptune::Params params;
  try {
    params = info->schema.complete(given);
  } catch (const dptune::InvalidArgument& e) {
    throw UsageError("accountant " + name + ": " + e.what());
  }
  return registry.create_accountant(name, params);
}

std::vector<dptune::host::Override> parse_sets(const std::vector<std::string>& sets) {
  std::vector<dptune::host::Override> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--set " + s + ": expected key.path=value");
    out.push_back({s.substr(0, eq), s.substr(eq + 1)});
  }
  return out;
}

dptune::host::PipelineConfig load(const std::string& pipeline, const std::vector<std::string>& sets,
                                  const std::vector<std::string>& plugin_paths,
                                  dptune::host::PluginRegistry& registry) {
  if (pipeline.empty()) throw UsageError("missing PIPELINE argument");
  const auto overrides = parse_sets(sets);
  // plugin_paths (possibly set with --set) must be known before the plugins they name are scanned.
  scan_plugins(registry, plugin_paths, dptune::host::read_plugin_paths(pipeline, overrides));
  dptune::host::HostCatalog catalog(registry);
  return dptune::host::load_pipeline(pipeline, overrides, catalog);
}

}  // namespace dptune::cli
