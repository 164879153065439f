// The sanitizer pass's size knob.  scripts/test.sh runs the quick set under AddressSanitizer and
// UndefinedBehaviorSanitizer with DPTUNE_TEST_LIGHT=1; a test whose size only buys statistical
// power or length then runs a smaller instance of the same code paths, which the sanitizers check
// just as well.  The plain pass (no DPTUNE_TEST_LIGHT) runs every test at its full size.
#pragma once

#include <cstdlib>
#include <string_view>

namespace dptune_test {

/// True when DPTUNE_TEST_LIGHT is 1.
inline bool light_sizes() {
  const char* value = std::getenv("DPTUNE_TEST_LIGHT");
  return value != nullptr && std::string_view(value) == "1";
}

/// `full` in the plain pass, `light` under DPTUNE_TEST_LIGHT=1.
template <class T>
T full_or_light(T full, T light) {
  return light_sizes() ? light : full;
}

}  // namespace dptune_test
