#include "config/config_tree.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "base/yaml_load.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/suggest.hpp"

namespace dptune::host::config_tree {

namespace fs = std::filesystem;

// ---- a position-carrying YAML tree --------------------------------------------------------------

const Entry* Node::find(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}
Entry* Node::find(std::string_view key) {
  for (auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

[[noreturn]] void fail(const SourceLocation& where, const std::string& key_path,
                       const std::string& message) {
  throw ConfigDiagnostic(where, key_path, message);
}

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string join_list(const std::vector<std::string>& names) {
  if (names.empty()) return "(none)";
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text;
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  auto best = did_you_mean(word, candidates);
  return best ? " (did you mean '" + *best + "'?)" : "";
}

SourceLocation location(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

namespace {

/// Copies a yaml-cpp tree.  With `fixed`, every node gets the location {file, 0, 0} (--set values).
struct Converter {
  std::string file;
  bool fixed = false;

  SourceLocation loc(const YAML::Mark& mark) const {
    return fixed ? SourceLocation{file, 0, 0} : location(file, mark);
  }

  Node operator()(const YAML::Node& y, const std::string& path) const {
    Node n;
    n.loc = loc(y.Mark());
    switch (y.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        n.type = Node::Type::Null;
        break;
      case YAML::NodeType::Scalar:
        n.type = Node::Type::Scalar;
        n.scalar = y.Scalar();
        n.quoted = y.Tag() == "!" || y.Tag() == "tag:yaml.org,2002:str";
        break;
      case YAML::NodeType::Sequence: {
        n.type = Node::Type::Sequence;
        std::size_t i = 0;
        for (const auto& item : y) n.items.push_back((*this)(item, index_path(path, i++)));
        break;
      }
      case YAML::NodeType::Map: {
        n.type = Node::Type::Map;
        for (const auto& pair : y) {
          // Copies: yaml-cpp's iterator hands out a temporary pair.
          const YAML::Node key = pair.first;
          const YAML::Node value = pair.second;
          if (!key.IsScalar())
            fail(loc(key.Mark()), path,
                 std::string("expected a string key, got ") + (key.IsMap()        ? "a map"
                                                               : key.IsSequence() ? "a sequence"
                                                                                  : "null"));
          Entry e{key.Scalar(), loc(key.Mark()), {}};
          e.value = (*this)(value, join_path(path, e.key));
          // yaml-cpp puts an empty value ("key:" then a newline) at the next token: point at the
          // key.
          if (!fixed && e.value.type == Node::Type::Null &&
              !(e.value.loc.line == e.key_loc.line && e.value.loc.column > e.key_loc.column))
            e.value.loc = e.key_loc;
          n.entries.push_back(std::move(e));
        }
        break;
      }
    }
    return n;
  }
};

}  // namespace

Node convert_yaml(const YAML::Node& yaml, const std::string& file, bool fixed,
                  const std::string& path) {
  return Converter{file, fixed}(yaml, path);
}

// ---- scalars typed by schemas -------------------------------------------------------------------

bool parse_int(const std::string& text, std::int64_t& out) {
  static const std::regex pattern("[-+]?[0-9]+");
  if (!std::regex_match(text, pattern)) return false;
  const char* first = text.data() + (text[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(first, text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

bool parse_float(const std::string& text, double& out) {
  static const std::regex number("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  static const std::regex infinity("[-+]?\\.(inf|Inf|INF)");
  static const std::regex nan("\\.(nan|NaN|NAN)");
  if (std::regex_match(text, infinity)) {
    out = text[0] == '-' ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity();
    return true;
  }
  if (std::regex_match(text, nan)) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (!std::regex_match(text, number)) return false;
  const char* first = text.data() + (text[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(first, text.data() + text.size(), out);
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: the sign and magnitude decide (underflow is zero).
    const auto e = text.find_first_of("eE");
    const bool tiny = e != std::string::npos && text[e + 1] == '-';
    const double magnitude = tiny ? 0.0 : std::numeric_limits<double>::infinity();
    out = text[0] == '-' ? -magnitude : magnitude;
    return true;
  }
  return ec == std::errc{} && end == text.data() + text.size();
}

/// The type a plain YAML scalar has on its own (YAML 1.2 core schema, booleans only true/false).
Value natural_value(const Node& n) {
  if (n.quoted) return Value{n.scalar};
  if (n.scalar == "true") return Value{true};
  if (n.scalar == "false") return Value{false};
  std::int64_t i;
  if (parse_int(n.scalar, i)) return Value{i};
  double d;
  if (parse_float(n.scalar, d)) return Value{d};
  return Value{n.scalar};
}

std::string describe(const Node& n) {
  switch (n.type) {
    case Node::Type::Null:
      return "null";
    case Node::Type::Sequence:
      return "a sequence";
    case Node::Type::Map:
      return "a map";
    case Node::Type::Scalar:
      break;
  }
  return std::string(type_name(natural_value(n))) + " '" + n.scalar + "'";
}

/// Converts a scalar to the type of `spec` and checks it with ParamSchema::check.
Value to_value(const Node& n, const ParamSpec& spec, const std::string& path) {
  if (n.type != Node::Type::Scalar)
    fail(n.loc, path, ParamSchema::describe_domain(spec) + ", got " + describe(n));
  const Value value = spec.type == ParamType::String ? Value{n.scalar} : natural_value(n);
  try {
    return ParamSchema::check(spec, value);
  } catch (const dptune::InvalidArgument& e) {
    fail(n.loc, path, e.what());
  }
}

/// The host's own settings, described like plugin parameters so that messages read the same.
const ParamSchema& host_schema() {
  static const ParamSchema schema = [] {
    ParamSchema s;
    s.add_string("string", "any string");
    s.add_float("float", "any float");
    s.add_int("int", "any int");
    s.add_bool("bool", "true or false");
    s.add_float("delta", "the pipeline's delta").min(0).max_exclusive(1);
    s.add_int("repetitions", "runs per evaluation").min(1);
    s.add_int("threads", "worker threads (0: all cores)").min(0);
    s.add_int("seed", "seed of reproducible noise").min(0);
    s.add_string("executor", "where evaluations run").one_of({"inline", "threads", "mpi"});
    s.add_string("split", "the held-out split the utility scores on")
        .one_of({"validation", "test"});
    s.add_int("int_step", "step of an int dimension").min(1);
    s.add_float("float_step", "step of a float dimension").min_exclusive(0);
    s.add_float("test_epsilon", "epsilon of the private test score").min_exclusive(0);
    s.add_string("test_mechanism", "the noise of the private test score").one_of({kTestScoreNoise});
    return s;
  }();
  return schema;
}
const ParamSpec& host_spec(const std::string& name) { return *host_schema().find(name); }

std::string string_value(const Node& n, const std::string& path) {
  return std::get<std::string>(to_value(n, host_spec("string"), path));
}
std::string nonempty_string(const Node& n, const std::string& path) {
  std::string s = string_value(n, path);
  if (s.empty()) fail(n.loc, path, "expected a non-empty string, got ''");
  return s;
}
bool bool_value(const Node& n, const std::string& path) {
  return std::get<bool>(to_value(n, host_spec("bool"), path));
}
std::int64_t int_value(const Node& n, const std::string& spec, const std::string& path) {
  return std::get<std::int64_t>(to_value(n, host_spec(spec), path));
}
double float_value(const Node& n, const std::string& spec, const std::string& path) {
  return std::get<double>(to_value(n, host_spec(spec), path));
}

// ---- structure checks ---------------------------------------------------------------------------

void require_map(const Node& n, const std::string& path) {
  if (n.type != Node::Type::Map) fail(n.loc, path, "expected a map, got " + describe(n));
}

void check_keys(const Node& map, const std::string& path, const std::vector<std::string>& allowed) {
  for (const auto& e : map.entries) {
    if (std::find(allowed.begin(), allowed.end(), e.key) != allowed.end()) continue;
    auto best = did_you_mean(e.key, allowed);
    fail(e.key_loc, join_path(path, e.key),
         "unknown key '" + e.key + "'" +
             (best ? " (did you mean '" + *best + "'?)" : "; allowed keys: " + join_list(allowed)));
  }
}

void require_keys(const Node& map, const SourceLocation& where, const std::string& path,
                  const std::vector<std::string>& required) {
  for (const auto& key : required)
    if (!map.find(key)) fail(where, path, "missing required key '" + key + "'");
}

void check_duplicates(const Node& n, const std::string& path) {
  if (n.type == Node::Type::Map) {
    for (std::size_t i = 0; i < n.entries.size(); ++i) {
      const Entry& e = n.entries[i];
      for (std::size_t j = 0; j < i; ++j) {
        const Entry& first = n.entries[j];
        if (first.key != e.key) continue;
        fail(e.key_loc, join_path(path, e.key),
             "duplicate key '" + e.key + "' (first " +
                 (first.key_loc.line > 0 ? "at line " + std::to_string(first.key_loc.line)
                                         : std::string("given with --set")) +
                 ")");
      }
      check_duplicates(e.value, join_path(path, e.key));
    }
  } else if (n.type == Node::Type::Sequence) {
    for (std::size_t i = 0; i < n.items.size(); ++i)
      check_duplicates(n.items[i], index_path(path, i));
  }
}

// ---- reading the file ---------------------------------------------------------------------------

std::string read_text(const fs::path& file, const std::string& shown) {
  auto cannot = [&](int error) {
    fail({shown, 0, 0}, "", std::string("cannot read pipeline: ") + std::strerror(error));
  };
  std::error_code ec;
  if (fs::is_directory(file, ec)) cannot(EISDIR);
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) cannot(errno != 0 ? errno : ENOENT);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) cannot(errno != 0 ? errno : EIO);
  return text.str();
}

Node parse_root(const std::string& text, const std::string& shown) {
  std::vector<YAML::Node> documents;
  try {
    documents = load_yaml_documents(text);
  } catch (const YAML::Exception& e) {
    fail(location(shown, e.mark), "", "YAML syntax error: " + e.msg);
  }
  if (documents.empty())
    fail({shown, 0, 0}, "",
         "the pipeline is empty: expected a map with the keys data, algorithm, accountant, "
         "utility, search_space and tuner");
  if (documents.size() > 1)
    fail(location(shown, documents[1].Mark()), "",
         "expected one YAML document, found " + std::to_string(documents.size()));
  Node root = Converter{shown, false}(documents[0], "");
  if (root.type != Node::Type::Map)
    fail(root.loc, "",
         "expected a map of pipeline sections at the top level, got " + describe(root));
  return root;
}

// ---- paths --------------------------------------------------------------------------------------

fs::path normalized(const fs::path& p) {
  fs::path n = p.lexically_normal();
  if (!n.has_filename() && n.has_relative_path()) n = n.parent_path();  // "a/b/" -> "a/b"
  return n;
}

fs::path resolve(const fs::path& base, const std::string& text) {
  return normalized(base / fs::path(text));
}

fs::path folder_of(const fs::path& file) { return normalized(fs::absolute(file)).parent_path(); }

std::vector<fs::path> plugin_paths_of(const Node& root, const fs::path& base) {
  std::vector<fs::path> paths;
  const Entry* e = root.find("plugin_paths");
  if (!e || e->value.type == Node::Type::Null) return paths;
  const Node& list = e->value;
  if (list.type != Node::Type::Sequence)
    fail(list.loc, "plugin_paths", "expected a list of folders, got " + describe(list));
  for (std::size_t i = 0; i < list.items.size(); ++i)
    paths.push_back(resolve(base, nonempty_string(list.items[i], index_path("plugin_paths", i))));
  return paths;
}

}  // namespace dptune::host::config_tree
