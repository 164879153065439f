#include "mpi/mpi_link.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "dptune/errors.hpp"
#include "run/mpi_wire.hpp"

namespace dptune::host::mpi {

namespace {
Link* the_link = nullptr;
}  // namespace

struct Link::Pending {
  std::string buffer;
  MPI_Request request = MPI_REQUEST_NULL;
};

Link::Link() {
  timeout();  // a malformed DPTUNE_MPI_TIMEOUT is refused before MPI starts
  int initialised = 0;
  MPI_Initialized(&initialised);
  int provided = MPI_THREAD_SINGLE;
  if (!initialised && MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != 0)
    throw dptune::Error("MPI_Init_thread failed");
  if (initialised) MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED)
    throw dptune::Error(
        "the MPI library does not offer MPI_THREAD_SERIALIZED, which the MPI executor needs");
  // A failed call returns its code instead of ending the job, so that it becomes a clear error.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Link& Link::get() {
  static Link link;
  the_link = &link;
  return link;
}

bool Link::started() { return the_link != nullptr; }

// The request is completed by MPI_Test in progress(): polled, never waited on, so that a lost peer
// cannot block this rank.
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
void Link::send(int dest, int tag, std::string payload) {
  auto p = std::make_unique<Pending>();
  p->buffer = std::move(payload);
  const int rc = MPI_Isend(p->buffer.data(), static_cast<int>(p->buffer.size()), MPI_BYTE, dest,
                           tag, MPI_COMM_WORLD, &p->request);
  if (rc != MPI_SUCCESS)
    throw dptune::Error("MPI: sending a " + std::string(tag_name(tag)) + " message to rank " +
                        std::to_string(dest) + " failed (MPI error " + std::to_string(rc) + ")");
  sends_.push_back(std::move(p));
}
// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

std::optional<Message> Link::poll() {
  progress();
  int flag = 0;
  MPI_Status status;
  if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status) != MPI_SUCCESS)
    throw dptune::Error("MPI: probing for messages failed");
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.payload.resize(static_cast<std::size_t>(count));
  // The message has arrived (probed), so this receive completes at once.
  if (MPI_Recv(m.payload.data(), count, MPI_BYTE, m.source, m.tag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE) != MPI_SUCCESS)
    throw dptune::Error("MPI: receiving a message from rank " + std::to_string(m.source) +
                        " failed");
  return m;
}

bool Link::progress() {
  while (!sends_.empty()) {
    int done = 0;
    MPI_Test(&sends_.front()->request, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    sends_.pop_front();
  }
  // Later sends may complete before the first: test them too.
  std::erase_if(sends_, [](const std::unique_ptr<Pending>& p) {
    int done = 0;
    MPI_Test(&p->request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
  return sends_.empty();
}

bool Link::flush(Clock::time_point deadline) {
  while (!progress()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void Link::stop_workers() {
  // Also when rank 0 failed before start_mpi_run: the workers wait for its init until told.
  if (rank_ != 0 || workers_stopped_) return;
  workers_stopped_ = true;
  for (int r = 1; r < size_; ++r) send(r, kStop, "");
}

std::vector<int> Link::await_byes(Clock::time_point deadline) {
  std::vector<char> said(static_cast<std::size_t>(size_), 0);
  int waiting = size_ - 1;
  while (waiting > 0 && Clock::now() <= deadline) {
    // Heartbeats and late results still in flight are dropped: the study is over.
    while (auto m = poll())
      if (m->tag == kBye && !said.at(static_cast<std::size_t>(m->source))) {
        said[static_cast<std::size_t>(m->source)] = 1;
        --waiting;
      }
    if (waiting > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<int> silent;
  for (int r = 1; r < size_; ++r)
    if (!said[static_cast<std::size_t>(r)]) silent.push_back(r);
  return silent;
}

namespace {
/// MPI_Finalize waits for every rank (Open MPI fences them): a rank stopped in it would hold the
/// job forever, so a watchdog ends this process once the deadline has passed.
void finalize_within(std::chrono::duration<double> limit, int exit_code) {
  std::thread([limit, exit_code] {
    std::this_thread::sleep_for(limit);
    std::cerr << "dptune: MPI_Finalize did not return within " << static_cast<int>(limit.count())
              << " s (DPTUNE_MPI_TIMEOUT); leaving without it\n";
    std::_Exit(exit_code == 0 ? 1 : exit_code);
  }).detach();
  MPI_Finalize();
}
}  // namespace

void Link::finalize(int exit_code) noexcept {
  try {
    if (!broken_) {
      stop_workers();
      const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout());
      // Rank 0 waits for every worker's bye: a worker that stopped answering after the last
      // task (SIGSTOP, a hung node) would otherwise hold MPI_Finalize, and the job, forever.
      const std::vector<int> silent = rank_ == 0 ? await_byes(deadline) : std::vector<int>{};
      if (silent.empty() && flush(deadline)) {
        // A worker allows longer: rank 0 may still be waiting for another worker's bye, and its
        // message naming that rank is the one to see.
        finalize_within(rank_ == 0 ? timeout() : 3 * timeout(), exit_code);
        return;
      }
      for (const int r : silent)
        std::cerr << "dptune: MPI rank " << r << " did not answer rank 0's stop within "
                  << static_cast<int>(timeout().count()) << " s (DPTUNE_MPI_TIMEOUT)"
                  << (exit_code == 0 ? "; the study finished and its results are written" : "")
                  << "; ending the job\n";
    }
  } catch (...) {
  }
  // A lost rank, or sends that never completed: finalising would wait for them.
  MPI_Abort(MPI_COMM_WORLD, exit_code == 0 ? 1 : exit_code);
}

std::chrono::duration<double> timeout() {
  static const double seconds = [] {
    const char* text = std::getenv("DPTUNE_MPI_TIMEOUT");
    if (!text || !*text) return 60.0;
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (*end != '\0' || !(v > 0) || !std::isfinite(v))
      throw dptune::ConfigError("DPTUNE_MPI_TIMEOUT: '" + std::string(text) +
                                "' is not a positive number of seconds");
    return v;
  }();
  return std::chrono::duration<double>(seconds);
}

std::chrono::duration<double> beat_interval() {
  return std::min(std::chrono::duration<double>(1.0), timeout() / 10.0);
}

}  // namespace dptune::host::mpi
