// libFuzzer target: YAML text -> validated PipelineConfig (what `dptune validate` does), or a
// located error.
//
// The text is written to a private temporary folder and loaded with the plugins of an ordinary
// build (DPTUNE_PLUGIN_PATH, or the folder the fuzz build was configured with), so the fuzzer
// reaches every section's validation.  A finding is a crash, a sanitizer report, a hang
// (-timeout), a memory blow-up (-rss_limit_mb), any exception other than ConfigDiagnostic, or an
// error located outside the file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "fuzz_common.hpp"

namespace {

namespace fs = std::filesystem;
using dptune::host::ComponentKind;

/// Plugins from the registry, data sources from the host (what the CLI's catalogue answers).
class FuzzCatalog final : public dptune::host::Catalog {
 public:
  explicit FuzzCatalog(const dptune::host::PluginRegistry& registry) : registry_(registry) {}
  std::vector<std::string> names(ComponentKind kind) const override {
    if (kind != ComponentKind::Data) return registry_.names(kind);
    std::vector<std::string> out;
    for (const auto& info : dptune::host::data_sources()) out.push_back(info.name);
    return out;
  }
  const dptune::ParamSchema* schema(ComponentKind kind, const std::string& name) const override {
    if (kind != ComponentKind::Data) return registry_.schema(kind, name);
    const auto* info = dptune::host::find_data_source(name);
    return info ? &info->schema : nullptr;
  }

 private:
  const dptune::host::PluginRegistry& registry_;
};

struct Fixture {
  dptune::host::PluginRegistry registry;
  FuzzCatalog catalog{registry};
  fs::path file;

  Fixture() {
    const char* env = std::getenv("DPTUNE_PLUGIN_PATH");
    const std::string dirs = env && *env ? env : DPTUNE_FUZZ_PLUGIN_DIR;
    std::size_t start = 0;
    while (start <= dirs.size()) {
      const auto colon = dirs.find(':', start);
      const std::string dir =
          dirs.substr(start, colon == std::string::npos ? colon : colon - start);
      if (!dir.empty()) registry.scan(dir);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (registry.plugins().empty()) {
      std::fprintf(stderr, "fuzz_pipeline: no plugins found in %s\n", dirs.c_str());
      std::abort();
    }
    std::string folder = (fs::temp_directory_path() / "dptune-fuzz-XXXXXX").string();
    if (!mkdtemp(folder.data())) std::abort();
    file = fs::path(folder) / "pipeline.yaml";
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(file.parent_path(), ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture fixture;
  const std::string text(reinterpret_cast<const char*>(data), size);
  {
    std::ofstream out(fixture.file, std::ios::binary | std::ios::trunc);
    out << text;
  }
  try {
    (void)dptune::host::load_pipeline(fixture.file, {}, fixture.catalog);
  } catch (const dptune::host::ConfigDiagnostic& e) {
    dptune::fuzz::check_location(e, fixture.file.string(), text);
  }
  return 0;
}
