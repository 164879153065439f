// The `best` accountant: see best_accountant.hpp.
#include "best_accountant.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <utility>

#include "dptune/errors.hpp"
#include "dptune/host/format.hpp"
#include "dptune/params.hpp"
#include "rdp_conversion.hpp"

namespace dptune::host {

namespace {
using K = DpEvent::Kind;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// True when an (ε, δ) leaf is inside: an RDP accountant prices those apart from its curve (basic
/// composition), so a reported curve would not cover the whole base.
bool has_approx_leaf(const DpEvent& e) {
  switch (e.kind()) {
    case K::ApproxDp:
      return true;
    case K::Composed:
    case K::OneOf:
      return std::any_of(e.events().begin(), e.events().end(), has_approx_leaf);
    case K::PoissonSampled:
    case K::SampledWithoutReplacement:
    case K::SelfComposed:
    case K::RepeatAndSelect:
    case K::RepeatUntilAccepted:
    case K::ReplaceOne:
      return has_approx_leaf(e.inner());
    default:  // the other leaves
      return false;
  }
}

using Member = BestAccountant::Member;

/// The base's RDP curve: at each order the smallest value any member reports (every one is a
/// valid RDP bound, so their minimum is), and who reported curves.
std::pair<std::vector<RdpPoint>, std::string> base_curve(const std::vector<const Member*>& able,
                                                         const DpEvent& base) {
  std::map<double, double> best;
  std::string from;
  for (const Member* m : able) {
    std::vector<RdpPoint> curve;
    try {
      curve = m->accountant->delta(base, 1.0).rdp_curve;
    } catch (const dptune::Error&) {
      continue;
    }
    if (curve.empty()) continue;
    from += (from.empty() ? "" : " and ") + m->name;
    for (const auto& [alpha, tau] : curve) {
      if (!(alpha > 1) || !std::isfinite(tau)) continue;
      const auto [at, fresh] = best.emplace(alpha, tau);
      if (!fresh) at->second = std::min(at->second, tau);
    }
  }
  std::vector<RdpPoint> curve;
  curve.reserve(best.size());
  for (const auto& [alpha, tau] : best) curve.push_back({alpha, tau});
  return {curve, from};
}

/// δ̂ of the base at ε̂: the smallest of the members' δ(ε̂) (each an upper bound on the base's
/// privacy profile, so the smallest is), with who gave it and every member's value.
struct DeltaHat {
  double value = 1;
  std::string from = "the trivial bound 1";
  std::string listing;
};

DeltaHat delta_hat(const std::vector<const Member*>& able, const DpEvent& base, double eps_hat) {
  DeltaHat hat;
  for (const Member* m : able) {
    double d = 1;
    try {
      d = m->accountant->delta(base, eps_hat).delta;
    } catch (const dptune::Error&) {
      continue;
    }
    hat.listing += (hat.listing.empty() ? "" : ", ") + m->name + " " + full_precision(d);
    if (d < hat.value) hat = {d, m->name, hat.listing};
  }
  return hat;
}

/// The RDP → (ε or δ) conversion at (order, RDP value); non-decreasing in the value.
using Converted = std::function<double(double, double)>;

/// The minimum over the curve's orders of the converted Theorem 6 value, the order (index) and δ̂
/// that gave it, how many orders needed δ̂, and ε'(λ) at those orders (a valid partial RDP curve).
struct OrderSearch {
  double best = 0;
  std::size_t best_i = 0, evaluated = 0;
  DeltaHat hat;
  std::vector<RdpPoint> searched;
};

/// δ̂ ≥ 0, so ε(λ) + log(μ)/(λ − 1) bounds ε'(λ) from below: the orders are visited by that lower
/// bound's converted value and the search stops when it cannot beat the best found.  The result is
/// the exact minimum over the orders with few δ̂ queries (each costs a member's full pricing of the
/// base, e.g. a PLD composition).
OrderSearch search_orders(const std::vector<RdpPoint>& curve, double mu, const Converted& converted,
                          double trivial, const std::function<DeltaHat(double)>& hat_at) {
  std::vector<std::pair<double, std::size_t>> queue;  // (lower bound, index into curve)
  queue.reserve(curve.size());
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const double alpha = curve[i].order;
    queue.emplace_back(converted(alpha, curve[i].epsilon + std::log(mu) / (alpha - 1)), i);
  }
  std::sort(queue.begin(), queue.end());
  OrderSearch out;
  out.best = trivial;
  for (const auto& [lower, i] : queue) {
    if (!(lower < out.best)) break;
    const double alpha = curve[i].order;
    DeltaHat hat = hat_at(-std::log1p(-1 / alpha));  // at ε̂ = log(λ/(λ − 1))
    ++out.evaluated;
    const double tau = curve[i].epsilon + mu * hat.value + std::log(mu) / (alpha - 1);
    out.searched.push_back({alpha, std::max(0.0, tau)});
    const double value = converted(alpha, tau);
    if (value < out.best) {
      out.best = value;
      out.best_i = i;
      out.hat = std::move(hat);
    }
  }
  std::sort(out.searched.begin(), out.searched.end(),
            [](const RdpPoint& a, const RdpPoint& b) { return a.order < b.order; });
  return out;
}
}  // namespace

BestAccountant::BestAccountant(std::vector<Member> members) : members_(std::move(members)) {
  if (members_.empty()) throw dptune::InvalidArgument("the best accountant needs a member");
}

std::string BestAccountant::unsupported_reason(const DpEvent& event) const {
  std::string reasons;
  for (const auto& m : members_) {
    const std::string why = m.accountant->unsupported_reason(event);
    if (why.empty()) return {};
    reasons += (reasons.empty() ? "" : "; ") + m.name + ": " + why;
  }
  return reasons;
}

PrivacyGuarantee BestAccountant::epsilon(const DpEvent& event, double delta) const {
  return smallest(event, delta, Ask::Epsilon);
}

PrivacyGuarantee BestAccountant::delta(const DpEvent& event, double epsilon) const {
  return smallest(event, epsilon, Ask::Delta);
}

// Papernot & Steinke 2022, Theorem 6: if the base Q is (λ, ε(λ))-RDP and (ε̂, δ̂)-DP with
// e^{ε̂} ≤ 1 + 1/(λ − 1), then repeat-and-select with K ~ Poisson(μ) is (λ, ε'(λ))-RDP with
//     ε'(λ) = ε(λ) + μ δ̂ + log(μ)/(λ − 1).
// ε̂ = log(λ/(λ − 1)) meets the condition with equality and is the largest allowed (δ̂ only falls as
// ε̂ grows).  Any upper bounds on ε(λ) and δ̂ give a valid ε'(λ) (larger inputs only raise it), so
// the curve comes from the members that report one, δ̂ from whichever member bounds the base's
// profile lowest, and ε'(λ) is converted by Canonne, Kamath & Steinke 2020, Proposition 12.
std::optional<PrivacyGuarantee> BestAccountant::poisson_selection(const DpEvent& event,
                                                                  double given, Ask ask) const {
  if (event.kind() != K::RepeatAndSelect || !std::isinf(event.shape())) return std::nullopt;
  if (ask == Ask::Epsilon && !(given > 0)) return std::nullopt;  // RDP gives no δ = 0 bound
  const DpEvent& base = event.inner();
  if (has_approx_leaf(base)) return std::nullopt;
  std::vector<const Member*> able;
  for (const auto& m : members_)
    if (m.accountant->supports(base)) able.push_back(&m);
  const auto [curve, curve_from] = base_curve(able, base);
  if (curve.empty()) return std::nullopt;
  const double mu = event.mean(), trivial = ask == Ask::Epsilon ? kInfinity : 1.0;
  const Converted converted = [ask, given](double alpha, double tau) {
    return ask == Ask::Epsilon ? rdp_to_epsilon(alpha, std::max(0.0, tau), given)
                               : rdp_to_delta(alpha, std::max(0.0, tau), given);
  };
  OrderSearch found = search_orders(curve, mu, converted, trivial,
                                    [&](double eps_hat) { return delta_hat(able, base, eps_hat); });
  if (found.evaluated == 0 || !(found.best < trivial)) return std::nullopt;
  const RdpPoint& at = curve[found.best_i];
  const double tau =
      std::max(0.0, at.epsilon + mu * found.hat.value + std::log(mu) / (at.order - 1));
  PrivacyGuarantee g;
  g.epsilon = ask == Ask::Epsilon ? std::max(0.0, found.best) : given;
  g.delta = ask == Ask::Epsilon ? given : found.best;
  g.order = at.order;
  g.derivation = "repeat_and_select, Poisson(mean " + full_precision(mu) +
                 "): Papernot & Steinke 2022, Theorem 6 at order " + full_precision(at.order) +
                 ": eps'(a) = eps(a) + mu delta^ + log(mu)/(a - 1) = " + full_precision(tau) +
                 ", with the base's RDP curve from " + curve_from +
                 " (eps(a) = " + full_precision(at.epsilon) +
                 ") and delta^ = " + full_precision(found.hat.value) +
                 " at eps^ = log(a/(a - 1)) from " + found.hat.from + " (" + found.hat.listing +
                 "); improved RDP conversion (Canonne, Kamath & Steinke 2020, Prop. 12); " +
                 std::to_string(found.evaluated) + " of " + std::to_string(curve.size()) +
                 " orders needed delta^";
  g.rdp_curve = std::move(found.searched);
  g.accountant = kName;
  return g;
}

PrivacyGuarantee BestAccountant::smallest(const DpEvent& event, double given, Ask ask) const {
  std::vector<std::pair<std::string, PrivacyGuarantee>> answers;
  std::vector<std::string> notes;
  std::exception_ptr first_failure;
  // The members price the same event independently: each on its own thread, so that `best` takes
  // as long as its slowest member, not their sum.  Answers are read in member order, so the
  // result and its derivation do not depend on which finishes first.
  std::vector<std::future<PrivacyGuarantee>> pending(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    if (const auto why = m.accountant->unsupported_reason(event); !why.empty()) {
      notes.push_back(m.name + " cannot price it (" + why + ")");
      continue;
    }
    pending[i] = std::async(std::launch::async, [&m, &event, given, ask] {
      return ask == Ask::Epsilon ? m.accountant->epsilon(event, given)
                                 : m.accountant->delta(event, given);
    });
  }
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (!pending[i].valid()) continue;
    try {
      answers.emplace_back(members_[i].name, pending[i].get());
    } catch (const dptune::Error& e) {
      if (!first_failure) first_failure = std::current_exception();
      notes.push_back(members_[i].name + " failed (" + e.what() + ")");
    }
  }
  if (answers.empty()) {
    if (first_failure) std::rethrow_exception(first_failure);
    throw dptune::PrivacyError("no accountant of best can price " + event.to_string() + ": " +
                               unsupported_reason(event));
  }
  try {
    if (auto g = poisson_selection(event, given, ask))
      answers.emplace_back("Theorem 6 with the smallest delta^", std::move(*g));
  } catch (const dptune::Error& e) {
    notes.push_back(std::string("the Theorem 6 route failed (") + e.what() + ")");
  }
  auto value = [ask](const PrivacyGuarantee& g) {
    return ask == Ask::Epsilon ? g.epsilon : g.delta;
  };
  std::size_t win = 0;
  for (std::size_t i = 1; i < answers.size(); ++i)
    if (value(answers[i].second) < value(answers[win].second)) win = i;
  const char* what = ask == Ask::Epsilon ? "eps" : "delta";
  std::string summary = "best of";
  for (std::size_t i = 0; i < answers.size(); ++i)
    summary += (i == 0 ? " " : ", ") + answers[i].first + " (" + what + " " +
               full_precision(value(answers[i].second)) + ")";
  for (const auto& n : notes) summary += "; " + n;
  PrivacyGuarantee g = answers[win].second;
  g.derivation = summary + "; " + answers[win].first + " wins: " + g.derivation;
  g.accountant = kName;
  return g;
}

}  // namespace dptune::host
