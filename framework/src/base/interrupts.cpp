// SIGINT/SIGTERM turned into a clean stop at the next cancellation point of a study run.
#include "base/interrupts.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace dptune::host {

namespace {

// Read by the worker threads at every cancellation point: a lock-free atomic, which a signal
// handler may also use (C++17 [support.signal]).
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_interrupt(int signal_number) {
  if (g_signal.load() != 0) _exit(128 + signal_number);  // the second one: at once
  g_signal.store(signal_number);
  static const char kMessage[] =
      "\ndptune: interrupted: finishing the runs in flight (press Ctrl-C again to exit at once)\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
}

struct sigaction g_old_int, g_old_term;

}  // namespace

void install_interrupt_handlers() {
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

void restore_interrupt_handlers() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int interrupt_signal() { return g_signal.load(); }

void check_interrupt() {
  if (const int s = g_signal.load()) throw Interrupted(s);
}

}  // namespace dptune::host
