#include "command/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace dptune::command {

std::string ProcessResult::status() const {
  if (!started) return "could not be started: " + start_error;
  if (timed_out) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", seconds);
    return std::string("did not finish within its timeout (killed after ") + buffer + " s)";
  }
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return "was killed by signal " + std::to_string(signal) + " (SIG" + (name ? name : "?") + ")";
  }
  return "exited with code " + std::to_string(exit_code);
}

namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) == 0) read = fds[0], write = fds[1];
  }
  ~Pipe() {
    if (read >= 0) close(read);
    if (write >= 0) close(write);
  }
  void close_write() {
    if (write >= 0) close(write);
    write = -1;
  }
};

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

/// In the child, between fork and execve: async-signal-safe calls only.
[[noreturn]] void exec_child(const ProcessSpec& spec, int in, int out, int err, pid_t parent,
                             char* const* argv, char* const* envp, int report) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
  if (!spec.working_directory.empty() && chdir(spec.working_directory.c_str()) != 0) {
    const int e = errno;
    (void)!write(report, &e, sizeof e);
    _exit(127);
  }
  execve(spec.executable.c_str(), argv, envp);
  const int e = errno;
  (void)!write(report, &e, sizeof e);
  _exit(127);
}

/// The read end of a pipe that already holds all of `text`, its write end closed, so the
/// program reads `text` and then end-of-file.  Filled before the program starts, so no write can
/// meet a closed reader (no SIGPIPE) and no thread is needed; the pipe is grown to fit (Linux
/// F_SETPIPE_SZ, up to fs.pipe-max-size, 1 MiB by default).  -1 with `why` on failure.
int filled_pipe(const std::string& text, std::string& why) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  const int capacity = fcntl(fds[1], F_GETPIPE_SZ);
  if (capacity >= 0 && text.size() > static_cast<std::size_t>(capacity))
    fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(std::min<std::size_t>(text.size(), 1 << 30)));
  std::size_t done = 0;
  const int flags = fcntl(fds[1], F_GETFL);
  fcntl(fds[1], F_SETFL, flags | O_NONBLOCK);  // a request larger than the pipe: fail, not hang
  while (done < text.size()) {
    const ssize_t wrote = write(fds[1], text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      why = "the request (" + std::to_string(text.size()) +
            " bytes) does not fit in a pipe: " + std::strerror(errno);
      close(fds[0]);
      close(fds[1]);
      return -1;
    }
    done += static_cast<std::size_t>(wrote);
  }
  close(fds[1]);
  return fds[0];
}

/// Reads the program's standard output and error until both close or the deadline passes:
/// stdout kept up to spec.max_stdout (then marked truncated), stderr's last spec.stderr_tail
/// bytes (trimmed as it grows).
void drain_output(const ProcessSpec& spec, int out_fd, int err_fd, Clock::time_point deadline,
                  ProcessResult& result) {
  const auto remaining_ms = [&] {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::max<long long>(0, std::min<long long>(left.count(), 1000)));
  };
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0 && Clock::now() < deadline) {
    if (poll(fds, 2, remaining_ms()) < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = read(fds[k].fd, buffer, sizeof buffer);
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        fds[k].fd = -1;
        --open_fds;
        continue;
      }
      std::string& sink = k == 0 ? result.out : result.err;
      sink.append(buffer, static_cast<std::size_t>(got));
      if (k == 1 && sink.size() > 2 * spec.stderr_tail)
        sink.erase(0, sink.size() - spec.stderr_tail);
      if (k == 0 && sink.size() > spec.max_stdout) {
        result.stdout_truncated = true;
        sink.resize(spec.max_stdout);
      }
    }
  }
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult result;
  const auto started = Clock::now();
  std::vector<std::string> argv_strings = spec.argv, env_strings;
  for (char** e = environ; e && *e; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), spec.extra_environment.begin(),
                     spec.extra_environment.end());
  const auto argv = pointers(argv_strings);
  const auto envp = pointers(env_strings);

  std::string why;
  const int in = spec.stdin_file.empty() ? filled_pipe(spec.stdin_text, why)
                                         : open(spec.stdin_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    result.start_error =
        spec.stdin_file.empty() ? why : spec.stdin_file + ": " + std::strerror(errno);
    return result;
  }
  Pipe out, err, report;  // report: execve's errno, or EOF when execve succeeded (close-on-exec)
  if (out.read < 0 || err.read < 0 || report.read < 0) {
    close(in);
    result.start_error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0)
    exec_child(spec, in, out.write, err.write, parent, argv.data(), envp.data(), report.write);
  close(in);
  if (pid < 0) {
    result.start_error = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  setpgid(pid, pid);  // also here: no race with a kill(-pid) below
  out.close_write();
  err.close_write();
  report.close_write();
  int exec_errno = 0;
  if (read(report.read, &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    waitpid(pid, nullptr, 0);
    result.start_error = spec.executable + ": " + std::strerror(exec_errno);
    return result;
  }
  result.started = true;

  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(spec.timeout_seconds));
  drain_output(spec, out.read, err.read, deadline, result);
  int status = 0;
  bool reaped = false;
  while (Clock::now() < deadline) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) {
      reaped = done == pid;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!reaped && waitpid(pid, &status, WNOHANG) == pid) reaped = true;
  kill(-pid, SIGKILL);  // the group: whatever the program left behind, or all of it on timeout
  if (!reaped) {
    result.timed_out = true;
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (result.err.size() > spec.stderr_tail)
    result.err.erase(0, result.err.size() - spec.stderr_tail);
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (!result.timed_out) {
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace dptune::command
