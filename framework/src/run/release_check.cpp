#include "dptune/host/release_check.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace dptune::host::release_check {

namespace {

constexpr const char* kReleaseHeader = "Released (differentially private):";
// The console's block of nominal figures computed from the release (after the Released block).
constexpr const char* kNominalHeader = "Computed from the release, NOT a guarantee:";
constexpr const char* kAbsent = "<absent>";
// The markers report.html puts around a private tuner's DP outputs
// (framework/src/report/report_html.hpp).
constexpr const char* kHtmlReleaseBegin = "<!-- dptune:release:begin -->";
constexpr const char* kHtmlReleaseEnd = "<!-- dptune:release:end -->";

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void flatten_node(const YAML::Node& node, const std::string& path, Fields& out) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      if (node.size() == 0) out[path] = "{}";
      for (const auto& kv : node) {
        const std::string key = kv.first.as<std::string>();
        const bool root = path.empty() || path.back() == ':';
        std::string child = path;
        if (!root) child += '.';
        child += key;
        flatten_node(kv.second, child, out);
      }
      break;
    case YAML::NodeType::Sequence:
      if (node.size() == 0) out[path] = "[]";
      for (std::size_t i = 0; i < node.size(); ++i)
        flatten_node(node[i], path + "[" + std::to_string(i) + "]", out);
      break;
    case YAML::NodeType::Scalar:
      out[path] = node.Scalar();
      break;
    default:
      out[path] = "null";
  }
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

/// `prefix` followed by the end, '.' or '[': a key path under `prefix`.
bool under(const std::string& field, const std::string& prefix) {
  if (!starts_with(field, prefix)) return false;
  return field.size() == prefix.size() || field[prefix.size()] == '.' ||
         field[prefix.size()] == '[';
}

std::string value_of(const Fields& fields, const std::string& key) {
  const auto it = fields.find(key);
  return it == fields.end() ? kAbsent : it->second;
}

std::set<std::string> all_keys(const std::vector<const Fields*>& runs) {
  std::set<std::string> keys;
  for (const auto* f : runs)
    for (const auto& kv : *f) keys.insert(kv.first);
  return keys;
}

/// Whether model.json exists is itself a DP output (the threshold variant may release its
/// default and no model): when it exists in one run only, its fields are not compared.
bool model_presence_differs(const Fields& a, const Fields& b) {
  return a.count("files:model.json") != b.count("files:model.json");
}

/// A long value shown around its first difference from `other`.
std::string excerpt(const std::string& value, const std::string& other) {
  constexpr std::size_t kWidth = 160;
  if (value.size() <= kWidth) return value;
  std::size_t at = 0;
  while (at < value.size() && at < other.size() && value[at] == other[at]) ++at;
  const std::size_t from = at > kWidth / 2 ? at - kWidth / 2 : 0;
  return (from > 0 ? "..." : "") + value.substr(from, kWidth) +
         (from + kWidth < value.size() ? "..." : "");
}

/// A console line's label: the text before its first ':' when that comes early ("note",
/// "guarantee of the whole tuning run"), else its first words.
std::string line_label(const std::string& line) {
  constexpr std::size_t kLabel = 40;
  const std::size_t colon = line.find(':');
  if (colon <= kLabel) return line.substr(0, colon);  // npos is never below
  return line.substr(0, std::min(line.size(), kLabel));
}

}  // namespace

Fields flatten_json(const std::string& prefix, const std::string& text) {
  Fields out;
  flatten_node(YAML::Load(text), prefix, out);
  return out;
}

Fields flatten_console(const std::string& stream, const std::string& text) {
  Fields out;
  std::istringstream in(text);
  std::string line;
  std::map<std::string, std::size_t> occurrences;
  std::size_t release_line = 0;
  bool in_release = false;
  while (std::getline(in, line)) {
    if (stream == "stdout" && (line == kReleaseHeader || line == kNominalHeader)) in_release = true;
    if (in_release) {
      out[stream + ".release:" + std::to_string(++release_line)] = line;
      if (line.empty()) in_release = false;
    } else {
      // Keyed by the line's label and its occurrence, not its number, so that an extra line
      // (one more note) is one difference rather than a shift of every later line.
      const std::string label = line_label(line);
      std::string key = stream;
      key += ":" + label;
      key += "#" + std::to_string(++occurrences[label]);
      out[key] = line;
    }
  }
  return out;
}

Fields flatten_html(const std::string& name, const std::string& text) {
  Fields out;
  std::istringstream in(text);
  std::string line;
  std::size_t release_line = 0, other_line = 0;
  bool in_release = false;
  while (std::getline(in, line)) {
    if (line == kHtmlReleaseBegin) in_release = true;
    // Lines outside the release are numbered among themselves, so that a longer release (one more
    // DP output note) is one difference rather than a shift of every later line.
    if (in_release)
      out[name + ".release:" + std::to_string(++release_line)] = line;
    else
      out[name + ":" + std::to_string(++other_line)] = line;
    if (line == kHtmlReleaseEnd) in_release = false;
  }
  return out;
}

Fields collect_run(const std::filesystem::path& run_dir, const std::string& output_dir) {
  Fields out = flatten_console("stdout", slurp(run_dir / "stdout.txt"));
  out.merge(flatten_console("stderr", slurp(run_dir / "stderr.txt")));
  const std::filesystem::path folder = run_dir / output_dir;
  std::vector<std::filesystem::path> files;
  if (std::filesystem::exists(folder))
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
      if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const std::string name = std::filesystem::relative(file, folder).generic_string();
    if (name.find("SENSITIVE") != std::string::npos) continue;  // the user's opt-in only
    // The study store: per-run results, secret draws and kept model files, never published (as
    // SENSITIVE).
    if (name.rfind("study.db", 0) == 0 || name.rfind("study-models/", 0) == 0) continue;
    out["files:" + name] = "present";
    const std::string text = slurp(file);
    if (file.extension() == ".json") {
      out.merge(flatten_json(name + ":", text));
    } else if (name == "report.html") {
      out.merge(flatten_html(name, text));
    } else {
      std::istringstream in(text);
      std::string line;
      for (std::size_t n = 1; std::getline(in, line); ++n)
        out[name + ":" + std::to_string(n)] = line;
    }
  }
  return out;
}

Fields normalise_seed(Fields fields) {
  static const std::regex seed_text(R"((seed(ed with)?[ =:]+)[0-9]+)");
  for (auto& [key, value] : fields) {
    if (key == "summary.json:randomness.seed")
      value = "<seed>";
    else
      value = std::regex_replace(value, seed_text, "$1<seed>");
  }
  return fields;
}

bool declared_dp_output(const std::string& field) {
  static const std::regex weights(R"(model\.json:layers\[[0-9]+\]\.(weights|bias)\[[0-9]+\])");
  // A model kept in files (an external program's: the command trainer's) is released as those
  // files under model/, with the released candidate among model.json's trainer_params.
  return under(field, "summary.json:release") || under(field, "model.json:release") ||
         starts_with(field, "stdout.release:") || starts_with(field, "report.html.release:") ||
         field == "files:model.json" || std::regex_match(field, weights) ||
         starts_with(field, "model.json:trainer_params.") || starts_with(field, "files:model/") ||
         starts_with(field, "model/");
}

std::string Violation::describe() const {
  return "field '" + field + "' differs between " + pair +
         " and is not a declared DP output:\n    " + excerpt(left, right) + "\n    " +
         excerpt(right, left);
}

std::vector<Violation> undeclared_differences(const Fields& a, const Fields& b,
                                              const std::string& pair) {
  std::vector<Violation> out;
  const bool skip_model = model_presence_differs(a, b);
  for (const auto& key : all_keys({&a, &b})) {
    if (declared_dp_output(key) || (skip_model && starts_with(key, "model.json:"))) continue;
    const std::string va = value_of(a, key), vb = value_of(b, key);
    if (va != vb) out.push_back({key, pair, va, vb});
  }
  return out;
}

std::vector<Violation> undeclared_removal_differences(const Fields& d, const Fields& minus_i,
                                                      const Fields& minus_j) {
  std::vector<Violation> out;
  const bool skip_model =
      model_presence_differs(d, minus_i) || model_presence_differs(minus_i, minus_j);
  for (const auto& key : all_keys({&d, &minus_i, &minus_j})) {
    if (declared_dp_output(key) || (skip_model && starts_with(key, "model.json:"))) continue;
    const std::string vd = value_of(d, key), vi = value_of(minus_i, key),
                      vj = value_of(minus_j, key);
    // Equal after either removal: unchanged, or a function of the public size n = |D| - 1.
    if (vi == vj) continue;
    out.push_back({key,
                   "(D-i,s) and (D-j,s) (removal of a record: not a function of n; (D,s) has '" +
                       excerpt(vd, vi) + "')",
                   vi, vj});
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

FixedFolderRun run_in_fixed_folder(
    const std::filesystem::path& work, const std::string& label,
    const std::function<void(const std::filesystem::path& folder)>& prepare,
    const std::string& command) {
  namespace fs = std::filesystem;
  const fs::path dir = work / "run";
  fs::remove_all(dir);
  fs::create_directories(dir);
  prepare(dir);
  const std::string full =
      "cd " + shell_quote(dir.string()) + " && " + command + " >stdout.txt 2>stderr.txt";
  FixedFolderRun run;
  run.status = std::system(full.c_str());
  run.folder = work / label;
  fs::remove_all(run.folder);
  fs::rename(dir, run.folder);
  return run;
}

}  // namespace dptune::host::release_check
