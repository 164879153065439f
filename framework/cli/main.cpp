// The `dptune` command.  Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error.
#include <malloc.h>
#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.hpp"
#include "dptune/abi.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/executor.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/runner.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using dptune::host::ComponentKind;

namespace {

using namespace dptune::cli;

const char* kMainHelp =
    "dptune - differentially private hyperparameter tuning\n"
    "\n"
    "usage: dptune <command> [options]\n"
    "\n"
    "commands:\n"
    "  run PIPELINE          run a YAML pipeline and write its results\n"
    "  validate PIPELINE     make every check `run` makes before training, without training\n"
    "  plugins list          list the plugins found on the plugin search path\n"
    "  plugins describe NAME print a plugin's parameter schema\n"
    "  privacy [EVENT]       the (epsilon, delta) of a DpEvent, or a parameter for a target\n"
    "  plan repetition       compare the repetition tuner's distributions for a base event\n"
    "  predict MODEL DATA    apply a released model.json to the rows of a CSV file\n"
    "  audit MECHANISM       look for evidence that a mechanism plugin breaks its privacy claim\n"
    "  audit trainer PIPELINE\n"
    "                        a one-run empirical epsilon lower bound for the pipeline's trainer\n"
    "  check accountant NAME | release PIPELINE\n"
    "                        the conformance kit: an accountant against exact curves; a private\n"
    "                        tuner's outputs on neighbouring data\n"
    "  study show DIR        a study's status, progress and ledger charge (study.db in DIR)\n"
    "  ledger show FILE      every charge in a privacy ledger and the composed total\n"
    "\n"
    "options:\n"
    "  -h [ --help ]         help (also after a command: dptune run --help)\n"
    "  --version             print the version and plugin ABI\n"
    "\n"
    "Plugins are searched in <prefix>/lib/dptune/plugins next to this executable, in "
    "$DPTUNE_PLUGIN_PATH\n"
    "(colon-separated), in --plugin-path folders and in a pipeline's plugin_paths.\n"
    "Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error (dptune audit: 3 "
    "when\n"
    "a violation is certified).\n";

/// `word` as one shell word: as is when it holds only characters no shell treats specially, else
/// in single quotes.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) ||
           std::string_view("_./=:,+-@%").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The command that continues this run's study: the same program and every option as given
/// (so each --set is repeated), without --overwrite, with --resume.
std::string resume_command(const std::string& program, const std::vector<std::string>& args) {
  std::string command = shell_word(program) + " run";
  bool resume = false;
  for (const auto& a : args) {
    if (a == "--overwrite") continue;
    resume = resume || a == "--resume";
    command += " " + shell_word(a);
  }
  return resume ? command : command + " --resume";
}

int cmd_run(const std::vector<std::string>& args, const std::string& program) {
  po::options_description opts(
      "dptune run PIPELINE [options]\n\nRuns a pipeline and writes its results (summary.json, CSV, "
      "SVG plot, resolved config)\n\noptions");
  std::string out_dir;
  std::vector<std::string> sets, plugin_paths;
  opts.add_options()("help,h", "this help")(
      "out,o", po::value(&out_dir),
      "output folder (overrides output.dir; relative to the working folder)")(
      "seed", po::value<std::uint64_t>(),
      "deterministic, reproducible noise (NOT secure); default: libsodium CSPRNG")(
      "set", po::value(&sets)->composing(),
      "override a pipeline key: --set tuner.params.trials=50 (repeatable)")(
      "threads", po::value<std::size_t>(), "worker threads (0 = all cores; 1 = inline)")(
      "executor", po::value<std::string>(),
      "where evaluations run: inline, threads or mpi (under mpirun: docs/mpi.md)")(
      "plugin-path", po::value(&plugin_paths)->composing(),
      "extra plugin folder or file (repeatable)")("no-progress", "never show the progress line")(
      "verbose,v", "print every derivation in full (always in summary.json)")(
      "resume", "continue the study in the output folder (same pipeline and options)")(
      "overwrite",
      "start a new study in an output folder that holds one (a ledger charge is kept)")(
      "allow-audit-violation",
      "run although `dptune audit` certified a violation of a mechanism in a configuration this "
      "run may use (the report says no guarantee holds)");
  std::string pipeline;
  const auto vm = parse_command(opts, args, {{"pipeline", po::value(&pipeline)}});
  if (!vm) return kOk;
  if (vm->count("seed"))
    sets.push_back("execution.seed=" + std::to_string((*vm)["seed"].as<std::uint64_t>()));
  if (vm->count("threads")) {
    const auto threads = (*vm)["threads"].as<std::size_t>();
    sets.push_back("execution.threads=" + std::to_string(threads));
    if (threads == 1) sets.push_back("execution.executor=inline");
  }
  if (vm->count("executor"))
    sets.push_back("execution.executor=" + (*vm)["executor"].as<std::string>());
  dptune::host::PluginRegistry registry;
  auto config = load(pipeline, sets, plugin_paths, registry);
  if (!out_dir.empty()) config.output.dir = fs::absolute(out_dir);
  // Under mpirun every rank gets here; ranks other than 0 evaluate what rank 0 sends them.
  if (config.execution.executor == "mpi" && dptune::host::mpi_rank() != 0)
    return dptune::host::serve_mpi_worker(config, registry, dptune::host::to_yaml(config));
  dptune::host::RunOptions options;
  options.show_progress = vm->count("no-progress") == 0;
  options.verbose = vm->count("verbose") != 0;
  options.study = true;
  options.resume = vm->count("resume") != 0;
  options.overwrite = vm->count("overwrite") != 0;
  options.allow_audit_violation = vm->count("allow-audit-violation") != 0;
  options.resume_command = resume_command(program, args);
  const auto summary = dptune::host::run_pipeline(config, registry, options, std::cout);
  // 128 + signal, as a shell reports a process the signal ended (130 SIGINT, 143 SIGTERM).
  if (summary.interrupted_signal) return 128 + summary.interrupted_signal;
  return kOk;
}

int cmd_validate(const std::vector<std::string>& args) {
  po::options_description opts(
      "dptune validate PIPELINE [options]\n\nMakes every check `dptune run` makes before its first "
      "evaluation (the data is read for its row counts; nothing is trained)\n\noptions");
  std::vector<std::string> sets, plugin_paths;
  opts.add_options()("help,h", "this help")("set", po::value(&sets)->composing(),
                                            "override a pipeline key (repeatable)")(
      "plugin-path", po::value(&plugin_paths)->composing(),
      "extra plugin folder or file (repeatable)")(
      "allow-audit-violation",
      "accept a mechanism whose audit certified a violation (as `run` would)");
  std::string pipeline;
  const auto vm = parse_command(opts, args, {{"pipeline", po::value(&pipeline)}});
  if (!vm) return kOk;
  dptune::host::PluginRegistry registry;
  auto config = load(pipeline, sets, plugin_paths, registry);
  // The same checks `dptune run` makes before it trains (constructors, mechanism, the privacy of
  // one run, the tuner's dry run).
  // The ledger's write-ahead check too, as `run` makes it (the charge and the tuner's worst case),
  // on the same dry run of the tuner as the private test score's pricing.
  std::vector<std::string> warnings;
  const auto [test_score, ledger] = dptune::host::validate_pipeline(
      config, registry, vm->count("allow-audit-violation") != 0, &warnings);
  std::cout << pipeline << ": valid (" << config.space.size() << "-dimensional search space, tuner "
            << config.tuner.use << ", algorithm " << config.algorithm.use << ")\n";
  if (!test_score.empty()) std::cout << test_score << "\n";
  if (!ledger.empty()) std::cout << ledger << "\n";
  for (const auto& warning : warnings) std::cout << "warning: " << warning << "\n";
  return kOk;
}

std::string domain_text(const dptune::ParamSpec& spec) {
  std::string d = dptune::ParamSchema::describe_domain(spec);
  return d.rfind("expected ", 0) == 0 ? d.substr(9) : d;
}

void print_schema_json(dptune::host::JsonWriter& w, const dptune::ParamSchema& schema) {
  w.begin_array();
  for (const auto& spec : schema.specs()) {
    w.begin_object();
    w.key("name").value(spec.name);
    w.key("type").value(dptune::to_string(spec.type));
    w.key("required").value(!spec.default_value.has_value());
    if (spec.default_value) w.key("default").value(*spec.default_value);
    w.key("domain").value(domain_text(spec));
    if (spec.minimum)
      w.key(spec.minimum_exclusive ? "exclusive_minimum" : "minimum").value(*spec.minimum);
    if (spec.maximum)
      w.key(spec.maximum_exclusive ? "exclusive_maximum" : "maximum").value(*spec.maximum);
    if (!spec.choices.empty()) {
      w.key("choices").begin_array();
      for (const auto& c : spec.choices) w.value(c);
      w.end_array();
    }
    w.key("doc").value(spec.doc);
    w.end_object();
  }
  w.end_array();
}

/// `dptune plugins list`: every plugin found, the built-in data sources, and the libraries skipped.
int plugins_list(const dptune::host::PluginRegistry& registry, bool json) {
  const auto plugins = registry.plugins();
  if (json) {
    dptune::host::JsonWriter w(std::cout);
    w.begin_object().key("plugins").begin_array();
    for (const auto& p : plugins) {
      w.begin_object();
      w.key("kind")
          .value(dptune::to_string(p.kind))
          .key("name")
          .value(p.name)
          .key("version")
          .value(p.version);
      w.key("abi").value(std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor));
      w.key("library").value(p.library.string()).key("description").value(p.description);
      w.end_object();
    }
    w.end_array().key("data_sources").begin_array();
    for (const auto& d : dptune::host::data_sources())
      w.begin_object()
          .key("name")
          .value(d.name)
          .key("description")
          .value(d.description)
          .end_object();
    w.end_array().key("skipped").begin_array();
    for (const auto& s : registry.skipped())
      w.begin_object()
          .key("library")
          .value(s.library.string())
          .key("reason")
          .value(s.reason)
          .end_object();
    w.end_array().end_object();
    return kOk;
  }
  std::cout << std::left << std::setw(12) << "KIND" << std::setw(24) << "NAME" << std::setw(10)
            << "VERSION"
            << "DESCRIPTION\n";
  for (const auto& p : plugins)
    std::cout << std::setw(12) << dptune::to_string(p.kind) << std::setw(24) << p.name
              << std::setw(10) << p.version << p.description << "\n";
  for (const auto& d : dptune::host::data_sources())
    std::cout << std::setw(12) << "data" << std::setw(24) << d.name << std::setw(10) << "built-in"
              << d.description << "\n";
  for (const auto& s : registry.skipped())
    std::cerr << "skipped: " << s.reason << "\n";  // reasons name the file
  return kOk;
}

/// `dptune plugins describe NAME`: a plugin's or data source's parameter schema.
int plugins_describe(const dptune::host::PluginRegistry& registry, const std::string& name,
                     bool json) {
  const dptune::ParamSchema* schema = nullptr;
  std::string kind, description, version, library, audit;
  if (const auto* p = registry.find_any(name)) {
    schema = &p->schema;
    kind = dptune::to_string(p->kind);
    description = p->description;
    version = p->version;
    library = p->library.string();
    // Third-party mechanisms: what `dptune audit` found for this very library (by SHA-256).
    if (p->kind == dptune::PluginKind::Mechanism && !dptune::host::is_builtin_library(p->library))
      audit = dptune::host::trust_statement(p->name, p->library);
  } else if (const auto* d = dptune::host::find_data_source(name)) {
    schema = &d->schema;
    kind = "data";
    description = d->description;
    version = "built-in";
    library = "(built into dptune)";
  } else {
    std::vector<std::string> all;
    for (const auto& plugin : registry.plugins()) all.push_back(plugin.name);
    for (const auto& source : dptune::host::data_sources()) all.push_back(source.name);
    auto hint = dptune::host::did_you_mean(name, all);
    throw dptune::ConfigError(
        "plugins describe: unknown plugin '" + name + "'" +
        (hint ? " (did you mean '" + *hint + "'?)"
              : std::string(" among the built-ins and $DPTUNE_PLUGIN_PATH; a plugin of your own: "
                            "dptune plugins describe " +
                            name + " --plugin-path DIR (its folder or .so file)")));
  }
  if (json) {
    dptune::host::JsonWriter w(std::cout);
    w.begin_object().key("kind").value(kind).key("name").value(name).key("version").value(version);
    w.key("library").value(library).key("description").value(description);
    if (!audit.empty()) w.key("audit").value(audit);
    w.key("params");
    print_schema_json(w, *schema);
    w.end_object();
    return kOk;
  }
  std::cout << kind << " " << name << " " << version << " - " << description << "\n"
            << library << "\n";
  if (!audit.empty()) std::cout << "audit: " << audit << "\n";
  std::cout << "\nparams:\n";
  if (schema->specs().empty()) std::cout << "  (none)\n";
  for (const auto& spec : schema->specs()) {
    std::cout << "  " << spec.name << ": " << domain_text(spec);
    if (spec.default_value)
      std::cout << ", default " << dptune::to_string(*spec.default_value);
    else
      std::cout << ", required";
    std::cout << "\n      " << spec.doc << "\n";
  }
  return kOk;
}

int cmd_plugins(const std::vector<std::string>& args) {
  po::options_description opts(
      "dptune plugins list [--json]\ndptune plugins describe NAME [--json]\n\noptions");
  std::vector<std::string> plugin_paths;
  opts.add_options()("help,h", "this help")("json", "machine-readable output")(
      "plugin-path", po::value(&plugin_paths)->composing(),
      "extra plugin folder or file (repeatable)");
  std::vector<std::string> words;
  const auto vm = parse_command(opts, args, {{"words", po::value(&words), -1}});
  if (!vm) return kOk;
  if (words.empty()) {
    std::cout << opts << "\n";
    return kUsage;
  }
  const bool json = vm->count("json") != 0;
  dptune::host::PluginRegistry registry;
  scan_plugins(registry, plugin_paths, {});
  if (words[0] == "list") {
    if (words.size() != 1) throw UsageError("plugins list takes no argument");
    return plugins_list(registry, json);
  }
  if (words[0] == "describe") {
    if (words.size() != 2) throw UsageError("plugins describe takes exactly one NAME");
    return plugins_describe(registry, words[1], json);
  }
  throw UsageError("unknown plugins command '" + words[0] + "': expected list or describe");
}

}  // namespace

namespace {

int dispatch(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) {
      std::cerr << kMainHelp;
      return kUsage;
    }
    const std::string command = args[0];
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "-h" || command == "--help" || command == "help") {
      std::cout << kMainHelp;
      return kOk;
    }
    if (command == "--version") {
      std::cout << "dptune " << DPTUNE_VERSION_STRING << " (plugin ABI " << dptune::kAbiMajor << "."
                << dptune::kAbiMinor << ", C++ ABI " << dptune::kCxxAbiVersion << "/"
                << dptune::kCxx11StringAbi << ")\n";
      return kOk;
    }
    if (command == "run") return cmd_run(rest, argv[0]);
    if (command == "validate") return cmd_validate(rest);
    if (command == "plugins") return cmd_plugins(rest);
    if (command == "privacy") return cmd_privacy(rest);
    if (command == "plan") return cmd_plan(rest);
    if (command == "predict") return cmd_predict(rest);
    if (command == "audit") return cmd_audit(rest);
    if (command == "check") return cmd_check(rest);
    if (command == "study") return cmd_study(rest);
    if (command == "ledger") return cmd_ledger(rest);
    auto hint =
        dptune::host::did_you_mean(command, {"run", "validate", "plugins", "privacy", "plan",
                                             "predict", "audit", "check", "study", "ledger"});
    throw UsageError("unknown command '" + command + "'" +
                     (hint ? " (did you mean '" + *hint + "'?)" : std::string()) +
                     "; see dptune --help");
  } catch (const UsageError& e) {
    std::cerr << "dptune: " << e.what() << "\n";
    return kUsage;
  } catch (const po::error& e) {
    std::cerr << "dptune: " << e.what() << " (see --help)\n";
    return kUsage;
  } catch (const dptune::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return kUsage;
  } catch (const std::exception& e) {
    std::cerr << "dptune: error: " << e.what() << "\n";
    return kFailure;
  }
}

/// Accounting allocates and frees arrays of a few MiB many times (privacy loss distributions, their
/// transforms).  glibc serves blocks above its mmap threshold with fresh pages and returns them on
/// free, so every such array was page faults and zeroing by the kernel: an eighth of the CPU time
/// of a small private run, nearly all of it pricing (CONTRIBUTING.md, "Measured times").
/// Above-threshold blocks now come from the heap, and the heap is trimmed only past 256 MiB free;
/// the process keeps its peak, which it had reached anyway.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  const int code = dispatch(argc, argv);
  // Under mpirun: finalise MPI, or end the job when a rank was lost (after the message is out).
  dptune::host::finish_mpi(code);
  return code;
}
