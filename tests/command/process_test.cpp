// Process handling of the command trainer: exit codes, signals, timeouts that kill the whole
// process group, start failures, concurrent runs.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../unit/temp_dir.hpp"
#include "command/process.hpp"

using namespace dptune::command;

namespace {

ProcessSpec shell(const std::string& script, const std::filesystem::path& in, double timeout = 10) {
  ProcessSpec spec;
  spec.executable = "/bin/sh";
  spec.argv = {"sh", "-c", script};
  spec.stdin_file = in.string();
  spec.timeout_seconds = timeout;
  return spec;
}

/// Running (not a zombie: a container's init may never reap the orphan).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_text, name, state;
  if (!(stat >> pid_text >> name >> state)) return false;
  return state != "Z" && state != "X";
}

}  // namespace

TEST_CASE("command process: output, stderr tail, exit code, environment, stdin, directory") {
  dptune_test::TempDir dir;
  const auto in = dir.write("in.txt", "request line\n");
  ProcessSpec spec = shell(
      "read line; echo \"got $line\"; echo \"$DPTUNE_X\"; pwd; echo to-stderr >&2; exit 3", in);
  spec.extra_environment = {"DPTUNE_X=value x"};
  spec.working_directory = dir.path().string();
  const ProcessResult r = run_process(spec);
  CHECK(r.started);
  CHECK(!r.succeeded());
  CHECK(r.exit_code == 3);
  CHECK(r.status() == "exited with code 3");
  CHECK(r.out == "got request line\nvalue x\n" + dir.path().string() + "\n");
  CHECK(r.err == "to-stderr\n");

  // Only the tail of a long stderr is kept.
  ProcessSpec noisy =
      shell("i=0; while [ $i -lt 3000 ]; do echo line $i >&2; i=$((i+1)); done", in);
  noisy.stderr_tail = 100;
  const ProcessResult tail = run_process(noisy);
  CHECK(tail.succeeded());
  CHECK(tail.err.size() == 100);
  CHECK(tail.err.substr(tail.err.size() - 10) == "line 2999\n");
}

TEST_CASE("command process: a crash by signal and a start failure") {
  dptune_test::TempDir dir;
  const auto in = dir.write("in.txt", "");
  const ProcessResult crash = run_process(shell("echo dying >&2; kill -SEGV $$", in));
  CHECK(crash.signal == SIGSEGV);
  CHECK(crash.status() == "was killed by signal 11 (SIGSEGV)");
  CHECK(crash.err == "dying\n");

  ProcessSpec missing = shell("true", in);
  missing.executable = (dir.path() / "no-such-program").string();
  const ProcessResult r = run_process(missing);
  CHECK(!r.started);
  CHECK(r.status() ==
        "could not be started: " + missing.executable + ": No such file or directory");
  ProcessSpec no_stdin = shell("true", dir.path() / "absent.json");
  CHECK(run_process(no_stdin).status().find("absent.json: No such file or directory") !=
        std::string::npos);
}

TEST_CASE("command process: a timeout kills the whole process group") {
  dptune_test::TempDir dir;
  const auto in = dir.write("in.txt", "");
  const auto pid_file = dir.path() / "grandchild.pid";
  // The grandchild keeps stdout open; both must die at the deadline.
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = run_process(
      shell("sleep 60 & echo $! > " + pid_file.string() + "; echo started; wait", in, 0.5));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.timed_out);
  CHECK(r.status().find("did not finish within its timeout") == 0);
  CHECK(r.out == "started\n");
  CHECK(seconds < 5);
  std::ifstream pid_in(pid_file);
  pid_t grandchild = 0;
  pid_in >> grandchild;
  REQUIRE(grandchild > 0);
  // Reaped by init after SIGKILL: give it a moment.
  for (int i = 0; i < 100 && alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(!alive(grandchild));
}

TEST_CASE("command process: runs in parallel threads do not block each other") {
  dptune_test::TempDir dir;
  const auto in = dir.write("in.txt", "");
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<ProcessResult> results(4);
  for (int k = 0; k < 4; ++k)
    threads.emplace_back(
        [&, k] { results[k] = run_process(shell("sleep 0.6; echo " + std::to_string(k), in)); });
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int k = 0; k < 4; ++k) {
    CHECK(results[k].succeeded());
    CHECK(results[k].out == std::to_string(k) + "\n");
  }
  CHECK(seconds < 2.0);  // 4 x 0.6 s in sequence would be 2.4 s
}

TEST_CASE("command process: stdin from a pipe, never a file, even past a pipe's default size") {
  // 200 000 bytes: more than a pipe's default 64 KiB, so the pipe must be grown before the
  // program starts; the program reads it all, then end-of-file.
  std::string text(200000, 'x');
  text += "\nend\n";
  ProcessSpec spec;
  spec.executable = "/bin/sh";
  spec.argv = {"sh", "-c", "wc -c; readlink /proc/self/fd/0 >&2"};
  spec.stdin_text = text;
  const ProcessResult r = run_process(spec);
  CHECK(r.succeeded());
  CHECK(r.out == std::to_string(text.size()) + "\n");
  CHECK(r.err.rfind("pipe:[", 0) == 0);  // not a path on a file system
  // A program that never reads its standard input does not hang or kill dptune (no SIGPIPE).
  spec.argv = {"sh", "-c", "exit 0"};
  CHECK(run_process(spec).succeeded());
}
