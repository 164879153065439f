// The PLD accountant: DpEvent → PLDs of both directions → (ε, δ).  See pld/calculator.hpp.
#include "pld/calculator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "dptune/errors.hpp"
#include "dptune/helpers/events.hpp"
#include "dptune/helpers/recent_results.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/params.hpp"
#include "pld/discrete_on_grid.hpp"
#include "selection/profile.hpp"

namespace dptune::pld {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using K = DpEvent::Kind;

std::string num(double x) { return to_string(Value{x}); }

std::string short_num(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

std::optional<double> gaussian_inverse_variance(const DpEvent& e);

/// Why `e` (already restated for its relation) has no PLD here; empty when it has one.
std::string reason_of(const DpEvent& e) {
  switch (e.kind()) {
    case K::NoOp:
    case K::Gaussian:
    case K::Laplace:
    case K::PureDp:
    case K::ApproxDp:
      return {};
    case K::NonPrivate:
      return "a non-private event has no finite privacy guarantee";
    case K::Zcdp:
      return "zCDP bounds Renyi divergences only and fixes no privacy loss distribution; use the "
             "rdp accountant";
    case K::PoissonSampled: {
      const K inner = e.inner().kind();
      if (inner == K::Gaussian || inner == K::Laplace || inner == K::NoOp) return {};
      if (inner == K::DiscreteGaussian || inner == K::DiscreteGaussianOnGrid ||
          inner == K::DiscreteGaussianSum)
        return reason_of(e.inner());
      return "Poisson sampling is priced here for a Gaussian or Laplace inner event only (got " +
             std::string(DpEvent::kind_name(inner)) + "); use the rdp accountant";
    }
    case K::SampledWithoutReplacement:
      if (gaussian_inverse_variance(e.inner())) return {};
      if (e.inner().kind() == K::DiscreteGaussian ||
          e.inner().kind() == K::DiscreteGaussianOnGrid ||
          e.inner().kind() == K::DiscreteGaussianSum)
        return reason_of(e.inner());
      return "sampling without replacement (fixed-size lots) is priced here for a Gaussian inner "
             "event only (got " +
             e.inner().to_string() + "); use the rdp accountant";
    case K::RepeatAndSelect:
      return "a repeat-and-select (private selection) inside another event is not a composition "
             "of privacy loss distributions (only a whole event that is one repeat-and-select is "
             "priced here, from its base's privacy profile); use the rdp accountant";
    case K::AdaptiveRepeatAndSelect:
      return "an adaptive repeat-and-select (DP-HyPO) has no privacy-profile bound here, only the "
             "Renyi-DP bound of Wang et al. 2023, Theorem 1; use the rdp accountant";
    case K::RepeatUntilAccepted:
      return "repeat-until-accepted is not a composition of privacy loss distributions; use the "
             "rdp accountant (Papernot & Steinke 2022)";
    case K::SelfComposed:
      return reason_of(e.inner());
    case K::Composed:
    case K::OneOf:
      for (const auto& c : e.events())
        if (auto why = reason_of(c); !why.empty()) return why;
      return {};
    case K::ReplaceOne:
      return "replace_one left after restatement";  // restated_for removes every wrapper
    case K::DiscreteGaussian:
      // Its RDP curve is the continuous one (rdp prices it), but its hockey-stick curve is not:
      // at scale s = 1/2 and shift 1 the discrete pair's total variation is 0.79 against the
      // continuous Gaussian's 0.68 (tests/accounting/discrete_gaussian_accounting_test.cpp).
      return "the discrete Gaussian's privacy loss distribution depends on its scale in grid "
             "units and on the direction of the integer shift, which the event does not fix, and "
             "can exceed the continuous Gaussian's (Canonne, Kamath & Steinke 2020, Thm 7); use "
             "the rdp accountant, whose integer-order bounds hold for it";
    case K::DiscreteGaussianOnGrid:
      // Reached only when continuous_surrogate kept the leaf: min_scale <= s₂.
      return "discrete_gaussian_on_grid with min_scale " + num(e.min_scale()) +
             " <= 3 lattice units is too coarse for the continuous-Gaussian bound "
             "(docs/accounting.md); use the rdp accountant";
    case K::DiscreteGaussianSum:
      // Its proven bound (Kairouz, Liu & Steinke 2021, Proposition 14) is on Renyi divergences;
      // a privacy-profile bound of the sum is not proven here (docs/noise.md).
      return "the sum of " + std::to_string(e.summands()) +
             " discrete Gaussians is not a discrete Gaussian and has only a Renyi-DP bound "
             "here (Kairouz, Liu & Steinke 2021, Proposition 14); use the rdp accountant";
  }
  return "unknown event kind";
}

/// 1/σ² of an event made only of Gaussians and their compositions (Gaussian DP composes exactly:
/// Dong, Roth & Su 2019, Corollary 3.3); nothing for any other event.
std::optional<double> gaussian_inverse_variance(const DpEvent& e) {
  switch (e.kind()) {
    case K::NoOp:
      return 0.0;
    case K::Gaussian:
      return e.noise_multiplier() > 0 ? 1 / (e.noise_multiplier() * e.noise_multiplier()) : kInf;
    case K::SelfComposed: {
      const auto inner = gaussian_inverse_variance(e.inner());
      if (!inner) return std::nullopt;
      return *inner == 0 ? 0.0 : static_cast<double>(e.count()) * *inner;
    }
    case K::Composed: {
      double sum = 0;
      for (const auto& c : e.events()) {
        const auto one = gaussian_inverse_variance(c);
        if (!one) return std::nullopt;
        sum += *one;
      }
      return sum;
    }
    default:
      return std::nullopt;
  }
}

/// Prices a restated, supported event.
class Pricing {
 public:
  Pricing(const Options& options, Estimate estimate) : options_(options), estimate_(estimate) {}

  Directions price(const DpEvent& e) const {
    if (const auto iv = gaussian_inverse_variance(e); iv && e.kind() != K::Gaussian)
      return *iv == 0 ? identity() : gaussian(1 / std::sqrt(*iv), options_, estimate_);
    switch (e.kind()) {
      case K::NoOp:
        return identity();
      case K::Gaussian:
        return gaussian(e.noise_multiplier(), options_, estimate_);
      case K::Laplace:
        return laplace(e.noise_multiplier(), options_, estimate_);
      case K::PureDp:
        return approx_dp(e.epsilon(), 0, options_, estimate_);
      case K::ApproxDp:
        return approx_dp(e.epsilon(), e.delta(), options_, estimate_);
      case K::PoissonSampled:
        if (e.inner().kind() == K::NoOp || e.sampling_probability() == 0) return identity();
        return poisson_sampled(e.sampling_probability(), e.inner().noise_multiplier(),
                               e.inner().kind() == K::Laplace, options_, estimate_);
      case K::SampledWithoutReplacement: {
        // The inner event is stated for replace-one neighbours (restated_for); Gaussians on the
        // same lot compose into one Gaussian exactly.
        const double iv = *gaussian_inverse_variance(e.inner());
        if (iv == 0 || e.sample_size() == 0) return identity();
        const double gamma =
            static_cast<double>(e.sample_size()) / static_cast<double>(e.source_size());
        return pld::sampled_without_replacement(gamma, 1 / std::sqrt(iv), options_, estimate_);
      }
      case K::SelfComposed:
        return self_composed(price(e.inner()), e.count());
      case K::Composed:
        return composed(e.events());
      case K::OneOf:
        return one_of(e.events());
      default:
        throw PrivacyError("the pld accountant cannot price " + e.to_string());
    }
  }

 private:
  static Directions identity() { return Directions{Pld{0, {1.0}, 0}, std::nullopt}; }

  Directions self_composed(const Directions& d, std::int64_t k) const {
    if (!d.add) return Directions{self_compose(d.remove, k, options_, estimate_), std::nullopt};
    auto [remove, add] = self_compose_both(d.remove, *d.add, k, options_, estimate_);
    return Directions{std::move(remove), std::move(add)};
  }

  Directions compose_two(const Directions& a, const Directions& b) const {
    Directions out{compose(a.remove, b.remove, options_, estimate_), std::nullopt};
    if (a.add || b.add)
      out.add = compose(a.add_or_remove(), b.add_or_remove(), options_, estimate_);
    return out;
  }

  Directions composed(const std::vector<DpEvent>& events) const {
    // Gaussians merge exactly; every other distinct child is priced once and self-composed by
    // its multiplicity (composition is commutative).
    double inverse_variance = 0;
    std::vector<std::pair<const DpEvent*, std::int64_t>> groups;
    std::unordered_map<std::size_t, std::vector<std::size_t>> by_hash;
    for (const auto& c : events) {
      if (const auto iv = gaussian_inverse_variance(c)) {
        inverse_variance += *iv;
        continue;
      }
      auto& bucket = by_hash[structural_hash(c)];
      const auto same = std::find_if(bucket.begin(), bucket.end(),
                                     [&](std::size_t g) { return *groups[g].first == c; });
      if (same != bucket.end()) {
        ++groups[*same].second;
        continue;
      }
      bucket.push_back(groups.size());
      groups.emplace_back(&c, 1);
    }
    Directions out = inverse_variance > 0
                         ? gaussian(1 / std::sqrt(inverse_variance), options_, estimate_)
                         : identity();
    for (const auto& [event, count] : groups)
      out = compose_two(out, self_composed(price(*event), count));
    return out;
  }

  Directions one_of(const std::vector<DpEvent>& events) const {
    // A data-independent choice (published): each direction's hockey-stick curve is a mixture of
    // the alternatives', hence below their pointwise maximum, which dominate_all turns into one
    // PLD (so the bound composes like any other).
    if (estimate_ == Estimate::Optimistic)
      throw PrivacyError("the pld accountant has no optimistic estimate of one_of");
    std::vector<Pld> removes, adds;
    bool symmetric = true;
    for (const auto& c : events) {
      Directions d = price(c);
      symmetric = symmetric && !d.add;
      adds.push_back(d.add_or_remove());
      removes.push_back(std::move(d.remove));
    }
    Directions out{dominate_all(removes, options_), std::nullopt};
    if (!symmetric) out.add = dominate_all(adds, options_);
    return out;
  }

  const Options& options_;
  Estimate estimate_;
};

}  // namespace

Calculator::Calculator(Options options) : options_(std::move(options)) {
  const double h = options_.value_discretization_interval;
  if (!(h > 0 && h <= 1))
    throw InvalidArgument("value_discretization_interval " + num(h) + ": must be in (0, 1]");
  const double tau = options_.tail_mass_truncation;
  if (!(tau > 0 && tau <= 1e-3))
    throw InvalidArgument("tail_mass_truncation " + num(tau) + ": must be in (0, 1e-3]");
}

namespace {
/// The event restated for its relation, with its discrete_gaussian_on_grid leaves replaced by their
/// continuous surrogates (src/discrete_on_grid.cpp): what the PLDs are built from.
ContinuousSurrogate prepared(const DpEvent& event) {
  return continuous_surrogate(restated_for(event, neighbouring_of(event)));
}

/// The largest ε' with δ_pld(ε') ≤ δ − (1 + e^ε')η, from `epsilon_at` (ε of the PLD at a δ): with
/// E ≥ the answer, ε' = epsilon_at(δ − (1 + e^E)η) satisfies it, since the term grows with ε.
/// The subtraction is rounded down one ulp, so the PLD's δ never exceeds the exact difference.
template <typename EpsilonAt>
double epsilon_with_surrogate_delta(double log_eta, double delta, EpsilonAt epsilon_at) {
  double eps = epsilon_at(delta);
  if (!(log_eta > -kInf)) return eps;
  for (int round = 0; round < 8 && std::isfinite(eps); ++round) {
    const double cap = eps + 1;
    const double rest = delta - surrogate_delta(log_eta, cap);
    if (!(rest > 0)) return kInf;
    eps = epsilon_at(std::nextafter(rest, 0.0));
    if (eps <= cap) return eps;
  }
  return kInf;
}

/// δ_pld + (1 + e^ε)η, rounded up, at most 1.
double delta_with_surrogate_delta(double log_eta, double epsilon, double pld_delta) {
  if (!(log_eta > -kInf)) return pld_delta;
  return std::min(1.0, std::nextafter(pld_delta + surrogate_delta(log_eta, epsilon), 2.0));
}

}  // namespace

std::function<double(double)> worse_direction_profile(const Directions& d, double h,
                                                      double log_eta) {
  const auto remove = std::make_shared<const FastProfile>(d.remove, h);
  const auto add = d.add ? std::make_shared<const FastProfile>(*d.add, h) : remove;
  return [remove, add, log_eta](double eps) {
    return delta_with_surrogate_delta(log_eta, eps, std::max((*remove)(eps), (*add)(eps)));
  };
}

namespace {

/// What the derivation says about the surrogate, empty without one.
std::string surrogate_note(double log_eta) {
  if (!(log_eta > -kInf)) return {};
  char eta[32];
  std::snprintf(eta, sizeof eta, "%.3g", std::exp(log_eta));
  return "; discrete_gaussian_on_grid priced as the continuous Gaussian of multiplier sigma "
         "sqrt(1 - 9/min_scale^2), a post-processing of it up to total variation "
         "eta = 2^127 theta/(1 - theta) = " +
         std::string(eta) + " over all draws, added to delta as (1 + e^eps) eta";
}

/// A whole event that is one repeat-and-select with more than one run: priced from the base's
/// privacy profile (plugins/accountant/selection), not by composition.
bool is_selection(const DpEvent& raw) {
  return raw.kind() == K::RepeatAndSelect && !(raw.mean() == 1 && std::isfinite(raw.shape()));
}
/// K = 1 with a finite shape runs the base once: the base itself.
const DpEvent& without_single_run(const DpEvent& raw) {
  return raw.kind() == K::RepeatAndSelect && raw.mean() == 1 && std::isfinite(raw.shape())
             ? raw.inner()
             : raw;
}

// The PLDs of the last events priced.  A tuner's event is priced several times in one process (its
// dry run, the planner, epsilon and delta; the rdp accountant's profile route builds a pld
// calculator of its own each time), and one DP-SGD candidate set takes up to a second.  Two
// entries: the repeats come in pairs, and a PLD may hold up to max_points masses per direction.
std::shared_ptr<const Directions> priced(const Options& options, Estimate estimate,
                                         const DpEvent& event) {
  static RecentResults<std::tuple<Options, Estimate, DpEvent>, std::shared_ptr<const Directions>, 2>
      kept;
  return kept.get({options, estimate, event}, [&] {
    return std::make_shared<const Directions>(Pricing(options, estimate).price(event));
  });
}
}  // namespace

std::string Calculator::unsupported_reason(const DpEvent& event) const {
  try {
    const DpEvent raw = prepared(event).event;
    if (is_selection(raw)) return reason_of(raw.inner());
    return reason_of(without_single_run(raw));
  } catch (const PrivacyError& e) {
    return e.what();
  }
}

Directions Calculator::directions(const DpEvent& event, Estimate estimate) const {
  if (const auto why = unsupported_reason(event); !why.empty())
    throw PrivacyError("the pld accountant cannot price " + event.to_string() + ": " + why);
  const DpEvent raw = prepared(event).event;
  if (is_selection(raw))
    throw PrivacyError(
        "a repeat-and-select has no privacy loss distribution (its privacy profile "
        "is priced by epsilon() and delta())");
  return *priced(options_, estimate, without_single_run(raw));
}

std::optional<PrivacyGuarantee> Calculator::selection(const DpEvent& event, double delta,
                                                      double epsilon, bool want_epsilon) const {
  const ContinuousSurrogate surrogate = prepared(event);
  const DpEvent& raw = surrogate.event;
  if (!is_selection(raw)) return std::nullopt;
  if (const auto why = reason_of(raw.inner()); !why.empty())
    throw PrivacyError("the pld accountant cannot price " + event.to_string() + ": " + why);
  // The selection bound needs an upper bound on the base's hockey-stick divergence in both
  // orders of every pair of neighbours: the worse direction of its pessimistic PLD.
  // A discrete_gaussian_on_grid base: its surrogate's profile plus the additive term bounds its
  // own profile (src/discrete_on_grid.cpp).
  const double log_eta = surrogate.log_eta;
  const selection::Profile profile =
      worse_direction_profile(*priced(options_, Estimate::Pessimistic, raw.inner()),
                              options_.value_discretization_interval, log_eta);
  const auto runs = selection::Runs::from(
      std::isinf(raw.shape()) ? RepetitionDistribution::poisson(raw.mean())
                              : RepetitionDistribution::from_mean(raw.mean(), raw.shape()));
  const selection::Bound bound = want_epsilon ? selection::epsilon(profile, runs, delta)
                                              : selection::delta(profile, runs, epsilon);
  PrivacyGuarantee g;
  g.epsilon = want_epsilon ? bound.value : epsilon;
  g.delta = want_epsilon ? delta : bound.value;
  g.accountant = options_.name;
  g.derivation = bound.derivation + "; the base's privacy profile from its " +
                 describe(raw.inner(), Estimate::Pessimistic) + surrogate_note(log_eta);
  return g;
}

std::string Calculator::describe(const DpEvent& event, Estimate estimate) const {
  const bool pessimistic = estimate == Estimate::Pessimistic;
  return "privacy loss distribution (Meiser & Mohammadi 2018; Koskela, Jalko & Honkela 2020) for " +
         std::string(to_string(neighbouring_of(event))) + " neighbours, " +
         (pessimistic ? "pessimistic connect-the-dots discretisation (Doroshenko, Ghazi, Kamath, "
                        "Kumar & Manurangsi 2022), an upper bound"
                      : "optimistic discretisation (losses rounded down), a lower bound") +
         "; value_discretization_interval " + short_num(options_.value_discretization_interval) +
         ", tail_mass_truncation " + short_num(options_.tail_mass_truncation) +
         "; compositions by FFT convolution";
}

PrivacyGuarantee Calculator::vacuous(const DpEvent& event, double epsilon, double delta,
                                     const std::string& why) const {
  PrivacyGuarantee g;
  g.epsilon = epsilon;
  g.delta = delta;
  g.accountant = options_.name;
  g.derivation = "no finite bound at this grid (" + why + "); the trivial bound holds for " +
                 std::string(to_string(neighbouring_of(event))) + " neighbours";
  return g;
}

PrivacyGuarantee Calculator::epsilon(const DpEvent& event, double delta, Estimate estimate) const {
  if (!(delta >= 0 && delta < 1))
    throw InvalidArgument("delta " + num(delta) + ": must be in [0, 1)");
  Directions d;
  try {
    if (estimate == Estimate::Pessimistic)
      if (auto g = selection(event, delta, 0, true)) return *g;
    d = directions(event, estimate);
  } catch (const GridTooWide& e) {
    return vacuous(event, std::numeric_limits<double>::infinity(), delta, e.what());
  }
  const double h = options_.value_discretization_interval;
  const double log_eta = prepared(event).log_eta;
  const double remove = epsilon_with_surrogate_delta(
      log_eta, delta, [&](double at) { return d.remove.epsilon(h, at); });
  const double add = d.add ? epsilon_with_surrogate_delta(
                                 log_eta, delta, [&](double at) { return d.add->epsilon(h, at); })
                           : remove;
  PrivacyGuarantee g;
  g.epsilon = std::max(remove, add);
  g.delta = delta;
  g.accountant = options_.name;
  g.derivation = describe(event, estimate) + surrogate_note(log_eta);
  if (d.add)
    g.derivation += "; the worse of the remove direction (eps " + num(remove) +
                    ") and the add direction (eps " + num(add) + ")";
  return g;
}

PrivacyGuarantee Calculator::delta(const DpEvent& event, double epsilon, Estimate estimate) const {
  if (!(epsilon >= 0)) throw InvalidArgument("epsilon " + num(epsilon) + ": must be >= 0");
  Directions d;
  try {
    if (estimate == Estimate::Pessimistic)
      if (auto g = selection(event, 0, epsilon, false)) return *g;
    d = directions(event, estimate);
  } catch (const GridTooWide& e) {
    return vacuous(event, epsilon, 1, e.what());
  }
  const double h = options_.value_discretization_interval;
  const double log_eta = prepared(event).log_eta;
  const double remove = delta_with_surrogate_delta(log_eta, epsilon, d.remove.delta(h, epsilon));
  const double add =
      d.add ? delta_with_surrogate_delta(log_eta, epsilon, d.add->delta(h, epsilon)) : remove;
  PrivacyGuarantee g;
  g.epsilon = epsilon;
  g.delta = std::max(remove, add);
  g.accountant = options_.name;
  g.derivation = describe(event, estimate) + surrogate_note(log_eta);
  if (d.add)
    g.derivation += "; the worse of the remove direction (delta " + num(remove) +
                    ") and the add direction (delta " + num(add) + ")";
  return g;
}

}  // namespace dptune::pld
