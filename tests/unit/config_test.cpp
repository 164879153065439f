// Tests of the pipeline loader (framework/include/dptune/host/config.hpp) against a fake catalog
// whose schemas are those of the real built-in plugins.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "build_paths.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/data_source.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using dptune::ParamSchema;
using dptune::Value;
using dptune::host::Catalog;
using dptune::host::ComponentKind;
using dptune::host::ConfigDiagnostic;
using dptune::host::Override;
using dptune::host::PipelineConfig;

namespace {

// The real built-in components' schemas (data source binary_queries; plugins sparse_vector, f1,
// pure_dp, grid, random).  Inserted out of alphabetical order on purpose: messages list names
// sorted.
class FakeCatalog : public Catalog {
 public:
  FakeCatalog() {
    // The host's own data sources, as the real catalog has them (the config loader checks their
    // params with the data layer).
    for (const auto& source : dptune::host::data_sources())
      add(ComponentKind::Data, source.name, source.schema);
    add(ComponentKind::Mechanism, "sparse_vector",
        ParamSchema{}
            .add_float("b", "total noise level b")
            .min_exclusive(0)
            .add_int("C", "bound C on the number of released positives")
            .min(1)
            .add_float("threshold", "threshold T the noisy answers are compared with")
            .default_to(0.5));
    add(ComponentKind::Utility, "f1",
        ParamSchema{}
            .add_float("threshold", "a released value >= threshold counts as positive")
            .default_to(0.5));
    add(ComponentKind::Accountant, "pure_dp", ParamSchema{});
    // The trainers and noise mechanisms, by name only: the corpus lists the available
    // algorithms (unknown_algorithm.expected), which must read the same here and through the CLI.
    for (const char* name : {"sgd", "dp_sgd", "output_perturbation", "dp_adam"})
      add(ComponentKind::Trainer, name, ParamSchema{});
    for (const char* name : {"laplace", "gaussian"})
      add(ComponentKind::Mechanism, name, ParamSchema{});
    // The built-in tuners' names, so the corpus' "available:" lists match the real plugins.
    add(ComponentKind::Tuner, "dpareto", ParamSchema{});
    add(ComponentKind::Tuner, "random",
        ParamSchema{}
            .add_int("trials", "number of random candidates")
            .min(1)
            .default_to(std::int64_t{100}));
    add(ComponentKind::Tuner, "grid",
        ParamSchema{}
            .add_int("points_per_dimension",
                     "grid points per float dimension (ints and categoricals: all values up to "
                     "this many)")
            .min(1)
            .default_to(std::int64_t{10}));
  }

  void add(ComponentKind kind, std::string name, ParamSchema schema) {
    entries_.push_back({kind, std::move(name), std::move(schema)});
  }

  std::vector<std::string> names(ComponentKind kind) const override {
    std::vector<std::string> out;
    for (const auto& e : entries_)
      if (e.kind == kind) out.push_back(e.name);
    return out;
  }
  const ParamSchema* schema(ComponentKind kind, const std::string& name) const override {
    for (const auto& e : entries_)
      if (e.kind == kind && e.name == name) return &e.schema;
    return nullptr;
  }
  // The maps declare themselves so, as the real plugins do; every other tuner declares nothing
  // (private).
  dptune::PluginTraits traits(ComponentKind kind, const std::string& name,
                              const dptune::Params&) const override {
    dptune::PluginTraits out;
    if (kind == ComponentKind::Tuner && (name == "grid" || name == "random" || name == "dpareto"))
      out.tuner = dptune::TunerTraits{.outputs = dptune::TunerOutputs::Map};
    return out;
  }

 private:
  struct Item {
    ComponentKind kind;
    std::string name;
    ParamSchema schema;
  };
  std::vector<Item> entries_;
};

using dptune_test::TempDir;

const FakeCatalog& catalog() {
  static const FakeCatalog instance;
  return instance;
}

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// what() of the ConfigDiagnostic that loading `yaml` (written to f.yaml in a temp folder) throws,
// with the temp file's path replaced by "f.yaml"; "no error" if it loads.
std::string config_error(const std::string& yaml, const std::vector<Override>& overrides = {}) {
  TempDir dir;
  const fs::path file = dir.write("f.yaml", yaml);
  try {
    dptune::host::load_pipeline(file, overrides, catalog());
  } catch (const ConfigDiagnostic& e) {
    std::string what = e.what();
    const std::string shown = file.string();
    if (what.rfind(shown, 0) == 0) what = "f.yaml" + what.substr(shown.size());
    return what;
  }
  return "no error";
}

PipelineConfig load_text(const TempDir& dir, const std::string& yaml,
                         const std::vector<Override>& overrides = {}) {
  return dptune::host::load_pipeline(dir.write("pipeline.yaml", yaml), overrides, catalog());
}

// A minimal valid pipeline; tests replace one line to break it.
const std::string kMinimal =
    "data: {use: binary_queries}\n"
    "algorithm: {use: sparse_vector}\n"
    "accountant: {use: pure_dp, delta: 0}\n"
    "utility: {use: f1}\n"
    "search_space:\n"
    "  b: {float: [0.1, 10]}\n"
    "  C: {int: [1, 30]}\n"
    "tuner: {use: grid}\n";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "test bug: '" << from << "' not in the pipeline");
  return text.replace(at, from.size(), to);
}

bool same_space(const dptune::SearchSpace& a, const dptune::SearchSpace& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& x = a.dimensions()[i];
    const auto& y = b.dimensions()[i];
    if (x.name != y.name || x.kind != y.kind || x.low != y.low || x.high != y.high ||
        x.log != y.log || x.step != y.step || x.float_step != y.float_step ||
        x.choices != y.choices)
      return false;
  }
  return true;
}

bool same_component(const dptune::host::ComponentConfig& a,
                    const dptune::host::ComponentConfig& b) {
  return a.kind == b.kind && a.use == b.use && a.params == b.params;
}

void check_same_config(const PipelineConfig& a, const PipelineConfig& b) {
  CHECK(a.name == b.name);
  CHECK(a.plugin_paths == b.plugin_paths);
  CHECK(same_component(a.data, b.data));
  CHECK(same_component(a.algorithm, b.algorithm));
  REQUIRE(a.mechanism.has_value() == b.mechanism.has_value());
  if (a.mechanism) CHECK(same_component(*a.mechanism, *b.mechanism));
  CHECK(same_component(a.accountant, b.accountant));
  CHECK(a.delta == b.delta);
  CHECK(same_component(a.utility, b.utility));
  CHECK(a.repetitions == b.repetitions);
  CHECK(same_space(a.space, b.space));
  CHECK(same_component(a.tuner, b.tuner));
  CHECK(a.execution.executor == b.execution.executor);
  CHECK(a.execution.threads == b.execution.threads);
  CHECK(a.execution.seed == b.execution.seed);
  CHECK(a.output.dir == b.output.dir);
  CHECK(a.output.plot == b.output.plot);
  CHECK(a.output.sensitive_trials == b.output.sensitive_trials);
}

const std::string kFull =
    "# a complete pipeline\n"
    "name: quickstart\n"
    "plugin_paths: [./my_plugins, /opt/dptune/plugins, ../vendor/plugins/]\n"
    "data: {use: binary_queries, params: {queries: 200}}\n"
    "algorithm: {use: sparse_vector, params: {threshold: 1}}\n"
    "mechanism: {use: sparse_vector, params: {b: 2, C: 3}}\n"
    "accountant: {use: pure_dp, params: {}, delta: 1.0e-6}\n"
    "utility: {use: f1, params: {threshold: 0.25}, repetitions: 50}\n"
    "search_space:\n"
    "  C: {int: [1, 30], step: 2}\n"
    "  b: {float: [1.0e-2, 1.0e2], log: true}\n"
    "tuner:\n"
    "  use: grid\n"
    "  params:\n"
    "    points_per_dimension: 30\n"
    "execution: {executor: inline, threads: 4, seed: 42}\n"
    "output: {dir: out/quick, plot: false, sensitive_trials: true}\n";

}  // namespace

TEST_CASE("config: did_you_mean suggests the closest candidate within max(1, n/3) edits") {
  using dptune::host::did_you_mean;
  CHECK(did_you_mean("parms", {"use", "params"}) == std::optional<std::string>("params"));
  // A transposition counts as one edit.
  CHECK(did_you_mean("gird", {"grid", "random"}) == std::optional<std::string>("grid"));
  CHECK(did_you_mean("tunner", {"data", "tuner", "utility"}) ==
        std::optional<std::string>("tuner"));
  CHECK(did_you_mean("x", {"b", "C"}) == std::optional<std::string>("b"));  // tie: first wins
  CHECK(did_you_mean("x", {"C", "b"}) == std::optional<std::string>("C"));
  // ...except that a candidate differing only in case wins.
  CHECK(did_you_mean("c", {"b", "C"}) == std::optional<std::string>("C"));
  CHECK(did_you_mean("DATA", {"date", "data"}) == std::optional<std::string>("data"));
  CHECK(did_you_mean("grid", {"grid"}) == std::optional<std::string>("grid"));
  // Too far: "xyz" (limit 1) from "grid"; 'points' (limit 2) from 'points_per_dimension'.
  CHECK_FALSE(did_you_mean("xyz", {"grid", "random"}).has_value());
  CHECK_FALSE(did_you_mean("points", {"points_per_dimension"}).has_value());
  CHECK_FALSE(did_you_mean("anything", {}).has_value());
  // Limit grows with the word: 12 letters allow 4 edits.
  CHECK(did_you_mean("sparse_vectr", {"gaussian", "sparse_vector"}) ==
        std::optional<std::string>("sparse_vector"));
  CHECK(did_you_mean("sprs_vectr", {"sparse_vector"}) ==
        std::optional<std::string>("sparse_vector"));
  CHECK_FALSE(did_you_mean("spr_vec", {"sparse_vector"}).has_value());
}

TEST_CASE("config: diagnostics format file:line:col: key.path: message") {
  using dptune::host::SourceLocation;
  CHECK(SourceLocation{"f.yaml", 3, 5}.to_string() == "f.yaml:3:5");
  CHECK(SourceLocation{"f.yaml", 0, 0}.to_string() == "f.yaml");
  const ConfigDiagnostic a({"f.yaml", 4, 3}, "algorithm.parms", "unknown key 'parms'");
  CHECK(std::string(a.what()) == "f.yaml:4:3: algorithm.parms: unknown key 'parms'");
  CHECK(a.where().line == 4);
  CHECK(a.key_path() == "algorithm.parms");
  CHECK(a.message() == "unknown key 'parms'");
  CHECK(std::string(ConfigDiagnostic({"--set", 0, 0}, "tuner.use.x", "m").what()) ==
        "--set: tuner.use.x: m");
  CHECK(std::string(ConfigDiagnostic({"f.yaml", 3, 5}, "", "YAML syntax error: x").what()) ==
        "f.yaml:3:5: YAML syntax error: x");
  // A ConfigDiagnostic is a ConfigError (exit code 2 in the CLI).
  const dptune::ConfigError& base = a;
  CHECK(std::string(base.what()) == a.what());
  CHECK(std::string(dptune::host::to_string(ComponentKind::Data)) == "data");
  CHECK(std::string(dptune::host::to_string(ComponentKind::Mechanism)) == "mechanism");
  CHECK(std::string(dptune::host::to_string(ComponentKind::Accountant)) == "accountant");
  CHECK(std::string(dptune::host::to_string(ComponentKind::Utility)) == "utility");
  CHECK(std::string(dptune::host::to_string(ComponentKind::Trainer)) == "trainer");
  CHECK(std::string(dptune::host::to_string(ComponentKind::Tuner)) == "tuner");
}

TEST_CASE("config: a complete pipeline loads with typed, completed values and absolute paths") {
  TempDir dir;
  const PipelineConfig c = load_text(dir, kFull);
  const fs::path& base = dir.path();

  CHECK(c.file == base / "pipeline.yaml");
  CHECK(c.name == "quickstart");
  REQUIRE(c.plugin_paths.size() == 3);
  CHECK(c.plugin_paths[0] == base / "my_plugins");
  CHECK(c.plugin_paths[1] == fs::path("/opt/dptune/plugins"));
  CHECK(c.plugin_paths[2] == base.parent_path() / "vendor" / "plugins");

  CHECK(c.data.kind == ComponentKind::Data);
  CHECK(c.data.use == "binary_queries");
  CHECK(c.data.params ==
        dptune::Params{{"queries", std::int64_t{200}}, {"positives", std::int64_t{10}}});
  CHECK(c.data.where.file == (base / "pipeline.yaml").string());
  CHECK(c.data.where.line == 4);
  CHECK(c.data.where.column == 1);

  // The algorithm keeps only its fixed values (the int 1 became the float 1.0).
  CHECK(c.algorithm.kind == ComponentKind::Mechanism);
  CHECK(c.algorithm.use == "sparse_vector");
  CHECK(c.algorithm.params == dptune::Params{{"threshold", 1.0}});

  REQUIRE(c.mechanism.has_value());
  CHECK(c.mechanism->kind == ComponentKind::Mechanism);
  CHECK(c.mechanism->params ==
        dptune::Params{{"b", 2.0}, {"C", std::int64_t{3}}, {"threshold", 0.5}});
  CHECK(std::holds_alternative<double>(c.mechanism->params.at("b")));

  CHECK(c.accountant.use == "pure_dp");
  CHECK(c.accountant.params.empty());
  CHECK(c.delta == 1.0e-6);
  CHECK(c.utility.params == dptune::Params{{"threshold", 0.25}});
  CHECK(c.repetitions == 50);

  REQUIRE(c.space.size() == 2);
  const auto& C = c.space.dimensions()[0];
  CHECK(C.name == "C");
  CHECK(C.kind == dptune::Dimension::Kind::Int);
  CHECK(C.low == 1);
  CHECK(C.high == 30);
  CHECK(C.step == 2);
  CHECK_FALSE(C.log);
  const auto& b = c.space.dimensions()[1];
  CHECK(b.name == "b");
  CHECK(b.kind == dptune::Dimension::Kind::Float);
  CHECK(b.low == 0.01);
  CHECK(b.high == 100.0);
  CHECK(b.log);
  CHECK(b.float_step == 0);

  CHECK(c.tuner.kind == ComponentKind::Tuner);
  CHECK(c.tuner.use == "grid");
  CHECK(c.tuner.params == dptune::Params{{"points_per_dimension", std::int64_t{30}}});
  CHECK(c.tuner.where.line == 12);

  CHECK(c.execution.executor == "inline");
  CHECK(c.execution.threads == 4);
  CHECK(c.execution.seed == std::optional<std::uint64_t>(42));
  CHECK(c.output.dir == base / "out" / "quick");
  CHECK_FALSE(c.output.plot);
  CHECK(c.output.sensitive_trials);
}

TEST_CASE("config: defaults of optional keys") {
  TempDir dir;
  const fs::path file = dir.write("sub/my_pipe.yaml", kMinimal);
  const PipelineConfig c = dptune::host::load_pipeline(file, {}, catalog());
  CHECK(c.name == "my_pipe");
  CHECK(c.plugin_paths.empty());
  CHECK(c.data.params ==
        dptune::Params{{"queries", std::int64_t{100}}, {"positives", std::int64_t{10}}});
  CHECK(c.algorithm.params.empty());
  CHECK_FALSE(c.mechanism.has_value());
  CHECK(c.delta == 0.0);
  CHECK(c.utility.params == dptune::Params{{"threshold", 0.5}});
  CHECK(c.repetitions == 1);
  CHECK(c.tuner.params == dptune::Params{{"points_per_dimension", std::int64_t{10}}});
  CHECK(c.execution.executor == "threads");
  CHECK(c.execution.threads == 0);
  CHECK_FALSE(c.execution.seed.has_value());
  // results/<name> next to the YAML file, not in the working folder.
  CHECK(c.output.dir == dir.path() / "sub" / "results" / "my_pipe");
  CHECK(c.output.plot);
  CHECK_FALSE(c.output.sensitive_trials);

  // Empty optional sections are the same as absent ones.
  const PipelineConfig d =
      load_text(dir, kMinimal + "mechanism:\nexecution:\noutput:\nplugin_paths:\n");
  CHECK_FALSE(d.mechanism.has_value());
  CHECK(d.execution.executor == "threads");
  CHECK(d.output.dir == dir.path() / "results" / "pipeline");
}

TEST_CASE("config: scalars are typed by the schema") {
  TempDir dir;
  // Float accepts an int-looking scalar; String accepts any scalar; YAML 1.2 floats like 1e-3.
  const auto c = load_text(
      dir, replace(kMinimal, "{use: f1}", "{use: f1, params: {threshold: 1e-3}}") + "name: 2024\n");
  CHECK(c.utility.params.at("threshold") == Value{0.001});
  CHECK(c.name == "2024");
  const auto d =
      load_text(dir, replace(kMinimal, "{use: f1}", "{use: f1, params: {threshold: 3}}"));
  CHECK(d.utility.params.at("threshold") == Value{3.0});
  // Categorical choices are converted to the parameter's type.
  const auto e =
      load_text(dir, replace(kMinimal, "b: {float: [0.1, 10]}", "b: {categorical: [1, 2.5]}"));
  REQUIRE(e.space.find("b") != nullptr);
  CHECK(e.space.find("b")->choices == std::vector<Value>{Value{1.0}, Value{2.5}});
  // An int dimension may search a float parameter; a float dimension may have a step.
  const auto f =
      load_text(dir, replace(replace(kMinimal, "b: {float: [0.1, 10]}", "b: {int: [1, 9]}"),
                             "C: {int: [1, 30]}", "C: {int: [1, 64], log: true}"));
  CHECK(f.space.find("b")->kind == dptune::Dimension::Kind::Int);
  CHECK(f.space.find("C")->log);
  const auto g = load_text(
      dir, replace(kMinimal, "b: {float: [0.1, 10]}", "b: {float: [0.5, 10], step: 0.5}"));
  CHECK(g.space.find("b")->float_step == 0.5);
}

TEST_CASE("config: --set overrides are applied before validation") {
  TempDir dir;
  const std::vector<Override> overrides{
      {"tuner.params.points_per_dimension", "5"},
      {"search_space.C", "{int: [1, 5]}"},
      {"search_space.b", "{categorical: [0.5, 1]}"},
      {"execution.seed", "7"},       // creates the missing execution map
      {"output.plot", "false"},      // creates output
      {"name", "renamed"},           // also renames the default output folder
      {"accountant.delta", "1e-5"},  // replaces a value of the file
      {"mechanism", "{use: sparse_vector, params: {b: 1, C: 2}}"},  // a whole section
  };
  const PipelineConfig c = load_text(dir, kMinimal, overrides);
  CHECK(c.tuner.params.at("points_per_dimension") == Value{std::int64_t{5}});
  REQUIRE(c.space.size() == 2);
  CHECK(c.space.dimensions()[0].name == "b");  // a replaced dimension keeps its place
  CHECK(c.space.dimensions()[0].choices == std::vector<Value>{Value{0.5}, Value{1.0}});
  CHECK(c.space.dimensions()[1].high == 5);
  CHECK(c.execution.seed == std::optional<std::uint64_t>(7));
  CHECK_FALSE(c.output.plot);
  CHECK(c.name == "renamed");
  CHECK(c.output.dir == dir.path() / "results" / "renamed");
  CHECK(c.delta == 1e-5);
  REQUIRE(c.mechanism.has_value());
  CHECK(c.mechanism->params.at("b") == Value{1.0});

  // A new dimension is appended.
  const auto d = load_text(dir, replace(kMinimal, "  C: {int: [1, 30]}\n", ""),
                           {{"search_space.C", "{int: [2, 4]}"}});
  REQUIRE(d.space.size() == 2);
  CHECK(d.space.dimensions()[1].name == "C");
  CHECK(d.space.dimensions()[1].low == 2);

  // read_plugin_paths sees overrides too, and resolves against the file's folder.
  const fs::path file = dir.write("p.yaml", kMinimal);
  CHECK(dptune::host::read_plugin_paths(file, {{"plugin_paths", "[x, /abs]"}}) ==
        std::vector<fs::path>{dir.path() / "x", "/abs"});
}

TEST_CASE("config: errors in --set overrides point to --set") {
  CHECK(config_error(kMinimal, {{"tuner.use.x", "1"}}) ==
        "--set: tuner.use.x: cannot set a key inside a scalar");
  CHECK(config_error(kMinimal + "plugin_paths: [a]\n", {{"plugin_paths.x", "1"}}) ==
        "--set: plugin_paths.x: cannot set a key inside a sequence");
  CHECK(config_error(kMinimal, {{"tuner..use", "grid"}}) ==
        "--set: tuner..use: expected a dotted key path such as tuner.params.trials");
  CHECK(config_error(kMinimal, {{"tuner.params.points_per_dimension", "0"}}) ==
        "--set: tuner.params.points_per_dimension: expected int in [1, inf), got 0");
  CHECK(config_error(kMinimal, {{"tuner.params.points_per_dimension", "[1"}}) ==
        "--set: tuner.params.points_per_dimension: YAML syntax error in the value: end of sequence "
        "flow not found");
  CHECK(config_error(kMinimal, {{"tuner.parms.points_per_dimension", "3"}}) ==
        "--set: tuner.parms: unknown key 'parms' (did you mean 'params'?)");
  CHECK(config_error(kMinimal, {{"search_space.C", "{int: [1, 5], int: [2, 3]}"}}) ==
        "--set: search_space.C.int: duplicate key 'int' (first given with --set)");
  // A key of the file keeps its position; only the value comes from --set.
  CHECK(config_error(kMinimal, {{"accountant.delta", "2"}}) ==
        "--set: accountant.delta: expected float in [0.0, 1.0), got 2");
}

TEST_CASE("config: to_yaml round trip gives an equal configuration") {
  TempDir dir;
  const PipelineConfig a = load_text(dir, kFull);
  const std::string text = dptune::host::to_yaml(a);
  // Defaults are written out, paths are absolute.
  CHECK(text.find("positives: 10") != std::string::npos);
  CHECK(text.find("threshold: 0.5") != std::string::npos);
  CHECK(text.find("delta: 1e-06") != std::string::npos);
  CHECK(text.find("repetitions: 50") != std::string::npos);
  CHECK(text.find("seed: 42") != std::string::npos);
  CHECK(text.find((dir.path() / "my_plugins").string()) != std::string::npos);
  CHECK(text.find("b: {float: [0.01, 100.0], log: true}") != std::string::npos);
  CHECK(text.find("C: {int: [1, 30], step: 2}") != std::string::npos);

  TempDir other;  // another folder: absolute paths must not move
  const fs::path copy = other.write("resolved.yaml", text);
  const PipelineConfig b = dptune::host::load_pipeline(copy, {}, catalog());
  check_same_config(a, b);
  CHECK(dptune::host::to_yaml(b) == text);

  // Without a seed or mechanism, with categorical choices that look like other types.
  const PipelineConfig m = load_text(
      dir, replace(kMinimal, "b: {float: [0.1, 10]}", "b: {categorical: [0.1, 3, 1e-9]}") +
               "name: \"true\"\n");
  const std::string mtext = dptune::host::to_yaml(m);
  CHECK(mtext.find("seed") == std::string::npos);
  CHECK(mtext.find("mechanism") == std::string::npos);
  CHECK(mtext.find("plugin_paths: []\n") != std::string::npos);
  const PipelineConfig m2 =
      dptune::host::load_pipeline(other.write("m.yaml", mtext), {}, catalog());
  check_same_config(m, m2);
  CHECK(m2.name == "true");
}

TEST_CASE("config: error messages name file, position, key path and the problem") {
  // Syntax errors carry yaml-cpp's position.
  CHECK(config_error("data: {use: binary_queries\nalgorithm: x\n") ==
        "f.yaml:2:10: YAML syntax error: end of map flow not found");
  CHECK(config_error("- data\n- tuner\n") ==
        "f.yaml:1:1: expected a map of pipeline sections at the top level, got a sequence");
  CHECK(config_error("# nothing\n") ==
        "f.yaml: the pipeline is empty: expected a map with the keys data, algorithm, accountant, "
        "utility, search_space and tuner");
  CHECK(config_error(kMinimal + "---\nname: two\n") ==
        "f.yaml:10:1: expected one YAML document, found 2");
  CHECK(config_error(replace(kMinimal, "tuner: {use: grid}", "tuner: [grid]")) ==
        "f.yaml:8:8: tuner: expected a map, got a sequence");
  CHECK(config_error(replace(kMinimal, "tuner: {use: grid}", "tuner: grid")) ==
        "f.yaml:8:8: tuner: expected a map, got string 'grid' (write tuner: {use: grid})");
  CHECK(config_error(replace(kMinimal, "tuner: {use: grid}", "tuner:")) ==
        "f.yaml:8:1: tuner: expected a map, got null");
  // Unknown keys, with and without a suggestion.
  CHECK(config_error(replace(kMinimal, "algorithm: {use: sparse_vector}",
                             "algorithm:\n  use: sparse_vector\n  parms: {b: 1}")) ==
        "f.yaml:4:3: algorithm.parms: unknown key 'parms' (did you mean 'params'?)");
  CHECK(config_error(kMinimal + "tunner: {use: grid}\n") ==
        "f.yaml:9:1: tunner: unknown key 'tunner' (did you mean 'tuner'?)");
  CHECK(config_error(kMinimal + "execution: {cores: 3}\n") ==
        "f.yaml:9:13: execution.cores: unknown key 'cores'; allowed keys: executor, threads, seed");
  CHECK(config_error(
            replace(kMinimal, "{use: grid}", "{use: grid, params: {point_per_dimension: 3}}")) ==
        "f.yaml:8:29: tuner.params.point_per_dimension: unknown parameter 'point_per_dimension' of "
        "grid (did you mean 'points_per_dimension'?)");
  CHECK(config_error(replace(kMinimal, "{use: pure_dp,", "{use: pure_dp, params: {eps: 1},")) ==
        "f.yaml:3:37: accountant.params.eps: unknown parameter 'eps' of pure_dp; pure_dp takes no "
        "parameters");
  CHECK(config_error(replace(kMinimal, "{use: f1}", "{use: f1, params: {x: 1}}")) ==
        "f.yaml:4:29: utility.params.x: unknown parameter 'x' of f1; parameters: threshold");
  CHECK(config_error(replace(kMinimal, "C: {int: [1, 30]}", "C: {int: [1, 30], stpe: 2}")) ==
        "f.yaml:7:21: search_space.C.stpe: unknown key 'stpe' (did you mean 'step'?)");
}

TEST_CASE("config: duplicate and missing keys") {
  CHECK(config_error(
            "search_space:\n  C: {int: [1, 30]}\n  b: {float: [0.1, 1]}\n  C: {int: [2, 3]}\n") ==
        "f.yaml:4:3: search_space.C: duplicate key 'C' (first at line 2)");
  CHECK(config_error(kMinimal + "tuner: {use: random}\n") ==
        "f.yaml:9:1: tuner: duplicate key 'tuner' (first at line 8)");
  CHECK(config_error(replace(kMinimal, "{use: binary_queries}",
                             "{use: binary_queries, params: {queries: 5, queries: 6}}")) ==
        "f.yaml:1:50: data.params.queries: duplicate key 'queries' (first at line 1)");
  CHECK(config_error(replace(kMinimal, "tuner: {use: grid}\n", "")) ==
        "f.yaml:1:1: missing required key 'tuner'");
  CHECK(config_error(replace(kMinimal, "accountant: {use: pure_dp, delta: 0}",
                             "accountant:\n  use: pure_dp")) ==
        "f.yaml:3:1: accountant: missing required key 'delta'");
  CHECK(config_error(replace(kMinimal, "{use: f1}", "{params: {}}")) ==
        "f.yaml:4:1: utility: missing required key 'use'");
}

TEST_CASE("config: unknown components and parameter values") {
  CHECK(config_error(replace(kMinimal, "{use: grid}", "{use: gird}")) ==
        "f.yaml:8:14: tuner.use: unknown tuner 'gird' (did you mean 'grid'?); "
        "available: dpareto, grid, random");
  CHECK(config_error(replace(kMinimal, "{use: grid}", "{use: bayes}")) ==
        "f.yaml:8:14: tuner.use: unknown tuner 'bayes'; available: dpareto, grid, random");
  CHECK(config_error(replace(kMinimal, "{use: binary_queries}", "{use: binary_query}")) ==
        "f.yaml:1:13: data.use: unknown data source 'binary_query' (did you mean "
        "'binary_queries'?); available: binary_queries, blobs, builtin:breast_cancer, "
        "builtin:digits, builtin:heart_scale, builtin:iris, builtin:two_gaussians, builtin:wine, "
        "csv, idx, libsvm");
  CHECK(config_error(replace(kMinimal, "{use: sparse_vector}", "{use: sparse_vectr}")) ==
        "f.yaml:2:18: algorithm.use: unknown algorithm 'sparse_vectr' (did you mean "
        "'sparse_vector'?); available trainers and mechanisms: dp_adam, dp_sgd, "
        "output_perturbation, sgd, gaussian, laplace, sparse_vector");
  CHECK(config_error(replace(kMinimal, "{use: pure_dp,", "{use: [pure_dp],")) ==
        "f.yaml:3:19: accountant.use: expected string, got a sequence");
  // Values are checked with the schema, with the SDK's wording.
  CHECK(config_error(
            replace(kMinimal, "{use: grid}", "{use: grid, params: {points_per_dimension: 0}}")) ==
        "f.yaml:8:51: tuner.params.points_per_dimension: expected int in [1, inf), got 0");
  CHECK(config_error(replace(kMinimal, "{use: binary_queries}",
                             "{use: binary_queries, params: {positives: 2.5}}")) ==
        "f.yaml:1:49: data.params.positives: expected int in [0, inf), got float '2.5'");
  CHECK(config_error(replace(kMinimal, "{use: binary_queries}",
                             "{use: binary_queries, params: {queries: '5'}}")) ==
        "f.yaml:1:47: data.params.queries: expected int in [1, inf), got string '5'");
  CHECK(config_error(replace(kMinimal, "{use: f1}", "{use: f1, params: {threshold: [0.5]}}")) ==
        "f.yaml:4:40: utility.params.threshold: expected float, got a sequence");
  CHECK(config_error(replace(kMinimal, "{use: f1}", "{use: f1, params: {threshold: high}}")) ==
        "f.yaml:4:40: utility.params.threshold: expected float, got string 'high'");
  CHECK(config_error(replace(kMinimal, "{use: f1}", "{use: f1, params: {threshold: }}")) ==
        "f.yaml:4:40: utility.params.threshold: expected float, got null");
  CHECK(config_error(
            replace(kMinimal, "{use: sparse_vector}", "{use: sparse_vector, params: {b: -1}}")) ==
        "f.yaml:2:45: algorithm.params.b: expected float in (0.0, inf), got -1");
  CHECK(config_error(kMinimal + "mechanism: {use: sparse_vector, params: {b: 1}}\n") ==
        "f.yaml:9:1: mechanism: missing required parameter 'C' of sparse_vector (bound C on the "
        "number of released positives): give it in mechanism.params");
  CHECK(config_error(replace(kMinimal, "delta: 0", "delta: 1")) ==
        "f.yaml:3:35: accountant.delta: expected float in [0.0, 1.0), got 1");
  CHECK(config_error(replace(kMinimal, "delta: 0", "delta: -1.0e-5")) ==
        "f.yaml:3:35: accountant.delta: expected float in [0.0, 1.0), got -1e-05");
  CHECK(config_error(replace(kMinimal, "{use: f1}", "{use: f1, repetitions: 0}")) ==
        "f.yaml:4:33: utility.repetitions: expected int in [1, inf), got 0");
  CHECK(config_error(kMinimal + "execution: {executor: cluster}\n") ==
        "f.yaml:9:23: execution.executor: expected string one of {inline, threads, mpi}, got "
        "'cluster'");
  CHECK(config_error(kMinimal + "execution: {threads: -2}\n") ==
        "f.yaml:9:22: execution.threads: expected int in [0, inf), got -2");
  CHECK(config_error(kMinimal + "execution: {seed: 1.5}\n") ==
        "f.yaml:9:19: execution.seed: expected int in [0, inf), got float '1.5'");
  CHECK(config_error(kMinimal + "output: {plot: yes}\n") ==
        "f.yaml:9:16: output.plot: expected bool, got string 'yes'");
  CHECK(config_error(kMinimal + "output: {dir: ''}\n") ==
        "f.yaml:9:15: output.dir: expected a non-empty string, got ''");
  CHECK(config_error(kMinimal + "plugin_paths: [ok, [nested]]\n") ==
        "f.yaml:9:20: plugin_paths[1]: expected string, got a sequence");
  CHECK(config_error(kMinimal + "plugin_paths: ./plugins\n") ==
        "f.yaml:9:15: plugin_paths: expected a list of folders, got string './plugins'");
  CHECK(config_error(kMinimal + "name: [a]\n") ==
        "f.yaml:9:7: name: expected string, got a sequence");
}

TEST_CASE("config: search space errors") {
  const std::string b = "b: {float: [0.1, 10]}";
  const std::string C = "C: {int: [1, 30]}";
  CHECK(config_error(replace(kMinimal, b, "c: {float: [0.1, 10]}")) ==
        "f.yaml:6:3: search_space.c: 'c' is not a parameter of sparse_vector "
        "(did you mean 'C'?)");
  CHECK(config_error(replace(kMinimal, b, "noise: {float: [0.1, 10]}")) ==
        "f.yaml:6:3: search_space.noise: 'noise' is not a parameter of sparse_vector; parameters: "
        "b, C, threshold");
  CHECK(config_error(replace(kMinimal, "{use: sparse_vector}",
                             "\n  use: sparse_vector\n  params: {C: 3}")) ==
        "f.yaml:9:3: search_space.C: 'C' is also fixed in algorithm.params (line 4): a parameter "
        "is either fixed or searched");
  CHECK(config_error(replace(kMinimal, b, "b: [0.1, 10]")) ==
        "f.yaml:6:6: search_space.b: expected a map, got a sequence");
  CHECK(config_error(replace(kMinimal, b, "b: {log: true}")) ==
        "f.yaml:6:6: search_space.b: missing the dimension's type: one of the keys 'float', "
        "'int' or 'categorical'");
  CHECK(config_error(replace(kMinimal, C, "C: {int: [1, 30], float: [1, 30]}")) ==
        "f.yaml:7:21: search_space.C.float: 'int' and 'float' cannot be combined: a dimension is "
        "one of float, int or categorical");
  CHECK(config_error(replace(kMinimal, C, "C: {float: [1, 30]}")) ==
        "f.yaml:7:7: search_space.C.float: 'C' is an int parameter of sparse_vector: use int: "
        "[low, high]");
  CHECK(config_error(replace(kMinimal, C, "C: {int: [30, 1]}")) ==
        "f.yaml:7:12: search_space.C.int: low bound 30 must be less than high bound 1");
  CHECK(config_error(replace(kMinimal, b, "b: {float: [1, 1]}")) ==
        "f.yaml:6:14: search_space.b.float: low bound 1 must be less than high bound 1");
  CHECK(config_error(replace(kMinimal, b, "b: {float: [0, 10], log: true}")) ==
        "f.yaml:6:28: search_space.b.log: log scale needs a low bound > 0, got 0");
  CHECK(config_error(replace(kMinimal, C, "C: {int: [1, 30], step: 0}")) ==
        "f.yaml:7:27: search_space.C.step: expected int in [1, inf), got 0");
  CHECK(config_error(replace(kMinimal, b, "b: {float: [0.1, 10], step: -0.5}")) ==
        "f.yaml:6:31: search_space.b.step: expected float in (0.0, inf), got -0.5");
  CHECK(config_error(replace(kMinimal, C, "C: {int: [1, 30], step: 2, log: true}")) ==
        "f.yaml:7:21: search_space.C.step: 'step' cannot be combined with 'log: true'");
  CHECK(config_error(replace(kMinimal, b, "b: {float: [0.1, 10, 100]}")) ==
        "f.yaml:6:14: search_space.b.float: expected a list [low, high] of 2 numbers, "
        "got a list of 3 elements");
  CHECK(config_error(replace(kMinimal, b, "b: {float: 10}")) ==
        "f.yaml:6:14: search_space.b.float: expected a list [low, high] of 2 numbers, "
        "got int '10'");
  CHECK(config_error(replace(kMinimal, b, "b: {float: [0.1, x]}")) ==
        "f.yaml:6:20: search_space.b.float: expected float, got string 'x'");
  CHECK(config_error(replace(kMinimal, C, "C: {int: [1, 30.5]}")) ==
        "f.yaml:7:16: search_space.C.int: expected int, got float '30.5'");
  // The bounds must be valid values of the parameter (b > 0, C >= 1).
  CHECK(config_error(replace(kMinimal, b, "b: {float: [-1, 10]}")) ==
        "f.yaml:6:15: search_space.b.float: expected float in (0.0, inf), got -1");
  CHECK(config_error(replace(kMinimal, C, "C: {int: [0, 30]}")) ==
        "f.yaml:7:13: search_space.C.int: expected int in [1, inf), got 0");
  CHECK(config_error(replace(kMinimal, b, "b: {categorical: []}")) ==
        "f.yaml:6:20: search_space.b.categorical: expected at least one choice, got an empty list");
  CHECK(config_error(replace(kMinimal, b, "b: {categorical: 0.5}")) ==
        "f.yaml:6:20: search_space.b.categorical: expected a list of choices, got float '0.5'");
  CHECK(config_error(replace(kMinimal, b, "b: {categorical: [0.5, 1, 0.50]}")) ==
        "f.yaml:6:29: search_space.b.categorical: duplicate choice '0.50' (same as choice 1)");
  CHECK(config_error(replace(kMinimal, C, "C: {categorical: [1, 0]}")) ==
        "f.yaml:7:24: search_space.C.categorical: expected int in [1, inf), got 0");
  CHECK(config_error(replace(kMinimal, C, "C: {categorical: [1, 2], log: true}")) ==
        "f.yaml:7:28: search_space.C.log: 'log' applies only to float and int dimensions");
  CHECK(config_error(
            replace(kMinimal, "search_space:\n  " + b + "\n  " + C + "\n", "search_space: {}\n")) ==
        "f.yaml:5:15: search_space: expected at least one dimension, e.g. C: {int: [1, 30]}");
  // Required algorithm parameters must be fixed or searched.
  CHECK(config_error(replace(kMinimal, "  " + b + "\n", "")) ==
        "f.yaml:2:1: algorithm: missing required parameter 'b' of sparse_vector: give it in "
        "algorithm.params or search_space");
}

TEST_CASE("config: unreadable files and paths as given") {
  TempDir dir;
  const fs::path missing = dir.path() / "nope.yaml";
  try {
    dptune::host::load_pipeline(missing, {}, catalog());
    FAIL("no error");
  } catch (const ConfigDiagnostic& e) {
    CHECK(std::string(e.what()) ==
          missing.string() + ": cannot read pipeline: No such file or directory");
    CHECK(e.where().line == 0);
  }
  CHECK_THROWS_WITH_AS(
      dptune::host::read_plugin_paths(missing),
      (missing.string() + ": cannot read pipeline: No such file or directory").c_str(),
      ConfigDiagnostic);
  CHECK_THROWS_WITH_AS(dptune::host::load_pipeline(dir.path(), {}, catalog()),
                       (dir.path().string() + ": cannot read pipeline: Is a directory").c_str(),
                       ConfigDiagnostic);
  // The file is shown exactly as the caller spelled it, not normalized or made absolute.
  dir.write("sub/f.yaml", replace(kMinimal, "{use: grid}", "{use: gird}"));
  const fs::path odd = dir.path() / "sub" / ".." / "sub" / "f.yaml";
  CHECK_THROWS_WITH_AS(
      dptune::host::load_pipeline(odd, {}, catalog()),
      (odd.string() + ":8:14: tuner.use: unknown tuner 'gird' (did you mean 'grid'?); "
                      "available: dpareto, grid, random")
          .c_str(),
      ConfigDiagnostic);
  const auto c = dptune::host::load_pipeline(
      dir.write("sub/ok.yaml", kMinimal + "plugin_paths: [p]\n"), {}, catalog());
  CHECK(c.plugin_paths == std::vector<fs::path>{dir.path() / "sub" / "p"});
}

TEST_CASE("config: read_plugin_paths reads only plugin_paths") {
  TempDir dir;
  // Everything else may be wrong or missing.
  const fs::path file =
      dir.write("sub/p.yaml", "plugin_paths: [./a, ../b, /c/d/]\ntuner: {use: nothing}\n");
  CHECK(dptune::host::read_plugin_paths(file) ==
        std::vector<fs::path>{dir.path() / "sub" / "a", dir.path() / "b", "/c/d"});
  CHECK(dptune::host::read_plugin_paths(dir.write("none.yaml", "tunner: 3\n")).empty());
  const fs::path bad = dir.write("bad.yaml", "name: x\nplugin_paths: [a, '']\n");
  CHECK_THROWS_WITH_AS(
      dptune::host::read_plugin_paths(bad),
      (bad.string() + ":2:19: plugin_paths[1]: expected a non-empty string, got ''").c_str(),
      ConfigDiagnostic);
  const fs::path dup = dir.write("dup.yaml", "plugin_paths: [a]\nplugin_paths: [b]\n");
  CHECK_THROWS_WITH_AS(dptune::host::read_plugin_paths(dup),
                       (dup.string() + ":2:1: plugin_paths: duplicate key 'plugin_paths' (first at "
                                       "line 1)")
                           .c_str(),
                       ConfigDiagnostic);
  const fs::path syntax = dir.write("syntax.yaml", "plugin_paths: [a\n");
  CHECK_THROWS_AS(dptune::host::read_plugin_paths(syntax), ConfigDiagnostic);
}

// Every tests/bad_pipelines/<name>.yaml fails with exactly the first line of <name>.expected, the
// file shown as bad_pipelines/<name>.yaml (as `dptune validate` run from tests/ shows it).
TEST_CASE("config: bad pipeline corpus") {
  const fs::path tests = fs::path(dptune_test::build_paths::source_dir) / "tests";
  const std::string prefix = std::string(dptune_test::build_paths::source_dir) + "/tests/";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(tests / "bad_pipelines"))
    // tuner_params_*: refused by a tuner's constructor, which the loader's fake catalog cannot
    // run; data_loaded_*: found when `dptune validate` loads the data (public statistics of the
    // wrong length); preflight_*: found by check_pipeline (mechanism, privacy of one run, the
    // tuner's probe); test_score_* and private_tuner_*: need the private tuners, which the fake
    // catalog lacks (private_tuner_* are checked in data_schema_test.cpp too); the
    // CLI corpus (tests/config, `dptune validate` and `dptune run` on the built plugins) checks
    // those.
    if (entry.path().extension() == ".yaml" &&
        entry.path().filename().string().rfind("test_score_", 0) != 0 &&
        entry.path().filename().string().rfind("private_tuner_", 0) != 0 &&
        entry.path().filename().string().rfind("tuner_params_", 0) != 0 &&
        entry.path().filename().string().rfind("data_loaded_", 0) != 0 &&
        entry.path().filename().string().rfind("preflight_", 0) != 0)
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 20);
  for (const auto& file : files) {
    CAPTURE(file);
    const fs::path expected_file = fs::path(file).replace_extension(".expected");
    REQUIRE_MESSAGE(fs::exists(expected_file), "missing " << expected_file);
    std::string expected = read(expected_file);
    expected = expected.substr(0, expected.find('\n'));
    const std::string shown = prefix + "bad_pipelines/" + file.filename().string();
    std::string what = "no error";
    try {
      dptune::host::load_pipeline(shown, {}, catalog());
    } catch (const ConfigDiagnostic& e) {
      what = e.what();
      if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
    }
    // The fake catalog knows fewer plugins than a build has: compare the "available: ..." list only
    // in the CLI check (tests/config), which runs against the built plugins.
    auto without_list = [](const std::string& s) { return s.substr(0, s.find("; available")); };
    CHECK(without_list(what) == without_list(expected));
  }
}

TEST_CASE("config: public statistics given by column name, put in the features' order") {
  TempDir dir;
  const std::string yaml =
      replace(kMinimal, "data: {use: binary_queries}",
              "data: {use: blobs, preprocessing: {use: standardize, mean: {b: 10, a: 1}, "
              "scale: {a: 2, b: 5}}}");
  const PipelineConfig c = load_text(dir, yaml);
  const auto& p = c.preprocessing;
  CHECK(p.names == std::vector<std::string>{"b", "a"});
  CHECK(p.mean == std::vector<double>{10, 1});
  CHECK(p.scale == std::vector<double>{5, 2});
  // The resolved config keeps the names, so it loads back the same.
  CHECK(load_text(dir, dptune::host::to_yaml(c)).preprocessing.names == p.names);
  dptune::Dataset d;
  d.rows = 1;
  d.cols = 2;
  d.feature_names = {"a", "b"};
  d.features = {3, 20};
  const auto ready = p.prepared(d);
  CHECK(ready.mean == std::vector<double>{1, 10});
  ready.apply(d);
  CHECK(d.features == std::vector<double>{1.0, 2.0});
  d.feature_names = {"a", "c"};
  CHECK_THROWS_WITH(p.prepared(d), doctest::Contains("no value for the feature 'c'"));
  d.feature_names = {"a", "b", "c"};
  d.cols = 3;
  CHECK_THROWS_WITH(p.prepared(d), doctest::Contains("no value for the feature 'c'"));
  const dptune::host::Preprocessing extra = [&] {
    dptune::host::Preprocessing q = p;
    q.names = {"b", "z"};
    return q;
  }();
  d.feature_names = {"b"};
  d.cols = 1;
  CHECK_THROWS_WITH(extra.prepared(d), doctest::Contains("'z' is not a feature of the data"));
  // A name in one statistic only is refused where it stands.
  CHECK(config_error(
            replace(kMinimal, "data: {use: binary_queries}",
                    "data: {use: blobs, preprocessing: {use: standardize, mean: {a: 1, b: 2}, "
                    "scale: {a: 2, c: 5}}}"))
            .find("data.preprocessing.scale.c: column 'c' has no value in the other statistic") !=
        std::string::npos);
}

TEST_CASE("config: public bounds given as one number for every feature") {
  TempDir dir;
  const std::string yaml = replace(
      kMinimal, "data: {use: binary_queries}",
      "data: {use: blobs, preprocessing: {use: bounds, min: 0, max: 255, to: zero_to_one}}");
  const PipelineConfig c = load_text(dir, yaml);
  const auto& p = c.preprocessing;
  CHECK(p.every_feature);
  CHECK(p.lower == std::vector<double>{0});
  CHECK(p.upper == std::vector<double>{255});
  // The resolved config keeps the single numbers, so it loads back the same.
  const std::string resolved = dptune::host::to_yaml(c);
  CHECK(resolved.find("min: 0") != std::string::npos);
  CHECK(load_text(dir, resolved).preprocessing.every_feature);
  // Repeated over the columns once the data is known: pixel 51 of 255 -> 0.2.
  dptune::Dataset d;
  d.rows = 1;
  d.cols = 3;
  d.features = {51, 0, 300};
  const auto ready = p.prepared(d);
  CHECK(ready.lower.size() == 3);
  ready.apply(d);
  CHECK(d.features == std::vector<double>{0.2, 0.0, 1.0});
  // One number and one list is refused at the list.
  CHECK(config_error(
            replace(kMinimal, "data: {use: binary_queries}",
                    "data: {use: blobs, preprocessing: {use: bounds, min: 0, max: [1, 2]}}")) ==
        "f.yaml:1:62: data.preprocessing.max: give min and max both as one number (the same for "
        "every feature) or both as lists");
}
