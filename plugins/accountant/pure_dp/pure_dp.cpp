// A minimal accountant for pure and approximate DP events by basic composition (Dwork & Roth 2014,
// Theorem 3.16): ε and δ add up.  It accounts NoOp, PureDp, ApproxDp, Laplace (a Laplace mechanism
// with scale b·Δ is 1/b-DP, Dwork & Roth Theorem 3.6), SelfComposed and Composed.  Everything else
// (Gaussian, sampling, RDP-based selection) needs the RDP accountant and is refused, never guessed.
#include <cmath>
#include <limits>

#include "dptune/dptune.hpp"

namespace {

struct Cost {
  double epsilon = 0, delta = 0;
};

class PureDpAccountant final : public dptune::Accountant {
 public:
  explicit PureDpAccountant(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  std::string unsupported_reason(const dptune::DpEvent& event) const override {
    using K = dptune::DpEvent::Kind;
    switch (event.kind()) {
      case K::NoOp:
      case K::PureDp:
      case K::ApproxDp:
        return {};
      case K::Laplace:
        return event.noise_multiplier() > 0 ? std::string{}
                                            : "laplace with noise_multiplier 0 is not private";
      case K::SelfComposed:
        return unsupported_reason(event.inner());
      case K::Composed:
        for (const auto& e : event.events())
          if (auto why = unsupported_reason(e); !why.empty()) return why;
        return {};
      case K::NonPrivate:
        return "a non_private event has no privacy guarantee";
      default:
        return std::string(
                   "pure_dp accounts only pure/approximate DP events by basic composition; a ") +
               dptune::DpEvent::kind_name(event.kind()) + " event needs the rdp accountant";
    }
  }

  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    check_delta(delta, "delta");
    const Cost c = cost(event);
    if (c.delta > delta)
      throw dptune::PrivacyError(
          "pure_dp: the event needs delta >= " + dptune::to_string(dptune::Value{c.delta}) +
          " but the pipeline's delta is " + dptune::to_string(dptune::Value{delta}));
    dptune::PrivacyGuarantee g;
    g.epsilon = c.epsilon;
    g.delta = c.delta;
    g.accountant = "pure_dp";
    g.derivation = "basic composition (Dwork & Roth 2014, Thm 3.16) of " + event.to_string() +
                   "; holds for every delta >= " + dptune::to_string(dptune::Value{c.delta});
    return g;
  }

  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    dptune::require(epsilon >= 0 && !std::isnan(epsilon), "pure_dp: epsilon must be >= 0");
    const Cost c = cost(event);
    dptune::PrivacyGuarantee g;
    g.epsilon = epsilon;
    g.accountant = "pure_dp";
    if (epsilon >= c.epsilon) {
      g.delta = c.delta;
      g.derivation = "basic composition: (" + dptune::to_string(dptune::Value{c.epsilon}) + ", " +
                     dptune::to_string(dptune::Value{c.delta}) + ")-DP";
      return g;
    }
    // An (ε0, δ0)-DP mechanism is dominated by generalised randomised response (Kairouz, Oh &
    // Viswanath 2015, Theorem 2.1): it is (ε, δ0 + (1 − δ0)(e^{ε0} − e^{ε}) / (1 + e^{ε0}))-DP for
    // ε < ε0. Divided through by e^{ε0}: (e^{ε−ε0}·expm1(ε0 − ε)) / (e^{−ε0} + 1).
    const double ratio = std::isinf(c.epsilon)
                             ? 1.0
                             : std::exp(epsilon - c.epsilon) * std::expm1(c.epsilon - epsilon) /
                                   (std::exp(-c.epsilon) + 1.0);
    g.delta = std::min(1.0, c.delta + (1.0 - c.delta) * ratio);
    g.derivation =
        "basic composition to (" + dptune::to_string(dptune::Value{c.epsilon}) + ", " +
        dptune::to_string(dptune::Value{c.delta}) +
        ")-DP, then the privacy region of (eps, delta)-DP (Kairouz, Oh & Viswanath 2015, Thm 2.1)";
    return g;
  }

 private:
  static void check_delta(double delta, const char* name) {
    dptune::require(delta >= 0 && delta < 1,
                    std::string("pure_dp: ") + name + " must be in [0, 1)");
  }

  Cost cost(const dptune::DpEvent& event) const {
    if (auto why = unsupported_reason(event); !why.empty()) throw dptune::PrivacyError(why);
    using K = dptune::DpEvent::Kind;
    switch (event.kind()) {
      case K::NoOp:
        return {};
      case K::PureDp:
        return {event.epsilon(), 0};
      case K::ApproxDp:
        return {event.epsilon(), event.delta()};
      case K::Laplace:
        return {1.0 / event.noise_multiplier(), 0};
      case K::SelfComposed: {
        const Cost inner = cost(event.inner());
        const auto k = static_cast<double>(event.count());
        return {k * inner.epsilon, std::min(1.0, k * inner.delta)};
      }
      case K::Composed: {
        Cost total;
        for (const auto& e : event.events()) {
          const Cost c = cost(e);
          total.epsilon += c.epsilon;
          total.delta = std::min(1.0, total.delta + c.delta);
        }
        return total;
      }
      default:
        throw dptune::PrivacyError("pure_dp: unsupported event");  // unreachable: checked above
    }
  }
};

}  // namespace

DPTUNE_PLUGIN(accountant, pure_dp, PureDpAccountant, "1.0.0",
              "pure and approximate DP by basic composition (NoOp, PureDp, ApproxDp, Laplace)")
