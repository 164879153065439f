// dptune host: the `best` accountant, the smaller of the sound answers of the rdp and pld
// accountant plugins (plugins cannot include each other, so the host combines them).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dptune/plugin.hpp"

namespace dptune::host {

/// Asks every member that supports an event and reports the smallest ε (or δ), naming the winner
/// and the losers' values in the derivation.  A member that supports the event but fails on it
/// (e.g. a PLD too wide for its grid) is passed over, and said so; when every member fails, the
/// first failure is rethrown.  Each member's answer is a sound bound, so their minimum is too.
///
/// A whole repeat-and-select with Poisson(μ) runs gets one more candidate, which no single member
/// can compute: Papernot & Steinke 2022's Theorem 6 on the base's RDP curve (from the members that
/// report one) with the base's δ̂ at each ε̂ = log(λ/(λ−1)) from the member with the smallest δ̂
/// (e.g. pld on a DP-SGD base).  See poisson_selection in best_accountant.cpp.
class BestAccountant final : public dptune::Accountant {
 public:
  struct Member {
    std::string name;
    std::shared_ptr<dptune::Accountant> accountant;
  };
  explicit BestAccountant(std::vector<Member> members);
  std::string unsupported_reason(const DpEvent& event) const override;
  PrivacyGuarantee epsilon(const DpEvent& event, double delta) const override;
  PrivacyGuarantee delta(const DpEvent& event, double epsilon) const override;

  /// The name every guarantee of this accountant carries.
  static constexpr const char* kName = "best";

 private:
  enum class Ask { Epsilon, Delta };
  PrivacyGuarantee smallest(const DpEvent& event, double given, Ask ask) const;
  /// The Theorem 6 candidate; nothing when the event is not a whole Poisson repeat-and-select of
  /// a base without (ε, δ) leaves, or no member reports the base's RDP curve.
  std::optional<PrivacyGuarantee> poisson_selection(const DpEvent& event, double given,
                                                    Ask ask) const;
  std::vector<Member> members_;
};

}  // namespace dptune::host
