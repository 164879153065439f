// dptune host (internal): this process's place in an MPI job, and non-blocking messages.  Every
// wait in the MPI executor polls (MPI_Iprobe, MPI_Test) against a deadline: a lost rank becomes an
// error, never a hang (docs/mpi.md).  Only one thread calls MPI at a time (MPI_THREAD_SERIALIZED):
// rank 0's service thread while an executor lives, the main thread otherwise.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dptune/host/executor.hpp"

namespace dptune::host::mpi {

using Clock = std::chrono::steady_clock;

struct Message {
  int source = 0;
  int tag = 0;
  std::string payload;
};

class Link {
 public:
  /// The process's link, initialising MPI on first use.
  static Link& get();
  /// Whether get() was ever called (finish_mpi has nothing to do otherwise).
  static bool started();

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Queues `payload` to `dest` (MPI_Isend; the buffer is kept until the send completes).
  void send(int dest, int tag, std::string payload);
  /// A message that has arrived, if any (MPI_Iprobe, then receiving what is already there).
  std::optional<Message> poll();
  /// Completes what it can of the queued sends; true when none is left.
  bool progress();
  /// Polls the queued sends until all completed or `deadline`; true when all completed.
  bool flush(Clock::time_point deadline);

  /// A rank was lost: MPI_Finalize would wait for it, so the process ends with MPI_Abort.
  void mark_broken() { broken_ = true; }
  bool broken() const { return broken_; }
  /// Rank 0: sends stop to every worker once (they leave their loops and finalise).
  void stop_workers();

  /// Rank 0 (after stop_workers): polls until every worker said bye or `deadline`; the ranks
  /// that did not.
  std::vector<int> await_byes(Clock::time_point deadline);
  /// Ends MPI: rank 0 stops the workers and waits for their byes, then every rank finalises
  /// (bounded by the timeout); a broken link or a silent rank ends the job with MPI_Abort.
  void finalize(int exit_code) noexcept;

  /// Rank 0: the resolved pipeline every worker must have loaded too.
  void set_fingerprint(std::string text) { fingerprint_ = std::move(text); }
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  Link();
  struct Pending;
  int rank_ = 0, size_ = 1;
  bool broken_ = false, workers_stopped_ = false;
  std::deque<std::unique_ptr<Pending>> sends_;
  std::string fingerprint_;
};

/// The pause of a service loop that found nothing to do, between two non-blocking probes.  A
/// blocking MPI wait is no better: Open MPI's spins on the core (busy polling), taking it from the
/// runs.  The pause doubles from 50 µs to at most 2 ms while nothing happens and starts again at
/// 50 µs after any news, so a busy exchange (the secure aggregation's rounds) is served at once
/// and an idle rank wakes 500 times a second, not 2 000 (a fixed 500 µs skewed timings under
/// load).  Every deadline is checked between pauses, so none is late by more than 2 ms.
class Backoff {
 public:
  static constexpr Clock::duration kFirst = std::chrono::microseconds(50);
  static constexpr Clock::duration kLongest = std::chrono::milliseconds(2);
  /// The next pause (then twice as long, up to kLongest).
  Clock::duration next() {
    const Clock::duration pause = pause_;
    pause_ = std::min<Clock::duration>(2 * pause_, kLongest);
    return pause;
  }
  void reset() { pause_ = kFirst; }

 private:
  Clock::duration pause_ = kFirst;
};

/// Ends a service loop's pause early when another of the process's threads has news for it (a
/// finished run, a message to send, new runs to hand out): only MPI's arrivals wait for a probe.
class Doorbell {
 public:
  void ring() {
    {
      std::lock_guard lock(mutex_);
      rung_ = true;
    }
    wake_.notify_all();
  }
  /// Waits until rung or `pause` has passed; true when it was rung (the ring is then cleared).
  bool wait(Clock::duration pause) {
    std::unique_lock lock(mutex_);
    const bool rung = wake_.wait_for(lock, pause, [this] { return rung_; });
    rung_ = false;
    return rung;
  }
  /// One idle turn of a service loop: `idle` (nothing arrived) pauses for the backoff's next
  /// pause or until rung; news of either kind starts the backoff again.
  void pause_if_idle(bool idle, Backoff& backoff) {
    if (!idle || wait(backoff.next())) backoff.reset();
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool rung_ = false;
};

/// How long a rank may stay silent before it counts as lost: $DPTUNE_MPI_TIMEOUT seconds
/// (default 60).  Every rank sends a heartbeat at a tenth of it (at most every second).
std::chrono::duration<double> timeout();
std::chrono::duration<double> beat_interval();

}  // namespace dptune::host::mpi
