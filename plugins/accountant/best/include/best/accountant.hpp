// The `best` accountant: the smaller of the sound answers of its members (the rdp and pld
// accountants, linked here as libraries, as pure_dp links rdp's), naming the winner.
//
// Every member's answer is a sound bound, so their minimum is too.  A whole repeat-and-select with
// Poisson(μ) runs gets one more candidate, which no single member can compute: Papernot & Steinke
// 2022's Theorem 6 (selection::poisson_selection_rdp, its one home) on the base's RDP curve from
// the members that report one, with the base's δ̂ at each ε̂ = log(λ/(λ−1)) from the member with the
// smallest δ̂ (e.g. pld on a DP-SGD base), converted by the one RDP → (ε, δ) conversion
// (dptune/helpers/rdp_conversion.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dptune/params.hpp"
#include "dptune/plugin.hpp"
#include "dptune/schema.hpp"

namespace dptune::best {

struct Member {
  std::string name;
  std::shared_ptr<const dptune::Accountant> accountant;
  /// Its unsupported_reason reads the event's structure only (pld's), rather than pricing it
  /// (rdp's computes the whole curve): asked first, so that `best` says yes without that work.
  bool checks_by_structure = false;
};

/// Wraps `accountant` so that each (question, event, given value) is priced once: the Theorem 6
/// route asks a member the same base's curve and profile again for every ε or δ asked of `best`.
/// Pricing is a pure function of its arguments (docs/sdk-contract.md), so a kept answer is the
/// answer.  Safe to call from several threads.
std::shared_ptr<const dptune::Accountant> cached(
    std::shared_ptr<const dptune::Accountant> accountant);

/// The union of the members' parameter schemas (rdp's, then pld's).
dptune::ParamSchema plugin_schema();
/// The members rdp and pld, each built from its share of complete `params` of plugin_schema() and
/// cached, in the order their answers are listed.
std::vector<Member> default_members(const dptune::Params& params);

class Accountant final : public dptune::Accountant {
 public:
  explicit Accountant(std::vector<Member> members);
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

}  // namespace dptune::best
