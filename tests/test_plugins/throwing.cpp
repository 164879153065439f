// A mechanism that throws on purpose, from its constructor or its methods, with several kinds of
// exceptions.  params: where = create | methods | nowhere; what = runtime_error | custom | int |
// plugin_error_subclass | config_error | privacy_error | invalid_argument.
#include <stdexcept>
#include <string>
#include <vector>

#include "dptune/plugin.hpp"

namespace {

/// Defined in the plugin, not derived from anything in the SDK: the host must copy its message.
class CustomFailure : public std::exception {
 public:
  explicit CustomFailure(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

/// A PluginError subclass defined in the plugin: it must not pass through the host unchanged.
class OwnPluginError : public dptune::PluginError {
 public:
  using dptune::PluginError::PluginError;
};

[[noreturn]] void fail(const std::string& what, const std::string& where) {
  const std::string message = "test_throwing " + what + " in " + where;
  if (what == "runtime_error") throw std::runtime_error(message);
  if (what == "custom") throw CustomFailure(message);
  if (what == "int") throw 42;
  if (what == "plugin_error_subclass") throw OwnPluginError(message);
  if (what == "config_error") throw dptune::ConfigError(message);
  if (what == "privacy_error") throw dptune::PrivacyError(message);
  throw dptune::InvalidArgument(message);
}

class ThrowingMechanism final : public dptune::Mechanism {
 public:
  explicit ThrowingMechanism(const dptune::Params& params)
      : where_(params.get_string("where")), what_(params.get_string("what")) {
    if (where_ == "create") fail(what_, "constructor");
  }
  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    schema.add_string("where", "where to throw").one_of({"create", "methods", "nowhere"});
    schema.add_string("what", "what to throw")
        .one_of({"runtime_error", "custom", "int", "plugin_error_subclass", "config_error",
                 "privacy_error", "invalid_argument"});
    return schema;
  }

  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator&) const override {
    if (where_ == "methods") fail(what_, "release");
    return {values.begin(), values.end()};
  }
  dptune::DpEvent event() const override {
    if (where_ == "methods") fail(what_, "event");
    return dptune::DpEvent::pure_dp(1);
  }

 private:
  std::string where_, what_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, test_throwing, ThrowingMechanism, "0.1.0", "test: throws on purpose")
