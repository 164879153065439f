// A test accountant with the bug `dptune check accountant` exists to catch: it forgets how many
// times an event ran (a k-fold self-composition is priced as one run, a composition as its worst
// part).  Everything else is sound: a Gaussian of noise multiplier s is priced through zCDP
// (ρ = 1/(2s²), ε = ρ + 2√(ρ log(1/δ)); Bun & Steinke 2016, Prop. 1.3 and 1.6) and a Laplace of
// scale b as pure (1/b)-DP, so one run alone passes every check.
#include <algorithm>
#include <cmath>

#include "dptune/errors.hpp"
#include "dptune/plugin.hpp"

namespace {

using Kind = dptune::DpEvent::Kind;

class ForgetfulAccountant final : public dptune::Accountant {
 public:
  explicit ForgetfulAccountant(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  std::string unsupported_reason(const dptune::DpEvent& event) const override {
    switch (event.kind()) {
      case Kind::Gaussian:
      case Kind::Laplace:
        return "";
      case Kind::SelfComposed:
        return unsupported_reason(event.inner());
      case Kind::Composed:
        for (const auto& part : event.events())
          if (auto why = unsupported_reason(part); !why.empty()) return why;
        return "";
      default:
        return "forgetful prices Gaussian and Laplace events and their compositions only";
    }
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    if (const auto why = unsupported_reason(event); !why.empty()) throw dptune::PrivacyError(why);
    dptune::PrivacyGuarantee g;
    g.epsilon = price(event, delta);
    g.delta = delta;
    g.accountant = "forgetful";
    return g;
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    // The smallest δ on a coarse grid whose ε fits (an upper bound; 1 when none does).
    dptune::PrivacyGuarantee g = this->epsilon(event, 1);
    g.epsilon = epsilon;
    g.delta = 1;
    for (int k = 0; k < 40; ++k) {  // δ = 1e-12 · 2^k, below 1
      const double d = std::ldexp(1e-12, k);
      if (price(event, d) <= epsilon) {
        g.delta = d;
        break;
      }
    }
    return g;
  }

 private:
  static double price(const dptune::DpEvent& event, double delta) {
    switch (event.kind()) {
      case Kind::Gaussian: {
        const double s = event.noise_multiplier(), rho = 1 / (2 * s * s);
        return rho + 2 * std::sqrt(rho * std::log(1 / delta));
      }
      case Kind::Laplace:
        return 1 / event.noise_multiplier();
      case Kind::SelfComposed:
        return price(event.inner(), delta);  // the bug: the count is forgotten
      default: {                             // Composed
        double worst = 0;
        for (const auto& part : event.events()) worst = std::max(worst, price(part, delta));
        return worst;  // the bug: the worst part, not the sum
      }
    }
  }
};

}  // namespace

DPTUNE_PLUGIN(accountant, forgetful, ForgetfulAccountant, "0.1.0",
              "test: an accountant that forgets how many times an event ran")
