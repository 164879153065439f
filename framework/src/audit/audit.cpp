// `dptune audit`: the statistics, the neighbouring inputs, the event search and the fresh test.
// See dptune/host/audit.hpp for the design and docs/audit.md for what it can and cannot detect.
#include "dptune/host/audit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>

#include "dptune/errors.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/random.hpp"
#include "dptune/params.hpp"

namespace dptune::host {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Continued fraction of I_x(a, b) for x < (a + 1) / (a + b + 2), by the modified Lentz method
/// (Press et al., Numerical Recipes, §6.4: the even and odd terms d_{2m}, d_{2m+1}).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::abs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m < 1000000; ++m) {
    const double m2 = 2.0 * m;
    for (const double term : {m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
                              -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))}) {
      d = 1.0 + term * d;
      if (std::abs(d) < tiny) d = tiny;
      c = 1.0 + term / c;
      if (std::abs(c) < tiny) c = tiny;
      d = 1.0 / d;
      h *= d * c;
      if (std::abs(d * c - 1.0) < 1e-16) return h;
    }
  }
  throw dptune::Error("regularized_beta: continued fraction did not converge");
}

/// Bisection for the p in [0, 1] where the increasing function tail(p) crosses `target`; 200
/// halvings reach the spacing of doubles anywhere in [0, 1].
template <class F>
double bisect_increasing(F tail, double target) {
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 200 && hi > lo; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (tail(mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double regularized_beta(double a, double b, double x) {
  dptune::require(a > 0 && b > 0 && x >= 0 && x <= 1,
                  "regularized_beta: needs a, b > 0, x in [0, 1]");
  if (x == 0) return 0;
  if (x == 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0))
    return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * beta_continued_fraction(b, a, 1.0 - x) / b;
}

// The bounds are the Beta quantiles of Clopper & Pearson (1934): P[Bin(n, p) >= k] = I_p(k, n−k+1)
// and P[Bin(n, p) <= k] = 1 − I_p(k+1, n−k).  The result is widened by 1e-9 (relative) to absorb
// the rounding of lgamma and the continued fraction: the bounds stay conservative.
double clopper_pearson_lower(std::uint64_t k, std::uint64_t n, double alpha) {
  dptune::require(k <= n && n > 0 && alpha > 0 && alpha < 1,
                  "clopper_pearson_lower: bad arguments");
  if (k == 0) return 0.0;
  const auto a = static_cast<double>(k), b = static_cast<double>(n - k + 1);
  const double p = bisect_increasing([&](double q) { return regularized_beta(a, b, q); }, alpha);
  return std::max(0.0, p * (1.0 - 1e-9));
}

double clopper_pearson_upper(std::uint64_t k, std::uint64_t n, double alpha) {
  dptune::require(k <= n && n > 0 && alpha > 0 && alpha < 1,
                  "clopper_pearson_upper: bad arguments");
  if (k == n) return 1.0;
  const auto a = static_cast<double>(k + 1), b = static_cast<double>(n - k);
  const double p =
      bisect_increasing([&](double q) { return regularized_beta(a, b, q); }, 1.0 - alpha);
  return std::min(1.0, p * (1.0 + 1e-9));
}

// ---- the claim ---------------------------------------------------------------------------------

double Claim::epsilon_at_primary() const {
  for (const auto& p : curve)
    if (p.delta == primary_delta) return p.epsilon;
  return kInf;
}

std::vector<double> audit_deltas() { return {1e-6, 1e-4, 1e-3, 1e-2, 5e-2, 1e-1}; }

Claim claimed_privacy(const dptune::DpEvent& event, const dptune::Accountant& rdp) {
  Claim claim;
  claim.event = event.to_string();
  if (const auto why = rdp.unsupported_reason(event); !why.empty())
    throw dptune::ConfigError("audit: the accountant cannot price the claimed event " +
                              claim.event + ": " + why);
  const auto pure = rdp.epsilon(event, 0.0);
  claim.accountant = pure.accountant;
  if (std::isfinite(pure.epsilon)) {
    claim.pure = true;
    claim.curve.push_back({0.0, pure.epsilon});
    return claim;
  }
  // Every point of an (ε(δ), δ) curve is a claim; checking several costs no extra correction,
  // because one pair of confidence bounds serves them all (see run_audit).
  for (const double delta : audit_deltas())
    claim.curve.push_back({delta, rdp.epsilon(event, delta).epsilon});
  claim.primary_delta = 1e-6;
  return claim;
}

// ---- neighbouring inputs ----------------------------------------------------------------------

dptune::Sensitivity exact_sensitivity(std::span<const double> d, std::span<const double> d_prime) {
  dptune::Sensitivity s{0, 0, 0};
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double diff = std::abs(d[i] - d_prime[i]);
    s.linf = std::max(s.linf, diff);
    s.l1 += diff;
    s.l2 += diff * diff;
  }
  s.l2 = std::sqrt(s.l2);
  return s;
}

std::vector<NeighbourPair> neighbour_pairs() {
  // Ding et al. (2018, §5.1): D = (1, ..., 1) against the patterns below, values in {0, 1, 2}, so
  // that a threshold of 1/2 or 3/2 separates "below" from "above" as in their SVT tests.
  using V = std::vector<double>;
  const V ones(5, 1.0);
  std::vector<std::pair<std::string, std::pair<V, V>>> raw{
      {"shift (1 coordinate, by 1)", {V{0}, V{1}}},
      {"shift (1 coordinate, by 16)", {V{0}, V{16}}},
      {"one below", {ones, V{0, 1, 1, 1, 1}}},
      {"one above", {ones, V{2, 1, 1, 1, 1}}},
      {"one above rest below", {ones, V{2, 0, 0, 0, 0}}},
      {"one below rest above", {ones, V{0, 2, 2, 2, 2}}},
      {"half half", {ones, V{2, 2, 0, 0, 0}}},
      {"all above", {ones, V(5, 2.0)}},
      {"all below", {ones, V(5, 0.0)}},
      {"x shape", {V{1, 1, 0, 0, 0}, V{0, 0, 1, 1, 1}}},
      {"x shape (long)", {V{1, 1, 1, 1, 1, 0, 0, 0, 0, 0}, V{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}}},
  };
  std::vector<NeighbourPair> pairs;
  for (auto& [name, dd] : raw) {
    NeighbourPair p{name, dd.first, dd.second, {}};
    p.sensitivity = exact_sensitivity(p.d, p.d_prime);
    pairs.push_back(std::move(p));
  }
  return pairs;
}

// ---- output events ------------------------------------------------------------------------------

double statistic_of(OutputEvent::Statistic statistic, std::size_t index,
                    std::span<const double> y) {
  using S = OutputEvent::Statistic;
  switch (statistic) {
    case S::Coordinate:
      return index < y.size() ? y[index] : -kInf;
    case S::Sum:
      return std::accumulate(y.begin(), y.end(), 0.0);
    case S::Max:
      return y.empty() ? -kInf : *std::max_element(y.begin(), y.end());
    case S::NonZero:
      return static_cast<double>(
          std::count_if(y.begin(), y.end(), [](double v) { return v != 0; }));
    case S::Vector:
      break;
  }
  return 0;
}

bool OutputEvent::contains(std::span<const double> y) const {
  if (statistic == Statistic::Vector)
    return std::equal(y.begin(), y.end(), vector.begin(), vector.end());
  const double g = statistic_of(statistic, index, y);
  switch (op) {
    case Op::Greater:
      return g > value;
    case Op::AtMost:
      return g <= value;
    case Op::Equal:
      return g == value;
  }
  return false;
}

std::string OutputEvent::describe() const {
  if (statistic == Statistic::Vector) {
    std::string s = "output == (";
    for (std::size_t i = 0; i < vector.size(); ++i)
      s += (i ? ", " : "") + full_precision(vector[i]);
    return s + ")";
  }
  std::string g;
  switch (statistic) {
    case Statistic::Coordinate:
      g = "output[" + std::to_string(index) + "]";
      break;
    case Statistic::Sum:
      g = "sum(output)";
      break;
    case Statistic::Max:
      g = "max(output)";
      break;
    case Statistic::NonZero:
      g = "count(output != 0)";
      break;
    case Statistic::Vector:
      break;
  }
  const char* op_text = op == Op::Greater ? " > " : (op == Op::AtMost ? " <= " : " == ");
  return g + op_text + full_precision(value);
}

}  // namespace dptune::host
