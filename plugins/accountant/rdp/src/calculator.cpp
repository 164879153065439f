// The RDP accountant: DpEvent → Cost → (ε, δ).  See rdp/calculator.hpp.
#include "rdp/calculator.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include "dptune/errors.hpp"
#include "dptune/event_walk.hpp"
#include "dptune/helpers/events.hpp"
#include "dptune/helpers/rdp_conversion.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/params.hpp"
#include "pld/calculator.hpp"
#include "pld/discrete_on_grid.hpp"
#include "selection/profile.hpp"

namespace dptune::rdp {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using K = DpEvent::Kind;
using Cost = Calculator::Cost;
/// The largest integer order at which a Poisson-sampled Gaussian is costed exactly beyond the grid.
constexpr double kMostExactOrder = 4194304;  // 2^22

std::string num(double x) { return to_string(Value{x}); }

void add_note(std::vector<std::string>& notes, const std::string& note) {
  if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
}

/// The RDP → (ε, δ) conversions at one order, from their one home
/// (dptune/helpers/rdp_conversion.hpp).
double conversion_epsilon(Conversion conversion, double alpha, double rdp, double delta) {
  return conversion == Conversion::Classic ? rdp_to_epsilon_classic(alpha, rdp, delta)
                                           : rdp_to_epsilon(alpha, rdp, delta);
}

double conversion_log_delta(Conversion conversion, double alpha, double rdp, double epsilon) {
  return conversion == Conversion::Classic ? rdp_to_log_delta_classic(alpha, rdp, epsilon)
                                           : rdp_to_log_delta(alpha, rdp, epsilon);
}

const char* conversion_name(Conversion c) {
  return c == Conversion::Classic
             ? "classic RDP conversion eps = eps(a) + log(1/delta)/(a-1) (Mironov 2017, Prop. 3)"
             : "improved RDP conversion eps = eps(a) + log((a-1)/a) - (log delta + log a)/(a-1) "
               "(Liebenow et al. 2025, Thm I.1; Canonne, Kamath & Steinke 2020)";
}

/// Discrete Gaussian noise, with or without a stated minimum scale (the rdp bounds here hold for
/// every scale, so both kinds are priced alike).
bool is_discrete_gaussian(const DpEvent& e) {
  return e.kind() == K::DiscreteGaussian || e.kind() == K::DiscreteGaussianOnGrid;
}

// Gaussian differential privacy composes exactly: a composition of Gaussians with multipliers σ_i
// is one Gaussian with 1/σ² = Σ 1/σ_i² (Dong, Roth & Su 2019, Corollary 3.3).  Returns false when
// the event has any other leaf.
bool gaussian_only(const DpEvent& e, double& inverse_variance) {
  switch (e.kind()) {
    case K::NoOp:
      return true;
    case K::Gaussian:
      if (e.noise_multiplier() == 0) {
        inverse_variance = kInf;
        return true;
      }
      inverse_variance += 1 / (e.noise_multiplier() * e.noise_multiplier());
      return true;
    case K::SelfComposed: {
      double inner = 0;
      if (!gaussian_only(e.inner(), inner)) return false;
      inverse_variance += static_cast<double>(e.count()) * inner;
      return true;
    }
    case K::Composed:
      for (const auto& c : e.events())
        if (!gaussian_only(c, inverse_variance)) return false;
      return true;
    case K::OneOf: {
      // A data-independent choice among Gaussians (pick published) is dominated by the worst of
      // them: each pair is a post-processing of the worst Gaussian pair, and the mixture of
      // dominated pairs with equal weights on both sides is dominated by that pair (joint
      // convexity of the hockey-stick divergence).
      double worst = 0;
      for (const auto& c : e.events()) {
        double one = 0;
        if (!gaussian_only(c, one)) return false;
        worst = std::max(worst, one);
      }
      inverse_variance += worst;
      return true;
    }
    default:
      return false;
  }
}

/// The smallest δ at ε that the RDP curve (minimised over the orders) or the pure-DP bound (with
/// the privacy region of ε-DP below it; Kairouz, Oh & Viswanath 2015) proves for a cost's
/// non-approx part.  Shared by Calculator::delta and Theorem 6's δ̂.
struct DeltaBound {
  double delta = 1;
  double order = 0;  // the winning order; 0 unless the RDP route won
  enum class Route { Trivial, Rdp, Pure, PureRegion } route = Route::Trivial;
};

DeltaBound rdp_or_pure_delta(const Cost& c, const std::vector<double>& orders,
                             Conversion conversion, double epsilon) {
  DeltaBound bound;
  double best_log = 0;  // δ ≤ 1
  for (std::size_t i = 0; i < c.rdp.size(); ++i) {
    if (std::isinf(c.rdp[i])) continue;
    const double ld = conversion_log_delta(conversion, orders[i], c.rdp[i], epsilon);
    if (ld < best_log) {
      best_log = ld;
      bound.order = orders[i];
      bound.route = DeltaBound::Route::Rdp;
    }
  }
  bound.delta = std::exp(best_log);
  if (std::isfinite(c.pure_epsilon)) {
    const bool covered = epsilon >= c.pure_epsilon;
    const double pure_delta = covered ? 0.0
                                      : std::exp(epsilon - c.pure_epsilon) *
                                            std::expm1(c.pure_epsilon - epsilon) /
                                            (std::exp(-c.pure_epsilon) + 1);
    if (pure_delta <= bound.delta) {
      bound.delta = pure_delta;
      bound.order = 0;
      bound.route = covered ? DeltaBound::Route::Pure : DeltaBound::Route::PureRegion;
    }
  }
  return bound;
}

/// The noise multiplier of one Gaussian equivalent to an event made only of Gaussians (exact GDP
/// composition, see gaussian_only); nothing when the event has other leaves or no finite noise.
std::optional<double> composed_gaussian_multiplier(const DpEvent& event) {
  double inverse_variance = 0;
  if (!gaussian_only(event, inverse_variance) || !(inverse_variance > 0) ||
      !std::isfinite(inverse_variance))
    return std::nullopt;
  return 1 / std::sqrt(inverse_variance);
}

/// δ(ε) of a costed event by every route the accountant has (the RDP conversion minimised over the
/// orders, the pure-DP region, the analytic Gaussian where exact, plus the approx_dp parts): the
/// accountant's delta(), and the base's privacy profile handed to the selection bound.
struct ProfilePoint {
  double delta = 1;
  double order = 0;
  std::string how;
};

ProfilePoint profile_delta(const Options& options, const Cost& c, const DpEvent& raw,
                           double epsilon) {
  ProfilePoint point;
  const double rest_eps = epsilon - c.approx_epsilon;
  if (rest_eps < 0) {
    point.how =
        "trivial bound: epsilon is below the approx_dp parts' own epsilon " + num(c.approx_epsilon);
    return point;
  }
  const DeltaBound bound = rdp_or_pure_delta(c, options.orders, options.conversion, rest_eps);
  point.delta = bound.delta;
  point.order = bound.order;
  switch (bound.route) {
    case DeltaBound::Route::Trivial:
      point.how = "trivial bound delta = 1";
      break;
    case DeltaBound::Route::Rdp:
      point.how =
          std::string(conversion_name(options.conversion)) + " at order " + num(bound.order);
      break;
    case DeltaBound::Route::Pure:
      point.how = "pure DP bound";
      break;
    case DeltaBound::Route::PureRegion:
      point.how = "pure DP bound and the privacy region of eps-DP (Kairouz, Oh & Viswanath 2015)";
      break;
  }
  if (options.analytic_gaussian) {
    if (const auto s = composed_gaussian_multiplier(raw)) {
      const double d = analytic_gaussian_delta(*s, rest_eps);
      if (d < point.delta) {
        point.delta = d;
        point.order = 0;
        point.how = "analytic Gaussian mechanism (Balle & Wang 2018, Thm 8)";
      }
    }
  }
  point.delta = std::min(1.0, point.delta + c.approx_delta);
  return point;
}

std::vector<RdpPoint> finite_curve(const Cost& c, const std::vector<double>& orders) {
  std::vector<RdpPoint> curve;
  for (std::size_t i = 0; i < c.rdp.size(); ++i)
    if (c.rdp[i] < kInf) curve.push_back({orders[i], c.rdp[i]});
  return curve;
}

/// "how; note; note…" — the winning route followed by every theorem the cost used.
std::string with_notes(std::string how, const Cost& c) {
  for (const auto& n : c.notes) how += "; " + n;
  return how;
}

class Costing {
 public:
  /// `beyond_grid`: the orders are far above the grid (order_extension below), where the
  /// amplification sums cost O(α) to O(α²) terms; sampling is then costed as its inner event,
  /// which is always valid (see unamplified()).
  explicit Costing(const Options& options, bool beyond_grid = false)
      : options_(options), beyond_grid_(beyond_grid) {}

  Cost zero(std::size_t n) const {
    Cost c;
    c.rdp.assign(n, 0.0);
    c.pure_epsilon = 0;
    return c;
  }

  // The cost over the given orders (the accountant's grid, or 2..A for without-replacement
  // sampling).
  Cost cost(const DpEvent& e, const std::vector<double>& orders) {
    const std::size_t n = orders.size();
    switch (e.kind()) {
      case K::NoOp:
        return zero(n);
      case K::NonPrivate:
        throw PrivacyError("a non_private event has no privacy guarantee");
      case K::Gaussian:
      case K::DiscreteGaussian:
      case K::DiscreteGaussianOnGrid:
      case K::DiscreteGaussianSum:
      case K::Laplace:
      case K::PureDp:
      case K::ApproxDp:
      case K::Zcdp:
        return leaf(e, orders);
      case K::PoissonSampled:
        return poisson_sampled(e, orders);
      case K::SampledWithoutReplacement:
        return without_replacement(e, orders);
      case K::SelfComposed: {
        Cost c = cost(e.inner(), orders);
        scale(c, static_cast<double>(e.count()));
        return c;
      }
      case K::Composed:
        return composed(e, orders);
      case K::RepeatAndSelect:
        return repeat_and_select(e, orders);
      case K::AdaptiveRepeatAndSelect:
        return adaptive_repeat_and_select(e, orders);
      case K::OneOf:
        return one_of(e, orders);
      case K::RepeatUntilAccepted:
        return repeat_until_accepted(e, orders);
      case K::ReplaceOne:  // removed by restated_for before any costing
        throw PrivacyError("internal: a replace_one event reached the costing unrestated");
    }
    throw PrivacyError("unknown event kind");
  }

 private:
  /// A leaf's cost: its closed-form RDP curve, pure ε, or (ε, δ) kept apart.
  Cost leaf(const DpEvent& e, const std::vector<double>& orders) const {
    const std::size_t n = orders.size();
    switch (e.kind()) {
      case K::Gaussian: {
        Cost c = zero(n);
        for (std::size_t i = 0; i < n; ++i)
          c.rdp[i] = gaussian_rdp(e.noise_multiplier(), orders[i]);
        c.pure_epsilon = kInf;
        add_note(c.notes, "Gaussian: eps(a) = a/(2 sigma^2) (Mironov 2017, Prop. 7)");
        return c;
      }
      case K::DiscreteGaussian:
      case K::DiscreteGaussianOnGrid: {
        // Integer shift μ, ‖μ‖ <= s/σ: D_α(N_Z(0,s²)^d ‖ N_Z(μ,s²)^d) <= α‖μ‖²/(2s²) at every
        // order (Canonne, Kamath & Steinke 2020, Proposition 5, per coordinate by independence).
        Cost c = zero(n);
        for (std::size_t i = 0; i < n; ++i)
          c.rdp[i] = gaussian_rdp(e.noise_multiplier(), orders[i]);
        c.pure_epsilon = kInf;
        add_note(c.notes,
                 "discrete Gaussian: eps(a) = a/(2 sigma^2) at every order (Canonne, Kamath & "
                 "Steinke 2020, Prop. 5)");
        return c;
      }
      case K::DiscreteGaussianSum: {
        // Not a discrete Gaussian: Kairouz, Liu & Steinke 2021, Proposition 14 (src/math.cpp).
        const double tau = discrete_gaussian_sum_tau(e.min_scale(), e.summands());
        Cost c = zero(n);
        for (std::size_t i = 0; i < n; ++i)
          c.rdp[i] = discrete_gaussian_sum_rdp(e.noise_multiplier(), tau, e.dimension(), orders[i]);
        c.pure_epsilon = kInf;
        add_note(c.notes,
                 "sum of discrete Gaussians: eps(a) = min(a/(2 sigma^2) + tau d, a/2 (1/sigma + "
                 "tau sqrt d)^2), tau = 10 sum_{k<n} exp(-2 pi^2 s^2 k/(k+1)) (Kairouz, Liu & "
                 "Steinke 2021, Prop. 14)");
        return c;
      }
      case K::Laplace: {
        Cost c = zero(n);
        const double b = e.noise_multiplier();
        for (std::size_t i = 0; i < n; ++i) c.rdp[i] = laplace_rdp(b, orders[i]);
        c.pure_epsilon = b == 0 ? kInf : 1 / b;
        add_note(c.notes, "Laplace: closed-form RDP (Mironov 2017, Prop. 6) and 1/b pure DP");
        return c;
      }
      case K::PureDp:
        return pure(e.epsilon(), orders);
      case K::ApproxDp: {
        if (e.delta() == 0) return pure(e.epsilon(), orders);
        Cost c = zero(n);
        c.has_approx = true;
        c.approx_epsilon = e.epsilon();
        c.approx_delta = e.delta();
        add_note(c.notes,
                 "approx_dp has no RDP curve: composed separately by basic composition "
                 "(Dwork & Roth 2014, Thm 3.16)");
        return c;
      }
      case K::Zcdp: {
        Cost c = zero(n);
        for (std::size_t i = 0; i < n; ++i) c.rdp[i] = e.rho() * orders[i];
        c.pure_epsilon = e.rho() == 0 ? 0 : kInf;
        add_note(c.notes, "zCDP: eps(a) = rho a (Bun & Steinke 2016)");
        return c;
      }
      default:
        throw PrivacyError("internal: not a leaf event");
    }
  }

  Cost composed(const DpEvent& e, const std::vector<double>& orders) {
    const std::size_t n = orders.size();
    // Children are grouped before any is costed: Gaussian and zCDP children have linear RDP
    // curves (α/(2σ²), ρα) and add up as one ρ; equal children are costed once and scaled by
    // their multiplicity.  A million-step trace costs O(steps) hashing plus O(distinct) curves.
    double linear_rho = 0;
    bool any_linear = false, linear_infinite = false;
    std::unordered_map<std::size_t, std::vector<std::pair<const DpEvent*, std::int64_t>>> groups;
    for (const auto& child : e.events()) {
      if (child.kind() == K::Gaussian || child.kind() == K::Zcdp) {
        any_linear = true;
        if (child.kind() == K::Zcdp) {
          linear_rho += child.rho();
        } else if (child.noise_multiplier() == 0) {
          linear_infinite = true;
        } else {
          linear_rho += 1 / (2 * child.noise_multiplier() * child.noise_multiplier());
        }
        continue;
      }
      auto& bucket = groups[structural_hash(child)];
      bool found = false;
      for (auto& [event, count] : bucket)
        if (*event == child) {
          ++count;
          found = true;
          break;
        }
      if (!found) bucket.emplace_back(&child, 1);
    }
    Cost total = zero(n);
    if (any_linear) {
      for (std::size_t i = 0; i < n; ++i)
        total.rdp[i] = linear_infinite ? kInf : linear_rho * orders[i];
      if (linear_infinite || linear_rho > 0) total.pure_epsilon = kInf;
      add_note(total.notes,
               "Gaussian and zCDP steps: eps(a) = a/(2 sigma^2), rho a, added up (Mironov 2017, "
               "Prop. 7; Bun & Steinke 2016)");
    }
    for (auto& [hash, bucket] : groups)
      for (auto& [event, count] : bucket) {
        Cost c = cost(*event, orders);
        scale(c, static_cast<double>(count));
        add(total, c);
      }
    return total;
  }

  Cost pure(double epsilon, const std::vector<double>& orders) const {
    Cost c = zero(orders.size());
    for (std::size_t i = 0; i < orders.size(); ++i) c.rdp[i] = pure_dp_rdp(epsilon, orders[i]);
    c.pure_epsilon = epsilon;
    if (epsilon > 0)
      add_note(c.notes,
               "pure DP: RDP of the dominating randomised-response pair (Kairouz, Oh & Viswanath "
               "2015)");
    return c;
  }

  static void scale(Cost& c, double k) {
    for (auto& r : c.rdp) r = k == 0 ? 0 : r * k;
    c.pure_epsilon = k == 0 ? 0 : c.pure_epsilon * k;
    c.approx_epsilon *= k;
    c.approx_delta = std::min(1.0, c.approx_delta * k);
    if (k == 0) c.has_approx = false;
  }

  static void add(Cost& total, const Cost& c) {
    for (std::size_t i = 0; i < total.rdp.size(); ++i) total.rdp[i] += c.rdp[i];
    total.pure_epsilon += c.pure_epsilon;
    if (c.has_approx) {
      total.has_approx = true;
      total.approx_epsilon += c.approx_epsilon;
      total.approx_delta = std::min(1.0, total.approx_delta + c.approx_delta);
    }
    for (const auto& n : c.notes) add_note(total.notes, n);
  }

  // Amplification of an (ε, δ)-DP inner event by sampling with rate q: (log(1 + q(e^ε − 1)), qδ)
  // (Poisson: Li, Qardaji & Su 2012; without replacement, substitution: Balle, Barthe & Gaboardi
  // 2018, Thm 9).  Returns the amplified cost with no RDP part of its own.
  Cost amplified_approx(const Cost& inner, double q, const std::vector<double>& orders,
                        const char* rule) const {
    const std::size_t n = orders.size();
    const double eps = inner.pure_epsilon + inner.approx_epsilon;
    if (std::isinf(eps))
      throw PrivacyError(std::string(rule) +
                         ": the inner event has neither an exact sampled analysis nor a finite "
                         "(eps, delta) bound");
    Cost c = zero(n);
    const double amplified = std::log1p(q * std::expm1(eps));
    if (inner.has_approx) {
      c.has_approx = true;
      c.approx_epsilon = amplified;
      c.approx_delta = q * inner.approx_delta;
      c.pure_epsilon = 0;
    } else {
      for (std::size_t i = 0; i < n; ++i) c.rdp[i] = pure_dp_rdp(amplified, orders[i]);
      c.pure_epsilon = amplified;
    }
    c.notes = inner.notes;
    add_note(c.notes, std::string(rule) +
                          ": amplification of (eps, delta)-DP by sampling, "
                          "(log(1 + q(e^eps - 1)), q delta)");
    return c;
  }

  // Sampling never costs more than running the inner event on the whole data set: the sampled
  // pair is a mixture of pairs each no further apart than the inner event's pair, and Rényi
  // divergence is jointly quasi-convex (van Erven & Harremoës 2014, Thm 13).  Valid for Poisson
  // (add/remove) and without-replacement (replace-one) sampling alike.
  Cost unamplified(const DpEvent& e, const std::vector<double>& orders) {
    Cost c = cost(e.inner(), orders);
    add_note(c.notes,
             "orders beyond the grid: sampling costed as its inner event (no amplification; "
             "joint quasi-convexity of Renyi divergence, van Erven & Harremoes 2014, Thm 13)");
    return c;
  }

  Cost poisson_sampled(const DpEvent& e, const std::vector<double>& orders) {
    const double q = e.sampling_probability();
    const std::size_t n = orders.size();
    if (q == 0) return zero(n);
    if (q == 1) return cost(e.inner(), orders);
    // Beyond the grid the Gaussian's amplified RDP stays exact at integer orders, whose binomial
    // sum has α + 1 terms: kept up to 2^22 (a few million terms in all over the doublings), so
    // that a Poisson-sampled Gaussian's ε keeps falling with the noise instead of stopping near
    // log(1/δ)/(α_max − 1) (q = 0.01, 1000 steps, δ = 1e-5: 0.0035 at σ = 1000 and at 10⁴).
    const bool gaussian_inner = e.inner().kind() == K::Gaussian || is_discrete_gaussian(e.inner());
    const bool exact_beyond =
        gaussian_inner && std::all_of(orders.begin(), orders.end(), [](double a) {
          return a == std::floor(a) && a <= kMostExactOrder;
        });
    if (beyond_grid_ && !exact_beyond) return unamplified(e, orders);
    if (e.inner().kind() == K::Gaussian) {
      Cost c = zero(n);
      for (std::size_t i = 0; i < n; ++i)
        c.rdp[i] = sampled_gaussian_rdp(q, e.inner().noise_multiplier(), orders[i]);
      c.pure_epsilon = kInf;
      add_note(c.notes,
               "Poisson-sampled Gaussian: exact for integer orders, convergent series for "
               "fractional ones (Mironov, Talwar & Zhang 2019, Sec. 3.3-3.4)");
      return c;
    }
    if (is_discrete_gaussian(e.inner())) {
      // discrete_gaussian_on_grid too: its min_scale is not needed for this bound.
      Cost c = zero(n);
      for (std::size_t i = 0; i < n; ++i)
        c.rdp[i] = sampled_discrete_gaussian_rdp(q, e.inner().noise_multiplier(), orders[i]);
      c.pure_epsilon = kInf;
      add_note(c.notes,
               "Poisson-sampled discrete Gaussian: the integer-order binomial sum of Mironov, "
               "Talwar & Zhang 2019 Sec. 3.3 bounds both directions (docs/accounting.md); "
               "fractional orders by the chord of the neighbouring integer orders");
      return c;
    }
    const Cost inner = cost(e.inner(), orders);
    return amplified_approx(inner, q, orders, "poisson_sampled");
  }

  // Wang, Balle & Kasiviswanathan 2019, Theorem 9 (replace-one adjacency, γ = m/n), integer α ≥ 2:
  // ε'(α) ≤ 1/(α−1) log(1 + γ² C(α,2) min{4(e^{ε(2)} − 1), e^{ε(2)} min{2, (e^{ε(∞)} − 1)²}}
  //                     + Σ_{j=3}^{α} γ^j C(α,j) e^{(j−1)ε(j)} min{2, (e^{ε(∞)} − 1)^j}).
  // Fractional α: K(α) = (α−1)ε'(α) is convex, so the chord between ⌊α⌋ and ⌈α⌉ (K(1) = 0) bounds
  // it.
  Cost without_replacement(const DpEvent& e, const std::vector<double>& orders) {
    const std::size_t n = orders.size();
    const auto source = static_cast<double>(e.source_size()),
               sample = static_cast<double>(e.sample_size());
    if (sample == 0) return zero(n);
    if (sample == source) return cost(e.inner(), orders);
    if (beyond_grid_) return unamplified(e, orders);
    const double gamma = sample / source;
    const auto max_order =
        static_cast<std::int64_t>(std::max(2.0, std::ceil(orders.empty() ? 2.0 : orders.back())));
    std::vector<double> integers;
    for (std::int64_t a = 2; a <= max_order; ++a) integers.push_back(static_cast<double>(a));
    const Cost inner = cost(e.inner(), integers);
    if (inner.has_approx) {
      return amplified_approx(inner, gamma, orders, "sampled_without_replacement");
    }
    const double eps_inf = inner.pure_epsilon;
    // log min{2, (e^{ε∞} − 1)^j} = min{log 2, j log(e^{ε∞} − 1)}.
    const double log_em1_inf = std::isinf(eps_inf) ? kInf : std::log(std::expm1(eps_inf));
    auto log_min2 = [&](double j) {
      return std::min(std::log(2.0), eps_inf == 0 ? -kInf : j * log_em1_inf);
    };
    // K at the integer orders the grid needs (the floor and ceiling of every order).
    std::vector<double> k_int(integers.size(), std::numeric_limits<double>::quiet_NaN());
    const double log_gamma = std::log(gamma);
    auto k_of = [&](double a) {
      const auto idx = static_cast<std::size_t>(a) - 2;
      if (!std::isnan(k_int[idx])) return k_int[idx];
      const double eps2 = inner.rdp[0];
      double log_sum = 0;  // log 1
      // log C(a, j) updated term by term: C(a, j) = C(a, j−1)·(a − j + 1)/j.
      double log_binom = std::log(a * (a - 1) / 2);
      const double t2 = std::min(std::log(4.0) + std::log(std::expm1(eps2)), eps2 + log_min2(2.0));
      log_sum = log_add(log_sum, 2 * log_gamma + log_binom + t2);
      for (std::size_t jj = 3; jj <= idx + 2; ++jj) {
        const auto j = static_cast<double>(jj);
        log_binom += std::log((a - j + 1) / j);
        const double eps_j = inner.rdp[jj - 2];
        log_sum = log_add(log_sum, j * log_gamma + log_binom + (j - 1) * eps_j + log_min2(j));
      }
      return k_int[idx] = log_sum;  // = (a − 1) ε'(a)
    };
    // When the inner event is (equivalent to) one Gaussian, the Gaussian-specific bound of the same
    // paper applies too; both are valid at every integer order, so their minimum is.  The true K is
    // convex in α (a log moment generating function), so the chord below stays sound.
    // Only the floors and ceilings of the grid's orders are computed (the sum is O(α) per order).
    std::vector<double> gaussian_k(integers.size() + 2, kInf);
    const auto sigma = composed_gaussian_multiplier(e.inner());
    if (sigma) {
      std::vector<int> needed;
      for (const double a : orders)
        for (const double b : {std::floor(a), std::ceil(a)})
          if (b >= 2 && (needed.empty() || needed.back() != static_cast<int>(b)))
            needed.push_back(static_cast<int>(b));
      const auto k = wor_gaussian_log_moments(gamma, *sigma, needed);
      for (std::size_t i = 0; i < needed.size(); ++i) gaussian_k[needed[i]] = k[i];
    }
    auto k_at = [&](double a) {
      return a <= 1 ? 0.0 : std::min(k_of(a), gaussian_k[static_cast<std::size_t>(a)]);
    };
    // Neither bound tends to 0 as the noise grows (their j ≥ 3 terms keep min{2, ·} = 2), so the
    // inner event's own cost caps them: see unamplified().
    const Cost whole = cost(e.inner(), orders);
    Cost c = zero(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double a = orders[i];
      const double lo = std::floor(a), hi = std::ceil(a);
      const double k = lo == hi ? k_at(a) : (hi - a) * k_at(lo) + (a - lo) * k_at(hi);
      c.rdp[i] = std::min(k / (a - 1), whole.rdp[i]);
    }
    // The pure part amplifies too (Balle, Barthe & Gaboardi 2018, Thm 9, substitution).
    c.pure_epsilon = std::isinf(eps_inf) ? kInf : std::log1p(gamma * std::expm1(eps_inf));
    c.notes = inner.notes;
    add_note(c.notes,
             !sigma
                 ? "sampling without replacement: Wang, Balle & Kasiviswanathan 2019, Thm 9 "
                   "(integer orders; fractional orders by convexity), replace-one adjacency"
                 : "sampling without replacement, Gaussian inner event: Wang, Balle & "
                   "Kasiviswanathan 2019, Thm 9 and its Gaussian-specific form (arXiv "
                   "1808.00087, Thm 27), the smaller at each integer order; fractional orders by "
                   "convexity; replace-one adjacency");
    add_note(c.notes,
             "never above the inner event's own RDP (joint quasi-convexity of Renyi divergence, "
             "van Erven & Harremoes 2014, Thm 13)");
    return c;
  }

  // A data-independent choice of one event whose pick may be published: with output (c, y) and
  // choice weights π, e^{(λ−1)D_λ} = Σ_c π(c) e^{(λ−1)D_λ(c)} ≤ max_c e^{(λ−1)D_λ(c)}, so the
  // pointwise maximum of the RDP curves (and of the pure bounds) is a valid cost.  Approximate-DP
  // parts mix the same way, to (max ε, max δ), but only when no child also has an RDP part.
  Cost one_of(const DpEvent& e, const std::vector<double>& orders) {
    const std::size_t n = orders.size();
    Cost c = zero(n);
    bool any_approx = false, any_rdp = false;
    for (const auto& child : e.events()) {
      const Cost k = cost(child, orders);
      for (std::size_t i = 0; i < n; ++i) c.rdp[i] = std::max(c.rdp[i], k.rdp[i]);
      c.pure_epsilon = std::max(c.pure_epsilon, k.pure_epsilon);
      if (k.has_approx) {
        any_approx = true;
        c.approx_epsilon = std::max(c.approx_epsilon, k.approx_epsilon);
        c.approx_delta = std::max(c.approx_delta, k.approx_delta);
      }
      if (k.pure_epsilon > 0 ||
          std::any_of(k.rdp.begin(), k.rdp.end(), [](double r) { return r > 0; }))
        any_rdp = true;
      for (const auto& note : k.notes) add_note(c.notes, note);
    }
    if (any_approx && any_rdp)
      throw PrivacyError(
          "one_of: a choice among events that mixes approx_dp parts with RDP or pure parts is "
          "not supported; give every choice as an RDP event, or every choice as approx_dp");
    c.has_approx = any_approx;
    add_note(c.notes, "one_of " + std::to_string(e.events().size()) +
                          " events: the worst of them (pointwise maximum of the RDP curves)");
    return c;
  }

  // Papernot & Steinke 2022, Appendix C, Corollary 16 (conditional sampling; Liu & Talwar's
  // threshold variant).  A is Q conditioned on its output being accepted; the modified Q̃ outputs ⊥
  // (accepted, data-independent) with probability p before each run, so Q̃(S) ≥ p and
  // D_λ(Q̃‖Q̃') ≤ D_λ(Q‖Q') (joint convexity).  With ε(·) the base's RDP curve (a bound in both
  // directions: the neighbouring relation is symmetric) and L = log(1/p):
  //   (i)   D_∞ ≤ 2 ε_∞                                                      (any p)
  //   (ii)  D_λ ≤ ε(λ) + (λ−2)/(λ−1)·ε(λ−1) + 2L/(λ−1)
  //   (iii) D_λ ≤ ε_∞ + (λ−2)/(λ−1)·ε(λ−1) + L/(λ−1)
  // For λ ≤ 2 the ε(λ−1) term is a Rényi divergence of order ≤ 1 times a coefficient ≤ 0 in
  // Proposition 15's proof, hence ≤ 0, and is dropped.  ε(λ−1) off the grid is bounded by the
  // smallest grid value at an order ≥ λ−1 (RDP grows with the order).
  Cost repeat_until_accepted(const DpEvent& e, const std::vector<double>& orders) {
    const std::size_t n = orders.size();
    const Cost base = cost(e.inner(), orders);
    if (base.has_approx)
      throw PrivacyError(
          "repeat_until_accepted of a base with approx_dp parts is not supported; give the base "
          "as an RDP or pure-DP event");
    const double p = e.stop_probability();
    const double eps_inf = base.pure_epsilon;
    if (p == 0 && std::isinf(eps_inf))
      throw PrivacyError(
          "repeat_until_accepted with stop_probability 0 is bounded only for a pure-DP base "
          "(Papernot & Steinke 2022, Corollary 16 (i)); give a stop_probability > 0, which bounds "
          "the acceptance probability below");
    Cost c = zero(n);
    c.notes = base.notes;
    c.pure_epsilon = 2 * eps_inf;
    const double log_inv_p = p > 0 ? -std::log(p) : kInf;
    for (std::size_t i = 0; i < n; ++i) {
      const double lambda = orders[i];
      double bound = std::isfinite(eps_inf) ? pure_dp_rdp(2 * eps_inf, lambda) : kInf;
      if (p > 0) {
        double lower_term = 0;  // (λ−2)/(λ−1)·ε(λ−1), 0 for λ ≤ 2
        if (lambda > 2) {
          double e_lm1 = kInf;
          for (std::size_t j = 0; j < n; ++j)
            if (orders[j] >= lambda - 1) e_lm1 = std::min(e_lm1, base.rdp[j]);
          lower_term = (lambda - 2) / (lambda - 1) * e_lm1;
        }
        bound = std::min(bound, base.rdp[i] + lower_term + 2 * log_inv_p / (lambda - 1));
        if (std::isfinite(eps_inf))
          bound = std::min(bound, eps_inf + lower_term + log_inv_p / (lambda - 1));
      }
      c.rdp[i] = bound;
    }
    add_note(
        c.notes,
        "repeat_until_accepted (stop probability " + num(p) +
            "): Papernot & Steinke 2022, Corollary 16 (conditional sampling, Liu & Talwar 2019)");
    return c;
  }

  Cost repeat_and_select(const DpEvent& e, const std::vector<double>& orders) {
    const std::size_t n = orders.size();
    const Cost base = cost(e.inner(), orders);
    if (capture_for_ == &e) *captured_base_ = base;
    if (base.has_approx)
      throw PrivacyError(
          "repeat_and_select of a base with approx_dp parts is not supported (Papernot & "
          "Steinke 2022, Lemma 20 is not implemented); give the base as an RDP event");
    const double mean = e.mean(), shape = e.shape();
    Cost c = zero(n);
    c.notes = base.notes;
    if (std::isinf(shape)) {
      // Papernot & Steinke 2022, Theorem 6 (Poisson(μ)): if e^{ε̂} ≤ 1 + 1/(λ−1), then
      // ε'(λ) = ε(λ) + μ δ̂ + log(μ)/(λ−1); take ε̂ = log(λ/(λ−1)), the largest allowed.  δ̂ is the
      // base's privacy profile at ε̂ by the accountant's tightest route (RDP conversion, pure
      // region, or the analytic Gaussian where exact).  The `best` accountant takes the same
      // theorem (selection::poisson_selection_rdp) with δ̂ from whichever member bounds the base
      // lowest.
      // The analytic Gaussian is the exact profile of a Gaussian-only base, so it is used here
      // whatever `analytic_gaussian` says (see tightest_base_profile).
      Options exact = options_;
      exact.analytic_gaussian = true;
      const selection::Profile profile = [&](double eps) {
        return profile_delta(exact, base, e.inner(), eps).delta;
      };
      for (std::size_t i = 0; i < n; ++i)
        c.rdp[i] = selection::poisson_selection_rdp(base.rdp[i], orders[i], mean, profile);
      c.pure_epsilon = kInf;
      add_note(c.notes,
               "repeat_and_select, Poisson(mean " + num(mean) +
                   "): Papernot & Steinke 2022, Theorem 6, (eps^, delta^) from the base's privacy "
                   "profile");
      return c;
    }
    if (mean == 1) {  // K = 1 with probability 1: one run of the base
      Cost one = base;
      add_note(one.notes, "repeat_and_select with mean 1: K = 1, the base event itself");
      return one;
    }
    const auto dist = RepetitionDistribution::from_mean(mean, shape);
    const double eta = shape, log_inv_gamma = -std::log(dist.gamma());
    // Papernot & Steinke 2022, Theorem 2: ε'(λ) = ε(λ) + (1+η)(1 − 1/λ̂)ε̂ + (1+η)log(1/γ)/λ̂ +
    // log(E[K])/(λ−1). The λ̂ terms do not depend on λ: minimise them once over λ̂ ∈ {1} ∪ orders ∪
    // {∞}.
    double best_hat = log_inv_gamma;  // λ̂ = 1: the ε̂ term vanishes
    double best_order = 1;
    for (std::size_t i = 0; i < n; ++i) {
      const double lh = orders[i];
      const double v = (1 - 1 / lh) * base.rdp[i] + log_inv_gamma / lh;
      if (v < best_hat) {
        best_hat = v;
        best_order = lh;
      }
    }
    if (base.pure_epsilon < best_hat) {  // λ̂ = ∞
      best_hat = base.pure_epsilon;
      best_order = kInf;
    }
    const double hat_term = (1 + eta) * best_hat;
    for (std::size_t i = 0; i < n; ++i)
      c.rdp[i] = base.rdp[i] + hat_term + std::log(dist.mean()) / (orders[i] - 1);
    // Corollary 3: an ε-DP base gives ((2 + η)ε, 0)-DP.
    c.pure_epsilon = (2 + eta) * base.pure_epsilon;
    add_note(c.notes,
             "repeat_and_select, " + dist.describe() +
                 ": Papernot & Steinke 2022, Theorem 2 with auxiliary order " + num(best_order) +
                 (std::isfinite(base.pure_epsilon) ? ", and Corollary 3 ((2 + eta) eps pure DP)"
                                                   : std::string{}));
    return c;
  }

  // Wang, Gao, Zhang, Su & Shen 2023 (DP-HyPO), Theorem 1: with the number of runs T ~ D_{θ,γ}
  // (truncated negative binomial, θ = η) and every sampling distribution within [c, C] times the
  // prior's density,
  //   ε'(α) = ε(α) + (1+θ)(1 − 1/α̂)ε̂ + (α/(α−1) + 1 + θ)·log(C/c) + (1+θ)log(1/γ)/α̂
  //           + log(E[T])/(α−1)
  // for every auxiliary order α̂ ≥ 1 with ε̂ = ε(α̂); Theorem 2: an ε-DP base gives
  // ((2+θ)(ε + log(C/c)), 0)-DP.  With C/c = 1 this is Papernot & Steinke 2022, Theorem 2 term by
  // term; restated_for turns density_ratio 1 into repeat_and_select, so that case never gets here.
  // The α̂ terms do not depend on α: minimised once over α̂ ∈ {1} ∪ orders ∪ {∞}, as for Theorem 2
  // (the α̂ → ∞ limit is (1+θ)ε_∞, an infimum of valid bounds).
  Cost adaptive_repeat_and_select(const DpEvent& e, const std::vector<double>& orders) {
    const std::size_t n = orders.size();
    const Cost base = cost(e.inner(), orders);
    if (base.has_approx)
      throw PrivacyError(
          "adaptive_repeat_and_select of a base with approx_dp parts is not supported (Wang et "
          "al. 2023, Theorems 1 and 2 assume a Renyi-DP or pure-DP base); give the base as an RDP "
          "event");
    const double mean = e.mean(), eta = e.shape(), log_ratio = std::log(e.density_ratio());
    Cost c = zero(n);
    c.notes = base.notes;
    if (mean == 1) {  // T = 1 with probability 1: one run, its candidate drawn from the prior
      Cost one = base;
      add_note(one.notes,
               "adaptive_repeat_and_select with mean 1: T = 1, one run of the base event");
      return one;
    }
    const auto dist = RepetitionDistribution::from_mean(mean, eta);
    const double log_inv_gamma = -std::log(dist.gamma());
    double best_hat = log_inv_gamma;  // α̂ = 1
    double best_order = 1;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = (1 - 1 / orders[i]) * base.rdp[i] + log_inv_gamma / orders[i];
      if (v < best_hat) {
        best_hat = v;
        best_order = orders[i];
      }
    }
    if (base.pure_epsilon < best_hat) {  // α̂ = ∞
      best_hat = base.pure_epsilon;
      best_order = kInf;
    }
    const double hat_term = (1 + eta) * best_hat;
    for (std::size_t i = 0; i < n; ++i) {
      const double alpha = orders[i];
      c.rdp[i] = base.rdp[i] + hat_term + (alpha / (alpha - 1) + 1 + eta) * log_ratio +
                 std::log(dist.mean()) / (alpha - 1);
    }
    c.pure_epsilon = (2 + eta) * (base.pure_epsilon + log_ratio);
    add_note(c.notes, "adaptive_repeat_and_select, " + dist.describe() +
                          ", density ratio C/c = " + num(e.density_ratio()) +
                          ": Wang et al. 2023 (DP-HyPO), Theorem 1 with auxiliary order " +
                          num(best_order) +
                          (std::isfinite(base.pure_epsilon)
                               ? ", and Theorem 2 ((2 + eta)(eps + log(C/c)) pure DP)"
                               : std::string{}));
    return c;
  }

  const Options& options_;
  bool beyond_grid_ = false;

 public:
  /// Records the base cost of the repeat-and-select `event` (the top-level one) when it is costed,
  /// so that the privacy-profile route does not cost the base a second time.
  void capture_base_of(const DpEvent* event, Cost* out) {
    capture_for_ = event;
    captured_base_ = out;
  }

 private:
  const DpEvent* capture_for_ = nullptr;
  Cost* captured_base_ = nullptr;
};

}  // namespace

Calculator::Calculator(Options options)
    : options_(std::move(options)), memo_(std::make_shared<CostMemo>()) {
  require(!options_.orders.empty(), "rdp accountant: at least one order is needed");
  std::sort(options_.orders.begin(), options_.orders.end());
  for (double a : options_.orders)
    require(a > 1 && std::isfinite(a), "rdp accountant: orders must be finite and > 1");
}

namespace {
bool profile_only_selection(const Options& options, const DpEvent& event);
}  // namespace

std::string Calculator::unsupported_reason(const DpEvent& event) const {
  if (!options_.pure_only && profile_only_selection(options_, event)) return {};
  try {
    const Cost c = cost(event);
    if (options_.pure_only && std::isinf(c.pure_epsilon))
      return options_.name + " accounts only events with a pure or approximate DP bound (" +
             event.to_string() + " has none); use the rdp accountant";
    return {};
  } catch (const Error& e) {
    return e.what();
  }
}

namespace {
/// True when `e` has a noise or privacy leaf stated for add/remove (outside every replace_one).
bool has_add_remove_leaf(const DpEvent& event) {
  return fold_event<bool>(event, [](const DpEvent& e, const std::vector<bool>& parts) {
    switch (e.kind()) {
      case K::NoOp:
      case K::NonPrivate:
      case K::ReplaceOne:  // everything inside is stated for replace-one
        return false;
      case K::Gaussian:
      case K::DiscreteGaussian:
      case K::DiscreteGaussianOnGrid:
      case K::DiscreteGaussianSum:
      case K::Laplace:
      case K::PureDp:
      case K::ApproxDp:
      case K::Zcdp:
        return true;
      default:  // a composite: any of its children
        return std::find(parts.begin(), parts.end(), true) != parts.end();
    }
  });
}

/// An event restated for the one relation its guarantee holds for (dp_event.hpp): what the
/// costing and the analytic Gaussian see, and a note that says which relation and how add/remove
/// parts were converted.
struct Restated {
  DpEvent raw;
  std::string note;
};

Restated for_its_relation(const DpEvent& event) {
  const Neighbouring relation = neighbouring_of(event);
  Restated r{restated_for(event, relation), std::string(to_string(relation)) + " neighbours"};
  if (relation == Neighbouring::ReplaceOne && has_add_remove_leaf(event))
    r.note +=
        " (a part stated for add/remove, e.g. a noise multiplier relative to a clipping norm, is "
        "restated by group privacy of size 2: sensitivity x2, eps x2, (eps, delta) -> (2 eps, "
        "(1 + e^eps) delta))";
  return r;
}

Calculator::Cost cost_of(const Options& options, const Restated& event,
                         Calculator::Cost* base_of_selection = nullptr) {
  Costing costing(options);
  if (base_of_selection != nullptr) costing.capture_base_of(&event.raw, base_of_selection);
  Calculator::Cost c = costing.cost(event.raw, options.orders);
  c.notes.insert(c.notes.begin(), event.note);
  return c;
}
}  // namespace

namespace {
/// The privacy-profile route for a repeat-and-select (plugins/accountant/selection): the base's
/// profile is this accountant's own δ(ε) of the base (profile_delta), any upper bound being sound.
/// Taken only when the whole event is one repeat-and-select (not K = 1); the accountant reports
/// the smaller of it and the RDP route (Papernot & Steinke 2022, Theorems 2 and 6), naming the
/// winner.
struct SelectionRoute {
  selection::Runs runs;
  selection::Profile profile;
  std::string winner(const std::string& derivation, const char* what,
                     const std::string& rdp_value) const {
    return derivation + " (beats the RDP route's " + what + " " + rdp_value + ")";
  }
  std::string loser(const std::string& how, const char* what,
                    const std::string& profile_value) const {
    return how + " (the RDP route beats the selection privacy profile's " + what + " " +
           profile_value + ")";
  }
};

/// The base of a repeat-and-select as the pld calculator must see it: the event as written (pld
/// restates it for its relation itself), which is `event`'s own inner event when `event` is the
/// repeat-and-select; nothing when the selection sits inside a wrapper that restating removed.
std::optional<DpEvent> unrestated_base(const DpEvent& event) {
  if (event.kind() == K::RepeatAndSelect) return event.inner();
  // Density ratio 1: the repeat_and_select restated_for turns it into.
  if (event.kind() == K::AdaptiveRepeatAndSelect && event.density_ratio() == 1)
    return event.inner();
  return std::nullopt;
}

/// The tightest upper bound on the base's privacy profile (both orders of every pair of
/// neighbours) that this accountant can state, for the selection bound: the smallest of
///  - its own δ(ε) (the RDP conversion, the pure-DP region; profile_delta),
///  - the analytic Gaussian (Balle & Wang 2018, Thm 8), the exact profile, for a base made only
///    of Gaussians, whatever `analytic_gaussian` says (that option chooses how the accountant
///    prices a Gaussian event itself; the selection bound only needs a sound profile), and
///  - the worse direction of the base's pessimistic PLD (Doroshenko et al. 2022: its hockey-stick
///    curve lies above the true one) where the pld calculator prices the base.
/// Each is an upper bound on the same hockey-stick divergences, so their minimum is one.  Fed the
/// RDP conversion alone, the bound printed 3.873 for E[K] = 10 (η = 5) runs of gaussian(√5) at
/// δ = 1e-6, against 3.320 fed the exact profile (tests/accounting/selection_profile_test.cpp).
selection::Profile tightest_base_profile(const Options& options,
                                         const std::shared_ptr<const Cost>& base,
                                         const std::shared_ptr<const DpEvent>& inner,
                                         const std::optional<DpEvent>& as_written) {
  Options exact = options;
  exact.analytic_gaussian = true;
  // A discrete_gaussian_on_grid base is priced by pld through its continuous surrogate, whose
  // PLDs leave out the additive δ (1 + e^ε)η (pld/discrete_on_grid.hpp); the profile adds it back.
  std::function<double(double)> pld_profile;
  if (as_written && !options.pure_only) {
    const pld::Options grid;
    const pld::Calculator pld_calculator{grid};
    if (pld_calculator.unsupported_reason(*as_written).empty()) {
      try {
        pld_profile = pld::worse_direction_profile(pld_calculator.directions(*as_written),
                                                   grid.value_discretization_interval,
                                                   pld::continuous_surrogate(*as_written).log_eta);
      } catch (const PrivacyError&) {
        // e.g. a grid too wide: pld_profile stays empty, and the other bounds remain
      }
    }
  }
  return [exact, base, inner, pld_profile](double eps) {
    double delta = profile_delta(exact, *base, *inner, eps).delta;
    if (pld_profile) delta = std::min(delta, pld_profile(eps));
    return delta;
  };
}

std::optional<SelectionRoute> selection_route(const Options& options, const DpEvent& raw,
                                              const std::optional<DpEvent>& as_written,
                                              const Cost* known_base = nullptr) {
  if (raw.kind() != K::RepeatAndSelect) return std::nullopt;
  const double mean = raw.mean(), shape = raw.shape();
  if (mean == 1 && !std::isinf(shape)) return std::nullopt;  // K = 1: the base itself
  const auto inner = std::make_shared<const DpEvent>(raw.inner());
  const auto base = std::make_shared<const Cost>(
      known_base != nullptr ? *known_base : Costing(options).cost(*inner, options.orders));
  SelectionRoute route{
      selection::Runs::from(std::isinf(shape) ? RepetitionDistribution::poisson(mean)
                                              : RepetitionDistribution::from_mean(mean, shape)),
      tightest_base_profile(options, base, inner, as_written)};
  return route;
}

constexpr const char* kByComposition =
    "selection by composition: delta_M(eps) <= sum_k P[K = k] delta of k composed runs of the "
    "base (joint convexity of the hockey-stick divergence; each k-fold composition priced by its "
    "RDP curve, pure and approx_dp parts, or exactly for Gaussians)";

/// The selection's δ(ε) by composition (selection::composition_delta): the k-fold composition of
/// the base priced by this accountant's own routes, its RDP curve and pure ε times k, its approx_dp
/// parts by basic composition, and the analytic Gaussian of the composed noise multiplier for a
/// Gaussian-only base.  Nothing for an event that is not one repeat-and-select with K > 1.
std::optional<double> selection_delta_by_composition(const Options& options, const DpEvent& raw,
                                                     const Cost& base, double epsilon) {
  if (raw.kind() != K::RepeatAndSelect) return std::nullopt;
  const double mean = raw.mean(), shape = raw.shape();
  if (mean == 1 && !std::isinf(shape)) return std::nullopt;
  const auto runs = std::isinf(shape) ? RepetitionDistribution::poisson(mean)
                                      : RepetitionDistribution::from_mean(mean, shape);
  Options exact = options;
  exact.analytic_gaussian = true;
  const auto composed = [&](std::int64_t k, double eps) {
    const auto times = static_cast<double>(k);
    Cost c = base;
    for (double& r : c.rdp) r *= times;
    c.pure_epsilon *= times;
    c.approx_epsilon *= times;
    c.approx_delta = std::min(1.0, c.approx_delta * times);
    return profile_delta(exact, c, DpEvent::self_composed(raw.inner(), k), eps).delta;
  };
  return selection::composition_delta(runs, composed, epsilon);
}

/// A repeat-and-select whose base has approx_dp parts has no RDP curve (Papernot & Steinke 2022's
/// Lemma 20 is not implemented), but the privacy-profile route applies to it: then that is the only
/// route. Any error (mixed relations, an unpriceable base) leaves the event to the usual path,
/// which reports it.
bool profile_only_selection(const Options& options, const DpEvent& event) {
  try {
    const Restated restated = for_its_relation(event);
    const DpEvent& raw = restated.raw;
    if (raw.kind() != K::RepeatAndSelect || (raw.mean() == 1 && !std::isinf(raw.shape())))
      return false;
    return Costing(options).cost(raw.inner(), options.orders).has_approx;
  } catch (const Error&) {
    return false;
  }
}

PrivacyGuarantee profile_only(const Options& options, const DpEvent& event, double delta,
                              double epsilon, bool want_epsilon) {
  const Restated restated = for_its_relation(event);
  const auto sel = selection_route(options, restated.raw, unrestated_base(event));
  const auto bound = want_epsilon ? selection::epsilon(sel->profile, sel->runs, delta)
                                  : selection::delta(sel->profile, sel->runs, epsilon);
  PrivacyGuarantee g;
  g.accountant = options.name;
  g.epsilon = want_epsilon ? bound.value : epsilon;
  g.delta = want_epsilon ? delta : bound.value;
  std::string how = bound.derivation;
  if (!want_epsilon) {
    const Cost base = Costing(options).cost(restated.raw.inner(), options.orders);
    const auto d = selection_delta_by_composition(options, restated.raw, base, epsilon);
    if (d && *d < g.delta) {
      g.delta = *d;
      how = kByComposition;
    }
  }
  g.derivation =
      how +
      "; the base has approx_dp parts, so there is no RDP route (Papernot & Steinke 2022, "
      "Lemma 20 is not implemented); " +
      restated.note;
  return g;
}
}  // namespace

/// The best conversion at orders above the grid, doubling from its largest while ε improves.  The
/// conversion term ≈ log(1/δ)/(α − 1) bounds ε from below at the largest order, so without this
/// ε could not tend to 0 as the noise grows (e.g. σ = 1e6 stopped at 0.0035 with the top order
/// 1024).  Beyond the grid (Costing's beyond_grid mode) a Poisson-sampled Gaussian keeps its
/// exact integer-order sum up to order 2^22; other sampling is costed unamplified, which is valid
/// at every order; an event the mode cannot cost ends the search.
struct GridExtension {
  double epsilon = kInf;
  double order = 0;
};

GridExtension beyond_the_grid(const Options& options, const DpEvent& raw, double rest_delta,
                              double to_beat) {
  GridExtension best{to_beat, 0};
  constexpr int kMostDoublings = 30;  // up to 2^30 times the grid's largest order
  double a = options.orders.back();
  for (int doubling = 1; doubling <= kMostDoublings; ++doubling) {
    a *= 2;
    double rdp = kInf;
    try {
      rdp = Costing(options, /*beyond_grid=*/true).cost(raw, {a}).rdp[0];
    } catch (const Error&) {
      break;
    }
    if (std::isinf(rdp)) break;
    const double eps = conversion_epsilon(options.conversion, a, rdp, rest_delta);
    if (!(eps < best.epsilon)) break;
    best = {eps, a};
  }
  return best;
}

Calculator::Cost Calculator::cost(const DpEvent& event) const { return costed(event)->cost; }

std::shared_ptr<const Calculator::Costed> Calculator::costed(const DpEvent& event) const {
  return memo_->get(event, [&] {
    auto fresh = std::make_shared<Costed>();
    fresh->cost = cost_of(options_, for_its_relation(event), &fresh->selection_base);
    return std::shared_ptr<const Costed>(std::move(fresh));
  });
}

PrivacyGuarantee Calculator::epsilon_as_stated(const DpEvent& event, double delta) const {
  require(delta >= 0 && delta < 1 && !std::isnan(delta),
          options_.name + ": delta must be in [0, 1), got " + num(delta));
  if (!options_.pure_only && profile_only_selection(options_, event))
    return profile_only(options_, event, delta, 0, true);
  const Restated restated = for_its_relation(event);
  const std::shared_ptr<const Costed> costs = costed(event);
  const Cost& c = costs->cost;
  const Cost& selection_base = costs->selection_base;  // a repeat-and-select's (selection_route)
  if (options_.pure_only && std::isinf(c.pure_epsilon))
    throw PrivacyError(unsupported_reason(event));
  PrivacyGuarantee g;
  g.accountant = options_.name;
  g.delta = delta;
  double rest_delta = delta;
  if (c.has_approx) {
    rest_delta = delta - c.approx_delta;
    if (rest_delta < 0)
      throw PrivacyError(options_.name + ": the event's approx_dp parts alone need delta >= " +
                         num(c.approx_delta) + ", but delta is " + num(delta));
  }
  double best = kInf, best_order = 0;
  std::string how;
  g.rdp_curve = finite_curve(c, options_.orders);
  if (rest_delta > 0) {
    for (std::size_t i = 0; i < c.rdp.size(); ++i) {
      if (std::isinf(c.rdp[i])) continue;
      const double eps =
          conversion_epsilon(options_.conversion, options_.orders[i], c.rdp[i], rest_delta);
      if (eps < best) {
        best = eps;
        best_order = options_.orders[i];
        how = std::string(conversion_name(options_.conversion)) + " at order " +
              num(options_.orders[i]);
      }
    }
  }
  if (options_.extend_beyond_grid && rest_delta > 0 && best_order == options_.orders.back()) {
    const GridExtension ext = beyond_the_grid(options_, restated.raw, rest_delta, best);
    if (ext.order > 0) {
      best = ext.epsilon;
      best_order = ext.order;
      how = std::string(conversion_name(options_.conversion)) + " at order " + num(ext.order) +
            " (beyond the grid's largest order " + num(options_.orders.back()) +
            ": a Poisson-sampled Gaussian by its exact integer-order sum, other sampling "
            "costed unamplified, by joint quasi-convexity of Renyi divergence, "
            "van Erven & Harremoes 2014, Thm 13)";
    }
  }
  if (c.pure_epsilon <= best) {
    best = c.pure_epsilon;
    best_order = 0;
    how = "pure DP bound (valid for every delta >= 0)";
  }
  if (options_.analytic_gaussian && rest_delta > 0) {
    if (const auto s = composed_gaussian_multiplier(restated.raw)) {
      const double eps = analytic_gaussian_epsilon(*s, rest_delta);
      if (eps < best) {
        best = eps;
        best_order = 0;
        how =
            "analytic Gaussian mechanism (Balle & Wang 2018, Thm 8) on the exactly composed "
            "noise multiplier " +
            num(*s) + " (Dong, Roth & Su 2019)";
      }
    }
  }
  if (const auto sel = selection_route(options_, restated.raw, unrestated_base(event),
                                       selection_base.rdp.empty() ? nullptr : &selection_base)) {
    const auto bound = selection::epsilon(sel->profile, sel->runs, delta);
    if (bound.value < best) {
      how = sel->winner(bound.derivation, "epsilon", num(best));
      best = bound.value;
      best_order = 0;
    } else if (std::isfinite(bound.value)) {
      how = sel->loser(how, "epsilon", num(bound.value));
    }
  }
  if (std::isinf(best)) {
    g.epsilon = kInf;
    g.derivation =
        "no finite bound: " + (rest_delta > 0 ? std::string("every order is unbounded")
                                              : std::string("delta = 0 needs a pure-DP event"));
    return g;
  }
  best = std::max(0.0, best);
  g.epsilon = best + c.approx_epsilon;
  g.order = best_order;
  std::string derivation = with_notes(how, c);
  if (c.has_approx)
    derivation += "; plus the approx_dp parts (" + num(c.approx_epsilon) + ", " +
                  num(c.approx_delta) + ") by basic composition, leaving delta " + num(rest_delta) +
                  " for the rest";
  g.derivation = derivation;
  return g;
}

PrivacyGuarantee Calculator::delta_as_stated(const DpEvent& event, double epsilon) const {
  require(epsilon >= 0 && !std::isnan(epsilon),
          options_.name + ": epsilon must be >= 0, got " + num(epsilon));
  if (!options_.pure_only && profile_only_selection(options_, event))
    return profile_only(options_, event, 0, epsilon, false);
  const Restated restated = for_its_relation(event);
  const std::shared_ptr<const Costed> costs = costed(event);
  const Cost& c = costs->cost;
  const Cost& selection_base = costs->selection_base;  // a repeat-and-select's (selection_route)
  if (options_.pure_only && std::isinf(c.pure_epsilon))
    throw PrivacyError(unsupported_reason(event));
  PrivacyGuarantee g;
  g.accountant = options_.name;
  g.epsilon = epsilon;
  g.rdp_curve = finite_curve(c, options_.orders);
  const double rest_eps = epsilon - c.approx_epsilon;
  if (rest_eps < 0) {
    g.delta = 1;
    g.derivation =
        "trivial bound: epsilon is below the approx_dp parts' own epsilon " + num(c.approx_epsilon);
    return g;
  }
  const ProfilePoint point = profile_delta(options_, c, restated.raw, epsilon);
  double best = point.delta, best_order = point.order;
  std::string how = point.how;
  if (const auto sel = selection_route(options_, restated.raw, unrestated_base(event),
                                       selection_base.rdp.empty() ? nullptr : &selection_base)) {
    const auto bound = selection::delta(sel->profile, sel->runs, epsilon);
    how = bound.value < best ? sel->winner(bound.derivation, "delta", num(best))
                             : sel->loser(how, "delta", num(bound.value));
    if (bound.value < best) best_order = 0;
    best = std::min(best, bound.value);
  }
  if (restated.raw.kind() == K::RepeatAndSelect) {
    const Cost base = selection_base.rdp.empty()
                          ? Costing(options_).cost(restated.raw.inner(), options_.orders)
                          : selection_base;
    const auto d = selection_delta_by_composition(options_, restated.raw, base, epsilon);
    if (d && *d < best) {
      best = *d;
      best_order = 0;
      how = kByComposition;
    }
  }
  g.delta = std::min(1.0, best);
  g.order = best_order;
  std::string derivation = with_notes(how, c);
  if (c.has_approx)
    derivation += "; plus the approx_dp parts (" + num(c.approx_epsilon) + ", " +
                  num(c.approx_delta) + ") by basic composition";
  g.derivation = derivation;
  return g;
}

// A discrete_gaussian_on_grid leaf (the secure noise, scale at least s_min lattice units) is, up
// to a total variation the pld accountant bounds (plugins/accountant/pld/src/discrete_on_grid.cpp:
// δ_real(ε) ≤ δ_surrogate(ε) + (1 + e^ε)η over all draws), a post-processing of the continuous
// Gaussian of multiplier σ₁ = σ·sqrt(1 − 9/s_min²).  So the whole event may also be priced as its
// continuous surrogate at every order, fractional ones by the continuous Gaussian's series
// (Mironov, Talwar & Zhang 2019, Sec. 3.4) and fixed-size lots by Wang, Balle & Kasiviswanathan
// 2019's Gaussian-specific bound, with the additive term carried into the conversion
// (delta_left_for_surrogate).  The surrogate's curve bounds the surrogate only, so the published
// RDP curve stays the discrete one; only the (ε, δ) answer may come from the surrogate.
PrivacyGuarantee Calculator::epsilon(const DpEvent& event, double delta) const {
  PrivacyGuarantee g = epsilon_as_stated(event, delta);
  if (options_.pure_only) return g;
  const pld::ContinuousSurrogate surrogate = pld::continuous_surrogate(event);
  if (!surrogate.replaced()) return g;
  // ε above the cap is not taken from the surrogate: its additive term is charged at the cap.
  const double cap = std::min(g.epsilon, 50.0);
  const double left = delta_left_for_surrogate(delta, surrogate.log_eta, cap);
  if (!(left > 0)) return g;
  PrivacyGuarantee via;
  try {
    via = epsilon_as_stated(surrogate.event, left);
  } catch (const PrivacyError&) {  // e.g. approx_dp parts needing all of delta: the stated route
    return g;
  }
  if (!(via.epsilon < g.epsilon && via.epsilon <= cap)) return g;
  g.epsilon = via.epsilon;
  g.order = via.order;
  g.derivation =
      "discrete_gaussian_on_grid priced as the continuous Gaussian of multiplier "
      "sigma sqrt(1 - 9/min_scale^2) at delta " +
      num(left) + " (the rest, (1 + e^eps) " + num(std::exp(surrogate.log_eta)) +
      " at eps <= " + num(cap) +
      ", covers its total variation to the discrete "
      "noise; the RDP curve shown is the discrete one): " +
      via.derivation;
  return g;
}

PrivacyGuarantee Calculator::delta(const DpEvent& event, double epsilon) const {
  PrivacyGuarantee g = delta_as_stated(event, epsilon);
  if (options_.pure_only) return g;
  const pld::ContinuousSurrogate surrogate = pld::continuous_surrogate(event);
  if (!surrogate.replaced()) return g;
  const PrivacyGuarantee via = delta_as_stated(surrogate.event, epsilon);
  const double total = via.delta + pld::surrogate_delta(surrogate.log_eta, epsilon);
  if (!(total < g.delta)) return g;
  g.delta = total;
  g.order = via.order;
  g.derivation =
      "discrete_gaussian_on_grid priced as the continuous Gaussian of multiplier "
      "sigma sqrt(1 - 9/min_scale^2), plus (1 + e^eps) " +
      num(std::exp(surrogate.log_eta)) +
      " for its total variation to the discrete noise (the RDP curve shown is the "
      "discrete one): " +
      via.derivation;
  return g;
}

}  // namespace dptune::rdp
