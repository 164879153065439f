// Answers of an accountant kept per (question, given value, event): pricing is a pure function of
// (event, δ or ε) (docs/sdk-contract.md), and a study prices the same few events again and again
// (every candidate of a grid sharing a noise multiplier, every repetition, the report), so each
// answer is computed once.  Used by the host's accountant proxy and by accountants that price
// through others (best).
#pragma once

#include <bit>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/privacy.hpp"

namespace dptune {

class AnswerCache {
 public:
  /// The answer to `question` ('e' for ε at δ = given, 'd' for δ at ε = given) about `event`:
  /// kept, or `compute()`d (outside the lock: pricing can take seconds) and kept.
  template <class Compute>
  PrivacyGuarantee get(char question, const DpEvent& event, double given, Compute&& compute) {
    // The text finds the bucket; equality of the whole event (every member, not only what the
    // text shows) decides, so two events that print alike never share an answer.
    std::string key =
        question + std::to_string(std::bit_cast<std::uint64_t>(given)) + ":" + event.to_string();
    {
      std::lock_guard lock(mutex_);
      if (const auto found = answers_.find(key); found != answers_.end())
        for (const auto& [known, answer] : found->second)
          if (known == event) return answer;
    }
    PrivacyGuarantee answer = compute();
    std::lock_guard lock(mutex_);
    if (answers_.size() >= kCapacity) answers_.clear();  // bounded; a study needs few entries
    answers_[std::move(key)].emplace_back(event, answer);
    return answer;
  }

 private:
  static constexpr std::size_t kCapacity = 4096;
  std::mutex mutex_;
  std::unordered_map<std::string, std::vector<std::pair<DpEvent, PrivacyGuarantee>>> answers_;
};

}  // namespace dptune
