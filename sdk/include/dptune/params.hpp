// dptune SDK: Params, one candidate's named values.
#pragma once

#include <boost/config.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace dptune {

/// A parameter value.  Integers are 64-bit; doubles are finite unless a schema allows otherwise.
using Value = std::variant<double, std::int64_t, bool, std::string>;

/// Renders a value the way a user would write it in YAML (strings unquoted, doubles round-trip
/// exactly).
std::string to_string(const Value& value);
/// The type name used in messages: "float", "int", "bool" or "string".
const char* type_name(const Value& value);

/// Named values, ordered by name so that printing and hashing are deterministic.
class BOOST_SYMBOL_VISIBLE Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<const std::string, Value>> values) : values_(values) {}

  void set(const std::string& name, Value value) { values_[name] = std::move(value); }
  bool contains(const std::string& name) const { return values_.count(name) != 0; }
  const Value& at(const std::string& name) const;

  /// Typed getters throw InvalidArgument naming the parameter when it is missing or of another
  /// type. get_double accepts an int value (an int is a valid float).
  double get_double(const std::string& name) const;
  std::int64_t get_int(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;

  /// Values of `overrides` replace ours.
  Params merged(const Params& overrides) const;

  const std::map<std::string, Value>& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  std::size_t size() const { return values_.size(); }
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }
  bool operator==(const Params& other) const = default;

  /// "{b: 0.5, C: 3}"
  std::string to_string() const;

 private:
  std::map<std::string, Value> values_;
};

/// A list of finite numbers given in a string parameter (a schema has no list type), written
/// "0.25, 1, 3" or "[0.25, 1, 3]".  Throws InvalidArgument starting with `what` for an empty entry,
/// an entry that is not a finite number, or an empty list.
std::vector<double> parse_number_list(const std::string& text, const std::string& what);

}  // namespace dptune
