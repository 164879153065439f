#include "dptune/errors.hpp"

namespace dptune {

// Out-of-line destructors anchor the type_info of every error type in the SDK library, so
// exceptions compare equal across plugin boundaries and outlive any plugin.
Error::~Error() = default;
InvalidArgument::~InvalidArgument() = default;
ConfigError::~ConfigError() = default;
PluginError::~PluginError() = default;
PrivacyError::~PrivacyError() = default;

void require(bool condition, const std::string& message) {
  if (!condition) throw InvalidArgument(message);
}

}  // namespace dptune
