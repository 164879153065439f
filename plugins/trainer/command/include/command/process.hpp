// Running an external program without a shell: fork/execve with pipes, its own process group,
// a deadline, and the parent's death passed on (docs/command-trainer.md, "Processes").
#pragma once

#include <string>
#include <vector>

namespace dptune::command {

struct ProcessSpec {
  std::string executable;         // absolute path (resolved by the caller: execve, no PATH search)
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> extra_environment;  // "NAME=value", added to the inherited environment
  std::string working_directory;               // empty: inherit
  std::string stdin_file;                      // the program's standard input, if not empty
  /// Otherwise the program reads this text from a pipe filled before it starts: what it reads
  /// never touches a file system (the noise seed travels this way, docs/command-trainer.md).
  std::string stdin_text;
  double timeout_seconds = 600;
  std::size_t max_stdout = std::size_t{256} << 20;
  std::size_t stderr_tail = 4000;  // characters of stderr kept (the end)
};

struct ProcessResult {
  bool started = false;
  std::string start_error;  // why it did not start (errno text)
  bool timed_out = false;
  bool stdout_truncated = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  std::string out;     // standard output
  std::string err;     // the tail of standard error
  double seconds = 0;

  /// "exited with code 3", "was killed by signal 11 (SEGV)", "did not finish within 2 s" …
  std::string status() const;
  bool succeeded() const { return started && !timed_out && signal == 0 && exit_code == 0; }
};

/// Runs the program to completion or to its deadline.  Thread-safe (every descriptor it opens is
/// close-on-exec, so a program started by another thread never inherits this one's pipes).  On
/// the deadline the whole process group gets SIGKILL; after a normal exit too, so nothing it
/// started keeps running.  The child asks the kernel for SIGKILL when the thread that started it
/// dies (PR_SET_PDEATHSIG): a dptune ended by Ctrl-C or a signal takes its programs with it.
ProcessResult run_process(const ProcessSpec& spec);

}  // namespace dptune::command
