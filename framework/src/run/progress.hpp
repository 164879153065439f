// dptune host (internal): progress display on a terminal; silent otherwise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

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
  /// Shows `activity` and the elapsed time only: no counts, no best value, no ETA (a private
  /// tuner's counts are secret).  Still on the terminal only, never in a file or a pipe.
  void hide_counts(std::string activity);

 private:
  void draw(bool force);
  void tick(
      const std::stop_token& stop);  // redraws once a second, so the clock moves between batches
  bool active_;
  std::mutex mutex_;
  std::string phase_;
  std::size_t total_ = 0, done_ = 0;
  std::optional<double> best_;
  std::chrono::steady_clock::time_point started_, last_draw_;
  bool line_open_ = false;
  bool hide_counts_ = false;
  std::string activity_;
  std::condition_variable_any wake_;
  std::jthread ticker_;  // last: started after every other member, stopped first
};

}  // namespace dptune::host
