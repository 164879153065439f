// Checks shared by the fuzz targets.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dptune/host/config.hpp"

namespace dptune::fuzz {

/// An error about `file` must point into it: line 0 (the whole file) or a line of the text, where
/// yaml-cpp may also point one line past the last at the end of the input.
inline void check_location(const dptune::host::ConfigDiagnostic& e, const std::string& file,
                           const std::string& text) {
  const auto& where = e.where();
  if (where.file != file) return;  // e.g. a statistics file the pipeline names
  const long lines = 1 + std::count(text.begin(), text.end(), '\n');
  const bool line_ok =
      where.line == 0 ? where.column == 0 : where.line >= 1 && where.line <= lines + 1;
  if (!line_ok || where.column < 0 || e.message().empty()) {
    std::fprintf(stderr, "badly located error (text has %ld lines): %s\n", lines, e.what());
    std::abort();
  }
}

}  // namespace dptune::fuzz
