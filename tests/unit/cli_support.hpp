// Test helper: runs the dptune binary of this build and captures exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "build_paths.hpp"

namespace dptune_test {

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// A fresh empty folder under the build tree's temporary area.
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::path(dptune_test::build_paths::binary_dir) / "test_tmp" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Runs `dptune ARGS` (ARGS already shell-quoted) from the source folder.
inline CommandResult run_dptune(const std::string& args, const std::string& tag) {
  const auto dir = fresh_dir("cli_" + tag);
  const std::string cmd = "cd '" + std::string(dptune_test::build_paths::source_dir) + "' && '" +
                          std::string(dptune_test::build_paths::binary_dir) + "/bin/dptune' " +
                          args + " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() +
                          "'";
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

}  // namespace dptune_test
