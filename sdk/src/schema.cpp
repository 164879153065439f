#include "dptune/schema.hpp"

#include <cmath>
#include <set>

#include "dptune/errors.hpp"

namespace dptune {

const char* to_string(ParamType type) {
  switch (type) {
    case ParamType::Float:
      return "float";
    case ParamType::Int:
      return "int";
    case ParamType::Bool:
      return "bool";
    case ParamType::String:
      return "string";
  }
  return "?";
}

ParamSchema& ParamSchema::add(ParamSpec spec) {
  require(!spec.name.empty(), "ParamSchema::add: empty parameter name");
  require(find(spec.name) == nullptr, "ParamSchema::add: duplicate parameter '" + spec.name + "'");
  specs_.push_back(std::move(spec));
  return *this;
}

ParamSchema& ParamSchema::add_float(std::string name, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::Float;
  spec.doc = std::move(doc);
  return add(std::move(spec));
}
ParamSchema& ParamSchema::add_int(std::string name, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::Int;
  spec.doc = std::move(doc);
  return add(std::move(spec));
}
ParamSchema& ParamSchema::add_bool(std::string name, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::Bool;
  spec.doc = std::move(doc);
  return add(std::move(spec));
}
ParamSchema& ParamSchema::add_string(std::string name, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::String;
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

ParamSpec& ParamSchema::last() {
  require(!specs_.empty(), "ParamSchema: modifier called before any add_*()");
  return specs_.back();
}

ParamSchema& ParamSchema::default_to(Value value) {
  ParamSpec& spec = last();
  spec.default_value = check(spec, value);
  return *this;
}
ParamSchema& ParamSchema::min(double value) {
  last().minimum = value;
  last().minimum_exclusive = false;
  return *this;
}
ParamSchema& ParamSchema::min_exclusive(double value) {
  last().minimum = value;
  last().minimum_exclusive = true;
  return *this;
}
ParamSchema& ParamSchema::max(double value) {
  last().maximum = value;
  last().maximum_exclusive = false;
  return *this;
}
ParamSchema& ParamSchema::max_exclusive(double value) {
  last().maximum = value;
  last().maximum_exclusive = true;
  return *this;
}
ParamSchema& ParamSchema::one_of(std::vector<std::string> choices) {
  last().choices = std::move(choices);
  return *this;
}

const ParamSpec* ParamSchema::find(const std::string& name) const {
  for (const auto& spec : specs_)
    if (spec.name == name) return &spec;
  return nullptr;
}

namespace {
std::string number(double v) { return to_string(Value{v}); }
std::string bound_text(double v, ParamType type) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (type == ParamType::Int) return std::to_string(static_cast<long long>(v));
  return number(v);
}
}  // namespace

std::string ParamSchema::describe_domain(const ParamSpec& spec) {
  std::string text = std::string("expected ") + dptune::to_string(spec.type);
  if (spec.type == ParamType::Float || spec.type == ParamType::Int) {
    if (spec.minimum || spec.maximum) {
      text += " in ";
      text += spec.minimum && !spec.minimum_exclusive ? "[" : "(";
      text += spec.minimum ? bound_text(*spec.minimum, spec.type) : "-inf";
      text += ", ";
      text += spec.maximum ? bound_text(*spec.maximum, spec.type) : "inf";
      text += spec.maximum && !spec.maximum_exclusive ? "]" : ")";
    }
  } else if (spec.type == ParamType::String && !spec.choices.empty()) {
    text += " one of {";
    for (std::size_t i = 0; i < spec.choices.size(); ++i) text += (i ? ", " : "") + spec.choices[i];
    text += "}";
  }
  return text;
}

Value ParamSchema::check(const ParamSpec& spec, const Value& value) {
  auto fail = [&](const std::string& found) {
    throw InvalidArgument(describe_domain(spec) + ", got " + found);
  };
  auto check_range = [&](double v, const std::string& shown) {
    if (!std::isfinite(v)) fail(shown);
    if (spec.minimum && (spec.minimum_exclusive ? v <= *spec.minimum : v < *spec.minimum))
      fail(shown);
    if (spec.maximum && (spec.maximum_exclusive ? v >= *spec.maximum : v > *spec.maximum))
      fail(shown);
  };
  switch (spec.type) {
    case ParamType::Float: {
      double v;
      if (const auto* d = std::get_if<double>(&value))
        v = *d;
      else if (const auto* i = std::get_if<std::int64_t>(&value))
        v = static_cast<double>(*i);
      else
        fail(std::string(type_name(value)) + " '" + to_string(value) + "'");
      check_range(v, to_string(value));
      return Value{v};
    }
    case ParamType::Int: {
      const auto* i = std::get_if<std::int64_t>(&value);
      if (!i) fail(std::string(type_name(value)) + " '" + to_string(value) + "'");
      check_range(static_cast<double>(*i), to_string(value));
      return value;
    }
    case ParamType::Bool:
      if (!std::holds_alternative<bool>(value))
        fail(std::string(type_name(value)) + " '" + to_string(value) + "'");
      return value;
    case ParamType::String: {
      const auto* s = std::get_if<std::string>(&value);
      if (!s) fail(std::string(type_name(value)) + " '" + to_string(value) + "'");
      if (!spec.choices.empty()) {
        bool found = false;
        for (const auto& c : spec.choices) found = found || c == *s;
        if (!found) fail("'" + *s + "'");
      }
      return value;
    }
  }
  return value;
}

Params ParamSchema::complete(const Params& given) const {
  Params result;
  for (const auto& [name, value] : given) {
    const ParamSpec* spec = find(name);
    if (!spec) throw InvalidArgument("unknown parameter '" + name + "'");
    try {
      result.set(name, check(*spec, value));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("parameter '" + name + "': " + e.what());
    }
  }
  for (const auto& spec : specs_) {
    if (result.contains(spec.name)) continue;
    if (!spec.default_value)
      throw InvalidArgument("missing required parameter '" + spec.name + "' (" + spec.doc + ")");
    result.set(spec.name, *spec.default_value);
  }
  return result;
}

}  // namespace dptune
