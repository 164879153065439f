// A configuration problem as the user reads it: "file:line:col: path.to.key: message".
#include "dptune/host/diagnostic.hpp"

#include <string>
#include <utility>

namespace dptune::host {

std::string SourceLocation::to_string() const {
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {
std::string compose(const SourceLocation& where, const std::string& key_path,
                    const std::string& message) {
  std::string text = where.to_string() + ": ";
  if (!key_path.empty()) text += key_path + ": ";
  return text + message;
}
}  // namespace

ConfigDiagnostic::ConfigDiagnostic(SourceLocation where, std::string key_path, std::string message)
    : dptune::ConfigError(compose(where, key_path, message)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)) {}

}  // namespace dptune::host
