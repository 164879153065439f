// dptune host: executors run independent tasks inline, on a thread pool, or over the ranks of an
// MPI job (docs/mpi.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dptune/plugin.hpp"

namespace dptune::host {

struct PipelineConfig;
class PluginRegistry;

/// One run of an evaluation that another process of the same pipeline can do: task `task` of
/// evaluate() call `batch` on `request`, or, for a non-private run on a client's shard, the two
/// halves of its client-keyed stream; either way its random stream is (batch << 32) | task.
struct RemoteTask {
  std::uint64_t batch = 0;
  std::uint64_t task = 0;
  dptune::EvaluationRequest request;
};

/// What a remote run sends back.
struct RemoteResult {
  double score = 0;
  double seconds = 0;
  /// A task that keeps its output (RemoteTask::request.keep_output): the model it trained, as the
  /// study stores it (exported numbers, encode_model), so that the run's model travels to rank 0
  /// with its score; none when the task keeps nothing.
  std::optional<std::string> model;
  /// The task kept a model that cannot be exported (Model::export_model gave nothing), so it
  /// cannot travel: rank 0 runs the task again itself and uses only its own run.
  bool model_stayed = false;
};

/// Runs evaluation tasks in other processes (the MPI executor's rank 0).
class RemoteTasks {
 public:
  virtual ~RemoteTasks() = default;
  /// Runs every task once and returns when all have finished.  Tasks with local_only[i] (their
  /// kept output cannot travel) run here through `local(i)`; any other task runs
  /// either here through `local(i)` or in another process, whose result is passed to
  /// `done(i, result)`.  local and done are called on the calling thread only; `checkpoint` is
  /// called between tasks (a cancellation point: what it throws stops the hand-out, waits for
  /// the tasks already started, and is rethrown).  A failed task or process is rethrown as an
  /// error naming the rank, after the tasks started on the other processes have finished.
  virtual void run(const std::vector<RemoteTask>& tasks, const std::vector<char>& local_only,
                   const std::function<void(std::size_t)>& local,
                   const std::function<void(std::size_t, const RemoteResult&)>& done,
                   const std::function<void()>& checkpoint) = 0;
  /// From now on rank `rank` is given only tasks on one of `scopes`, the rows it holds
  /// (Tuner::rank_scopes, ABI 2.10); nullopt: any task.  The others run elsewhere or here.
  virtual void confine_rank(int rank, std::optional<std::vector<dptune::DataScope>> scopes) = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs body(0), …, body(n-1) and waits for all of them.  If any throws, the first exception (by
  /// index) is rethrown after every started task has finished.  Calls from inside a task run
  /// inline, so nested parallelism cannot deadlock.
  virtual void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) = 0;
  virtual std::size_t threads() const = 0;
  virtual std::string name() const = 0;
  /// Where evaluation runs can go beyond this process; null: nowhere (inline, threads).
  virtual RemoteTasks* remote() { return nullptr; }
  /// Messages to the tuner's parts on the other processes (TunerContext::peers); null: none.
  virtual dptune::PeerChannel* peers() { return nullptr; }
};

/// The threads an executor of `kind` runs in this process: `threads` for "threads" (0: the number
/// of cores), 1 for "inline" and for each process of "mpi".  What the data source may use too.
std::size_t executor_threads(const std::string& kind, std::size_t threads);

/// kind "inline", "threads" or "mpi"; threads == 0 means the number of cores.  "mpi" on rank 0 of
/// an MPI job (after start_mpi_run); ConfigError when this build has no MPI.
std::unique_ptr<Executor> make_executor(const std::string& kind, std::size_t threads);

// ---- the MPI executor (docs/mpi.md) -------------------------------------------------------------
/// A 256-bit secret from which every rank draws the same data layout under secure randomness.
using LayoutKey = std::array<unsigned char, 32>;

/// This process's rank in the MPI job, initialising MPI on first use (a process not started by
/// mpirun is rank 0 of one).  ConfigError when this build has no MPI.
int mpi_rank();

/// Rank 0, before its evaluation stack is built: tells every worker rank the pipeline it runs
/// (`fingerprint`, checked against theirs) and, under secure randomness, the layout key they draw
/// the same split and shards with (null `key`: seeded).
void start_mpi_run(const std::string& fingerprint, const std::optional<LayoutKey>& key);

/// A worker rank: receives rank 0's start, builds the pipeline's evaluation stack itself (reading
/// the data from the pipeline's paths) and runs the tasks rank 0 sends until told to stop.
/// Returns the process's exit code.
int serve_mpi_worker(const PipelineConfig& config, const PluginRegistry& registry,
                     const std::string& fingerprint);

/// At process exit: MPI_Finalize when MPI was initialised, or MPI_Abort(exit_code) when a rank
/// was lost (finalising would wait for it).  No-op without MPI.
void finish_mpi(int exit_code) noexcept;

}  // namespace dptune::host
