// The quick set's size knob.  DPTUNE_TEST_LIGHT=1 is set for every doctest case of a plain `ctest`
// (the quick set; cmake/DptuneSlowFilter.cmake) and for the sanitizer pass of scripts/test.sh; a
// test whose size only buys statistical power or length then runs a smaller instance of the same
// code paths.  `ctest -C slow` (scripts/test.sh's plain pass, CI) runs every case at full size.
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
