// dptune host (internal): this process's place in an MPI job, and non-blocking messages.  Every
// wait in the MPI executor polls (MPI_Iprobe, MPI_Test) against a deadline: a lost rank becomes an
// error, never a hang (docs/mpi.md).  Only one thread calls MPI at a time (MPI_THREAD_SERIALIZED):
// rank 0's service thread while an executor lives, the main thread otherwise.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
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

/// How long a rank may stay silent before it counts as lost: $DPTUNE_MPI_TIMEOUT seconds
/// (default 60).  Every rank sends a heartbeat at a tenth of it (at most every second).
std::chrono::duration<double> timeout();
std::chrono::duration<double> beat_interval();

}  // namespace dptune::host::mpi
