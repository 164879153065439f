// `dptune study list [DIR]`: the studies kept under a folder, one line each (as `optuna studies`
// lists a storage's studies), read without locking their writers.
#include <array>
#include <boost/program_options.hpp>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <regex>

#include "cli_common.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/study_status.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dptune::cli {

namespace {

/// Results folders sit a few levels below where a user works; deeper trees are not searched, so
/// that listing a home folder stays quick.
constexpr int kMaxDepth = 4;

struct StudyLine {
  std::string folder, tuner, state, epsilon, changed;
};

/// The ε the ledger charged for the study ("-" without a ledger): the study keeps the charge
/// line "... charged (epsilon, delta) = (E, D) ...".
std::string charged_epsilon(const std::string& ledger) {
  static const std::regex charged(R"(charged \(epsilon, delta\) = \(([^,]+),)");
  std::smatch m;
  if (std::regex_search(ledger, m, charged)) return m[1];
  if (ledger.find("recorded as not DP") != std::string::npos) return "0 (map)";
  return ledger.empty() ? "-" : "0";
}

std::string utc_time(fs::file_time_type t) {
  const auto system = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      t - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
  const std::time_t seconds = std::chrono::system_clock::to_time_t(system);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::vector<StudyLine> find_studies(const fs::path& root) {
  std::vector<StudyLine> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw UsageError("study list: cannot read " + root.string() + ": " + ec.message());
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    if (it.depth() >= kMaxDepth) it.disable_recursion_pending();
    if (it->path().filename() != "study.db" || !it->is_regular_file(ec)) continue;
    const fs::path dir = it->path().parent_path();
    StudyLine line{fs::relative(dir, root, ec).string(), "?", "unreadable", "-", "-"};
    if (line.folder.empty()) line.folder = ".";
    try {
      const auto status = dptune::host::read_study(dir);
      const auto meta = [&](const char* key) {
        const auto found = status.meta.find(key);
        return found == status.meta.end() ? std::string() : found->second;
      };
      line.tuner = meta("tuner");
      line.state = meta("status");
      line.epsilon = charged_epsilon(meta("ledger"));
    } catch (const std::exception& e) {
      line.state = std::string("unreadable (") + e.what() + ")";
    }
    line.changed = utc_time(fs::last_write_time(it->path(), ec));
    out.push_back(std::move(line));
  }
  std::sort(out.begin(), out.end(),
            [](const StudyLine& a, const StudyLine& b) { return a.folder < b.folder; });
  return out;
}

}  // namespace

int study_list(const std::vector<std::string>& args) {
  po::options_description opts(
      "dptune study list [DIR] [--json]\n\nThe studies (study.db) in DIR (default: the working "
      "folder) and up to 4 folder levels below it: folder, tuner, state, the epsilon charged to a "
      "ledger, last change (UTC).\n\noptions");
  opts.add_options()("help,h", "this help")("json", "machine-readable output");
  std::string dir = ".";
  const auto vm = parse_command(opts, args, {{"dir", po::value(&dir)}});
  if (!vm) return kOk;
  if (!fs::is_directory(dir)) throw UsageError("study list: " + dir + " is not a folder");
  const auto studies = find_studies(dir);
  if (vm->count("json")) {
    dptune::host::JsonWriter w(std::cout);
    w.begin_object().key("studies").begin_array();
    for (const auto& s : studies)
      w.begin_object()
          .key("folder")
          .value(s.folder)
          .key("tuner")
          .value(s.tuner)
          .key("state")
          .value(s.state)
          .key("epsilon_charged")
          .value(s.epsilon)
          .key("last_change")
          .value(s.changed)
          .end_object();
    w.end_array().end_object();
    std::cout << "\n";
    return kOk;
  }
  if (studies.empty()) {
    std::cout << "no study under " << dir << "\n";
    return kOk;
  }
  // Columns as wide as their longest entry, two spaces apart.
  std::vector<std::array<std::string, 5>> rows{
      {"FOLDER", "TUNER", "STATE", "EPSILON CHARGED", "LAST CHANGE"}};
  for (const auto& s : studies) rows.push_back({s.folder, s.tuner, s.state, s.epsilon, s.changed});
  std::array<std::size_t, 5> width{};
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size() + 2);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c + 1 < row.size(); ++c)
      std::cout << std::left << std::setw(static_cast<int>(width[c])) << row[c];
    std::cout << row.back() << "\n";
  }
  return kOk;
}

}  // namespace dptune::cli
