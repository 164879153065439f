// dptune SDK: error types.  They live in the SDK library (not in a plugin), so an exception object
// of these types never points into a plugin's code and survives the plugin's unloading.
#pragma once

#include <boost/config.hpp>
#include <stdexcept>
#include <string>

namespace dptune {

/// Base of every error dptune throws on purpose.
class BOOST_SYMBOL_VISIBLE Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ~Error() override;
};

/// A caller passed a value outside its documented domain.  The message names the argument.
class BOOST_SYMBOL_VISIBLE InvalidArgument : public Error {
 public:
  using Error::Error;
  ~InvalidArgument() override;
};

/// A configuration (pipeline, CLI, schema) is wrong; the CLI turns it into exit code 2.
class BOOST_SYMBOL_VISIBLE ConfigError : public Error {
 public:
  using Error::Error;
  ~ConfigError() override;
};

/// A plugin failed: the message names plugin, library file and the call that failed.
class BOOST_SYMBOL_VISIBLE PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
};

/// A privacy computation cannot be done soundly (unsupported event, non-convergence): never guess.
class BOOST_SYMBOL_VISIBLE PrivacyError : public Error {
 public:
  using Error::Error;
  ~PrivacyError() override;
};

/// Throws InvalidArgument("<what>: <argument> ...") unless `condition` holds.
void require(bool condition, const std::string& message);

}  // namespace dptune
