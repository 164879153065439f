#include "dptune/host/executor.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "dptune/errors.hpp"

namespace dptune::host {

namespace {

thread_local bool in_worker = false;

// Runs body over [0, n), remembering the exception of the smallest failing index.
struct Batch {
  std::size_t n;
  const std::function<void(std::size_t)>* body;
  std::atomic<std::size_t> next{0};
  std::size_t finished = 0;
  std::mutex mutex;
  std::condition_variable done;
  std::exception_ptr error;
  std::size_t error_index = SIZE_MAX;

  void work() {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      std::exception_ptr caught;
      try {
        (*body)(i);
      } catch (...) {
        caught = std::current_exception();
      }
      std::lock_guard lock(mutex);
      if (caught && i < error_index) {
        error = caught;
        error_index = i;
      }
      if (++finished == n) done.notify_all();
    }
  }
};

class InlineExecutor final : public Executor {
 public:
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    for (std::size_t i = 0; i < n; ++i) body(i);
  }
  std::size_t threads() const override { return 1; }
  std::string name() const override { return "inline"; }
};

class ThreadPoolExecutor final : public Executor {
 public:
  explicit ThreadPoolExecutor(std::size_t threads) : size_(threads) {
    for (std::size_t t = 0; t + 1 < threads; ++t) workers_.emplace_back([this] { loop(); });
  }
  ~ThreadPoolExecutor() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    if (n == 0) return;
    if (in_worker || size_ == 1 || n == 1) {
      for (std::size_t i = 0; i < n; ++i) body(i);
      return;
    }
    auto batch = std::make_shared<Batch>();
    batch->n = n;
    batch->body = &body;
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(batch);
    }
    wake_.notify_all();
    // The calling thread works too, as a worker (so nested calls from it run inline).
    in_worker = true;
    batch->work();
    in_worker = false;
    {
      std::unique_lock lock(batch->mutex);
      batch->done.wait(lock, [&] { return batch->finished == batch->n; });
    }
    {
      std::lock_guard lock(mutex_);
      queue_.erase(std::remove(queue_.begin(), queue_.end(), batch), queue_.end());
    }
    if (batch->error) std::rethrow_exception(batch->error);
  }
  std::size_t threads() const override { return size_; }
  std::string name() const override { return "threads(" + std::to_string(size_) + ")"; }

 private:
  void loop() {
    in_worker = true;
    for (;;) {
      std::shared_ptr<Batch> batch;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] {
          if (stopping_) return true;
          for (auto& b : queue_)
            if (b->next.load() < b->n) return true;
          return false;
        });
        if (stopping_) return;
        for (auto& b : queue_)
          if (b->next.load() < b->n) {
            batch = b;
            break;
          }
      }
      if (batch) batch->work();
    }
  }

  std::size_t size_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Batch>> queue_;
  bool stopping_ = false;
};

}  // namespace

#ifdef DPTUNE_HAVE_MPI
std::unique_ptr<Executor> make_mpi_executor();  // mpi_executor.cpp
#else
namespace {
[[noreturn]] void no_mpi() {
  throw dptune::ConfigError(
      "executor 'mpi': this dptune was built without MPI (install Open MPI's development files, "
      "e.g. scripts/install-deps.sh, and rebuild; docs/mpi.md)");
}
}  // namespace
int mpi_rank() { no_mpi(); }
void start_mpi_run(const std::string&, const std::optional<LayoutKey>&) { no_mpi(); }
int serve_mpi_worker(const PipelineConfig&, const PluginRegistry&, const std::string&) { no_mpi(); }
void finish_mpi(int) noexcept {}
#endif

std::size_t executor_threads(const std::string& kind, std::size_t threads) {
  if (kind != "threads") return 1;
  return threads == 0 ? std::max(1U, std::thread::hardware_concurrency()) : threads;
}

std::unique_ptr<Executor> make_executor(const std::string& kind, std::size_t threads) {
  if (kind == "inline") return std::make_unique<InlineExecutor>();
  if (kind == "threads")
    return std::make_unique<ThreadPoolExecutor>(executor_threads(kind, threads));
  if (kind == "mpi") {
#ifdef DPTUNE_HAVE_MPI
    return make_mpi_executor();
#else
    no_mpi();
#endif
  }
  throw dptune::ConfigError("unknown executor '" + kind + "': expected inline, threads or mpi");
}

}  // namespace dptune::host
