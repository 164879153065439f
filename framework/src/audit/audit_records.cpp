// The audit record store: what `dptune audit` found, per plugin library (by SHA-256), so that run
// reports and `plugins describe` can say whether a third-party mechanism was audited.  One JSON
// file ($DPTUNE_AUDIT_STORE, else $XDG_CACHE_HOME/dptune/audits.json, else
// ~/.cache/dptune/audits.json), written by dptune only and read back with yaml-cpp (JSON is YAML).
#include <sodium.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "base/build_paths.hpp"
#include "base/yaml_load.hpp"
#include "dptune/abi.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace fs = std::filesystem;

namespace dptune::host {

namespace {

std::string text_of(const YAML::Node& node, const char* key) {
  const auto v = node[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

double number_of(const YAML::Node& node, const char* key) {
  const auto v = node[key];
  if (!v || !v.IsScalar()) return 0;
  try {
    return v.as<double>();
  } catch (const YAML::Exception&) {
    return 0;  // e.g. -inf written as a string: treated as "no bound"
  }
}

void write_record(JsonWriter& w, const AuditRecord& r) {
  w.begin_object();
  w.key("plugin").value(r.plugin).key("version").value(r.version);
  w.key("library").value(r.library).key("sha256").value(r.sha256);
  w.key("dptune_version").value(r.dptune_version).key("params").value(r.params);
  w.key("samples").value(static_cast<std::int64_t>(r.samples)).key("seed").value(r.seed);
  w.key("alpha").value(r.alpha).key("result").value(r.result);
  w.key("epsilon_claimed").value(r.epsilon_claimed);
  w.key("epsilon_lower_bound")
      .value(std::isfinite(r.epsilon_lower_bound) ? r.epsilon_lower_bound : 0.0);
  w.key("delta").value(r.delta).key("date").value(r.date);
  w.key("configuration").begin_object();
  for (const auto& [name, value] : r.configuration) w.key(name).value(value);
  w.end_object();
  w.end_object();
}

std::map<std::string, std::string> configuration_of(const YAML::Node& node) {
  std::map<std::string, std::string> out;
  const auto c = node["configuration"];
  if (!c || !c.IsMap()) return out;
  for (const auto& entry : c)
    if (entry.second.IsScalar())
      out[entry.first.as<std::string>()] = entry.second.as<std::string>();
  return out;
}

/// "{b: 2, bug: false}" for a record's configuration.
std::string configuration_text(const std::map<std::string, std::string>& configuration) {
  std::string text;
  for (const auto& [name, value] : configuration) {
    if (!text.empty()) text += ", ";
    text += name;
    text += ": ";
    text += value;
  }
  return "{" + text + "}";
}

/// Whether `record` audited a configuration the run may use: every parameter the run fixes has
/// the audited value (the varied ones may take it).
bool agrees(const AuditRecord& record, const MechanismUse& use) {
  if (record.configuration.empty()) return false;
  for (const auto& [name, value] : use.fixed) {
    if (use.varied.count(name)) continue;
    const auto audited = record.configuration.find(name);
    if (audited == record.configuration.end() || audited->second != dptune::to_string(value))
      return false;
  }
  return true;
}

/// The parameters of `record` that the run varies ("noise_multiplier 1.5"), for the verdict.
std::string varied_values(const AuditRecord& record, const MechanismUse& use) {
  std::string text;
  for (const auto& name : use.varied)
    if (const auto v = record.configuration.find(name); v != record.configuration.end())
      text += (text.empty() ? "" : ", ") + name + " " + v->second;
  return text;
}

}  // namespace

fs::path audit_store_path() {
  if (const char* env = std::getenv("DPTUNE_AUDIT_STORE"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "dptune" / "audits.json";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "dptune" / "audits.json";
  return fs::path(".dptune-audits.json");
}

std::vector<AuditRecord> read_audit_records(const fs::path& store) {
  std::vector<AuditRecord> records;
  std::error_code ec;
  if (!fs::exists(store, ec)) return records;
  YAML::Node root;
  try {
    root = load_yaml_file(store);
  } catch (const YAML::Exception& e) {
    throw dptune::Error(store.string() + ": unreadable audit record store: " + e.what());
  }
  const auto list = root["audits"];
  if (!list || !list.IsSequence()) return records;
  for (const auto& n : list) {
    AuditRecord r;
    r.plugin = text_of(n, "plugin");
    r.version = text_of(n, "version");
    r.library = text_of(n, "library");
    r.sha256 = text_of(n, "sha256");
    r.dptune_version = text_of(n, "dptune_version");
    r.params = text_of(n, "params");
    r.samples = static_cast<std::uint64_t>(number_of(n, "samples"));
    r.seed = text_of(n, "seed");
    r.alpha = number_of(n, "alpha");
    r.result = text_of(n, "result");
    r.epsilon_claimed = number_of(n, "epsilon_claimed");
    r.epsilon_lower_bound = number_of(n, "epsilon_lower_bound");
    r.delta = number_of(n, "delta");
    r.date = text_of(n, "date");
    r.configuration = configuration_of(n);
    records.push_back(std::move(r));
  }
  return records;
}

void save_audit_record(const AuditRecord& record, const fs::path& store) {
  auto records = read_audit_records(store);
  std::erase_if(records, [&](const AuditRecord& r) {
    return r.plugin == record.plugin && r.sha256 == record.sha256 &&
           r.configuration == record.configuration;
  });
  records.push_back(record);
  if (store.has_parent_path()) fs::create_directories(store.parent_path());
  // Written beside, then renamed: a reader never sees half a file.
  const fs::path tmp = store.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw dptune::Error(tmp.string() + ": cannot write the audit record store");
    JsonWriter w(out);
    w.begin_object().key("audits").begin_array();
    for (const auto& r : records) write_record(w, r);
    w.end_array().end_object();
    out << "\n";
    if (!out) throw dptune::Error(tmp.string() + ": write failed");
  }
  fs::rename(tmp, store);
}

std::string sha256_file(const fs::path& file) {
  if (sodium_init() < 0) throw dptune::Error("libsodium failed to initialise");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw dptune::Error(file.string() + ": cannot read the plugin library");
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = in.gcount();
    if (got > 0)
      crypto_hash_sha256_update(&state, reinterpret_cast<const unsigned char*>(buffer.data()),
                                static_cast<unsigned long long>(got));
  }
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  char hex[2 * crypto_hash_sha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

bool is_builtin_library(const fs::path& library) {
  // The first folder of the default search path is the one shipped with this dptune (beside the
  // executable, or the install prefix's); later ones come from $DPTUNE_PLUGIN_PATH.
  std::error_code ec;
  std::vector<fs::path> shipped;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && !exe.empty()) shipped.push_back(exe.parent_path() / ".." / DPTUNE_PLUGIN_SUBDIR);
  if (*dptune::build_paths::install_plugin_dir != '\0')
    shipped.emplace_back(dptune::build_paths::install_plugin_dir);
  const fs::path folder = fs::weakly_canonical(library.parent_path(), ec);
  for (const auto& s : shipped) {
    std::error_code e2;
    if (fs::is_directory(s, e2) && fs::weakly_canonical(s, e2) == folder) return true;
  }
  return false;
}

std::string trust_statement(const std::string& plugin, const fs::path& library) {
  std::string head = "mechanism plugin " + plugin + " (library " + library.string();
  std::string hash;
  std::vector<AuditRecord> records;
  try {
    hash = sha256_file(library);
    head += ", sha256 " + hash + ")";
    records = read_audit_records(audit_store_path());
  } catch (const std::exception& e) {
    return head + "): audit status unknown (" + e.what() + ")";
  }
  std::erase_if(records,
                [&](const AuditRecord& r) { return r.plugin != plugin || r.sha256 != hash; });
  if (records.empty()) return head + ": not audited: run `dptune audit " + plugin + "`";
  // One verdict per audited configuration: none speaks for another.
  std::ostringstream s;
  s << head << ": ";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const AuditRecord& r = records[i];
    s << (i ? "; " : "") << "audited by dptune " << r.dptune_version << " on " << r.date << ": "
      << r.result << " at alpha = " << r.alpha << " (params "
      << (r.configuration.empty() ? r.params : configuration_text(r.configuration)) << ", "
      << r.samples << " samples per input)";
  }
  return s.str();
}

std::map<std::string, std::string> audit_configuration(const dptune::Params& complete) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : complete) out[name] = dptune::to_string(value);
  return out;
}

AuditVerdict audit_verdict(const MechanismUse& use, const std::vector<AuditRecord>& records) {
  std::string hash;
  try {
    hash = sha256_file(use.library);
  } catch (const std::exception& e) {
    return {"mechanism plugin " + use.plugin + " (library " + use.library.string() +
                "): audit status unknown (" + e.what() + ")",
            false};
  }
  const std::string head = "mechanism plugin " + use.plugin + " (library " + use.library.string() +
                           ", sha256 " + hash + ")";
  std::vector<const AuditRecord*> applies;
  std::size_t of_library = 0;
  for (const auto& r : records) {
    if (r.plugin != use.plugin || r.sha256 != hash) continue;
    ++of_library;
    if (agrees(r, use)) applies.push_back(&r);
  }
  if (applies.empty())
    return {head + ": not audited with these parameters" +
                (of_library ? " (" + std::to_string(of_library) +
                                  " audit(s) of this library used other parameters)"
                            : std::string()) +
                ": run `dptune audit " + use.plugin + "` with the pipeline's parameters",
            false};
  AuditVerdict verdict;
  std::ostringstream s;
  s << head << ": ";
  for (std::size_t i = 0; i < applies.size(); ++i) {
    const AuditRecord& r = *applies[i];
    verdict.violation = verdict.violation || r.result == "violation certified";
    const std::string at = varied_values(r, use);
    s << (i ? "; " : "") << "audited by dptune " << r.dptune_version << " on " << r.date << ": "
      << r.result << " at alpha = " << r.alpha << " (params " << configuration_text(r.configuration)
      << (at.empty() ? "" : "; covers only " + at + " of the values this run may use") << ", "
      << r.samples << " samples per input)";
  }
  verdict.statement = s.str();
  return verdict;
}

std::vector<std::string> mechanism_trust(const std::vector<MechanismUse>& uses) {
  std::vector<std::string> lines;
  if (uses.empty()) return lines;
  const auto records = read_audit_records(audit_store_path());
  for (const auto& use : uses) {
    const AuditVerdict verdict = audit_verdict(use, records);
    // The run's preflight refuses a certified violation unless --allow-audit-violation was given.
    lines.push_back(verdict.violation ? "WARNING: run despite a certified violation "
                                        "(--allow-audit-violation): no guarantee printed for this "
                                        "run holds. " +
                                            verdict.statement
                                      : verdict.statement);
  }
  return lines;
}

}  // namespace dptune::host
