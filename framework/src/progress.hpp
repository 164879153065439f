// dptune host (internal): progress display on a terminal; silent otherwise.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "dptune/plugin.hpp"

namespace dptune::host {

class TerminalProgress final : public dptune::ProgressSink {
 public:
  /// Shows nothing unless `enabled` and standard error is a terminal.
  explicit TerminalProgress(bool enabled);
  ~TerminalProgress() override;
  void start(std::string_view phase, std::size_t total) override;
  void advance(std::size_t done, std::optional<double> best) override;
  void message(std::string_view text) override;
  void finish();

 private:
  void draw(bool force);
  bool active_;
  std::mutex mutex_;
  std::string phase_;
  std::size_t total_ = 0, done_ = 0;
  std::optional<double> best_;
  std::chrono::steady_clock::time_point started_, last_draw_;
  bool line_open_ = false;
};

}  // namespace dptune::host
