// dptune-figures: reproduces paper figures by simulation (no data, no private release), outside
// the tuner plugins.  One named figure per published figure; every parameter can be overridden.
//
//   dptune-figures list
//   dptune-figures FIGURE [--OPTION VALUE]... [--seed N] [--out DIR] [--overwrite] [--no-plot]
//   dptune-figures run PIPELINE [--seed N] [--out DIR] [--overwrite]
//
// `run` is for the figures that train on a pipeline's data (Papernot & Steinke 2022 Figure 7,
// examples/figures/repetition_fig7.yaml): the host runs the pipeline as `dptune run` does, with
// this program's modules (lib/dptune/figures beside it) loaded as well.
//
// Writes the figure's curves as the host writes a tuner's series (GROUP.csv, GROUP.svg), its table
// (CSV), notes.txt and figure.txt (the command that reproduces it).  Exit codes: 0 done, 1 runtime
// failure, 2 bad command line (the message names the option).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dp_hype_figure2.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/executor.hpp"
#include "dptune/host/plots.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/random.hpp"
#include "dptune/host/runner.hpp"
#include "dptune/params.hpp"
#include "presets.hpp"
#include "svt_doubling_figures.hpp"

namespace fs = std::filesystem;
using dptune::figures::Figure;
using dptune::figures::Preset;

namespace {

/// A bad command line: exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr const char* kUsage =
    "usage: dptune-figures list\n"
    "       dptune-figures FIGURE [--OPTION VALUE]... [--seed N] [--out DIR] [--overwrite] "
    "[--no-plot]\n"
    "       dptune-figures run PIPELINE [--seed N] [--out DIR] [--overwrite]\n"
    "FIGURE: a name from `dptune-figures list`; options override the figure's values.\n";

// The figure's values, then the command line's --OPTION VALUE pairs over them.
struct Request {
  const Preset* preset = nullptr;
  std::map<std::string, std::string> values;
  bool overwrite = false, plot = true;
};

Request parse(const std::vector<std::string>& args) {
  Request r;
  r.preset = dptune::figures::find_preset(args.at(0));
  if (!r.preset)
    throw UsageError("unknown figure '" + args[0] +
                     "'; figures: " + dptune::figures::preset_names());
  r.values = dptune::figures::resolved_values(*r.preset);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--overwrite" || a == "--no-plot") {
      (a == "--overwrite" ? r.overwrite : r.plot) = a == "--overwrite";
      continue;
    }
    const std::string key = a.rfind("--", 0) == 0 ? a.substr(2) : "";
    if (key.empty() || !r.values.count(key))
      throw UsageError("figure " + args[0] + ": unknown option '" + a +
                       "'; options: " + dptune::figures::option_names(*r.preset));
    if (i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0)
      throw UsageError("option --" + key + " needs a value");
    r.values[key] = args[++i];
  }
  return r;
}

// ---- typed reads of the options (a bad value is a UsageError naming the option) ----------------
double number(const Request& r, const std::string& key) {
  try {
    const auto v = dptune::parse_number_list(r.values.at(key), "--" + key);
    if (v.size() != 1) throw dptune::InvalidArgument("--" + key + ": expected one number");
    return v.front();
  } catch (const dptune::InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

std::vector<double> numbers(const Request& r, const std::string& key) {
  try {
    return dptune::parse_number_list(r.values.at(key), "--" + key);
  } catch (const dptune::InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

std::vector<std::size_t> counts(const Request& r, const std::string& key) {
  std::vector<std::size_t> out;
  for (double x : numbers(r, key)) {
    if (!(x >= 1 && x <= 1e12) || x != std::floor(x))
      throw UsageError("--" + key + ": expected integers >= 1, got " + r.values.at(key));
    out.push_back(static_cast<std::size_t>(x));
  }
  return out;
}

std::size_t count(const Request& r, const std::string& key) {
  const auto v = counts(r, key);
  if (v.size() != 1) throw UsageError("--" + key + ": expected one integer");
  return v.front();
}

// --threads: 0 means every core (results do not depend on it).
std::size_t threads(const Request& r) {
  const double t = number(r, "threads");
  if (!(t >= 0 && t <= 4096) || t != std::floor(t))
    throw UsageError("--threads: expected an integer in [0, 4096], got " + r.values.at("threads"));
  return static_cast<std::size_t>(t);
}

std::optional<std::uint64_t> seed(const Request& r) {
  const std::string& text = r.values.at("seed");
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const unsigned long long s = std::stoull(text, &used);
    if (used == text.size() && text.find('-') == std::string::npos) return s;
  } catch (const std::exception&) {
  }
  throw UsageError("--seed: expected a non-negative integer, got '" + text + "'");
}

// ---- the figures --------------------------------------------------------------------------------
Figure dp_hype(const Request& r, dptune::RandomBitGenerator& rng) {
  dptune::figures::Figure2Options o;
  o.clients = count(r, "clients");
  o.repetitions = count(r, "repetitions");
  o.epsilons = numbers(r, "epsilons");
  o.ks = counts(r, "k");
  o.sigma_losses = numbers(r, "sigma-loss");
  o.goods = counts(r, "good");
  o.sizes = counts(r, "candidates");
  const std::string calibration = r.values.at("calibration");
  if (calibration != "rdp" && calibration != "analytic_gaussian")
    throw UsageError("--calibration: expected rdp or analytic_gaussian, got '" + calibration + "'");
  o.analytic_gaussian = calibration == "analytic_gaussian";
  try {
    dptune::figures::check(o);
  } catch (const dptune::InvalidArgument& e) {
    throw UsageError(std::string("--") + e.what());
  }
  // The pipeline's accountant plugin with its default parameters, as `dptune run` loads it.
  dptune::host::PluginRegistry registry;
  for (const auto& folder : dptune::host::PluginRegistry::default_search_path())
    if (fs::exists(folder)) registry.scan(folder);
  const std::string name = r.values.at("accountant");
  const dptune::ParamSchema* schema =
      registry.schema(dptune::host::ComponentKind::Accountant, name);
  if (!schema) throw UsageError("--accountant: no accountant plugin '" + name + "' was found");
  const auto accountant = registry.create_accountant(name, schema->complete({}));
  const auto executor = dptune::host::make_executor("threads", threads(r));
  return dptune::figures::dp_hype_figure2(
      o, *accountant, number(r, "delta"), rng,
      [&](std::size_t n, const std::function<void(std::size_t)>& body) {
        executor->parallel_for(n, body);
      });
}

Figure svt_doubling(const Request& r, dptune::RandomBitGenerator& rng) {
  dptune::svt_doubling::SimulationOptions o;
  o.candidates = count(r, "candidates");
  o.g = number(r, "g");
  if (!(o.g > 0 && o.g < 1)) throw UsageError("--g: expected a value in (0, 1)");
  o.k_epsilons = numbers(r, "k-epsilons");
  o.repetitions = count(r, "repetitions");
  o.trace_repetitions = count(r, "trace-repetitions");
  try {
    return dptune::figures::svt_doubling_figures(o, rng);
  } catch (const dptune::InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw dptune::Error("cannot write " + path.string());
}

int run(const std::vector<std::string>& args) {
  const Request r = parse(args);
  const fs::path dir = r.values.at("out");
  if (fs::exists(dir) && !fs::is_empty(dir) && !r.overwrite)
    throw UsageError("output folder " + dir.string() + " is not empty; add --overwrite");
  // The tuner's stream of a seeded `dptune run` (stream 0), so seeded figures match those runs.
  const dptune::host::RandomSource source(seed(r));
  const auto rng = source.make(0);
  const std::string simulator = r.preset->simulator;
  const Figure figure = simulator == "dp_hype" ? dp_hype(r, *rng) : svt_doubling(r, *rng);
  fs::create_directories(dir);
  std::vector<std::string> files;
  dptune::host::write_series(dir, r.preset->name, figure.series, r.plot, files);
  std::string table;
  for (const auto& line : figure.table) table += line + "\n";
  write_file(dir / (figure.table_name + ".csv"), table);
  files.push_back(figure.table_name + ".csv");
  std::string notes;
  for (const auto& n : figure.notes) notes += n + "\n";
  write_file(dir / "notes.txt", notes);
  write_file(dir / "figure.txt", dptune::figures::command_line(*r.preset, r.values) + "\n");
  files.insert(files.end(), {"notes.txt", "figure.txt"});
  std::cout << r.preset->name << ": " << r.preset->summary << "\n"
            << notes << "wrote to " << dir.string() << ":";
  for (const auto& f : files) std::cout << " " << f;
  std::cout << "\n";
  return 0;
}

// This program's host modules: <exe>/../lib/dptune/figures (the build tree and an install alike).
fs::path modules_folder() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw dptune::Error("cannot find this executable's folder: " + ec.message());
  return exe.parent_path() / ".." / DPTUNE_FIGURES_SUBDIR;
}

int run_pipeline_figure(const std::vector<std::string>& args) {
  if (args.size() < 2 || args[1].rfind("--", 0) == 0) throw UsageError("run: missing PIPELINE");
  std::vector<dptune::host::Override> overrides;
  std::string out;
  bool overwrite = false;
  for (std::size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "--overwrite") {
      overwrite = true;
      continue;
    }
    if (args[i] != "--seed" && args[i] != "--out")
      throw UsageError("run: unknown option '" + args[i] +
                       "'; options: --seed, --out, --overwrite");
    if (i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0)
      throw UsageError("option " + args[i] + " needs a value");
    if (args[i] == "--seed") {
      Request seeded;
      seeded.values["seed"] = args[++i];
      overrides.push_back({"execution.seed", std::to_string(*seed(seeded))});
    } else {
      out = args[++i];
    }
  }
  dptune::host::PluginRegistry registry;
  for (const auto& folder : dptune::host::PluginRegistry::default_search_path())
    registry.scan(folder);
  registry.scan(modules_folder());
  for (const auto& folder : dptune::host::read_plugin_paths(args[1], overrides))
    registry.scan(folder);
  auto config =
      dptune::host::load_pipeline(args[1], overrides, dptune::host::HostCatalog(registry));
  if (!out.empty()) config.output.dir = fs::absolute(out);
  dptune::host::RunOptions options;
  options.show_progress = false;
  options.study = true;
  options.overwrite = overwrite;
  dptune::host::run_pipeline(config, registry, options, std::cout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      std::cout << kUsage;
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "list") {
      std::cout << dptune::figures::describe_presets()
                << "repetition_fig7 (run): Papernot & Steinke 2022 Figure 7 on a pipeline's data "
                   "(trains privately; trusted analysts only)\n  dptune-figures run "
                   "examples/figures/repetition_fig7.yaml\n";
      return 0;
    }
    if (args[0] == "run") return run_pipeline_figure(args);
    return run(args);
  } catch (const UsageError& e) {
    std::cerr << "dptune-figures: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const dptune::ConfigError& e) {
    std::cerr << "dptune-figures: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dptune-figures: " << e.what() << "\n";
    return 1;
  }
}
