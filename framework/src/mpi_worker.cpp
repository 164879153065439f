// The MPI executor's worker ranks (docs/mpi.md), and the entry points the runner and the CLI call.
// A worker builds the pipeline's evaluation stack itself (the data read from the pipeline's own
// paths, never sent), then runs one task at a time as rank 0 sends them.  Its main thread only
// talks MPI (heartbeats, rank 0's silence against the deadline); the work runs on another thread.
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "dptune/errors.hpp"
#include "evaluator.hpp"
#include "mpi_link.hpp"
#include "mpi_wire.hpp"

namespace dptune::host {

std::unique_ptr<Executor> make_mpi_executor();

namespace mpi {
namespace {

/// Work on its own thread; the main thread polls `ready` and never joins a thread that may hang
/// (a lost rank 0 ends the process with MPI_Abort instead).
class Job {
 public:
  explicit Job(std::function<std::string()> work) : state_(std::make_shared<State>()) {
    std::thread([state = state_, work = std::move(work)] {
      state->output = work();
      state->ready = true;
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

class Worker {
 public:
  Worker(const PipelineConfig& config, const PluginRegistry& registry, std::string fingerprint)
      : config_(config),
        registry_(registry),
        fingerprint_(std::move(fingerprint)),
        link_(Link::get()) {}

  int serve();

 private:
  void handle(const Message& m);
  void start_building(const std::optional<LayoutKey>& key);
  void start_task(const std::string& payload);
  void finish_jobs();
  void lost_rank0();

  const PipelineConfig& config_;
  const PluginRegistry& registry_;
  std::string fingerprint_;
  Link& link_;
  std::shared_ptr<EvaluationStack> stack_;
  std::shared_ptr<std::shared_ptr<EvaluationStack>> built_ =
      std::make_shared<std::shared_ptr<EvaluationStack>>();
  std::optional<Job> building_, running_;
  bool stopping_ = false, failed_ = false;
  Clock::time_point last_heard_ = Clock::now();
};

void Worker::start_building(const std::optional<LayoutKey>& key) {
  if (building_ || stack_) throw dptune::Error("rank 0 sent init twice");
  building_.emplace([this, key, built = built_]() -> std::string {
    try {
      *built = std::make_shared<EvaluationStack>(config_, registry_, "inline", 1,
                                                 config_.execution.seed, nullptr, key);
      return {};
    } catch (const std::exception& e) {
      return failure_text(e).empty() ? std::string("unknown error") : failure_text(e);
    }
  });
}

void Worker::start_task(const std::string& payload) {
  if (!stack_ || running_) throw dptune::Error("rank 0 sent a task this rank cannot take now");
  std::uint64_t seq = 0;
  const RemoteTask task = decode_task(payload, seq);
  running_.emplace([stack = stack_, task, seq] {
    Reply reply;
    reply.seq = seq;
    const auto started = Clock::now();
    try {
      RemoteResult r;
      r.score = stack->evaluator.run_task(task);
      r.seconds = std::chrono::duration<double>(Clock::now() - started).count();
      reply.result = r;
    } catch (const std::exception& e) {
      reply.error = e.what();
    }
    return encode_reply(reply);
  });
}

void Worker::handle(const Message& m) {
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
}

int Worker::serve() {
  auto next_beat = Clock::now();
  const auto tick = std::chrono::duration_cast<Clock::duration>(beat_interval());
  const auto limit = std::chrono::duration_cast<Clock::duration>(timeout());
  for (;;) {
    bool idle = true;
    while (auto m = link_.poll()) {
      idle = false;
      handle(*m);
    }
    finish_jobs();
    if (stopping_ && !building_ && !running_) {
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
    if (idle) std::this_thread::sleep_for(std::chrono::microseconds(500));
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
