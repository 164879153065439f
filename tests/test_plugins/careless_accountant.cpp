// An accountant built for an older ABI minor (tests/test_plugins/CMakeLists.txt builds it for 2.2
// and for 2.7) that is careless on purpose: it claims every event and prices a kind it does not
// know as costing nothing.  The host must never hand it a kind its minor cannot know (replace_one
// appeared in 2.3, discrete_gaussian in 2.8): it refuses those itself, so this accountant's
// answer for them is never seen.  Its known kinds are priced by basic composition of pure ε:
// laplace(b) is 1/b-DP (Dwork & Roth 2014, Thm 3.6), composed and self_composed add up.
#include "test_support.hpp"

namespace {

double careless_epsilon(const dptune::DpEvent& event) {
  using Kind = dptune::DpEvent::Kind;
  switch (event.kind()) {
    case Kind::PureDp:
      return event.epsilon();
    case Kind::Laplace:
      return 1 / event.noise_multiplier();
    case Kind::SelfComposed:
      return static_cast<double>(event.count()) * careless_epsilon(event.inner());
    case Kind::Composed: {
      double sum = 0;
      for (const auto& part : event.events()) sum += careless_epsilon(part);
      return sum;
    }
#if DPTUNE_PLUGIN_ABI_MINOR >= 3
    case Kind::ReplaceOne:  // group privacy of size 2 (a replacement: a removal and an addition)
      return 2 * careless_epsilon(event.inner());
#endif
    default:
      return 0;  // the carelessness the host protects against
  }
}

class CarelessAccountant final : public dptune::Accountant {
 public:
  explicit CarelessAccountant(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  std::string unsupported_reason(const dptune::DpEvent&) const override { return ""; }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    dptune::PrivacyGuarantee g;
    g.epsilon = careless_epsilon(event);
    g.delta = delta;
    g.accountant = "careless";
    return g;
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    dptune::PrivacyGuarantee g = this->epsilon(event, 0);
    g.epsilon = epsilon;
    return g;
  }
};

}  // namespace

// One more macro level, so that DPTUNE_TEST_ACCOUNTANT_NAME is expanded before DPTUNE_PLUGIN pastes
// it.
#define DPTUNE_TEST_CARELESS_PLUGIN(NAME)            \
  DPTUNE_PLUGIN(                                     \
      accountant, NAME, CarelessAccountant, "0.1.0", \
      "test: a careless accountant built for ABI 2." DPTUNE_TEST_STR(DPTUNE_PLUGIN_ABI_MINOR))
#define DPTUNE_TEST_STR_(x) #x
#define DPTUNE_TEST_STR(x) DPTUNE_TEST_STR_(x)
DPTUNE_TEST_CARELESS_PLUGIN(DPTUNE_TEST_ACCOUNTANT_NAME)
