// dptune host: what a finished (or interrupted) run wrote, as the runner returns it and the report
// fills it in.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace dptune::host {

struct RunSummary {
  std::filesystem::path output_dir;
  std::size_t trials = 0;
  std::vector<std::string> files;  // written, relative to output_dir
  /// SIGINT or SIGTERM stopped the run (study runs only): the partial report was written.
  int interrupted_signal = 0;
};

}  // namespace dptune::host
