// The DpEvent kind table (dptune/event_kinds.hpp) is the one definition of every kind: these tests
// check that it covers DpEvent::Kind in order with the minors of abi.hpp's history, that every kind
// round-trips YAML -> DpEvent -> to_string -> YAML with each field read back through the table's
// accessor, and that docs/events.md lists exactly the table.  Set DPTUNE_UPDATE_DOCS=1 to rewrite
// the generated section of docs/events.md from the table (then review the diff).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "build_paths.hpp"
#include "dptune/errors.hpp"
#include "dptune/event_kinds.hpp"
#include "dptune/event_walk.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/event_yaml.hpp"

using dptune::DpEvent;
using dptune::EventFieldType;
using dptune::EventKindSpec;
using dptune::kEventKinds;

namespace {

/// A valid example of every Number and Integer field, written as to_string writes it; distinct
/// values, so a table accessor that reads the wrong slot is caught.
const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> values{{"noise_multiplier", "1.1"},
                                                         {"epsilon", "0.5"},
                                                         {"delta", "0.001"},
                                                         {"rho", "0.125"},
                                                         {"rate", "0.01"},
                                                         {"source_size", "1000"},
                                                         {"sample_size", "64"},
                                                         {"count", "300"},
                                                         {"mean", "10.5"},
                                                         {"shape", "0.75"},
                                                         {"stop_probability", "0.2"},
                                                         {"min_scale", "4194304.0"},
                                                         {"density_ratio", "2.5"},
                                                         {"summands", "12"},
                                                         {"dimension", "7"}};
  return values;
}

/// The example event of `spec`, in to_string's syntax; nested events are pure_dp leaves.
std::string example_text(const EventKindSpec& spec) {
  std::string out = "{" + std::string(spec.name) + ": {";
  for (std::size_t i = 0; i < spec.fields.size(); ++i) {
    const auto& field = spec.fields[i];
    out += (i ? ", " : "") + std::string(field.name) + ": ";
    switch (field.type) {
      case EventFieldType::Number:
      case EventFieldType::Integer:
        out += examples().at(std::string(field.name));
        break;
      case EventFieldType::Event:
        out += "{pure_dp: {epsilon: 0.25}}";
        break;
      case EventFieldType::Events:
        out += "[{pure_dp: {epsilon: 0.25}}, {zcdp: {rho: 0.5}}]";
        break;
    }
  }
  return out + "}}";
}

const char* type_name(EventFieldType type) {
  switch (type) {
    case EventFieldType::Number:
      return "number";
    case EventFieldType::Integer:
      return "integer";
    case EventFieldType::Event:
      return "event";
    case EventFieldType::Events:
      return "list of events";
  }
  return "?";
}

/// The generated section of docs/events.md, from the table.
std::string docs_section() {
  std::ostringstream out;
  out << "| kind | fields | since ABI | what it states |\n|---|---|---|---|\n";
  for (const auto& spec : kEventKinds) {
    std::string fields;
    for (const auto& field : spec.fields)
      fields += (fields.empty() ? "`" : ", `") + std::string(field.name) + "`";
    out << "| `" << spec.name << "` | " << (fields.empty() ? "none" : fields) << " | "
        << spec.abi_major << "." << spec.abi_minor << " | " << spec.doc << " |\n";
  }
  out << "\n| field | type | valid values | meaning |\n|---|---|---|---|\n";
  for (const auto& spec : kEventKinds)
    for (const auto& field : spec.fields)
      out << "| `" << spec.name << "." << field.name << "` | " << type_name(field.type) << " | "
          << field.range << " | " << field.doc << " |\n";
  return out.str();
}

constexpr const char* kBegin =
    "<!-- BEGIN generated from sdk/include/dptune/event_kinds.hpp: do not edit by hand -->\n";
constexpr const char* kEnd = "<!-- END generated -->\n";

}  // namespace

TEST_CASE("event kinds: the table lists every DpEvent::Kind once, in order, with its minor") {
  // The minors of abi.hpp's history: one_of and repeat_until_accepted 2.1, replace_one 2.3,
  // discrete_gaussian 2.8, discrete_gaussian_on_grid 2.12; the rest were in 2.0; and
  // adaptive_repeat_and_select 3.1, discrete_gaussian_sum 3.2.
  const std::map<DpEvent::Kind, int> appended{{DpEvent::Kind::OneOf, 1},
                                              {DpEvent::Kind::RepeatUntilAccepted, 1},
                                              {DpEvent::Kind::ReplaceOne, 3},
                                              {DpEvent::Kind::DiscreteGaussian, 8},
                                              {DpEvent::Kind::DiscreteGaussianOnGrid, 12},
                                              {DpEvent::Kind::AdaptiveRepeatAndSelect, 1},
                                              {DpEvent::Kind::DiscreteGaussianSum, 2}};
  const int last = static_cast<int>(DpEvent::Kind::DiscreteGaussianSum);
  REQUIRE(std::size(kEventKinds) == static_cast<std::size_t>(last + 1));
  for (int k = 0; k <= last; ++k) {
    const auto kind = static_cast<DpEvent::Kind>(k);
    CAPTURE(k);
    CHECK(kEventKinds[k].kind == kind);
    CHECK(dptune::find_event_kind(kind) == &kEventKinds[k]);
    CHECK(dptune::find_event_kind(kEventKinds[k].name) == &kEventKinds[k]);
    CHECK(std::string(DpEvent::kind_name(kind)) == kEventKinds[k].name);
    CHECK(kEventKinds[k].abi_minor == (appended.count(kind) ? appended.at(kind) : 0));
    // adaptive_repeat_and_select and discrete_gaussian_sum came with the 3.x series; every other
    // kind with 2.x.
    CHECK(kEventKinds[k].abi_major == (kind == DpEvent::Kind::AdaptiveRepeatAndSelect ||
                                               kind == DpEvent::Kind::DiscreteGaussianSum
                                           ? 3
                                           : 2));
    for (const auto& field : kEventKinds[k].fields) {
      CHECK((field.number != nullptr) == (field.type == EventFieldType::Number));
      CHECK((field.integer != nullptr) == (field.type == EventFieldType::Integer));
      CHECK(!field.doc.empty());
      CHECK(!field.range.empty());
    }
  }
  CHECK(dptune::find_event_kind(static_cast<DpEvent::Kind>(last + 1)) == nullptr);
  CHECK(std::string(DpEvent::kind_name(static_cast<DpEvent::Kind>(last + 1))) == "?");
  CHECK(dptune::find_event_kind("gausian") == nullptr);
}

TEST_CASE("event kinds: every kind round-trips YAML to DpEvent to to_string to YAML") {
  for (const auto& spec : kEventKinds) {
    const std::string text = example_text(spec);
    CAPTURE(text);
    const DpEvent event = dptune::host::parse_event(text, "example.yaml");
    CHECK(event.kind() == spec.kind);
    CHECK(event.to_string() == text);
    CHECK(dptune::host::parse_event(event.to_string(), "printed.yaml") == event);
    for (const auto& field : spec.fields) {
      const std::string name(field.name);
      if (field.type == EventFieldType::Number)
        CHECK(field.number(event) == std::stod(examples().at(name)));
      if (field.type == EventFieldType::Integer)
        CHECK(field.integer(event) == std::stoll(examples().at(name)));
    }
    // Fields may be written in any order; the printed order is the table's.
    if (spec.fields.size() > 1) {
      std::string reversed = "{" + std::string(spec.name) + ": {";
      for (std::size_t i = spec.fields.size(); i-- > 0;) {
        const auto& field = spec.fields[i];
        reversed += std::string(field.name) + ": ";
        if (field.type == EventFieldType::Event)
          reversed += "{pure_dp: {epsilon: 0.25}}";
        else
          reversed += examples().at(std::string(field.name));
        reversed += i ? ", " : "";
      }
      CHECK(dptune::host::parse_event(reversed + "}}", "reversed.yaml") == event);
    }
  }
}

TEST_CASE("event kinds: the table builds through the validating constructors") {
  // An out-of-range value reaches the kind's constructor, whose message names the field, and
  // the YAML reader locates it at the event.
  std::vector<dptune::EventFieldValue> values(2);
  values[0].number = 1.5;
  values[1].events.push_back(DpEvent::pure_dp(1));
  const auto* rua = dptune::find_event_kind(DpEvent::Kind::RepeatUntilAccepted);
  REQUIRE(rua != nullptr);
  CHECK_THROWS_WITH_AS(rua->make(values),
                       "repeat_until_accepted: stop_probability must be in [0, 1), got 1.5",
                       dptune::InvalidArgument);
  try {
    (void)dptune::host::parse_event(
        "{repeat_until_accepted: {stop_probability: 1.5, event: {no_op: {}}}}", "e.yaml");
    FAIL("accepted stop_probability 1.5");
  } catch (const dptune::host::ConfigDiagnostic& e) {
    CHECK(std::string(e.what()) ==
          "e.yaml:1:25: repeat_until_accepted: repeat_until_accepted: stop_probability must be in "
          "[0, 1), got 1.5");
  }
}

TEST_CASE("event kinds: docs/events.md lists exactly the kind table") {
  const std::string path = std::string(dptune_test::build_paths::source_dir) + "/docs/events.md";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string doc = buffer.str();
  const auto begin = doc.find(kBegin);
  auto end = doc.find(kEnd);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const auto from = begin + std::string(kBegin).size();
  const std::string expected = docs_section();
  if (const char* update = std::getenv("DPTUNE_UPDATE_DOCS");
      update && std::string(update) == "1") {
    doc.replace(from, end - from, expected);
    std::ofstream(path) << doc;
    end = from + expected.size();
  }
  INFO("regenerate with DPTUNE_UPDATE_DOCS=1; expected section:\n" << expected);
  CHECK(doc.substr(from, end - from) == expected);
}

TEST_CASE("event walk: pre-order over every kind's children, as the table lists them") {
  const DpEvent swr = DpEvent::sampled_without_replacement(100, 10, DpEvent::gaussian(2));
  const DpEvent tree =
      DpEvent::composed({DpEvent::self_composed(swr, 3), DpEvent::replace_one(DpEvent::pure_dp(1)),
                         DpEvent::one_of({DpEvent::laplace(1), DpEvent::approx_dp(1, 1e-6)}),
                         DpEvent::repeat_until_accepted(DpEvent::zcdp(0.5), 0.1),
                         DpEvent::repeat_and_select(
                             DpEvent::poisson_sampled(0.1, DpEvent::discrete_gaussian(3)), 5, 1)});
  std::vector<std::string> kinds;
  dptune::for_each_event(
      tree, [&](const DpEvent& e) { kinds.emplace_back(DpEvent::kind_name(e.kind())); });
  const std::vector<std::string> expected{"composed",
                                          "self_composed",
                                          "sampled_without_replacement",
                                          "gaussian",
                                          "replace_one",
                                          "pure_dp",
                                          "one_of",
                                          "laplace",
                                          "approx_dp",
                                          "repeat_until_accepted",
                                          "zcdp",
                                          "repeat_and_select",
                                          "poisson_sampled",
                                          "discrete_gaussian"};
  CHECK(kinds == expected);
  // find_event stops at the first match in that order and points into the tree.
  const DpEvent* found =
      dptune::find_event(tree, [](const DpEvent& e) { return e.kind() == DpEvent::Kind::Laplace; });
  REQUIRE(found != nullptr);
  CHECK(found == &tree.events()[2].events()[0]);
  CHECK_FALSE(dptune::any_event(
      tree, [](const DpEvent& e) { return e.kind() == DpEvent::Kind::NonPrivate; }));
  // fold: the number of leaves, each node summing its children's counts.
  const int leaves = dptune::fold_event<int>(tree, [](const DpEvent&, std::vector<int> parts) {
    int n = parts.empty() ? 1 : 0;
    for (int p : parts) n += p;
    return n;
  });
  CHECK(leaves == 6);  // gaussian, pure_dp, laplace, approx_dp, zcdp, discrete_gaussian
}

TEST_CASE("event walk: map_children rebuilds every composite kind with its numbers kept") {
  // Doubles every Gaussian's multiplier, wherever it sits; everything else is rebuilt unchanged.
  struct Doubler {
    DpEvent operator()(const DpEvent& e) const {
      if (e.kind() == DpEvent::Kind::Gaussian) return DpEvent::gaussian(2 * e.noise_multiplier());
      return dptune::map_children(e, *this);
    }
  };
  const auto build = [](double sigma) {
    const DpEvent g = DpEvent::gaussian(sigma);
    return DpEvent::composed(
        {DpEvent::self_composed(DpEvent::sampled_without_replacement(100, 10, g), 3),
         DpEvent::replace_one(g), DpEvent::one_of({g, DpEvent::laplace(1)}),
         DpEvent::repeat_until_accepted(g, 0.1), DpEvent::repeat_and_select(g, 5, 1),
         DpEvent::poisson_sampled(0.25, g), DpEvent::approx_dp(1, 1e-6)});
  };
  CHECK(Doubler{}(build(1.5)) == build(3));
  // A leaf comes back as it is.
  CHECK(dptune::map_children(DpEvent::laplace(2), Doubler{}) == DpEvent::laplace(2));
}
