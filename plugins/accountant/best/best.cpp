// The `best` accountant plugin: the smallest of the rdp and pld accountants' sound answers, plus
// Papernot & Steinke 2022's Theorem 6 on a Poisson repeat-and-select (see best/accountant.hpp).
// The logic lives in dptune_best_core; this is the plugin face.
#include "best/accountant.hpp"
#include "dptune/dptune.hpp"

namespace {

class BestAccountant final : public dptune::Accountant {
 public:
  explicit BestAccountant(const dptune::Params& params)
      : best_(dptune::best::default_members(params)) {}
  static dptune::ParamSchema schema() { return dptune::best::plugin_schema(); }

  std::string unsupported_reason(const dptune::DpEvent& event) const override {
    return best_.unsupported_reason(event);
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    return best_.epsilon(event, delta);
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    return best_.delta(event, epsilon);
  }

 private:
  dptune::best::Accountant best_;
};

}  // namespace

DPTUNE_PLUGIN(accountant, best, BestAccountant, "1.0.0",
              "the minimum of the sound answers of the rdp and pld accountants (and Papernot & "
              "Steinke 2022, Theorem 6 on a Poisson repeat-and-select), naming the winner")
