// This build's paths for the tests that read the source tree or load built plugins.  Each test
// executable defines the ones it names in its CMakeLists.txt (dptune_test_build_paths in
// cmake/DptuneTests.cmake), in a source generated in the build tree; naming one here that the
// executable was not given is a link error.  They are not compile definitions, so that the test
// sources compile to the same objects in every checkout and ccache shares them (see
// cmake/DptuneBuildPaths.cmake).
#pragma once

namespace dptune_test::build_paths {

extern const char* const source_dir;        ///< the source tree (PROJECT_SOURCE_DIR)
extern const char* const binary_dir;        ///< the build tree (PROJECT_BINARY_DIR)
extern const char* const built_plugin_dir;  ///< <build>/lib/dptune/plugins: the built-in plugins
extern const char* const test_plugin_dir;   ///< tests/test_plugins' output: one folder a scenario
/// <install prefix>/lib/dptune/plugins, as the host is given it (the default search path's test)
extern const char* const install_plugin_dir;
extern const char* const audit_plugin_dir;          ///< tests/audit's broken and example plugins
extern const char* const trainer_audit_dir;         ///< tests/audit/trainers in the source tree
extern const char* const trainer_audit_plugin_dir;  ///< tests/audit/trainers' broken trainers
// One built plugin library each (the file itself).
extern const char* const expost_plugin;
extern const char* const subsampled_plugin;
extern const char* const repetition_plugin;
extern const char* const repetition_fig7_module;
extern const char* const rdp_plugin;
extern const char* const dp_hypo_plugin;
extern const char* const dp_hype_plugin;
extern const char* const svt_doubling_plugin;

}  // namespace dptune_test::build_paths
