// dptune host (internal): the pipeline's YAML as a tree of our own (config_tree.cpp), the --set
// overrides applied to it (config_overrides.cpp), and the typed reads and structure checks the
// loader (config.cpp) makes on it.
//
// The YAML text is parsed with yaml-cpp and copied into this tree, which keeps every node's
// position, keeps duplicate keys (so that they can be reported), and can be edited by --set
// overrides without yaml-cpp's inserting operator[].  Scalars are typed from the plugins' schemas,
// never guessed by yaml-cpp.  Every failure is a ConfigDiagnostic naming file, line, column and
// key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "dptune/host/diagnostic.hpp"
#include "dptune/params.hpp"
#include "dptune/schema.hpp"

namespace dptune::host::config_tree {

// ---- a position-carrying YAML tree --------------------------------------------------------------

struct Entry;

struct Node {
  enum class Type { Null, Scalar, Sequence, Map };
  Type type = Type::Null;
  std::string scalar;
  bool quoted = false;  // quoted or tagged !!str: a string whatever it looks like
  SourceLocation loc;
  std::vector<Node> items;     // Sequence
  std::vector<Entry> entries;  // Map, in file order, duplicates kept

  const Entry* find(std::string_view key) const;
  Entry* find(std::string_view key);
};

struct Entry {
  std::string key;
  SourceLocation key_loc;
  Node value;
};

/// Where --set values are said to come from.
inline const SourceLocation kSetLocation{"--set", 0, 0};

[[noreturn]] void fail(const SourceLocation& where, const std::string& key_path,
                       const std::string& message);

std::string join_path(const std::string& path, const std::string& key);
std::string index_path(const std::string& path, std::size_t i);
/// "a, b, c", or "(none)".
std::string join_list(const std::vector<std::string>& names);
/// " (did you mean 'x'?)" for the nearest candidate, or "".
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates);
/// A yaml-cpp mark as a 1-based position in `file` ({file, 0, 0} when it has none).
SourceLocation location(const std::string& file, const YAML::Mark& mark);

/// Copies a yaml-cpp tree at key path `path`.  With `fixed`, every node gets the location
/// {file, 0, 0} (--set values).
Node convert_yaml(const YAML::Node& yaml, const std::string& file, bool fixed,
                  const std::string& path);

// ---- scalars typed by schemas -------------------------------------------------------------------

bool parse_int(const std::string& text, std::int64_t& out);
/// A YAML 1.2 float (also .inf, -.inf, .nan); out-of-range magnitudes become ±inf or 0.
bool parse_float(const std::string& text, double& out);
/// The type a plain YAML scalar has on its own (YAML 1.2 core schema, booleans only true/false).
Value natural_value(const Node& n);
/// "a map", "a sequence", "null" or "int '3'": what a message says was found.
std::string describe(const Node& n);
/// Converts a scalar to the type of `spec` and checks it with ParamSchema::check.
Value to_value(const Node& n, const ParamSpec& spec, const std::string& path);
/// The host's own settings, described like plugin parameters so that messages read the same.
const ParamSchema& host_schema();
const ParamSpec& host_spec(const std::string& name);
std::string string_value(const Node& n, const std::string& path);
std::string nonempty_string(const Node& n, const std::string& path);
bool bool_value(const Node& n, const std::string& path);
std::int64_t int_value(const Node& n, const std::string& spec, const std::string& path);
double float_value(const Node& n, const std::string& spec, const std::string& path);

// ---- structure checks ---------------------------------------------------------------------------

void require_map(const Node& n, const std::string& path);
void check_keys(const Node& map, const std::string& path, const std::vector<std::string>& allowed);
void require_keys(const Node& map, const SourceLocation& where, const std::string& path,
                  const std::vector<std::string>& required);
/// The first key of any map in `n` given twice, with where it was first given.
void check_duplicates(const Node& n, const std::string& path);

// ---- reading the file and applying overrides ----------------------------------------------------

/// The pipeline file's text; `shown` names it in the diagnostic when it cannot be read.
std::string read_text(const std::filesystem::path& file, const std::string& shown);
/// The one YAML document of `text`, a map of pipeline sections.
Node parse_root(const std::string& text, const std::string& shown);
/// "a.b.c" -> {"a", "b", "c"}.
std::vector<std::string> split_path(const std::string& key_path);
/// Sets the key path of `o` to its value (parsed as YAML), creating maps on the way.
void apply_override(Node& root, const Override& o);
/// The file's tree with every override applied, in order.
Node load_tree(const std::filesystem::path& file, const std::vector<Override>& overrides);

// ---- paths --------------------------------------------------------------------------------------

std::filesystem::path normalized(const std::filesystem::path& p);
/// `text` relative to `base` (absolute paths stay), normalised.
std::filesystem::path resolve(const std::filesystem::path& base, const std::string& text);
/// The folder of `file`, absolute and normalised: what its relative paths are relative to.
std::filesystem::path folder_of(const std::filesystem::path& file);
/// The pipeline's plugin_paths, resolved against `base`.
std::vector<std::filesystem::path> plugin_paths_of(const Node& root,
                                                   const std::filesystem::path& base);

}  // namespace dptune::host::config_tree
