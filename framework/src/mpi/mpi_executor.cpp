// The MPI executor's rank 0 (docs/mpi.md): the tuner runs here; a service thread hands evaluation
// runs to the worker ranks one at a time as they ask (a request queue: a rank that finishes gets
// the next run, so a slow run idles nobody), collects their results, sends heartbeats and declares
// a rank lost when it stays silent past the timeout.  The main thread runs tasks too (and every
// task whose model is kept, since a model does not travel).  It is also the tuner's PeerChannel
// (ABI 2.9): the tuner's messages to its parts on the workers go out and come in through the same
// service thread, the only one that calls MPI.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "base/test_seams.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/data_scopes.hpp"
#include "mpi/mpi_link.hpp"
#include "run/mpi_wire.hpp"

namespace dptune::host {

namespace mpi {
namespace {

class MpiExecutor final : public Executor, public RemoteTasks, public dptune::PeerChannel {
 public:
  MpiExecutor()
      : link_(Link::get()),
        workers_(static_cast<std::size_t>(link_.size())),
        fingerprint_(link_.fingerprint()) {
    for (auto& w : workers_) w.last_heard = Clock::now();
    if (link_.size() > 1) service_ = std::thread([this] { serve(); });
  }
  ~MpiExecutor() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    doorbell_.ring();
    if (service_.joinable()) service_.join();
    // The workers leave their loops now (MPI_Finalize, at exit, waits for all ranks).
    try {
      link_.stop_workers();
    } catch (...) {
      link_.mark_broken();
    }
  }

  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    for (std::size_t i = 0; i < n; ++i) body(i);
  }
  std::size_t threads() const override { return 1; }
  std::string name() const override {
    return "mpi(" + std::to_string(link_.size()) + (link_.size() == 1 ? " rank)" : " ranks)");
  }
  RemoteTasks* remote() override { return this; }
  dptune::PeerChannel* peers() override { return link_.size() > 1 ? this : nullptr; }

  // ---- dptune::PeerChannel (rank 0's end) ----
  int rank() const override { return 0; }
  int size() const override { return link_.size(); }
  void send(int to, std::string payload) override;
  std::optional<dptune::PeerMessage> receive(double seconds) override;

  void run(const std::vector<RemoteTask>& tasks, const std::vector<char>& local_only,
           const std::function<void(std::size_t)>& local,
           const std::function<void(std::size_t, const RemoteResult&)>& done,
           const std::function<void()>& checkpoint) override;
  void confine_rank(int rank, std::optional<std::vector<dptune::DataScope>> scopes) override {
    std::lock_guard lock(mutex_);
    workers_.at(static_cast<std::size_t>(rank)).scopes = std::move(scopes);
  }

 private:
  struct Worker {
    bool hello = false, lost = false;
    std::optional<std::size_t> busy;  // the slot it runs
    Clock::time_point last_heard;
    /// The only scopes whose rows it holds (Tuner::rank_scopes); nullopt: the whole data.
    std::optional<std::vector<dptune::DataScope>> scopes;
    bool holds(const dptune::DataScope& scope) const {
      if (!scopes) return true;
      return std::any_of(scopes->begin(), scopes->end(),
                         [&](const dptune::DataScope& s) { return same_scope(s, scope); });
    }
  };

  void serve();
  void handle(const Message& m);
  void hand_out();
  bool leave_queue_to_workers() const;  // a test seam: rank 0 runs no queued task
  void check_liveness(Clock::time_point now);
  /// Stops the hand-out after an error: the queued tasks are not run.
  void stop_hand_out() {
    queue_.clear();
    local_.clear();
  }

  Link& link_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Worker> workers_;  // by rank; [0] unused
  std::thread service_;
  Doorbell doorbell_;  // the tuner's threads: new runs, peer messages, the end
  bool stopping_ = false;
  // The current run() call: tasks, the slots not yet started, what came back.
  const std::vector<RemoteTask>* tasks_ = nullptr;
  std::uint64_t generation_ = 0;
  std::deque<std::size_t> queue_, local_;
  std::size_t in_flight_ = 0;
  std::vector<std::pair<std::size_t, RemoteResult>> arrived_;
  std::map<std::size_t, std::string> failed_;  // slot -> error naming the rank
  std::string fatal_;                          // a rank lost or refused
  std::string fingerprint_;
  // Peer messages: queued by the tuner, sent by the service thread; received by it, taken by the
  // tuner.  A test build sees every peer message rank 0 gets (TestSeams::peer_message_received:
  // tests check what the server saw, e.g. that DP-Hype's votes never arrive in the clear).
  std::deque<std::pair<int, std::string>> peer_out_;
  std::deque<dptune::PeerMessage> peer_in_;
  std::condition_variable peer_wake_;
};

void MpiExecutor::send(int to, std::string payload) {
  if (to < 1 || to >= link_.size())
    throw dptune::Error("peer message to rank " + std::to_string(to) + ": the job has ranks 0.." +
                        std::to_string(link_.size() - 1));
  {
    std::lock_guard lock(mutex_);
    peer_out_.emplace_back(to, std::move(payload));
  }
  doorbell_.ring();
}

std::optional<dptune::PeerMessage> MpiExecutor::receive(double seconds) {
  std::unique_lock lock(mutex_);
  peer_wake_.wait_for(lock, std::chrono::duration<double>(std::max(seconds, 0.0)),
                      [&] { return !peer_in_.empty() || !fatal_.empty(); });
  // A lost rank ends the run (docs/mpi.md); a tuner that waits for it hears so at once.
  if (!fatal_.empty()) throw dptune::PluginError(fatal_);
  if (peer_in_.empty()) return std::nullopt;
  dptune::PeerMessage m = std::move(peer_in_.front());
  peer_in_.pop_front();
  return m;
}

void MpiExecutor::serve() {
  auto next_beat = Clock::now();
  Backoff backoff;
  for (;;) {
    bool idle = true;
    try {
      while (auto m = link_.poll()) {
        idle = false;
        std::lock_guard lock(mutex_);
        handle(*m);
      }
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      hand_out();
      for (auto& [to, payload] : std::exchange(peer_out_, {})) link_.send(to, kPeer, payload);
      const auto now = Clock::now();
      if (now >= next_beat) {
        for (int r = 1; r < link_.size(); ++r)
          if (!workers_[r].lost) link_.send(r, kBeat, "");
        next_beat = now + std::chrono::duration_cast<Clock::duration>(beat_interval());
      }
      check_liveness(now);
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      if (fatal_.empty()) fatal_ = std::string("MPI executor: ") + e.what();
      link_.mark_broken();
      wake_.notify_all();
      peer_wake_.notify_all();
      return;
    }
    doorbell_.pause_if_idle(idle, backoff);
  }
}

void MpiExecutor::handle(const Message& m) {
  Worker& w = workers_.at(static_cast<std::size_t>(m.source));
  w.last_heard = Clock::now();
  const std::string who = "MPI rank " + std::to_string(m.source);
  switch (m.tag) {
    case kBeat:
      return;
    case kPeer:
      if (const auto observe = test_seams().peer_message_received) observe(m.source, m.payload);
      peer_in_.push_back({m.source, m.payload});
      peer_wake_.notify_all();
      return;
    case kHello:
      if (m.payload != fingerprint_) {
        if (fatal_.empty())
          fatal_ = who +
                   " loaded a different pipeline than rank 0 (start every rank with the "
                   "same command line, pipeline file and plugins)";
      } else {
        w.hello = true;
      }
      break;
    case kFail:
      if (fatal_.empty()) fatal_ = who + " could not start: " + m.payload;
      w.lost = true;  // it finalises and exits: give it nothing more
      break;
    case kResult: {
      const Reply reply = decode_reply(m.payload);
      if (!w.busy || !tasks_) {
        if (fatal_.empty()) fatal_ = who + " sent a result nobody asked for";
        break;
      }
      const std::size_t slot = *w.busy;
      w.busy.reset();
      --in_flight_;
      if (reply.seq != (generation_ << 32 | slot)) {
        if (fatal_.empty()) fatal_ = who + " answered another task than the one it was given";
      } else if (reply.result) {
        if (const auto observe = test_seams().result_received)
          observe(m.source, reply.result->model.has_value());
        arrived_.emplace_back(slot, *reply.result);
      } else {
        failed_.emplace(slot, who + ": " + reply.error);
        stop_hand_out();
      }
      break;
    }
    default:
      if (fatal_.empty()) fatal_ = who + " sent an unexpected " + tag_name(m.tag) + " message";
  }
  wake_.notify_all();
  peer_wake_.notify_all();
}

bool MpiExecutor::leave_queue_to_workers() const {
  return test_seams().workers_take_the_queue &&
         std::any_of(workers_.begin() + 1, workers_.end(), [](const Worker& w) { return !w.lost; });
}

void MpiExecutor::hand_out() {
  if (!tasks_ || !fatal_.empty()) return;
  for (int r = 1; r < link_.size() && !queue_.empty(); ++r) {
    Worker& w = workers_[r];
    if (!w.hello || w.lost || w.busy) continue;
    // The first queued run whose rows this rank holds; the others wait for another rank (or 0).
    const auto next = std::find_if(queue_.begin(), queue_.end(), [&](std::size_t slot) {
      return w.holds((*tasks_)[slot].request.scope);
    });
    if (next == queue_.end()) continue;
    const std::size_t slot = *next;
    queue_.erase(next);
    link_.send(r, kTask, encode_task(generation_ << 32 | slot, (*tasks_)[slot]));
    w.busy = slot;
    ++in_flight_;
  }
}

void MpiExecutor::check_liveness(Clock::time_point now) {
  for (int r = 1; r < link_.size(); ++r) {
    Worker& w = workers_[r];
    if (w.lost || now - w.last_heard <= timeout()) continue;
    w.lost = true;
    link_.mark_broken();
    std::string what = "MPI rank " + std::to_string(r) + " sent nothing for " +
                       std::to_string(static_cast<int>(timeout().count())) +
                       " s (DPTUNE_MPI_TIMEOUT): it is lost";
    if (w.busy) {
      what += ", with a run of batch " + std::to_string((*tasks_)[*w.busy].batch) + " in flight";
      w.busy.reset();
      --in_flight_;
    }
    if (fatal_.empty())
      fatal_ = what + "; the runs finished so far are stored: continue with --resume";
    wake_.notify_all();
    peer_wake_.notify_all();
  }
}

void MpiExecutor::run(const std::vector<RemoteTask>& tasks, const std::vector<char>& local_only,
                      const std::function<void(std::size_t)>& local,
                      const std::function<void(std::size_t, const RemoteResult&)>& done,
                      const std::function<void()>& checkpoint) {
  std::unique_lock lock(mutex_);
  if (!fatal_.empty()) throw dptune::PluginError(fatal_);
  tasks_ = &tasks;
  ++generation_;
  for (std::size_t i = 0; i < tasks.size(); ++i) (local_only[i] ? local_ : queue_).push_back(i);
  doorbell_.ring();          // the service thread hands the queue out now
  std::exception_ptr error;  // the first local failure or interruption
  std::size_t finished = 0;
  const auto stop = [&] {
    if (!error) error = std::current_exception();
    stop_hand_out();
  };
  for (;;) {
    for (const auto& [slot, result] : std::exchange(arrived_, {})) {
      lock.unlock();
      try {
        done(slot, result);
      } catch (...) {
        lock.lock();
        stop();
        lock.unlock();
      }
      lock.lock();
      ++finished;
    }
    const bool failing = error || !failed_.empty() || !fatal_.empty();
    if (failing ? in_flight_ == 0 || !fatal_.empty() : finished == tasks.size()) break;
    std::optional<std::size_t> mine;
    if (!failing && !local_.empty()) {
      mine = local_.front();
      local_.pop_front();
    } else if (!failing && !queue_.empty() && !leave_queue_to_workers()) {
      mine = queue_.front();
      queue_.pop_front();
    }
    lock.unlock();
    try {
      checkpoint();
      if (mine) {
        local(*mine);
        lock.lock();
        ++finished;
        continue;
      }
    } catch (...) {
      lock.lock();
      stop();
      continue;
    }
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(20));
  }
  tasks_ = nullptr;
  stop_hand_out();
  const std::string fatal = fatal_;
  const std::string failed = failed_.empty() ? std::string() : failed_.begin()->second;
  failed_.clear();
  arrived_.clear();
  lock.unlock();
  // A lost rank first (the run cannot go on), then the first failed task (by index), then what
  // failed here.
  if (!fatal.empty()) throw dptune::PluginError(fatal);
  if (!failed.empty() && !error) throw dptune::PluginError(failed);
  if (error) std::rethrow_exception(error);
}

}  // namespace
}  // namespace mpi

std::unique_ptr<Executor> make_mpi_executor() { return std::make_unique<mpi::MpiExecutor>(); }

}  // namespace dptune::host
