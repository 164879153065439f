// Helpers shared by the test-only plugins.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "dptune/plugin.hpp"

/// A load marker: when the library is loaded (its constructors run), it creates the file
/// $DPTUNE_TEST_MARKER_DIR/<TAG>.loaded.  Tests assert that rejected plugins never create theirs.
#define DPTUNE_TEST_LOAD_MARKER(TAG)                                      \
  namespace {                                                             \
  __attribute__((constructor)) void dptune_test_write_load_marker() {     \
    const char* dir = std::getenv("DPTUNE_TEST_MARKER_DIR");              \
    if (dir == nullptr || *dir == '\0') return;                           \
    const std::string file = std::string(dir) + "/" + (TAG) + ".loaded";  \
    if (std::FILE* out = std::fopen(file.c_str(), "w")) std::fclose(out); \
  }                                                                       \
  }

/// An export name like DPTUNE_PLUGIN's but with a chosen "dptune_v<major>_<minor>_cxx" head and
/// "_k_<kind>_n_<name>" tail, for plugins that must be rejected before they are loaded.
#define DPTUNE_TEST_ALIAS_NAME(HEAD, GXX_ABI, CXX11_ABI, TAIL) \
  DPTUNE_PP_CAT(DPTUNE_PP_CAT(DPTUNE_PP_CAT(DPTUNE_PP_CAT(HEAD, GXX_ABI), _), CXX11_ABI), TAIL)

namespace dptune_test {

/// The descriptor of a plugin that must never be loaded: it is only pointed to.
inline dptune::PluginDescriptor never_loaded_descriptor() { return {}; }

}  // namespace dptune_test
