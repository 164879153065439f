// The guarded YAML loading every configuration text goes through (framework/src/base/yaml_load.cpp),
// through its public users: the event parser and the pipeline loader's --set values.  The
// pipeline-file cases are in the bad-pipeline corpus (tests/bad_pipelines/yaml_*.yaml).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/event_yaml.hpp"
#include "temp_dir.hpp"

using dptune::host::ConfigDiagnostic;

namespace {

/// The diagnostic parse_event throws for `text`, as "line:col: message".
std::string event_error(const std::string& text) {
  try {
    (void)dptune::host::parse_event(text, "e.yaml");
  } catch (const ConfigDiagnostic& e) {
    return std::to_string(e.where().line) + ":" + std::to_string(e.where().column) + ": " +
           e.message();
  }
  return "no error";
}

/// {composed: {events: [&g G, *g, *g, ...]}} with `aliases` aliases of G, a 5-node event
/// (map, key, map, key, value).
std::string composed_of_aliases(int aliases) {
  std::string text = "{composed: {events: [&g {gaussian: {noise_multiplier: 1}}";
  for (int i = 0; i < aliases; ++i) text += ", *g";
  return text + "]}}";
}

class NoCatalog final : public dptune::host::Catalog {
 public:
  std::vector<std::string> names(dptune::host::ComponentKind /*kind*/) const override { return {}; }
  const dptune::ParamSchema* schema(dptune::host::ComponentKind /*kind*/,
                                    const std::string& /*name*/) const override {
    return nullptr;
  }
};

}  // namespace

TEST_CASE("yaml loading: a stray comma is a located error, not an endless loop") {
  const std::string comma = "unexpected ',' outside a flow collection";
  CHECK(event_error(",").rfind("1:1: YAML syntax error: " + comma, 0) == 0);
  CHECK(event_error(",,,").rfind("1:1: YAML syntax error: " + comma, 0) == 0);
  // After a complete document, after a document start, after properties.
  CHECK(event_error("{pure_dp: {epsilon: 1}}\n,").rfind("2:1: YAML syntax error: " + comma, 0) ==
        0);
  CHECK(event_error("--- ,").rfind("1:5: YAML syntax error: " + comma, 0) == 0);
  CHECK(event_error("&a ,").rfind("1:4: YAML syntax error: " + comma, 0) == 0);
  CHECK(event_error("!t ,").rfind("1:4: YAML syntax error: " + comma, 0) == 0);
  CHECK(event_error("%YAML 1.2\n---\n,").rfind("3:1: YAML syntax error: " + comma, 0) == 0);
  // After a UTF-8 byte order mark (marks count from after it).
  CHECK(event_error("\xEF\xBB\xBF,").rfind("1:1: YAML syntax error: " + comma, 0) == 0);
  CHECK(event_error("\xEF\xBB\xBF{no_op: {}}\n ,").rfind("2:2: YAML syntax error: " + comma, 0) ==
        0);
  // A comma inside a flow collection is still fine.
  CHECK(dptune::host::parse_event("{composed: {events: [{pure_dp: {epsilon: 1}}, "
                                  "{pure_dp: {epsilon: 2}}]}}",
                                  "e.yaml")
            .to_string() ==
        "{composed: {events: [{pure_dp: {epsilon: 1.0}}, {pure_dp: {epsilon: 2.0}}]}}");
}

TEST_CASE("yaml loading: an alias inside the node it names is refused") {
  CHECK(event_error("&a [*a]") ==
        "1:5: YAML syntax error: alias '*a' refers to a node that contains it (a cycle)");
  CHECK(event_error("composed: &c\n  events: [*c]") ==
        "2:12: YAML syntax error: alias '*c' refers to a node that contains it (a cycle)");
}

TEST_CASE("yaml loading: aliases may repeat at most 100000 nodes") {
  // 20000 aliases of a 5-node event repeat exactly 100000 nodes: accepted, with every alias.
  const auto event = dptune::host::parse_event(composed_of_aliases(20000), "e.yaml");
  CHECK(event.events().size() == 20001);
  // One more is refused at the alias that crosses the limit (column of the last "*g").
  const std::string text = composed_of_aliases(20001);
  const std::string error = event_error(text);
  CHECK(error == "1:" + std::to_string(text.rfind("*g") + 1) +
                     ": YAML syntax error: aliases repeat more than 100000 nodes in total "
                     "(an alias bomb?); write the values out instead");
  // Nested aliases multiply: ten levels of ten would be 10^10 nodes.
  std::string bomb = "composed: {events: [&a0 {pure_dp: {epsilon: 1}}]}\nmore:\n";
  for (int level = 1; level <= 10; ++level) {
    bomb += "  - &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) bomb += (i ? ", *a" : "*a") + std::to_string(level - 1);
    bomb += "]\n";
  }
  CHECK(event_error(bomb).find("aliases repeat more than 100000 nodes") != std::string::npos);
}

TEST_CASE("yaml loading: a --set value gets the same checks") {
  const dptune_test::TempDir dir;
  const auto file = dir.write("p.yaml", "name: x\n");
  const NoCatalog catalog;
  auto error_for = [&](const std::string& value) {
    try {
      (void)dptune::host::load_pipeline(file, {{"name", value}}, catalog);
    } catch (const ConfigDiagnostic& e) {
      return e.message();
    }
    return std::string("no error");
  };
  CHECK(error_for(",") ==
        "YAML syntax error in the value: unexpected ',' outside a flow collection (quote a value "
        "that holds a comma)");
  CHECK(error_for("&a [*a]") ==
        "YAML syntax error in the value: "
        "alias '*a' refers to a node that contains it (a cycle)");
}
