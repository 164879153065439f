#include "dptune/host/event_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/host/config.hpp"
#include "yaml_load.hpp"

namespace dptune::host {

namespace {

struct Field {
  const char* name;
  enum Type { Number, Integer, Event, Events } type;
  bool required;
};

const std::map<std::string, std::vector<Field>>& kinds() {
  static const std::map<std::string, std::vector<Field>> table{
      {"no_op", {}},
      {"non_private", {}},
      {"gaussian", {{"noise_multiplier", Field::Number, true}}},
      {"discrete_gaussian", {{"noise_multiplier", Field::Number, true}}},
      {"laplace", {{"noise_multiplier", Field::Number, true}}},
      {"pure_dp", {{"epsilon", Field::Number, true}}},
      {"approx_dp", {{"epsilon", Field::Number, true}, {"delta", Field::Number, true}}},
      {"zcdp", {{"rho", Field::Number, true}}},
      {"poisson_sampled", {{"rate", Field::Number, true}, {"event", Field::Event, true}}},
      {"sampled_without_replacement",
       {{"source_size", Field::Integer, true},
        {"sample_size", Field::Integer, true},
        {"event", Field::Event, true}}},
      {"self_composed", {{"count", Field::Integer, true}, {"event", Field::Event, true}}},
      {"composed", {{"events", Field::Events, true}}},
      {"repeat_and_select",
       {{"mean", Field::Number, true},
        {"shape", Field::Number, true},
        {"event", Field::Event, true}}},
      {"one_of", {{"events", Field::Events, true}}},
      {"repeat_until_accepted",
       {{"stop_probability", Field::Number, true}, {"event", Field::Event, true}}},
      {"replace_one", {{"event", Field::Event, true}}},
  };
  return table;
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

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [k, _] : kinds()) out.push_back(k);
    return out;
  }

  std::string kind_list() const {
    std::string s;
    for (const auto& n : names()) s += (s.empty() ? "" : ", ") + n;
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
    const auto it = kinds().find(kind);
    if (it == kinds().end()) {
      const auto hint = did_you_mean(kind, names());
      fail(key, here,
           "unknown event kind '" + kind + "'" +
               (hint ? " (did you mean '" + *hint + "'?)" : std::string()) + "; expected one of " +
               kind_list());
    }
    std::map<std::string, YAML::Node> fields;
    if (!body.IsNull()) {
      if (!body.IsMap())
        fail(body, here, "expected a map of the event's fields, got " + shape_of(body));
      for (const auto& f : body) {
        const YAML::Node fk = f.first;
        const std::string& name = fk.Scalar();
        bool known = false;
        for (const auto& spec : it->second) known = known || name == spec.name;
        if (!known) {
          std::vector<std::string> allowed;
          for (const auto& spec : it->second) allowed.emplace_back(spec.name);
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
    }
    const bool noise_given = options_.noise_multiplier.has_value();
    for (const auto& spec : it->second) {
      const bool optional_noise = noise_given && std::string(spec.name) == "noise_multiplier";
      if (spec.required && !fields.count(spec.name) && !optional_noise)
        fail(key, here, std::string("missing field '") + spec.name + "'");
    }
    auto num = [&](const char* f) { return number(fields.at(f), join(here, f)); };
    auto integer_of = [&](const char* f) { return integer(fields.at(f), join(here, f)); };
    try {
      if (kind == "no_op") return DpEvent::no_op();
      if (kind == "non_private") return DpEvent::non_private();
      if (kind == "gaussian" || kind == "laplace" || kind == "discrete_gaussian") {
        ++noise_leaves;
        const double s = noise_given ? *options_.noise_multiplier : num("noise_multiplier");
        if (kind == "discrete_gaussian") return DpEvent::discrete_gaussian(s);
        return kind == "gaussian" ? DpEvent::gaussian(s) : DpEvent::laplace(s);
      }
      if (kind == "pure_dp") return DpEvent::pure_dp(num("epsilon"));
      if (kind == "approx_dp") return DpEvent::approx_dp(num("epsilon"), num("delta"));
      if (kind == "zcdp") return DpEvent::zcdp(num("rho"));
      if (kind == "poisson_sampled") {
        const double rate = num("rate");
        if (!(rate > 0 && rate <= 1))
          fail(fields.at("rate"), join(here, "rate"),
               "sampling rate must be in (0, 1], got " + fields.at("rate").Scalar());
        return DpEvent::poisson_sampled(rate, event(fields.at("event"), join(here, "event")));
      }
      if (kind == "sampled_without_replacement")
        return DpEvent::sampled_without_replacement(integer_of("source_size"),
                                                    integer_of("sample_size"),
                                                    event(fields.at("event"), join(here, "event")));
      if (kind == "self_composed")
        return DpEvent::self_composed(event(fields.at("event"), join(here, "event")),
                                      integer_of("count"));
      if (kind == "composed" || kind == "one_of") {
        const YAML::Node list = fields.at("events");
        if (!list.IsSequence())
          fail(list, join(here, "events"), "expected a sequence of events, got " + shape_of(list));
        std::vector<DpEvent> events;
        for (std::size_t i = 0; i < list.size(); ++i)
          events.push_back(event(list[i], join(here, "events") + "[" + std::to_string(i) + "]"));
        return kind == "composed" ? DpEvent::composed(std::move(events))
                                  : DpEvent::one_of(std::move(events));
      }
      if (kind == "replace_one")
        return DpEvent::replace_one(event(fields.at("event"), join(here, "event")));
      if (kind == "repeat_until_accepted")
        return DpEvent::repeat_until_accepted(event(fields.at("event"), join(here, "event")),
                                              num("stop_probability"));
      // repeat_and_select
      return DpEvent::repeat_and_select(event(fields.at("event"), join(here, "event")), num("mean"),
                                        num("shape"));
    } catch (const InvalidArgument& e) {
      fail(body.IsNull() ? key : body, here, e.what());
    }
  }

 private:
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
