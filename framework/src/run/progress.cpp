#include "run/progress.hpp"

#include <unistd.h>

#include <iostream>

#include "dptune/host/format.hpp"

namespace dptune::host {

TerminalProgress::TerminalProgress(bool enabled)
    : active_(enabled && isatty(STDERR_FILENO) == 1), started_(std::chrono::steady_clock::now()) {
  if (active_) ticker_ = std::jthread([this](const std::stop_token& stop) { tick(stop); });
}

TerminalProgress::~TerminalProgress() {
  if (ticker_.joinable()) {
    ticker_.request_stop();
    ticker_.join();
  }
  finish();
}

void TerminalProgress::tick(const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  // wait_for returns at once, false, once a stop is requested: the loop must test the token.
  while (!stop.stop_requested()) {
    wake_.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
    if (!stop.stop_requested() && (line_open_ || hide_counts_)) draw(true);
  }
}

void TerminalProgress::hide_counts(std::string activity) {
  std::lock_guard lock(mutex_);
  hide_counts_ = true;
  activity_ = std::move(activity);
  started_ = std::chrono::steady_clock::now();
  draw(true);
}

void TerminalProgress::start(std::string_view phase, std::size_t total) {
  std::lock_guard lock(mutex_);
  phase_ = phase;
  total_ = total;
  done_ = 0;
  best_.reset();
  if (!hide_counts_) started_ = std::chrono::steady_clock::now();  // hidden: the run's clock
  draw(true);
}

void TerminalProgress::advance(std::size_t done, std::optional<double> best) {
  std::lock_guard lock(mutex_);
  done_ = done;
  if (best) best_ = best;
  draw(done_ == total_);
}

void TerminalProgress::message(std::string_view text) {
  std::lock_guard lock(mutex_);
  if (!active_) return;
  if (line_open_) std::cerr << "\r\033[K";
  std::cerr << text << '\n';
  line_open_ = false;
  draw(true);
}

void TerminalProgress::finish() {
  std::lock_guard lock(mutex_);
  if (active_ && line_open_) std::cerr << '\n';
  line_open_ = false;
  active_ = false;  // the run's output follows: the ticker draws no line under it
}

void TerminalProgress::draw(bool force) {
  if (!active_ || (total_ == 0 && !hide_counts_)) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  if (hide_counts_) {
    std::cerr << "\r\033[K" << activity_ << (phase_.empty() ? "" : " (" + phase_ + ")")
              << "  elapsed " << duration(elapsed) << std::flush;
    line_open_ = true;
    return;
  }
  std::string line =
      "\r\033[K" + phase_ + ": " + std::to_string(done_) + "/" + std::to_string(total_);
  if (best_) line += "  best " + significant(*best_, 4);
  line += "  elapsed " + duration(elapsed);
  if (done_ > 0 && done_ < total_)
    line += "  ETA " +
            duration(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_));
  std::cerr << line << std::flush;
  line_open_ = true;
}

}  // namespace dptune::host
