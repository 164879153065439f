// The MPI executor's worker ranks (docs/mpi.md), and the entry points the runner and the CLI call.
// A worker builds the pipeline's evaluation stack itself (the data read from the pipeline's own
// paths, never sent), then runs one task at a time as rank 0 sends them.  Its main thread only
// talks MPI (heartbeats, rank 0's silence against the deadline); the work runs on another thread.
// A tuner's message (ABI 2.9, dptune::PeerChannel) starts the tuner's own part here
// (Tuner::serve_peer) on a third thread; its messages go out and come in through the main thread.
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "dptune/errors.hpp"
#include "dptune/host/runner.hpp"
#include "mpi/mpi_link.hpp"
#include "run/evaluator.hpp"
#include "run/mpi_wire.hpp"

namespace dptune::host {

std::unique_ptr<Executor> make_mpi_executor();

namespace mpi {
namespace {

/// Work on its own thread; the main thread polls `ready` (rung when it is) and never joins a
/// thread that may hang (a lost rank 0 ends the process with MPI_Abort instead).
class Job {
 public:
  Job(std::function<std::string()> work, std::shared_ptr<Doorbell> bell)
      : state_(std::make_shared<State>()) {
    std::thread([state = state_, work = std::move(work), bell = std::move(bell)] {
      state->output = work();
      state->ready = true;
      bell->ring();
    }).detach();
  }
  bool ready() const { return state_->ready.load(); }
  std::string take() { return std::move(state_->output); }

 private:
  struct State {
    std::atomic<bool> ready{false};
    std::string output;
  };
  std::shared_ptr<State> state_;
};

std::string failure_text(const std::exception& e) { return e.what(); }

/// A worker's end of the tuner's peer messages: the tuner's thread queues and waits, the main
/// thread moves the messages (MPI_THREAD_SERIALIZED).  Shared with the tuner's thread, which may
/// outlive the worker's loop by a moment.
class WorkerPeers final : public dptune::PeerChannel {
 public:
  WorkerPeers(int rank, int size, std::shared_ptr<Doorbell> bell)
      : rank_(rank), size_(size), bell_(std::move(bell)) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int to, std::string payload) override {
    if (to < 0 || to >= size_ || to == rank_)
      throw dptune::Error("peer message from rank " + std::to_string(rank_) + " to rank " +
                          std::to_string(to) + ": no such other rank");
    {
      std::lock_guard lock(mutex_);
      out_.emplace_back(to, std::move(payload));
    }
    bell_->ring();  // the main thread sends it now
  }
  std::optional<dptune::PeerMessage> receive(double seconds) override {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, std::chrono::duration<double>(std::max(seconds, 0.0)),
                   [&] { return !in_.empty() || closed_; });
    if (closed_) throw dptune::Error("rank 0 ended the run");
    if (in_.empty()) return std::nullopt;
    dptune::PeerMessage m = std::move(in_.front());
    in_.pop_front();
    return m;
  }
  void deliver(int from, std::string payload) {
    std::lock_guard lock(mutex_);
    in_.push_back({from, std::move(payload)});
    wake_.notify_all();
  }
  std::deque<std::pair<int, std::string>> take_outgoing() {
    std::lock_guard lock(mutex_);
    return std::exchange(out_, {});
  }
  bool has_incoming() const {
    std::lock_guard lock(mutex_);
    return !in_.empty();
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    wake_.notify_all();
  }

 private:
  int rank_, size_;
  std::shared_ptr<Doorbell> bell_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<int, std::string>> out_;
  std::deque<dptune::PeerMessage> in_;
  bool closed_ = false;
};

/// The context of Tuner::serve_peer on a worker: the worker's own evaluation stack (its evaluator
/// runs here, inline), no progress display, and the peer channel.
class PeerTunerContext final : public dptune::TunerContext {
 public:
  // Stream of the tuner's generator on the workers: a per-evaluation stream number no batch
  // reaches (batch + 1 = 2^32 - 1), so under a seed it is the same on every worker and differs
  // from rank 0's stream 0 and the runs' streams; under secure randomness it is fresh on each
  // rank (streams >= 2^32 are never drawn from the shared layout key).
  static constexpr std::uint64_t kStream = 0xFFFFFFFF00000000ULL;

  PeerTunerContext(const PipelineConfig& config, const std::shared_ptr<EvaluationStack>& stack,
                   const std::shared_ptr<WorkerPeers>& peers)
      : stack_(stack),
        peers_(peers),
        rng_(stack->random.make(kStream)),
        host_(config, stack->evaluator, *stack->accountant, stack->mechanisms, progress_, *rng_,
              *stack->executor) {}
  const dptune::SearchSpace& space() const override { return host_.space(); }
  dptune::Evaluator& evaluator() override { return host_.evaluator(); }
  const dptune::Accountant& accountant() const override { return host_.accountant(); }
  double delta() const override { return host_.delta(); }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    return host_.mechanism(overrides);
  }
  dptune::ProgressSink& progress() override { return progress_; }
  dptune::RandomBitGenerator& rng() override { return *rng_; }
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    host_.parallel_for(n, body);
  }
  dptune::DataSizes data_sizes() const override { return host_.data_sizes(); }
  dptune::UtilitySensitivity utility_sensitivity(std::size_t scored_rows) const override {
    return host_.utility_sensitivity(scored_rows);
  }
  dptune::PeerChannel* peers() override { return peers_.get(); }
  std::size_t scopes_changed_by_one_record(const dptune::DataScope& layout) const override {
    return host_.scopes_changed_by_one_record(layout);
  }

 private:
  class Silent final : public dptune::ProgressSink {
   public:
    void start(std::string_view, std::size_t) override {}
    void advance(std::size_t, std::optional<double>) override {}
    void message(std::string_view) override {}
  };
  std::shared_ptr<EvaluationStack> stack_;
  std::shared_ptr<WorkerPeers> peers_;
  Silent progress_;
  std::unique_ptr<dptune::RandomBitGenerator> rng_;
  HostTunerContext host_;
};

class Worker {
 public:
  Worker(const PipelineConfig& config, const PluginRegistry& registry, std::string fingerprint)
      : config_(config),
        registry_(registry),
        fingerprint_(std::move(fingerprint)),
        link_(Link::get()),
        peers_(std::make_shared<WorkerPeers>(link_.rank(), link_.size(), bell_)) {}

  int serve();

 private:
  void handle(const Message& m);
  void start_building(const std::optional<LayoutKey>& key);
  void start_task(const std::string& payload);
  void start_peer();
  void finish_jobs();
  void lost_rank0();

  const PipelineConfig& config_;
  const PluginRegistry& registry_;
  std::string fingerprint_;
  Link& link_;
  // Shared with the detached threads, which may outlive this object.
  std::shared_ptr<Doorbell> bell_ = std::make_shared<Doorbell>();
  std::shared_ptr<EvaluationStack> stack_;
  std::shared_ptr<std::shared_ptr<EvaluationStack>> built_ =
      std::make_shared<std::shared_ptr<EvaluationStack>>();
  std::optional<Job> building_, running_, peer_job_;
  std::shared_ptr<WorkerPeers> peers_;
  std::shared_ptr<dptune::Tuner> tuner_;
  std::shared_ptr<std::shared_ptr<dptune::Tuner>> made_tuner_ =
      std::make_shared<std::shared_ptr<dptune::Tuner>>();
  bool stopping_ = false, failed_ = false;
  Clock::time_point last_heard_ = Clock::now();
};

void Worker::start_building(const std::optional<LayoutKey>& key) {
  if (building_ || stack_) throw dptune::Error("rank 0 sent init twice");
  building_.emplace(
      [this, key, built = built_, tuner = made_tuner_, rank = link_.rank(),
       ranks = link_.size()]() -> std::string {
        try {
          // The tuner (made once, from the pipeline every rank loaded: rank 0 made its own the
          // same way) says which scopes it evaluates here; the rank keeps only their rows.
          *tuner = create_configured_tuner(config_, registry_);
          auto stack = std::make_shared<EvaluationStack>(config_, registry_, "inline", 1,
                                                         config_.execution.seed, nullptr, key);
          keep_rank_data(config_, **tuner, *stack, rank, ranks);
          *built = std::move(stack);
          return {};
        } catch (const std::exception& e) {
          return failure_text(e).empty() ? std::string("unknown error") : failure_text(e);
        }
      },
      bell_);
}

void Worker::start_task(const std::string& payload) {
  if (!stack_ || running_) throw dptune::Error("rank 0 sent a task this rank cannot take now");
  std::uint64_t seq = 0;
  const RemoteTask task = decode_task(payload, seq);
  running_.emplace(
      [stack = stack_, task, seq] {
        Reply reply;
        reply.seq = seq;
        const auto started = Clock::now();
        try {
          RemoteResult r = stack->evaluator.run_task(task);
          r.seconds = std::chrono::duration<double>(Clock::now() - started).count();
          reply.result = r;
        } catch (const std::exception& e) {
          reply.error = e.what();
        }
        return encode_reply(reply);
      },
      bell_);
}

void Worker::start_peer() {
  peer_job_.emplace(
      [tuner = tuner_,
       context = std::make_shared<PeerTunerContext>(config_, stack_, peers_)]() -> std::string {
        try {
          tuner->serve_peer(*context);
          return {};
        } catch (const std::exception& e) {
          return failure_text(e).empty() ? std::string("unknown error") : failure_text(e);
        }
      },
      bell_);
}

void Worker::handle(const Message& m) {
  if (m.tag == kPeer) {
    // From rank 0 or another worker: for this rank's part of the tuner.
    if (m.source == 0) last_heard_ = Clock::now();
    peers_->deliver(m.source, m.payload);
    return;
  }
  if (m.source != 0)
    throw dptune::Error("rank " + std::to_string(m.source) + " sent a " + tag_name(m.tag) +
                        " message to a worker");
  last_heard_ = Clock::now();
  switch (m.tag) {
    case kInit:
      start_building(decode_init(m.payload));
      break;
    case kTask:
      start_task(m.payload);
      break;
    case kBeat:
      break;
    case kStop:
      stopping_ = true;
      break;
    default:
      throw dptune::Error(std::string("unexpected ") + tag_name(m.tag) + " message");
  }
}

void Worker::finish_jobs() {
  if (building_ && building_->ready()) {
    const std::string error = building_->take();
    building_.reset();
    if (error.empty()) {
      stack_ = *built_;
      tuner_ = *made_tuner_;
      link_.send(0, kHello, fingerprint_);
    } else {
      failed_ = true;
      link_.send(0, kFail, error);
    }
  }
  if (running_ && running_->ready()) {
    link_.send(0, kResult, running_->take());
    running_.reset();
  }
  for (auto& [to, payload] : peers_->take_outgoing()) link_.send(to, kPeer, payload);
  if (peer_job_ && peer_job_->ready()) {
    // The tuner's part failed here: rank 0's tuner hears of it through its own protocol (a part
    // that stops answering); the rank itself keeps serving.
    if (const std::string error = peer_job_->take(); !error.empty())
      std::cerr << "dptune: MPI rank " << link_.rank() << ": " << error << "\n";
    peer_job_.reset();
  }
  if (!peer_job_ && stack_ && !stopping_ && peers_->has_incoming()) start_peer();
}

int Worker::serve() {
  auto next_beat = Clock::now();
  const auto tick = std::chrono::duration_cast<Clock::duration>(beat_interval());
  const auto limit = std::chrono::duration_cast<Clock::duration>(timeout());
  Backoff backoff;
  for (;;) {
    bool idle = true;
    while (auto m = link_.poll()) {
      idle = false;
      handle(*m);
    }
    finish_jobs();
    if (stopping_) peers_->close();  // a tuner part still waiting for messages returns now
    if (stopping_ && !building_ && !running_ && !peer_job_) {
      link_.send(0, kBye, "");  // rank 0 waits for it before MPI_Finalize (Link::finalize)
      return failed_ ? 1 : 0;
    }
    const auto now = Clock::now();
    if (now >= next_beat) {
      link_.send(0, kBeat, "");
      next_beat = now + tick;
    }
    if (now - last_heard_ > limit) {
      std::cerr << "dptune: MPI rank " << link_.rank() << " heard nothing from rank 0 for "
                << static_cast<int>(timeout().count()) << " s (DPTUNE_MPI_TIMEOUT); stopping\n";
      // Leaving without MPI_Finalize makes Open MPI end the job, rank 0 included (a second
      // MPI_Abort racing rank 0's own can leave mpirun waiting).
      std::_Exit(1);
    }
    bell_->pause_if_idle(idle, backoff);
  }
}

}  // namespace
}  // namespace mpi

int mpi_rank() { return mpi::Link::get().rank(); }

void start_mpi_run(const std::string& fingerprint, const std::optional<LayoutKey>& key) {
  mpi::Link& link = mpi::Link::get();
  link.set_fingerprint(fingerprint);
  for (int r = 1; r < link.size(); ++r) link.send(r, mpi::kInit, mpi::encode_init(key));
}

int serve_mpi_worker(const PipelineConfig& config, const PluginRegistry& registry,
                     const std::string& fingerprint) {
  mpi::Worker worker(config, registry, fingerprint);
  try {
    return worker.serve();
  } catch (const std::exception& e) {
    // A broken protocol: rank 0 cannot rely on this rank any more.
    std::cerr << "dptune: MPI rank " << mpi::Link::get().rank() << ": " << e.what() << "\n";
    mpi::Link::get().mark_broken();
    return 1;
  }
}

void finish_mpi(int exit_code) noexcept {
  if (mpi::Link::started()) mpi::Link::get().finalize(exit_code);
}

}  // namespace dptune::host
