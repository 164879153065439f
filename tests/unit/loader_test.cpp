// Plugin loader and registry: pre-load checks, registration, proxies, exception containment and
// real unloading.  Test plugins are built by tests/test_plugins into build_paths::test_plugin_dir,
// one scenario per folder.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "build_paths.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/rng.hpp"
#include "dptune/testing.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using dptune::host::ComponentKind;
using dptune::host::PluginRegistry;

namespace {

fs::path test_plugin_dir() { return fs::path(dptune_test::build_paths::test_plugin_dir); }
fs::path scenario(const std::string& name) { return test_plugin_dir() / name; }
/// Canonical path of a test plugin library, as the registry reports it.
fs::path plugin_file(const std::string& scenario_name, const std::string& target) {
  const fs::path path = scenario(scenario_name) / (target + ".so");
  REQUIRE_MESSAGE(fs::exists(path), "missing test plugin " << path);
  return fs::canonical(path);
}

/// True when the library is currently loaded in this process (RTLD_NOLOAD does not load it).
bool is_loaded(const fs::path& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);  // NOLOAD took a reference
  return true;
}

using dptune_test::TempDir;

/// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// Runs `body`, expecting an exception of exactly type E; returns its message.
template <class E, class Body>
std::string message_of(Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    CHECK_MESSAGE(typeid(e) == typeid(E), "unexpected exception type: " << e.what());
    return e.what();
  } catch (...) {
    FAIL("a non-std exception escaped");
  }
  FAIL("no exception was thrown");
  return {};
}

std::vector<std::string> names_of(const std::vector<dptune::host::PluginInfo>& plugins) {
  std::vector<std::string> names;
  for (const auto& plugin : plugins) names.push_back(plugin.name);
  return names;
}

dptune::Params throwing_params(const std::string& where, const std::string& what) {
  return dptune::Params{{"where", where}, {"what", what}};
}

class FakeTrainingContext final : public dptune::TrainingContext {
 public:
  explicit FakeTrainingContext(double delta) : delta_(delta) {}
  dptune::RandomBitGenerator& rng() override { return rng_; }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params&) override {
    throw dptune::ConfigError("no mechanism in this test");
  }
  const dptune::Accountant& accountant() const override {
    throw dptune::ConfigError("no accountant in this test");
  }
  double delta() const override { return delta_; }
  bool private_run() const override { return true; }

 private:
  double delta_;
  dptune::Xoshiro256 rng_{1};
};

class FakeTunerContext final : public dptune::testing::StubTunerContext {
 public:
  FakeTunerContext() : StubTunerContext(dptune::SearchSpace(), 2) {}
  std::function<double()> delta_fn = [] { return 0.0; };
  std::function<std::shared_ptr<const dptune::Mechanism>()> mechanism_fn;

  dptune::Evaluator& evaluator() override { throw std::logic_error("no evaluator in this test"); }
  const dptune::Accountant& accountant() const override {
    throw std::logic_error("no accountant in this test");
  }
  double delta() const override { return delta_fn(); }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params&) override {
    return mechanism_fn();
  }
  dptune::ProgressSink& progress() override { throw std::logic_error("no progress in this test"); }
};

#define DPTUNE_TEST_STR_(x) #x
#define DPTUNE_TEST_STR(x) DPTUNE_TEST_STR_(x)

}  // namespace

TEST_CASE("loader: parse_export_name") {
  dptune::host::ExportName name;
  REQUIRE(
      dptune::host::parse_export_name("dptune_v1_0_cxx1017_1_k_mechanism_n_sparse_vector", name));
  CHECK(name.abi_major == 1);
  CHECK(name.abi_minor == 0);
  CHECK(name.cxx_abi == 1017);
  CHECK(name.cxx11_abi == 1);
  CHECK(name.kind == "mechanism");
  CHECK(name.name == "sparse_vector");

  REQUIRE(dptune::host::parse_export_name("dptune_v12_34_cxx1002_0_k_tuner_n_n_n", name));
  CHECK(name.abi_major == 12);
  CHECK(name.abi_minor == 34);
  CHECK(name.cxx_abi == 1002);
  CHECK(name.cxx11_abi == 0);
  CHECK(name.kind == "tuner");
  CHECK(name.name == "n_n");

  // What DPTUNE_PLUGIN exports parses back to this host's own versions.
  const std::string exported = DPTUNE_TEST_STR(DPTUNE_ALIAS_NAME(mechanism, geometric));
  REQUIRE(dptune::host::parse_export_name(exported, name));
  CHECK(name.abi_major == dptune::kAbiMajor);
  CHECK(name.abi_minor == dptune::kAbiMinor);
  CHECK(name.cxx_abi == dptune::kCxxAbiVersion);
  CHECK(name.cxx11_abi == dptune::kCxx11StringAbi);
  CHECK(name.kind == "mechanism");
  CHECK(name.name == "geometric");

  for (const char* bad :
       {"", "foo", "dptune_v1_0_cxx1017_1_k_mechanism", "dptune_v1_0_cxx1017_1_k_mechanism_n_",
        "dptune_v1_0_cxx1017_1_k__n_a", "dptune_vx_0_cxx1017_1_k_mechanism_n_a",
        "dptune_v1__cxx1017_1_k_mechanism_n_a", "dptune_v1_0_cxx_1_k_mechanism_n_a",
        "dptune_v1_0_cxx1017_1_k_mechanism_n_Upper", "dptune_v1_0_cxx1017_1_mechanism_n_a",
        "boost_dll_alias"}) {
    CAPTURE(bad);
    dptune::host::ExportName untouched;
    untouched.name = "before";
    CHECK_FALSE(dptune::host::parse_export_name(bad, untouched));
    CHECK(untouched.name == "before");
  }
}

TEST_CASE("loader: well-formed plugins are registered with their descriptors") {
  const fs::path mechanism_file = plugin_file("good", "test_plugin_good_mechanism");
  const fs::path multi_file = plugin_file("good", "test_plugin_good_multi");
  PluginRegistry registry;
  registry.scan(scenario("good"));
  CHECK(registry.skipped().empty());

  const auto plugins = registry.plugins();
  // Sorted by kind (mechanism, accountant, utility, trainer, tuner), then name.
  CHECK(names_of(plugins) == std::vector<std::string>{"test_offset", "test_accountant",
                                                      "test_utility", "test_trainer",
                                                      "test_tuner"});

  const auto* offset = registry.find(dptune::PluginKind::Mechanism, "test_offset");
  REQUIRE(offset != nullptr);
  CHECK(offset->kind == dptune::PluginKind::Mechanism);
  CHECK(offset->version == "1.2.3");
  CHECK(offset->description == "test: adds an offset");
  CHECK(offset->abi_major == dptune::kAbiMajor);
  CHECK(offset->abi_minor == dptune::kAbiMinor);
  CHECK(offset->library == mechanism_file);
  REQUIRE(offset->schema.specs().size() == 2);
  CHECK(offset->schema.specs()[0].name == "offset");
  CHECK(offset->schema.specs()[1].name == "epsilon");

  const auto* tuner = registry.find_any("test_tuner");
  REQUIRE(tuner != nullptr);
  CHECK(tuner->kind == dptune::PluginKind::Tuner);
  CHECK(tuner->library == multi_file);
  CHECK(registry.find(dptune::PluginKind::Tuner, "test_offset") == nullptr);
  CHECK(registry.find_any("absent") == nullptr);

  // The Catalog view the config loader uses.
  const dptune::host::Catalog& catalog = registry;
  CHECK(catalog.names(ComponentKind::Mechanism) == std::vector<std::string>{"test_offset"});
  CHECK(catalog.names(ComponentKind::Accountant) == std::vector<std::string>{"test_accountant"});
  CHECK(catalog.names(ComponentKind::Utility) == std::vector<std::string>{"test_utility"});
  CHECK(catalog.names(ComponentKind::Trainer) == std::vector<std::string>{"test_trainer"});
  CHECK(catalog.names(ComponentKind::Tuner) == std::vector<std::string>{"test_tuner"});
  CHECK(catalog.names(ComponentKind::Data).empty());
  CHECK(catalog.schema(ComponentKind::Data, "test_offset") == nullptr);
  CHECK(catalog.schema(ComponentKind::Tuner, "test_offset") == nullptr);
  const dptune::ParamSchema* schema = catalog.schema(ComponentKind::Mechanism, "test_offset");
  REQUIRE(schema != nullptr);
  CHECK(schema == &offset->schema);

  auto mechanism = registry.create_mechanism(
      "test_offset", offset->schema.complete(dptune::Params{{"offset", 0.5}}));
  dptune::Xoshiro256 rng(7);
  const std::vector<double> values{1.0, 2.0};
  CHECK(mechanism->release(values, dptune::Sensitivity{}, rng) == std::vector<double>{1.5, 2.5});
  CHECK(mechanism->event() == dptune::DpEvent::pure_dp(2.0));
}

TEST_CASE("loader: a single library file can be scanned") {
  PluginRegistry registry;
  registry.scan(scenario("good") / "test_plugin_good_mechanism.so");
  CHECK(names_of(registry.plugins()) == std::vector<std::string>{"test_offset"});
  CHECK(registry.skipped().empty());
}

TEST_CASE("loader: ABI and kind mismatches are rejected before the library is loaded") {
  TempDir markers;
  ScopedEnv env("DPTUNE_TEST_MARKER_DIR", markers.path().string());
  const std::string host_major = std::to_string(dptune::kAbiMajor);
  const std::string host_abi = host_major + "." + std::to_string(dptune::kAbiMinor);
  const std::string gxx = std::to_string(dptune::kCxxAbiVersion);
  const std::string cxx11 = std::to_string(dptune::kCxx11StringAbi);
  const std::string other_cxx11 = std::to_string(1 - dptune::kCxx11StringAbi);

  struct Case {
    std::string scenario, marker, reason;
  };
  const std::vector<Case> cases{
      {"abi_major", "abi_major",
       "plugin 'abi_major' (mechanism): ABI 99.0 of plugin, host has ABI " + host_abi +
           " (until dptune 1.0 every ABI change needs every plugin rebuilt against the host's "
           "SDK); library not loaded"},
      {"abi_minor", "abi_minor",
       "plugin 'abi_minor' (mechanism): ABI " + host_major + ".99 of plugin, host has ABI " +
           host_abi +
           " (until dptune 1.0 every ABI change needs every plugin rebuilt against the host's "
           "SDK); library not loaded"},
      {"cxx_abi", "cxx_abi",
       "plugin 'cxx_abi' (mechanism): C++ ABI of plugin is __GXX_ABI_VERSION " + gxx +
           " with _GLIBCXX_USE_CXX11_ABI " + other_cxx11 + ", host has " + gxx + " with " + cxx11 +
           "; library not loaded"},
      {"unknown_kind", "unknown_kind",
       "plugin 'csv_export' (exporter): unknown plugin kind 'exporter' (host knows mechanism, "
       "accountant, utility, trainer, tuner); library not loaded"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.scenario);
    const fs::path file = plugin_file(c.scenario, "test_plugin_" + c.scenario);
    PluginRegistry registry;
    registry.scan(scenario(c.scenario));
    CHECK(registry.plugins().empty());
    REQUIRE(registry.skipped().size() == 1);
    CHECK(registry.skipped()[0].library == file);
    CHECK(registry.skipped()[0].reason == file.string() + ": " + c.reason);
    // Never loaded: its constructor did not run, and it is not in the process.
    CHECK_FALSE(fs::exists(markers.path() / (c.marker + ".loaded")));
    CHECK_FALSE(is_loaded(file));
    // Scanning it again adds nothing.
    registry.scan(scenario(c.scenario));
    CHECK(registry.skipped().size() == 1);
  }
}

TEST_CASE("loader: a descriptor that contradicts its export name is refused after loading") {
  // Also the positive control of the load marker: this library is loaded, so its marker appears.
  TempDir markers;
  ScopedEnv env("DPTUNE_TEST_MARKER_DIR", markers.path().string());
  const fs::path file = plugin_file("mismatch", "test_plugin_mismatch");
  PluginRegistry registry;
  registry.scan(scenario("mismatch"));
  CHECK(registry.plugins().empty());
  REQUIRE(registry.skipped().size() == 1);
  CHECK(registry.skipped()[0].reason ==
        file.string() +
            ": plugin 'alias_name' (mechanism): descriptor says mechanism 'descriptor_name' ABI " +
            std::to_string(dptune::kAbiMajor) + "." + std::to_string(dptune::kAbiMinor) +
            ", export name says mechanism 'alias_name' ABI " + std::to_string(dptune::kAbiMajor) +
            "." + std::to_string(dptune::kAbiMinor) + "; library unloaded");
  CHECK(fs::exists(markers.path() / "mismatch.loaded"));
  CHECK_FALSE(is_loaded(file));
}

TEST_CASE("loader: a library that cannot be loaded is skipped with dlerror's text") {
  const fs::path file = plugin_file("unresolved", "test_plugin_unresolved");
  PluginRegistry registry;
  registry.scan(scenario("unresolved"));
  CHECK(registry.plugins().empty());
  REQUIRE(registry.skipped().size() == 1);
  CHECK(registry.skipped()[0].reason ==
        file.string() + ": cannot load library: " + file.string() +
            ": undefined symbol: dptune_test_symbol_nobody_defines");
  CHECK_FALSE(is_loaded(file));
}

TEST_CASE("loader: foreign, non-ELF, truncated and stripped libraries") {
  TempDir dir;
  const fs::path good = plugin_file("good", "test_plugin_good_mechanism");
  const fs::path foreign = plugin_file("foreign", "test_plugin_foreign");
  // junk/: a text file named .so, a plugin cut in half and a 10-byte ELF head.
  const fs::path junk = dir.path() / "junk";
  fs::create_directory(junk);
  const fs::path text = junk / "notes.so";
  std::ofstream(text) << "not a library\n";
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  REQUIRE(bytes.size() > 1000);
  const fs::path half = junk / "half.so";
  std::ofstream(half, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const fs::path head = junk / "head.so";
  std::ofstream(head, std::ios::binary) << bytes.substr(0, 10);

  SUBCASE("in a folder they are skipped silently") {
    PluginRegistry registry;
    registry.scan(scenario("foreign"));
    registry.scan(junk);
    CHECK(registry.plugins().empty());
    CHECK(registry.skipped().empty());
  }
  SUBCASE("named explicitly they are reported") {
    PluginRegistry registry;
    for (const auto& file : {foreign, text, half, head}) registry.scan(file);
    CHECK(registry.plugins().empty());
    REQUIRE(registry.skipped().size() == 4);
    CHECK(registry.skipped()[0].reason ==
          foreign.string() + ": not a dptune plugin (no exports in ELF section \"dptune\")");
    CHECK(registry.skipped()[1].reason == text.string() + ": not an ELF file");
    CHECK(registry.skipped()[2].reason ==
          half.string() +
              ": truncated or malformed ELF file (section headers beyond the end of the file)");
    CHECK(registry.skipped()[3].reason ==
          head.string() + ": truncated ELF file (incomplete header)");
  }
  SUBCASE("a stripped plugin is still found (exports are read from .dynsym)") {
    const fs::path stripped_dir = dir.path() / "stripped";
    fs::create_directory(stripped_dir);
    const fs::path stripped = stripped_dir / "stripped.so";
    const std::string command =
        "strip --strip-all -o '" + stripped.string() + "' '" + good.string() + "'";
    REQUIRE(std::system(command.c_str()) == 0);
    // Really stripped: no .symtab left.
    FILE* pipe = popen(("readelf -SW '" + stripped.string() + "'").c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string sections;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) sections.append(buffer, n);
    REQUIRE(pclose(pipe) == 0);
    CHECK(sections.find(".dynsym") != std::string::npos);
    CHECK(sections.find(".symtab") == std::string::npos);

    PluginRegistry registry;
    registry.scan(stripped_dir);
    CHECK(registry.skipped().empty());
    const auto* info = registry.find(dptune::PluginKind::Mechanism, "test_offset");
    REQUIRE(info != nullptr);
    CHECK(info->library == fs::canonical(stripped));
    auto mechanism = registry.create_mechanism("test_offset", info->schema.complete({}));
    dptune::Xoshiro256 rng(1);
    const std::vector<double> values{3.0};
    CHECK(mechanism->release(values, {}, rng) == std::vector<double>{4.0});
  }
}

TEST_CASE("loader: scanning the same library again is a no-op") {
  TempDir dir;
  const fs::path file = plugin_file("good", "test_plugin_good_mechanism");
  fs::create_symlink(file, dir.path() / "alias.so");
  PluginRegistry registry;
  registry.scan(scenario("good"));
  const auto before = registry.plugins().size();
  CHECK(before == 5);
  registry.scan(scenario("good"));
  registry.scan(file);
  registry.scan(dir.path() / "alias.so");
  registry.scan(dir.path());
  CHECK(registry.plugins().size() == before);
  CHECK(registry.skipped().empty());
}

TEST_CASE("loader: two libraries exporting the same kind and name are a config error") {
  const fs::path a = plugin_file("duplicate", "test_plugin_duplicate_a");
  const fs::path b = plugin_file("duplicate", "test_plugin_duplicate_b");
  const std::string expected = "duplicate mechanism plugin 'test_duplicate': exported by " +
                               a.string() + " and by " + b.string();
  {
    PluginRegistry registry;
    CHECK(message_of<dptune::ConfigError>([&] { registry.scan(scenario("duplicate")); }) ==
          expected);
    // The first one stays registered; the second was never loaded.
    const auto* first = registry.find(dptune::PluginKind::Mechanism, "test_duplicate");
    REQUIRE(first != nullptr);
    CHECK(first->library == a);
    CHECK(first->version == "1.0.0-a");
    CHECK_FALSE(is_loaded(b));
  }
  {
    PluginRegistry registry;
    registry.scan(a);
    CHECK(message_of<dptune::ConfigError>([&] { registry.scan(b); }) == expected);
  }
}

TEST_CASE("loader: missing paths and unknown plugin names") {
  PluginRegistry registry;
  CHECK(message_of<dptune::ConfigError>([&] { registry.scan("/nonexistent/dptune/plugins"); }) ==
        "plugin path '/nonexistent/dptune/plugins' does not exist");
  CHECK(message_of<dptune::ConfigError>([&] { registry.create_tuner("grid", {}); }) ==
        "unknown tuner plugin 'grid' (none is loaded)");
  registry.scan(scenario("good"));
  CHECK(message_of<dptune::ConfigError>([&] { registry.create_mechanism("laplace", {}); }) ==
        "unknown mechanism plugin 'laplace' (available: test_offset)");
  CHECK(message_of<dptune::ConfigError>([&] { registry.create_accountant("test_offset", {}); }) ==
        "unknown accountant plugin 'test_offset' (available: test_accountant)");
}

TEST_CASE("loader: default search path") {
  TempDir a, b;
  const fs::path built(dptune_test::build_paths::built_plugin_dir);
  const std::string value = a.path().string() + "::" + b.path().string() + ":" +
                            (a.path() / ".." / a.path().filename()).string() +
                            ":/nonexistent/dptune:" + built.string() + ":";
  ScopedEnv env("DPTUNE_PLUGIN_PATH", value);
  const auto path = PluginRegistry::default_search_path();
  std::vector<fs::path> expected;
  // This test binary lives in <build>/bin like dptune, so <exe dir>/../lib/dptune/plugins is the
  // build tree's plugin folder, when it exists (it holds the built-in plugins).
  if (fs::is_directory(built)) expected.push_back(fs::canonical(built));
  const fs::path installed(dptune_test::build_paths::install_plugin_dir);
  if (fs::is_directory(installed) && fs::canonical(installed) != fs::canonical(built)) {
    expected.push_back(fs::canonical(installed));
  }
  expected.push_back(fs::canonical(a.path()));
  expected.push_back(fs::canonical(b.path()));
  CHECK(path == expected);
}

TEST_CASE(
    "loader: exceptions thrown by a plugin become PluginErrors naming plugin, file and call") {
  const fs::path file = plugin_file("throwing", "test_plugin_throwing");
  const std::string prefix = "plugin 'test_throwing' (" + file.string() + ") failed in ";
  PluginRegistry registry;
  registry.scan(scenario("throwing"));
  REQUIRE(registry.skipped().empty());
  dptune::Xoshiro256 rng(3);
  const std::vector<double> values{1.0};

  SUBCASE("from the constructor") {
    CHECK(message_of<dptune::PluginError>([&] {
            registry.create_mechanism("test_throwing", throwing_params("create", "runtime_error"));
          }) == prefix + "create: test_throwing runtime_error in constructor");
    CHECK(message_of<dptune::PluginError>([&] {
            registry.create_mechanism("test_throwing", throwing_params("create", "custom"));
          }) == prefix + "create: test_throwing custom in constructor");
    CHECK(message_of<dptune::PluginError>([&] {
            registry.create_mechanism("test_throwing", throwing_params("create", "int"));
          }) == prefix + "create: unknown exception (not derived from std::exception)");
    // A constructor refusing its parameters is a configuration problem: ParamsRejected, a
    // ConfigError (exit code 2).
    CHECK(message_of<dptune::host::ParamsRejected>([&] {
            registry.create_mechanism("test_throwing",
                                      throwing_params("create", "invalid_argument"));
          }) == prefix + "create: test_throwing invalid_argument in constructor");
  }
  SUBCASE("from methods") {
    const auto mechanism = [&](const std::string& what) {
      return registry.create_mechanism("test_throwing", throwing_params("methods", what));
    };
    auto runtime = mechanism("runtime_error");
    CHECK(message_of<dptune::PluginError>([&] { runtime->release(values, {}, rng); }) ==
          prefix + "Mechanism::release: test_throwing runtime_error in release");
    auto custom = mechanism("custom");
    CHECK(message_of<dptune::PluginError>([&] { custom->event(); }) ==
          prefix + "Mechanism::event: test_throwing custom in event");
    auto integer = mechanism("int");
    CHECK(message_of<dptune::PluginError>([&] { integer->release(values, {}, rng); }) ==
          prefix + "Mechanism::release: unknown exception (not derived from std::exception)");
    auto invalid = mechanism("invalid_argument");
    CHECK(message_of<dptune::PluginError>([&] { invalid->event(); }) ==
          prefix + "Mechanism::event: test_throwing invalid_argument in event");
    // A PluginError subclass defined in the plugin is not passed through (its vtable is in the
    // plugin): it is copied into an attributed PluginError.
    auto subclass = mechanism("plugin_error_subclass");
    CHECK(message_of<dptune::PluginError>([&] { subclass->event(); }) ==
          prefix + "Mechanism::event: test_throwing plugin_error_subclass in event");
    // A ConfigError of the SDK's own type passes through unchanged.
    auto config = mechanism("config_error");
    CHECK(message_of<dptune::ConfigError>([&] { config->release(values, {}, rng); }) ==
          "test_throwing config_error in release");
    // A PrivacyError keeps its type and is attributed.
    auto privacy = mechanism("privacy_error");
    CHECK(message_of<dptune::PrivacyError>([&] { privacy->event(); }) ==
          prefix + "Mechanism::event: test_throwing privacy_error in event");
    // Nothing thrown when told not to.
    auto quiet = registry.create_mechanism("test_throwing", throwing_params("nowhere", "custom"));
    CHECK(quiet->release(values, {}, rng) == values);
    CHECK(quiet->event() == dptune::DpEvent::pure_dp(1));
  }
}

TEST_CASE("loader: a contained exception outlives the registry and the unloaded library") {
  const fs::path file = plugin_file("throwing", "test_plugin_throwing");
  const std::string prefix = "plugin 'test_throwing' (" + file.string() + ") failed in ";
  std::optional<dptune::PluginError> from_create, from_method;
  {
    PluginRegistry registry;
    registry.scan(scenario("throwing"));
    try {
      registry.create_mechanism("test_throwing", throwing_params("create", "custom"));
    } catch (const dptune::PluginError& e) {
      from_create.emplace(e);
    }
    auto mechanism =
        registry.create_mechanism("test_throwing", throwing_params("methods", "custom"));
    dptune::Xoshiro256 rng(4);
    const std::vector<double> values{1.0};
    try {
      mechanism->release(values, {}, rng);
    } catch (const dptune::PluginError& e) {
      from_method.emplace(e);
    }
    CHECK(is_loaded(file));
  }
  CHECK_FALSE(is_loaded(file));
  REQUIRE(from_create.has_value());
  REQUIRE(from_method.has_value());
  CHECK(std::string(from_create->what()) == prefix + "create: test_throwing custom in constructor");
  CHECK(std::string(from_method->what()) ==
        prefix + "Mechanism::release: test_throwing custom in release");
}

TEST_CASE("loader: libraries are really unloaded once the registry and every object are gone") {
  const fs::path mechanism_file = plugin_file("good", "test_plugin_good_mechanism");
  const fs::path multi_file = plugin_file("good", "test_plugin_good_multi");
  CHECK_FALSE(is_loaded(mechanism_file));
  CHECK_FALSE(is_loaded(multi_file));

  auto registry = std::make_unique<PluginRegistry>();
  registry->scan(scenario("good"));
  CHECK(is_loaded(mechanism_file));
  CHECK(is_loaded(multi_file));

  auto mechanism = registry->create_mechanism("test_offset", {{"offset", 1.0}, {"epsilon", 1.0}});
  auto trainer =
      registry->create_trainer("test_trainer", {{"value", 2.0}, {"fail_predict", false}});
  FakeTrainingContext context(0.5);
  dptune::Dataset data;
  data.rows = 2;
  data.labels = {0, 1};
  auto trained = trainer->train(data, context);
  REQUIRE(trained.model != nullptr);

  registry.reset();
  trainer.reset();
  // Objects keep their libraries.
  CHECK(is_loaded(mechanism_file));
  CHECK(is_loaded(multi_file));
  dptune::Xoshiro256 rng(5);
  const std::vector<double> values{1.0};
  CHECK(mechanism->release(values, {}, rng) == std::vector<double>{2.0});
  CHECK(trained.model->describe() == "constant 2.000000");
  CHECK(trained.model->predict(data).values == std::vector<double>{2.0, 2.0});

  mechanism.reset();
  CHECK_FALSE(is_loaded(mechanism_file));
  CHECK(is_loaded(multi_file));  // the model still holds it
  trained.model.reset();
  CHECK_FALSE(is_loaded(multi_file));
}

TEST_CASE("loader: proxies of every kind forward calls and contain errors") {
  const fs::path multi = plugin_file("good", "test_plugin_good_multi");
  const fs::path throwing = plugin_file("throwing", "test_plugin_throwing");
  const auto prefix = [&](const std::string& plugin) {
    return "plugin '" + plugin + "' (" + multi.string() + ") failed in ";
  };
  PluginRegistry registry;
  registry.scan(scenario("good"));
  registry.scan(scenario("throwing"));
  REQUIRE(registry.skipped().empty());

  SUBCASE("accountant") {
    auto accountant = registry.create_accountant("test_accountant", {});
    const auto pure = dptune::DpEvent::pure_dp(0.5);
    const auto gaussian = dptune::DpEvent::gaussian(1.5);
    CHECK(accountant->unsupported_reason(pure).empty());
    CHECK(accountant->unsupported_reason(gaussian) == "only PureDp events");
    const auto guarantee = accountant->epsilon(pure, 1e-6);
    CHECK(guarantee.epsilon == 0.5);
    CHECK(guarantee.delta == 1e-6);
    CHECK(guarantee.accountant == "test_accountant");
    CHECK(accountant->delta(pure, 0.75).epsilon == 0.75);
    // PrivacyError is part of the Accountant contract: it keeps its type, with attribution.
    CHECK(message_of<dptune::PrivacyError>([&] { accountant->epsilon(gaussian, 1e-6); }) ==
          prefix("test_accountant") + "Accountant::epsilon: test_accountant: cannot account " +
              gaussian.to_string());
    CHECK(message_of<dptune::PrivacyError>([&] { accountant->delta(pure, 0.25); }) ==
          prefix("test_accountant") + "Accountant::delta: test_accountant: epsilon too small");
  }
  SUBCASE("utility") {
    auto utility = registry.create_utility("test_utility", {});
    const std::vector<double> truth{1, 0, 1, 1};
    dptune::Predictions predicted;
    predicted.values = {1, 1, 1, 0};
    CHECK(utility->score(truth, predicted) == 0.5);
    predicted.values = {1};
    CHECK(message_of<dptune::PluginError>([&] { utility->score(truth, predicted); }) ==
          prefix("test_utility") + "Utility::score: test_utility: 4 labels but 1 predictions");
  }
  SUBCASE("trainer and model") {
    dptune::Dataset data;
    data.rows = 3;
    data.labels = {1, 2, 3};
    FakeTrainingContext context(0.25);
    auto trainer =
        registry.create_trainer("test_trainer", {{"value", 3.0}, {"fail_predict", false}});
    CHECK(trainer->event(10) == dptune::DpEvent::no_op());
    auto trained = trainer->train(data, context);
    CHECK(trained.event == dptune::DpEvent::self_composed(dptune::DpEvent::pure_dp(1.25), 3));
    REQUIRE(trained.model != nullptr);
    CHECK(trained.model->predict(data).values == std::vector<double>{3, 3, 3});

    auto failing =
        registry.create_trainer("test_trainer", {{"value", 3.0}, {"fail_predict", true}});
    auto failing_model = failing->train(data, context).model;
    REQUIRE(failing_model != nullptr);
    CHECK(message_of<dptune::PluginError>([&] { failing_model->predict(data); }) ==
          prefix("test_trainer") + "Model::predict: constant model refuses to predict");
    CHECK(failing_model->describe() == "constant 3.000000");
  }
  SUBCASE("tuner, with host callbacks passing through") {
    FakeTunerContext context;
    auto delta_tuner = registry.create_tuner("test_tuner", {{"probe", std::string("delta")}});
    context.delta_fn = [] { return 0.125; };
    auto result = delta_tuner->tune(context);
    CHECK(result.notes == std::vector<std::string>{"delta 0.125000"});

    // A host config error thrown through the plugin passes through unchanged.
    context.delta_fn = []() -> double { throw dptune::ConfigError("pipeline: no delta"); };
    CHECK(message_of<dptune::ConfigError>([&] { delta_tuner->tune(context); }) ==
          "pipeline: no delta");

    // A nested plugin's error keeps the nested plugin's attribution.
    auto mechanism_tuner =
        registry.create_tuner("test_tuner", {{"probe", std::string("mechanism")}});
    context.mechanism_fn = [&]() -> std::shared_ptr<const dptune::Mechanism> {
      return registry.create_mechanism("test_throwing",
                                       throwing_params("methods", "runtime_error"));
    };
    CHECK(message_of<dptune::PluginError>([&] { mechanism_tuner->tune(context); }) ==
          "plugin 'test_throwing' (" + throwing.string() +
              ") failed in Mechanism::event: test_throwing runtime_error in event");
    context.mechanism_fn = [&]() -> std::shared_ptr<const dptune::Mechanism> {
      return registry.create_mechanism("test_offset", {{"offset", 0.0}, {"epsilon", 3.0}});
    };
    CHECK(mechanism_tuner->tune(context).notes ==
          std::vector<std::string>{"mechanism " + dptune::DpEvent::pure_dp(3.0).to_string()});

    // Anything else escaping the tuner is the tuner's failure.
    context.mechanism_fn = []() -> std::shared_ptr<const dptune::Mechanism> {
      throw std::runtime_error("host out of mechanisms");
    };
    CHECK(message_of<dptune::PluginError>([&] { mechanism_tuner->tune(context); }) ==
          prefix("test_tuner") + "Tuner::tune: host out of mechanisms");
  }
}

TEST_CASE("loader: no plugin library has STB_GNU_UNIQUE symbols (they would pin it in memory)") {
  std::vector<fs::path> libraries;
  for (const fs::path& root :
       {fs::path(dptune_test::build_paths::built_plugin_dir), test_plugin_dir()}) {
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && entry.path().extension() == ".so") {
        libraries.push_back(entry.path());
      }
    }
  }
  REQUIRE_MESSAGE(!libraries.empty(), "no plugin library found under "
                                          << dptune_test::build_paths::built_plugin_dir << " or "
                                          << test_plugin_dir());
  for (const auto& library : libraries) {
    CAPTURE(library);
    const std::string command = "readelf -sW '" + library.string() + "' 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE_MESSAGE(pipe != nullptr, "cannot run readelf");
    std::string output;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    const int status = pclose(pipe);
    REQUIRE_MESSAGE(status == 0, "readelf failed: " << output);
    REQUIRE(output.find("Symbol table '.dynsym'") != std::string::npos);
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
      CHECK_MESSAGE(line.find("UNIQUE") == std::string::npos, line);
    }
  }
}
