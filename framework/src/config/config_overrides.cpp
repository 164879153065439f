// --set key.path=value overrides, applied to the pipeline's tree before it is loaded: each value
// is parsed as YAML and replaces (or creates) the node at its key path.
#include <string>
#include <utility>
#include <vector>

#include "base/yaml_load.hpp"
#include "config/config_tree.hpp"

namespace dptune::host::config_tree {

namespace fs = std::filesystem;

std::vector<std::string> split_path(const std::string& key_path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = key_path.find('.', start);
    parts.push_back(
        key_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

void apply_override(Node& root, const Override& o) {
  const std::vector<std::string> parts = split_path(o.key_path);
  for (const auto& part : parts)
    if (part.empty())
      fail(kSetLocation, o.key_path, "expected a dotted key path such as tuner.params.trials");
  Node value;
  try {
    YAML::Node parsed = load_yaml_document(o.value);
    value = convert_yaml(parsed, kSetLocation.file, true, o.key_path);
  } catch (const YAML::Exception& e) {
    fail(kSetLocation, o.key_path, "YAML syntax error in the value: " + e.msg);
  }
  Node* node = &root;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (node->type == Node::Type::Scalar)
      fail(kSetLocation, o.key_path, "cannot set a key inside a scalar");
    if (node->type == Node::Type::Sequence)
      fail(kSetLocation, o.key_path, "cannot set a key inside a sequence");
    if (node->type == Node::Type::Null) node->type = Node::Type::Map;
    Entry* entry = node->find(parts[i]);
    if (!entry) {
      Node child;
      child.type = Node::Type::Map;
      child.loc = kSetLocation;
      node->entries.push_back(Entry{parts[i], kSetLocation, std::move(child)});
      entry = &node->entries.back();
    }
    node = &entry->value;
  }
  *node = std::move(value);
}

Node load_tree(const fs::path& file, const std::vector<Override>& overrides) {
  const std::string shown = file.string();
  Node root = parse_root(read_text(file, shown), shown);
  for (const auto& o : overrides) apply_override(root, o);
  return root;
}

}  // namespace dptune::host::config_tree
