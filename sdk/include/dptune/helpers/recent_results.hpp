// The last few results of a pure, costly function, kept with their inputs.  Accountants price the
// same events several times in one process (a tuner's dry run, the planner, ε and δ, one
// accountant's route through another's calculator), and the pieces they share (one sampled
// Gaussian's moments or privacy loss distribution for every candidate of a search) cost up to a
// second each.  Results are returned exactly as computed: the key holds every input the function
// reads, compared with == (DpEvent's compares its structural hash first).
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace dptune {

template <class Key, class Value, std::size_t Capacity>
class RecentResults {
 public:
  /// The value kept for `key`, or `compute()`d and kept (the oldest one dropped beyond Capacity).
  /// `compute` runs outside the lock: two threads asking for the same key at once both compute it,
  /// with the same result.
  template <class Compute>
  Value get(const Key& key, Compute&& compute) {
    {
      const std::lock_guard lock(mutex_);
      for (const auto& [kept, value] : entries_)
        if (kept == key) return value;
    }
    Value value = compute();
    const std::lock_guard lock(mutex_);
    if (entries_.size() == Capacity) entries_.pop_front();
    entries_.emplace_back(key, value);
    return value;
  }

 private:
  std::mutex mutex_;
  std::deque<std::pair<Key, Value>> entries_;
};

}  // namespace dptune
