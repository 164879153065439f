// dptune host: executors run independent tasks inline or on a thread pool.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace dptune::host {

class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs body(0), …, body(n-1) and waits for all of them.  If any throws, the first exception (by
  /// index) is rethrown after every started task has finished.  Calls from inside a task run
  /// inline, so nested parallelism cannot deadlock.
  virtual void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) = 0;
  virtual std::size_t threads() const = 0;
  virtual std::string name() const = 0;
};

/// kind "inline" or "threads"; threads == 0 means the number of cores.
std::unique_ptr<Executor> make_executor(const std::string& kind, std::size_t threads);

}  // namespace dptune::host
