// dptune host (internal): the one place that hands text to yaml-cpp.
//
// yaml-cpp 0.7 (Debian 12) must never see untrusted text unguarded: on a stray flow indicator such
// as a file holding only ',' its parser returns an empty document without consuming the token, and
// LoadAll asks for the next document forever while allocating (upstream issues #1040 and #499;
// yaml-cpp fixed it after 0.7 by stopping when a document consumes no token, as checked here).  Its
// node builder also accepts an alias to the node that contains it
// ("&a [*a]"), giving a cyclic graph that every recursive walk follows until the stack overflows,
// and aliases can make a small file expand to an exponential tree ('billion laughs').
//
// The functions here first run yaml-cpp's event parser over the text with a handler that checks
// each of these, then build the nodes.  Every rejection is a YAML::ParserException carrying the
// mark (0-based line and column) of the offending token, so callers report it like any other
// yaml-cpp syntax error.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace dptune::host {

/// Aliases may repeat at most this many nodes in total: far beyond any pipeline, event, model or
/// statistics file, far below what exhausts memory.
inline constexpr std::size_t kMaxAliasedNodes = 100000;

/// Every document of `text` (replaces YAML::LoadAll).  Throws YAML::ParserException.
std::vector<YAML::Node> load_yaml_documents(const std::string& text);

/// The first document of `text`, or a null node when there is none (replaces YAML::Load); the
/// whole text is checked.  Throws YAML::ParserException.
YAML::Node load_yaml_document(const std::string& text);

/// The first document of a file (replaces YAML::LoadFile).  Throws YAML::BadFile when the file
/// cannot be read, YAML::ParserException on bad YAML.
YAML::Node load_yaml_file(const std::filesystem::path& file);

}  // namespace dptune::host
