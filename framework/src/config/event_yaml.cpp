#include "dptune/host/event_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "base/yaml_load.hpp"
#include "dptune/errors.hpp"
#include "dptune/event_kinds.hpp"
#include "dptune/host/config.hpp"

namespace dptune::host {

namespace {

/// The kind names, sorted (the order error messages list them in).
const std::vector<std::string>& kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& spec : kEventKinds) out.emplace_back(spec.name);
    std::sort(out.begin(), out.end());
    return out;
  }();
  return names;
}

class Parser {
 public:
  Parser(std::string file, const EventParseOptions& options)
      : file_(std::move(file)), options_(options) {}
  int noise_leaves = 0;

  SourceLocation where(const YAML::Node& n) const {
    const auto m = n.Mark();
    if (m.is_null() || m.line < 0) return {file_, 0, 0};
    return {file_, m.line + 1, m.column + 1};
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& path,
                         const std::string& msg) const {
    throw ConfigDiagnostic(where(n), path.empty() ? "event" : path, msg);
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  double number(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) fail(n, path, "expected a number, got " + shape_of(n));
    std::string text = n.Scalar();
    if (text == "inf" || text == ".inf" || text == "+inf" || text == "Infinity" || text == ".Inf")
      return std::numeric_limits<double>::infinity();
    if (!text.empty() && text[0] == '+') text.erase(0, 1);
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || std::isnan(value))
      fail(n, path, "expected a number, got '" + n.Scalar() + "'");
    return value;
  }

  std::int64_t integer(const YAML::Node& n, const std::string& path) const {
    const double v = number(n, path);
    // 1e7 is a common way to write a step count: accept any float that is exactly an integer.
    if (!(std::floor(v) == v) || std::abs(v) > 9007199254740992.0)
      fail(n, path, "expected an integer, got '" + n.Scalar() + "'");
    return static_cast<std::int64_t>(v);
  }

  static std::string shape_of(const YAML::Node& n) {
    if (n.IsMap()) return "a map";
    if (n.IsSequence()) return "a sequence";
    if (n.IsNull()) return "nothing";
    return "'" + n.Scalar() + "'";
  }

  static std::string kind_list() {
    std::string s;
    for (const auto& n : kind_names()) s += (s.empty() ? "" : ", ") + n;
    return s;
  }

  DpEvent event(const YAML::Node& n, const std::string& path) {
    if (!n.IsMap() || n.size() != 1) {
      if (n.IsMap() && n.size() > 1) {
        std::string keys;
        for (const auto& kv : n) keys += (keys.empty() ? "" : ", ") + kv.first.Scalar();
        fail(n, path,
             "an event has exactly one kind, got " + std::to_string(n.size()) + " keys (" + keys +
                 ")");
      }
      fail(n, path,
           "expected an event such as {gaussian: {noise_multiplier: 1.0}}, got " + shape_of(n));
    }
    const auto kv = *n.begin();
    const YAML::Node key = kv.first, body = kv.second;
    const std::string kind = key.Scalar();
    const std::string here = join(path, kind);
    const EventKindSpec* spec = find_event_kind(std::string_view(kind));
    if (!spec) {
      const auto hint = did_you_mean(kind, kind_names());
      fail(key, here,
           "unknown event kind '" + kind + "'" +
               (hint ? " (did you mean '" + *hint + "'?)" : std::string()) + "; expected one of " +
               kind_list());
    }
    const auto fields = fields_of(*spec, body, here);
    const bool noise_given = options_.noise_multiplier.has_value();
    for (const auto& field : spec->fields) {
      const bool optional_noise = noise_given && field.name == "noise_multiplier";
      if (!fields.count(std::string(field.name)) && !optional_noise)
        fail(key, here, "missing field '" + std::string(field.name) + "'");
    }
    try {
      return build(*spec, fields, here);
    } catch (const InvalidArgument& e) {
      fail(body.IsNull() ? key : body, here, e.what());
    }
  }

 private:
  /// The fields written in `body`, each checked to be one of the kind's, at most once.
  std::map<std::string, YAML::Node> fields_of(const EventKindSpec& spec, const YAML::Node& body,
                                              const std::string& here) const {
    std::map<std::string, YAML::Node> fields;
    if (body.IsNull()) return fields;
    const std::string kind(spec.name);
    if (!body.IsMap())
      fail(body, here, "expected a map of the event's fields, got " + shape_of(body));
    for (const auto& f : body) {
      const YAML::Node fk = f.first;
      const std::string& name = fk.Scalar();
      std::vector<std::string> allowed;
      for (const auto& field : spec.fields) allowed.emplace_back(field.name);
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        const auto hint = did_you_mean(name, allowed);
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        std::string message = "unknown field '";
        message += name;
        message += "' of " + kind;
        if (hint) message += " (did you mean '" + *hint + "'?)";
        message += "; " + kind;
        message += allowed.empty() ? " takes no fields" : " takes " + list;
        fail(fk, join(here, name), message);
      }
      if (fields.count(name)) fail(fk, join(here, name), "duplicate field '" + name + "'");
      fields.emplace(name, f.second);
    }
    return fields;
  }

  /// Reads every field in the table's order and builds the event through its constructor (which
  /// throws InvalidArgument; the caller locates it at the event).
  DpEvent build(const EventKindSpec& spec, const std::map<std::string, YAML::Node>& fields,
                const std::string& here) {
    std::vector<EventFieldValue> values(spec.fields.size());
    for (std::size_t i = 0; i < spec.fields.size(); ++i) {
      const EventFieldSpec& field = spec.fields[i];
      const std::string name(field.name);
      const std::string at = join(here, name);
      if (name == "noise_multiplier") {
        ++noise_leaves;
        if (options_.noise_multiplier) {
          values[i].number = *options_.noise_multiplier;  // calibration: the YAML value is unread
          continue;
        }
      }
      const YAML::Node& node = fields.at(name);
      switch (field.type) {
        case EventFieldType::Number:
          values[i].number = number(node, at);
          break;
        case EventFieldType::Integer:
          values[i].integer = integer(node, at);
          break;
        case EventFieldType::Event:
          values[i].events.push_back(event(node, at));
          break;
        case EventFieldType::Events:
          if (!node.IsSequence())
            fail(node, at, "expected a sequence of events, got " + shape_of(node));
          for (std::size_t k = 0; k < node.size(); ++k)
            values[i].events.push_back(event(node[k], at + "[" + std::to_string(k) + "]"));
          break;
      }
      // DpEvent::poisson_sampled takes rate 0 (a no-op); written in a pipeline or a `dptune
      // privacy` event it is refused, as it always was.
      if (spec.kind == DpEvent::Kind::PoissonSampled && name == "rate" &&
          !(values[i].number > 0 && values[i].number <= 1))
        fail(node, at, "sampling rate must be in (0, 1], got " + node.Scalar());
    }
    return spec.make(values);
  }

  std::string file_;
  const EventParseOptions& options_;
};

}  // namespace

DpEvent parse_event(const std::string& text, const std::string& file,
                    const EventParseOptions& options, int* noise_leaves) {
  YAML::Node root;
  try {
    const auto docs = load_yaml_documents(text);
    if (docs.size() > 1)
      throw ConfigDiagnostic({file, 0, 0}, "event",
                             "expected one YAML document, got " + std::to_string(docs.size()));
    if (!docs.empty()) root = docs[0];
  } catch (const YAML::Exception& e) {
    throw ConfigDiagnostic({file, e.mark.line + 1, e.mark.column + 1}, "event",
                           "YAML syntax error: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull())
    throw ConfigDiagnostic({file, 0, 0}, "event",
                           "empty: expected an event such as {gaussian: {noise_multiplier: 1.0}}");
  Parser parser(file, options);
  DpEvent event = parser.event(root, "");
  if (noise_leaves) *noise_leaves = parser.noise_leaves;
  return event;
}

}  // namespace dptune::host
