#include "dptune/params.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "dptune/errors.hpp"

namespace dptune {

namespace {
std::string format_double(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  // Keep a float recognisable as a float in YAML ("3" would read back as an int).
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}
}  // namespace

std::string to_string(const Value& value) {
  struct Visitor {
    std::string operator()(double v) const { return format_double(v); }
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return v; }
  };
  return std::visit(Visitor{}, value);
}

const char* type_name(const Value& value) {
  switch (value.index()) {
    case 0:
      return "float";
    case 1:
      return "int";
    case 2:
      return "bool";
    default:
      return "string";
  }
}

const Value& Params::at(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw InvalidArgument("missing parameter '" + name + "'");
  return it->second;
}

double Params::get_double(const std::string& name) const {
  const Value& v = at(name);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  throw InvalidArgument("parameter '" + name + "': expected float, got " + type_name(v));
}

std::int64_t Params::get_int(const std::string& name) const {
  const Value& v = at(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  throw InvalidArgument("parameter '" + name + "': expected int, got " + type_name(v));
}

bool Params::get_bool(const std::string& name) const {
  const Value& v = at(name);
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  throw InvalidArgument("parameter '" + name + "': expected bool, got " + type_name(v));
}

const std::string& Params::get_string(const std::string& name) const {
  const Value& v = at(name);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw InvalidArgument("parameter '" + name + "': expected string, got " + type_name(v));
}

Params Params::merged(const Params& overrides) const {
  Params result = *this;
  for (const auto& [name, value] : overrides.values_) result.values_[name] = value;
  return result;
}

std::string Params::to_string() const {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : values_) {
    if (!first) out += ", ";
    first = false;
    out += name + ": " + dptune::to_string(value);
  }
  return out + "}";
}

std::vector<double> parse_number_list(const std::string& text, const std::string& what) {
  const auto trim = [](const std::string& s) {
    const auto first = s.find_first_not_of(" \t");
    return first == std::string::npos ? std::string()
                                      : s.substr(first, s.find_last_not_of(" \t") - first + 1);
  };
  std::string body = trim(text);
  if (body.size() >= 2 && body.front() == '[' && body.back() == ']')
    body = body.substr(1, body.size() - 2);
  if (trim(body).empty())
    throw InvalidArgument(what + ": expected a comma-separated list of numbers, got '" + text +
                          "'");
  std::vector<double> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t comma = std::min(body.find(',', pos), body.size());
    const std::string item = trim(body.substr(pos, comma - pos));
    if (item.empty()) throw InvalidArgument(what + ": empty entry in '" + text + "'");
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(item.c_str(), &end);
    if (errno == ERANGE || end != item.c_str() + item.size() || !std::isfinite(value))
      throw InvalidArgument(what + ": '" + item + "' is not a number (in '" + text + "')");
    out.push_back(value);
    if (comma == body.size()) return out;
    pos = comma + 1;
  }
}

}  // namespace dptune
