// dptune SDK: parameter schemas.  A plugin declares its parameters; the *host* validates every
// `params:` block against the schema before anything runs and hands the plugin complete, typed
// Params.
#pragma once

#include <boost/config.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dptune/params.hpp"

namespace dptune {

enum class ParamType { Float, Int, Bool, String };
const char* to_string(ParamType type);

struct BOOST_SYMBOL_VISIBLE ParamSpec {
  std::string name;
  ParamType type = ParamType::Float;
  std::string doc;
  /// Absent: the parameter is required.
  std::optional<Value> default_value;
  /// Inclusive bounds for Float and Int unless the matching *_open flag says the bound is excluded.
  std::optional<double> minimum;
  std::optional<double> maximum;
  bool minimum_exclusive = false;
  bool maximum_exclusive = false;
  /// For String: the allowed values (empty: any string).
  std::vector<std::string> choices;
};

/// A plugin's parameters, built fluently:
///   ParamSchema{}.add_float("b", "total noise").min_exclusive(0).default_to(1.0)
class BOOST_SYMBOL_VISIBLE ParamSchema {
 public:
  ParamSchema& add(ParamSpec spec);
  ParamSchema& add_float(std::string name, std::string doc);
  ParamSchema& add_int(std::string name, std::string doc);
  ParamSchema& add_bool(std::string name, std::string doc);
  ParamSchema& add_string(std::string name, std::string doc);
  // Modifiers of the most recently added parameter.
  ParamSchema& default_to(Value value);
  ParamSchema& min(double value);
  ParamSchema& min_exclusive(double value);
  ParamSchema& max(double value);
  ParamSchema& max_exclusive(double value);
  ParamSchema& one_of(std::vector<std::string> choices);

  const std::vector<ParamSpec>& specs() const { return specs_; }
  const ParamSpec* find(const std::string& name) const;

  /// Checks `value` against `spec` (type, range, choices) and returns it converted to the spec's
  /// type (an int given for a float becomes a double).  Throws InvalidArgument with a message of
  /// the form "expected float in [0, 1], got 3".
  static Value check(const ParamSpec& spec, const Value& value);

  /// Checks every value, rejects unknown names, fills in defaults, rejects missing required
  /// parameters. Messages name the parameter.  The host does this with file positions; plugins may
  /// call it in tests.
  Params complete(const Params& given) const;

  /// "expected float in (0, inf)" style description of what the spec accepts.
  static std::string describe_domain(const ParamSpec& spec);

 private:
  ParamSpec& last();
  std::vector<ParamSpec> specs_;
};

}  // namespace dptune
