// dptune host (internal): SIGINT/SIGTERM during a study run.  The handlers only record the signal;
// worker threads and plugin calls check it at their cancellation points and unwind with
// Interrupted, so that the study store keeps every finished evaluation.
#pragma once

#include <string>

#include "dptune/errors.hpp"

namespace dptune::host {

/// Thrown at the next cancellation point after SIGINT/SIGTERM: between evaluations, never inside
/// one (in-flight runs finish and are stored).
class Interrupted : public dptune::Error {
 public:
  explicit Interrupted(int signal_number)
      : dptune::Error("interrupted by signal " + std::to_string(signal_number)),
        signal_(signal_number) {}
  int signal_number() const { return signal_; }

 private:
  int signal_;
};

/// The first SIGINT/SIGTERM sets the flag (and the cancellation points throw Interrupted); a
/// second one exits at once with 128 + signal (SQLite keeps the database consistent).
void install_interrupt_handlers();
void restore_interrupt_handlers();
/// 0 when no signal arrived, else the signal number.
int interrupt_signal();
/// Throws Interrupted when a signal arrived.
void check_interrupt();

}  // namespace dptune::host
