// Small numerical helpers the accounting tests share: one definition each, as the sources of one
// test executable compile together (cmake/DptuneTests.cmake).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

#include "rdp/calculator.hpp"

namespace dptune_test {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// |a − b| / |b|: the relative error of a against the reference b.
inline double relative(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(b), 1e-300);
}

/// log(e^a + e^b) in long double without overflow; −∞ stands for log 0.
inline long double log_add(long double a, long double b) {
  constexpr long double minus_inf = -std::numeric_limits<long double>::infinity();
  if (a == minus_inf) return b;
  if (b == minus_inf) return a;
  const long double hi = std::max(a, b), lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
}

/// P(Z > z) for a standard normal Z.
inline double normal_upper(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

/// The rdp accountant's calculator over the given Rényi orders.
inline dptune::rdp::Calculator with_orders(
    std::vector<double> orders,
    dptune::rdp::Conversion conversion = dptune::rdp::Conversion::Improved) {
  dptune::rdp::Options o;
  o.orders = std::move(orders);
  o.conversion = conversion;
  return dptune::rdp::Calculator(o);
}

}  // namespace dptune_test
