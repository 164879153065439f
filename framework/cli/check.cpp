// `dptune check`: the conformance kit a plugin's author runs on their own plugins.
//
//   dptune check accountant NAME   every conformance check of dptune/testing_accountant.hpp on the
//                                  loaded accountant plugin NAME (soundness against exact curves,
//                                  monotonicity, composition, clean refusals);
//   dptune check release PIPELINE  the neighbouring-release check (release_check.hpp) on the
//                                  pipeline's own data file: the pipeline is run on D with three
//                                  seeds, on D with one record replaced and on D with one of two
//                                  records removed, and every public field of the outputs that
//                                  differs must be a declared DP output (or, for a removal, a
//                                  function of the public size n).
//
// Both exit 0 when every check passes, 1 when one fails (each failure printed), 2 on bad input.
#include <fstream>
#include <iostream>

#include "cli_common.hpp"
#include "dptune/host/release_check.hpp"
#include "dptune/testing_accountant.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dptune::cli {

namespace {

namespace rc = dptune::host::release_check;

int check_accountant(const std::string& name, const std::vector<std::string>& plugin_paths) {
  dptune::host::PluginRegistry registry;
  scan_plugins(registry, plugin_paths, {});
  const auto accountant = create_accountant(registry, name);
  const dptune::testing::AccountantReport report = dptune::testing::check_accountant(*accountant);
  for (const auto& failure : report.failures)
    std::cout << "FAIL " << name << ": " << failure << "\n";
  std::cout << "accountant " << name << ": " << report.checked << " checks, "
            << report.failures.size() << " failed, " << report.skipped
            << " events it does not price skipped\n";
  return report.passed() ? kOk : kFailure;
}

/// The pipeline's data file as lines: `header` lines kept as they are, then one record a line.
struct DataFile {
  fs::path path;
  std::vector<std::string> header, records;
};

DataFile read_data_file(const fs::path& path, std::size_t header_lines) {
  std::ifstream in(path);
  if (!in) throw UsageError("check release: cannot read the data file " + path.string());
  DataFile file{path, {}, {}};
  for (std::string line; std::getline(in, line);) {
    if (file.header.size() < header_lines)
      file.header.push_back(line);
    else if (!line.empty())
      file.records.push_back(line);
  }
  if (file.records.size() < 4)
    throw UsageError("check release: " + path.string() + " has " +
                     std::to_string(file.records.size()) + " records; the check needs at least 4");
  return file;
}

void write_lines(const fs::path& path, const std::vector<std::string>& header,
                 const std::vector<std::string>& records) {
  std::ofstream out(path);
  for (const auto& l : header) out << l << "\n";
  for (const auto& l : records) out << l << "\n";
  if (!out) throw dptune::Error("check release: cannot write " + path.string());
}

/// One run of the pipeline in WORK/run (always the same path, so paths in the outputs agree) on
/// `records`, then moved to WORK/<label>; its public fields.
struct ReleaseRun {
  fs::path dptune, pipeline, work, data_name;
  std::vector<std::string> sets, plugin_paths;
  const DataFile* data = nullptr;

  rc::Fields operator()(const std::string& label, const std::vector<std::string>& records,
                        std::uint64_t seed) const {
    std::string command = rc::shell_quote(dptune.string()) + " run " +
                          rc::shell_quote(pipeline.string()) + " --no-progress --seed " +
                          std::to_string(seed);
    for (const auto& s : sets) command += " --set " + rc::shell_quote(s);
    for (const auto& p : plugin_paths)
      command += " --plugin-path " + rc::shell_quote(fs::absolute(p).string());
    const rc::FixedFolderRun run = rc::run_in_fixed_folder(
        work, label,
        [&](const fs::path& dir) { write_lines(dir / data_name, data->header, records); }, command);
    if (run.status != 0) {
      std::ifstream err(run.folder / "stderr.txt");
      std::cerr << "check release: the run on " << label << " failed:\n" << err.rdbuf();
      throw UsageError("check release: the pipeline does not run (see above; its outputs are in " +
                       run.folder.string() + ")");
    }
    return rc::normalise_seed(rc::collect_run(run.folder, "out"));
  }
};

struct ReleaseOptions {
  std::string pipeline, work, replacement;
  std::vector<std::string> sets, plugin_paths;
  std::size_t header_lines = 0;
  bool header_given = false;
};

/// The pipeline's data file: its data source's `path` parameter, relative to the pipeline file.
fs::path data_path_of(const dptune::host::PipelineConfig& config) {
  if (!config.data.params.contains("path"))
    throw UsageError("check release: the data source '" + config.data.use +
                     "' has no `path` parameter; the check needs a data file it can copy with one "
                     "record per line");
  fs::path path = config.data.params.get_string("path");
  if (path.is_relative()) path = config.file.parent_path() / path;
  return path;
}

int check_release(const ReleaseOptions& o) {
  dptune::host::PluginRegistry registry;
  const dptune::host::PipelineConfig config = load(o.pipeline, o.sets, o.plugin_paths, registry);
  if (config.tuner_traits.outputs != dptune::TunerOutputs::Private)
    throw UsageError("check release: tuner '" + config.tuner.use +
                     "' declares a privacy-utility map, whose outputs are for trusted analysts "
                     "and covered by no guarantee; the check is for private tuners");
  const fs::path data_path = data_path_of(config);
  const std::size_t header = o.header_given ? o.header_lines : data_path.extension() == ".csv";
  const DataFile data = read_data_file(data_path, header);
  const fs::path work = fs::absolute(o.work.empty() ? config.file.parent_path() /
                                                          (config.file.stem().string() + ".check")
                                                    : fs::path(o.work));
  fs::create_directories(work);

  ReleaseRun run{fs::read_symlink("/proc/self/exe"),
                 config.file,
                 work,
                 "data" + data_path.extension().string(),
                 o.sets,
                 o.plugin_paths,
                 &data};
  run.sets.push_back("data.params.path=" + (work / "run" / run.data_name).string());
  run.sets.push_back("output.dir=" + (work / "run" / "out").string());
  if (config.ledger) run.sets.push_back("ledger.path=" + (work / "run" / "ledger.db").string());

  const std::size_t n = data.records.size(), i = n / 3, j = 2 * n / 3;
  std::vector<std::string> replaced = data.records, minus_i = data.records, minus_j = data.records;
  replaced[i] = o.replacement.empty() ? data.records[(i + 1) % n] : o.replacement;
  minus_i.erase(minus_i.begin() + static_cast<std::ptrdiff_t>(i));
  minus_j.erase(minus_j.begin() + static_cast<std::ptrdiff_t>(j));

  const rc::Fields base = run("D_s", data.records, 3);
  const rc::Fields seed2 = run("D_s2", data.records, 11);
  const rc::Fields seed3 = run("D_s3", data.records, 29);
  const rc::Fields prime = run("Dprime_s", replaced, 3);
  const rc::Fields removed_i = run("Dminus_i_s", minus_i, 3);
  const rc::Fields removed_j = run("Dminus_j_s", minus_j, 3);

  std::vector<rc::Violation> found = rc::undeclared_differences(base, seed2, "(D,s) and (D,s')");
  for (auto& v : rc::undeclared_differences(base, seed3, "(D,s) and (D,s'')")) found.push_back(v);
  for (auto& v : rc::undeclared_differences(base, prime, "(D,s) and (D',s) (record replaced)"))
    found.push_back(v);
  for (auto& v : rc::undeclared_removal_differences(base, removed_i, removed_j)) found.push_back(v);
  // The seed must reach the outputs, or the seed pairs and the neighbours test nothing.
  if (base == seed2 && base == seed3) {
    std::cout << "FAIL " << config.name << ": the runs with seeds 3, 11 and 29 are identical; the "
              << "pipeline's randomness does not reach its outputs, so the check tests nothing\n";
    return kFailure;
  }
  for (const auto& v : found) std::cout << "FAIL " << config.name << ": " << v.describe() << "\n";
  std::cout << "pipeline " << config.name << ": 6 runs in " << work.string() << " (" << base.size()
            << " public fields; record " << i + 1 << " replaced, records " << i + 1 << " and "
            << j + 1 << " removed): ";
  if (found.empty()) {
    std::cout << "every differing field is a declared DP output or a function of n\n";
    return kOk;
  }
  std::cout << found.size() << " undeclared differences\n";
  return kFailure;
}

}  // namespace

int cmd_check(const std::vector<std::string>& args) {
  po::options_description opts(
      "dptune check accountant NAME [options]\n"
      "dptune check release PIPELINE [options]\n\n"
      "The conformance kit for plugins.  `accountant NAME`: the accountant plugin NAME against\n"
      "exact privacy curves and the invariants of sound bounds.  `release PIPELINE`: runs the\n"
      "pipeline six times on neighbouring copies of its data file (three seeds, one record\n"
      "replaced, one of two records removed) and fails on any public output that differs without\n"
      "being a declared DP output.  Run it on test data: every run's outputs are kept in the\n"
      "work folder.  Exit 0: passed; 1: a check failed; 2: bad input.\n\n"
      "options");
  ReleaseOptions o;
  opts.add_options()("help,h", "this help")("plugin-path", po::value(&o.plugin_paths),
                                            "also scan this folder for plugins (repeatable)")(
      "set", po::value(&o.sets), "release: override a pipeline key (key.path=value; repeatable)")(
      "work", po::value(&o.work),
      "release: the folder for the runs (default: PIPELINE's folder/<stem>.check)")(
      "header-lines", po::value(&o.header_lines),
      "release: lines at the top of the data file that are not records (default 1 for .csv, "
      "else 0)")("replacement", po::value(&o.replacement),
                 "release: the record that replaces one record of D (default: a copy of the next "
                 "record; give an extreme record to test harder)");
  std::string what, subject;
  const auto parsed =
      parse_command(opts, args, {{"what", po::value(&what)}, {"subject", po::value(&subject)}});
  if (!parsed) return kOk;
  o.header_given = parsed->count("header-lines") > 0;
  if (what.empty() || subject.empty())
    throw UsageError(
        "check needs `accountant NAME` or `release PIPELINE` (see dptune check --help)");
  if (what == "accountant") return check_accountant(subject, o.plugin_paths);
  if (what == "release") {
    o.pipeline = subject;
    return check_release(o);
  }
  throw UsageError("check: unknown kind '" + what + "' (accountant or release)");
}

}  // namespace dptune::cli
