// An accountant that says how many questions it has been asked: its derivation is "question N".
// The host keeps answers per (question, event) (plugin_proxies.cpp), so a test can see which
// questions reached the plugin.  Prices pure ε by basic composition (laplace(b) is 1/b-DP, Dwork &
// Roth 2014, Thm 3.6).
#include <atomic>

#include "test_support.hpp"

namespace {

std::atomic<int> questions{0};

double pure_epsilon(const dptune::DpEvent& event) {
  using Kind = dptune::DpEvent::Kind;
  switch (event.kind()) {
    case Kind::PureDp:
      return event.epsilon();
    case Kind::Laplace:
      return 1 / event.noise_multiplier();
    case Kind::SelfComposed:
      return static_cast<double>(event.count()) * pure_epsilon(event.inner());
    default:
      throw dptune::PrivacyError("counting accountant: pure-DP kinds only");
  }
}

class CountingAccountant final : public dptune::Accountant {
 public:
  explicit CountingAccountant(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  std::string unsupported_reason(const dptune::DpEvent&) const override { return ""; }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    dptune::PrivacyGuarantee g;
    g.epsilon = pure_epsilon(event);
    g.delta = delta;
    g.accountant = "counting";
    g.derivation = "question " + std::to_string(++questions);
    return g;
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    dptune::PrivacyGuarantee g = this->epsilon(event, 0);
    g.delta = g.epsilon <= epsilon ? 0 : 1;
    g.epsilon = epsilon;
    return g;
  }
};

}  // namespace

DPTUNE_PLUGIN(accountant, counting_accountant, CountingAccountant, "0.1.0",
              "test: an accountant that counts the questions it is asked")
