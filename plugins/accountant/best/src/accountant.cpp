// The `best` accountant: see best/accountant.hpp.
#include "best/accountant.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <utility>

#include "dptune/errors.hpp"
#include "dptune/event_walk.hpp"
#include "dptune/helpers/rdp_conversion.hpp"
#include "dptune/params.hpp"
#include "selection/profile.hpp"

namespace dptune::best {

namespace {
using K = DpEvent::Kind;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// True when an (ε, δ) leaf is inside: an RDP accountant prices those apart from its curve (basic
/// composition), so a reported curve would not cover the whole base.
bool has_approx_leaf(const DpEvent& e) { return e.contains(K::ApproxDp); }

std::string num(double x) { return to_string(Value{x}); }

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
    hat.listing += (hat.listing.empty() ? "" : ", ") + m->name + " " + num(d);
    if (d < hat.value) hat = {d, m->name, hat.listing};
  }
  return hat;
}

/// Papernot & Steinke 2022, Theorem 6 at the curve point's order, by the selection library (its one
/// home), with δ̂ from `hat_at`; `hat` receives the δ̂ used (who gave it, every member's value).
double theorem6(const RdpPoint& at, double mu, const std::function<DeltaHat(double)>& hat_at,
                DeltaHat& hat) {
  const selection::Profile base = [&](double eps_hat) {
    hat = hat_at(eps_hat);
    return hat.value;
  };
  return selection::poisson_selection_rdp(at.epsilon, at.order, mu, base);
}

/// The RDP → (ε or δ) conversion at (order, RDP value); non-decreasing in the value.
using Converted = std::function<double(double, double)>;

/// The minimum over the curve's orders of the converted Theorem 6 value, the order (index) and δ̂
/// that gave it, how many orders needed δ̂, and ε'(λ) at those orders (a valid partial RDP curve).
struct OrderSearch {
  double best = 0;
  std::size_t best_i = 0, evaluated = 0;
  DeltaHat hat;
  double best_tau = 0;  // ε'(λ) at the best order
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
    DeltaHat hat;
    const double tau = theorem6(curve[i], mu, hat_at, hat);
    ++out.evaluated;
    out.searched.push_back({alpha, tau});
    const double value = converted(alpha, tau);
    if (value < out.best) {
      out.best = value;
      out.best_i = i;
      out.best_tau = tau;
      out.hat = std::move(hat);
    }
  }
  std::sort(out.searched.begin(), out.searched.end(),
            [](const RdpPoint& a, const RdpPoint& b) { return a.order < b.order; });
  return out;
}
}  // namespace

Accountant::Accountant(std::vector<Member> members) : members_(std::move(members)) {
  if (members_.empty()) throw dptune::InvalidArgument("the best accountant needs a member");
}

std::string Accountant::unsupported_reason(const DpEvent& event) const {
  // The members that check by the event's structure first: when one of them prices the event,
  // the answer is known without a member that would price it to find out (the pricing itself
  // then runs on the members' threads, smallest()).
  std::vector<std::string> why(members_.size());
  for (const bool structural : {true, false})
    for (std::size_t i = 0; i < members_.size(); ++i)
      if (members_[i].checks_by_structure == structural) {
        why[i] = members_[i].accountant->unsupported_reason(event);
        if (why[i].empty()) return {};
      }
  std::string reasons;
  for (std::size_t i = 0; i < members_.size(); ++i)
    reasons += (reasons.empty() ? "" : "; ") + members_[i].name + ": " + why[i];
  return reasons;
}

PrivacyGuarantee Accountant::epsilon(const DpEvent& event, double delta) const {
  return smallest(event, delta, Ask::Epsilon);
}

PrivacyGuarantee Accountant::delta(const DpEvent& event, double epsilon) const {
  return smallest(event, epsilon, Ask::Delta);
}

// Papernot & Steinke 2022, Theorem 6 (selection::poisson_selection_rdp states it): any upper
// bounds on the base's ε(λ) and δ̂ give a valid ε'(λ) (larger inputs only raise it), so the curve
// comes from the members that report one, δ̂ from whichever member bounds the base's profile
// lowest, and ε'(λ) is converted by Canonne, Kamath & Steinke 2020, Proposition 12.
std::optional<PrivacyGuarantee> Accountant::poisson_selection(const DpEvent& event, double given,
                                                              Ask ask) const {
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
    return ask == Ask::Epsilon ? dptune::rdp_to_epsilon(alpha, std::max(0.0, tau), given)
                               : dptune::rdp_to_delta(alpha, std::max(0.0, tau), given);
  };
  OrderSearch found = search_orders(curve, mu, converted, trivial,
                                    [&](double eps_hat) { return delta_hat(able, base, eps_hat); });
  if (found.evaluated == 0 || !(found.best < trivial)) return std::nullopt;
  const RdpPoint& at = curve[found.best_i];
  const double tau = found.best_tau;
  PrivacyGuarantee g;
  g.epsilon = ask == Ask::Epsilon ? std::max(0.0, found.best) : given;
  g.delta = ask == Ask::Epsilon ? given : found.best;
  g.order = at.order;
  g.derivation = "repeat_and_select, Poisson(mean " + num(mu) +
                 "): Papernot & Steinke 2022, Theorem 6 at order " + num(at.order) +
                 ": eps'(a) = eps(a) + mu delta^ + log(mu)/(a - 1) = " + num(tau) +
                 ", with the base's RDP curve from " + curve_from +
                 " (eps(a) = " + num(at.epsilon) + ") and delta^ = " + num(found.hat.value) +
                 " at eps^ = log(a/(a - 1)) from " + found.hat.from + " (" + found.hat.listing +
                 "); improved RDP conversion (Canonne, Kamath & Steinke 2020, Prop. 12); " +
                 std::to_string(found.evaluated) + " of " + std::to_string(curve.size()) +
                 " orders needed delta^";
  g.rdp_curve = std::move(found.searched);
  g.accountant = kName;
  return g;
}

PrivacyGuarantee Accountant::smallest(const DpEvent& event, double given, Ask ask) const {
  std::vector<std::pair<std::string, PrivacyGuarantee>> answers;
  std::vector<std::string> notes;
  std::exception_ptr first_failure;
  // The members price the same event independently: each on its own thread, its check of support
  // included (rdp's computes the curve it then prices from), so that `best` takes as long as its
  // slowest member, not their sum.  Answers are read in member order, so the result and its
  // derivation do not depend on which finishes first.
  struct Answer {
    std::string unsupported;  // empty: `priced` holds the answer
    PrivacyGuarantee priced;
  };
  std::vector<std::future<Answer>> pending(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    pending[i] = std::async(std::launch::async, [&m, &event, given, ask] {
      if (std::string why = m.accountant->unsupported_reason(event); !why.empty())
        return Answer{std::move(why), {}};
      return Answer{{},
                    ask == Ask::Epsilon ? m.accountant->epsilon(event, given)
                                        : m.accountant->delta(event, given)};
    });
  }
  for (std::size_t i = 0; i < members_.size(); ++i) {
    try {
      Answer answer = pending[i].get();
      if (!answer.unsupported.empty())
        notes.push_back(members_[i].name + " cannot price it (" + answer.unsupported + ")");
      else
        answers.emplace_back(members_[i].name, std::move(answer.priced));
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
               num(value(answers[i].second)) + ")";
  for (const auto& n : notes) summary += "; " + n;
  PrivacyGuarantee g = answers[win].second;
  g.derivation = summary + "; " + answers[win].first + " wins: " + g.derivation;
  g.accountant = kName;
  return g;
}

}  // namespace dptune::best
