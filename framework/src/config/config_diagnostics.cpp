// Pipeline diagnostics (file:line:column: key: message) and the names of component kinds.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"

namespace dptune::host {

// ---- diagnostics --------------------------------------------------------------------------------

const char* to_string(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::Data:
      return "data";
    case ComponentKind::Mechanism:
      return "mechanism";
    case ComponentKind::Accountant:
      return "accountant";
    case ComponentKind::Utility:
      return "utility";
    case ComponentKind::Trainer:
      return "trainer";
    case ComponentKind::Tuner:
      return "tuner";
  }
  return "?";
}

}  // namespace dptune::host
