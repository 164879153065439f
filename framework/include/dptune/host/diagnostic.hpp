// dptune host: where a pipeline's text says something, and the error every configuration problem
// becomes (exit code 2).
#pragma once

#include <string>

#include "dptune/errors.hpp"

namespace dptune::host {

/// 1-based position in a file; line 0 means "no position" (e.g. a value given with --set).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string to_string() const;  // "file:line:col" or "file" when line == 0
};

/// The error every configuration problem becomes: "file:line:col: path.to.key: message".
/// The CLI prints what() and exits with code 2.
class ConfigDiagnostic : public dptune::ConfigError {
 public:
  ConfigDiagnostic(SourceLocation where, std::string key_path, std::string message);
  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string key_path_, message_;
};

/// One `--set key.path=value` override, applied to the YAML tree before validation.
struct Override {
  std::string key_path;
  std::string value;  // parsed as a YAML scalar or flow node
};

}  // namespace dptune::host
