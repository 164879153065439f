// dptune host: how `dptune run` asks the runner to run a pipeline.
#pragma once

#include <string>

namespace dptune::host {

struct RunOptions {
  bool show_progress = true;  // only ever shown on a terminal
  bool verbose = false;       // the console shows every derivation in full
  /// Keep the study store (study.db in the output folder): `dptune run` does.  A folder
  /// holding a study is refused unless `resume` (continue it) or `overwrite` (start again).
  bool study = false;
  bool resume = false;
  bool overwrite = false;
  /// Run although `dptune audit` certified a violation of a mechanism in a configuration the run
  /// may use (the report says so); refused by default.
  bool allow_audit_violation = false;
  /// The shell command that continues this study (printed when the run is interrupted); empty:
  /// a generic "dptune run PIPELINE --resume".
  std::string resume_command;
};

}  // namespace dptune::host
