// Absolute paths this build of the host was configured with, defined in a source generated in the
// build tree (dptune_build_paths, cmake/DptuneBuildPaths.cmake) rather than as -D definitions on
// every host compile line, so that two checkouts compile the host's sources alike (ccache).
#pragma once

namespace dptune::build_paths {

/// <install prefix>/lib/dptune/plugins: searched when no plugin folder sits beside the executable.
/// Empty when the build has no install prefix (the fuzz targets).
extern const char* const install_plugin_dir;
/// The source tree's data/: the bundled data files' last fallback (a build-tree dptune).
/// Empty when none.
extern const char* const source_data_dir;

}  // namespace dptune::build_paths
