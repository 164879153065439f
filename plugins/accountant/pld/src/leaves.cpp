// PLDs of the leaf mechanisms, discretised on the grid h·Z (see pld/calculator.hpp for the
// pessimistic and optimistic rules).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "dptune/errors.hpp"
#include "pld/calculator.hpp"

namespace dptune::pld {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A continuous privacy loss, through its tails under P and Q at once: tails(t, true) is
/// (P(L > t), Q(L > t)) and tails(t, false) is (P(L ≤ t), Q(L ≤ t)) (strict and not, so that atoms
/// of the loss are counted once; both laws from one threshold, whose cost they share); and the
/// bounds of its support (±∞ when unbounded).
struct LossLaw {
  std::function<std::pair<double, double>(double, bool)> tails;
  double lo = -kInf, hi = kInf;
};

double upper_normal(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }  // P(N(0,1) > z)

/// The smallest point found by doubling then bisection where `small(t)` holds, starting from
/// `from` and moving in `direction` (+1 or −1); `small` must be monotone along the way.
double tail_point(const std::function<bool(double)>& small, double from, int direction) {
  double near = from, far = from + direction;
  for (int i = 0; !small(far); ++i) {
    if (i > 60) throw PrivacyError("the privacy loss has no finite truncation point");
    near = far;
    far = from + direction * std::ldexp(1.0, i + 1);
  }
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (near + far);
    (small(mid) ? far : near) = mid;
  }
  return far;
}

std::int64_t grid_points(double lo, double hi, double h, const Options& options) {
  const double points = (hi - lo) / h + 3;
  if (!(points <= static_cast<double>(options.max_points)))
    throw GridTooWide("the privacy loss spans " + std::to_string(hi - lo) +
                      ", which needs more than " + std::to_string(options.max_points) +
                      " grid points at a grid step of " + std::to_string(h) +
                      "; raise value_discretization_interval");
  return static_cast<std::int64_t>(points);
}

/// The grid index of an atom at `loss`: rounded up (pessimistic) or down.  A loss within 1e-9
/// grid steps of a grid point is taken as that point (ε = 1 with h = 1e-4 is 10000 steps, not
/// 10000.000000000002), a loss error of at most 1e-9·h, far below the double rounding of the
/// losses themselves.
std::int64_t grid_index(double loss, double h, Estimate estimate) {
  const double x = loss / h, nearest = std::round(x);
  if (std::abs(x - nearest) <= 1e-9) return static_cast<std::int64_t>(nearest);
  return static_cast<std::int64_t>(estimate == Estimate::Pessimistic ? std::ceil(x)
                                                                     : std::floor(x));
}

/// The tails of P and Q at the grid points t_k = (i_lo + k)·h, each where discretise reads it:
/// a law's "> t" tail from the first point where it is below 1/2 (found by bisection; it is
/// non-increasing) upwards, its "≤ t" tail up to that point, and both at the ends, so that
/// differences of the smaller tail lose no digits.  Where P and Q want the same side, one call of
/// law.tails serves both.  Returns the two first points (P's, Q's).
struct GridTails {
  std::vector<double> pg, pl, qg, ql;
};

std::pair<std::size_t, std::size_t> tails_on_grid(const LossLaw& law, std::int64_t i_lo, double h,
                                                  GridTails& out) {
  const std::size_t n = out.pg.size();
  auto t_of = [&](std::size_t k) {
    return static_cast<double>(i_lo + static_cast<std::int64_t>(k)) * h;
  };
  auto first_small = [&](auto tail) {  // the first k with tail(t_k) < 1/2, or n
    std::size_t lo = 0, hi = n;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (tail(law.tails(t_of(mid), true)) < 0.5)
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };
  const std::size_t p_small = first_small([](auto pq) { return pq.first; });
  const std::size_t q_small = first_small([](auto pq) { return pq.second; });
  const std::size_t ps = std::min(p_small, n - 1), qs = std::min(q_small, n - 1);
  for (std::size_t k = 0; k < n; ++k) {
    if (k >= ps || k >= qs) std::tie(out.pg[k], out.qg[k]) = law.tails(t_of(k), true);
    if (k <= ps || k <= qs) std::tie(out.pl[k], out.ql[k]) = law.tails(t_of(k), false);
  }
  return {p_small, q_small};
}

/// Discretises a continuous loss.  The grid runs from i_lo·h to i_hi·h; the part in (ih, (i+1)h]
/// is split between its two end points preserving both its P- and Q-mass (pessimistic, Doroshenko
/// et al. 2022) or rounded down to ih (optimistic).  Mass at or below i_lo·h goes to i_lo·h
/// (pessimistic) or is dropped; mass above i_hi·h goes to +∞ or to i_hi·h.
Pld discretise(const LossLaw& law, const Options& options, Estimate estimate) {
  const double h = options.value_discretization_interval;
  const double half_tail = options.tail_mass_truncation / 2;
  const double t_lo =
      std::isfinite(law.lo)
          ? law.lo - h
          : tail_point([&](double t) { return law.tails(t, false).first <= half_tail; },
                       std::min(law.hi, 0.0), -1);
  const double t_hi =
      std::isfinite(law.hi)
          ? law.hi + h  // a top atom then lies strictly inside the grid
          : tail_point([&](double t) { return law.tails(t, true).first <= half_tail; },
                       std::max(law.lo, 0.0), +1);
  grid_points(t_lo, t_hi, h, options);
  const auto i_lo = static_cast<std::int64_t>(std::floor(t_lo / h));
  const auto i_hi = static_cast<std::int64_t>(std::ceil(t_hi / h));
  const auto n = static_cast<std::size_t>(i_hi - i_lo + 1);

  // Interval masses from the tail on the smaller side, so that neither loses digits: each tail is
  // evaluated only where it is used (a loss law's tails cost a few erfc/log each, the bulk of a
  // leaf's time).
  GridTails tails{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n),
                  std::vector<double>(n)};
  const auto [p_small, q_small] = tails_on_grid(law, i_lo, h, tails);
  const std::vector<double>&pg = tails.pg, &pl = tails.pl, &qg = tails.qg, &ql = tails.ql;
  Pld out;
  out.offset = i_lo;
  out.mass.assign(n, 0.0);
  const bool pessimistic = estimate == Estimate::Pessimistic;
  if (pessimistic) out.mass[0] = pl[0];
  if (pessimistic)
    out.infinity = pg[n - 1];
  else
    out.mass[n - 1] = pg[n - 1];
  const double chord = -std::expm1(-h);  // 1 − e^{−h}
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const double p = std::max(0.0, k >= p_small ? pg[k] - pg[k + 1] : pl[k + 1] - pl[k]);
    if (!pessimistic) {
      out.mass[k] += p;
      continue;
    }
    const double q = std::max(0.0, k >= q_small ? qg[k] - qg[k + 1] : ql[k + 1] - ql[k]);
    const double l = static_cast<double>(i_lo + static_cast<std::int64_t>(k)) * h;
    // Upper end point's share b solves b + a = p, b e^{−(l+h)} + a e^{−l} = q.  Where e^l·q is
    // not representable, all of p goes up (rounding up also dominates).
    const double scaled_q = std::exp(l) * q;
    double upper = std::isfinite(scaled_q) ? (p - scaled_q) / chord : p;
    upper = std::clamp(upper, 0.0, p);
    out.mass[k] += p - upper;
    out.mass[k + 1] += upper;
  }
  truncate_tails(out, options, estimate);
  return out;
}

/// The noise of a leaf: D₀ centred at 0, D₁ at 1, and g(o) = log(dD₁/dD₀)(o), non-decreasing.
/// {g > u} = {o > c} and {g < u} = {o < c} for the thresholds below (±∞ for all or none).
struct Noise {
  bool laplace = false;
  double s = 1;                    // σ or b
  double upper0(double c) const {  // D₀(o > c)
    if (c == kInf) return 0;
    if (c == -kInf) return 1;
    if (!laplace) return upper_normal(c / s);
    return c >= 0 ? 0.5 * std::exp(-c / s) : 1 - 0.5 * std::exp(c / s);
  }
  double lower0(double c) const { return upper0(-c); }  // D₀(o < c), by symmetry
  double upper1(double c) const { return upper0(c - 1); }
  double lower1(double c) const { return lower0(c - 1); }
  double above(double u) const {  // c with {g > u} = {o > c}
    if (!laplace) return s * s * u + 0.5;
    if (u >= 1 / s) return kInf;
    if (u < -1 / s) return -kInf;
    return (s * u + 1) / 2;
  }
  double below(double u) const {  // c with {g < u} = {o < c}
    if (!laplace) return s * s * u + 0.5;
    if (u > 1 / s) return kInf;
    if (u <= -1 / s) return -kInf;
    return (s * u + 1) / 2;
  }
  double g_min() const { return laplace ? -1 / s : -kInf; }
  double g_max() const { return laplace ? 1 / s : kInf; }
};

/// log(1 − q + q e^g), without overflow for large |g| (q = 1 gives g itself).
double log_mix(double q, double g) {
  const double a = std::log(q) + g, b = std::log1p(-q);
  const double top = std::max(a, b);
  if (std::isinf(top)) return top;
  return top + std::log(std::exp(a - top) + std::exp(b - top));
}

/// The u with log_mix(q, u) = t, i.e. log((e^t − 1 + q)/q); −∞ when e^t ≤ 1 − q (no such u).
/// log_q = log q, computed once per law.
double inverse_mix(double q, double log_q, double t) {
  if (t > 1) return t + std::log1p(-(1 - q) * std::exp(-t)) - log_q;
  const double v = std::expm1(t) + q;
  return v <= 0 ? -kInf : std::log(v) - log_q;
}

/// Remove direction (M, D₀) with M = (1 − q)D₀ + qD₁: L = log(1 − q + q e^{g(o)}), increasing.
LossLaw remove_law(const Noise& noise, double q) {
  LossLaw law;
  // L > t  ⟺  g(o) > u(t) = log((e^t − 1 + q)/q); everything when e^t − 1 + q ≤ 0.
  law.tails = [noise, q, log_q = std::log(q)](double t, bool upper) {
    const double u = inverse_mix(q, log_q, t);
    const double c = u == -kInf ? -kInf : noise.above(u);
    const double d0 = upper ? noise.upper0(c) : noise.lower0(c);
    const double d1 = upper ? noise.upper1(c) : noise.lower1(c);
    return std::pair{(1 - q) * d0 + q * d1, d0};
  };
  law.lo = log_mix(q, noise.g_min());
  law.hi = log_mix(q, noise.g_max());
  return law;
}

/// Add direction (D₀, M): L = −log(1 − q + q e^{g(o)}), decreasing in o.
LossLaw add_law(const Noise& noise, double q) {
  LossLaw law;
  // L > t  ⟺  g(o) < u(t) = log((e^{−t} − 1 + q)/q); nothing when e^{−t} − 1 + q ≤ 0.
  law.tails = [noise, q, log_q = std::log(q)](double t, bool upper) {
    const double u = inverse_mix(q, log_q, -t);
    const double c = u == -kInf ? -kInf : noise.below(u);
    const double d0 = upper ? noise.lower0(c) : noise.upper0(c);
    const double d1 = upper ? noise.lower1(c) : noise.upper1(c);
    return std::pair{d0, (1 - q) * d0 + q * d1};
  };
  law.lo = -log_mix(q, noise.g_max());
  law.hi = -log_mix(q, noise.g_min());
  return law;
}

/// The pair of one leaf whose noise is zero or whose ε is infinite: δ(ε) = 1 everywhere.
Directions blatant() {
  Pld p;
  p.infinity = 1;
  return Directions{p, std::nullopt};
}

}  // namespace

Directions gaussian(double sigma, const Options& options, Estimate estimate) {
  if (!(sigma > 0)) return blatant();
  // The Gaussian's PLD is Gaussian: with μ = 1/σ, L ~ N(μ²/2, μ²) under P and N(−μ²/2, μ²) under
  // Q (Balle & Wang 2018); both tails are exact normal tails in loss space.
  const double mu = 1 / sigma, m = mu * mu / 2;
  LossLaw law;
  law.tails = [=](double t, bool upper) {
    return upper ? std::pair{upper_normal((t - m) / mu), upper_normal((t + m) / mu)}
                 : std::pair{upper_normal((m - t) / mu), upper_normal((-m - t) / mu)};
  };
  return Directions{discretise(law, options, estimate), std::nullopt};
}

Directions laplace(double b, const Options& options, Estimate estimate) {
  if (!(b > 0)) return blatant();
  return Directions{discretise(remove_law(Noise{true, b}, 1.0), options, estimate), std::nullopt};
}

Directions approx_dp(double epsilon, double delta, const Options& options, Estimate estimate) {
  if (std::isinf(epsilon) || delta >= 1) return blatant();
  // Kairouz, Oh & Viswanath 2015: every (ε, δ)-DP pair is a post-processing of
  // P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0), Q = (0, (1−δ)/(1+e^ε), (1−δ)e^ε/(1+e^ε), δ):
  // losses +∞, ε, −ε (−∞ carries no P-mass).  The grid rounds ±ε up (pessimistic) or down.
  const double h = options.value_discretization_interval;
  auto index = [&](double loss) { return grid_index(loss, h, estimate); };
  grid_points(-epsilon, epsilon, h, options);
  const std::int64_t top = index(epsilon), bottom = index(-epsilon);
  Pld p;
  p.offset = bottom;
  p.mass.assign(static_cast<std::size_t>(top - bottom + 1), 0.0);
  p.mass.back() += (1 - delta) / (1 + std::exp(-epsilon));
  p.mass.front() += (1 - delta) / (1 + std::exp(epsilon));
  p.infinity = delta;
  return Directions{p, std::nullopt};
}

Directions poisson_sampled(double q, double noise, bool laplace, const Options& options,
                           Estimate estimate) {
  if (q >= 1)
    return laplace ? pld::laplace(noise, options, estimate) : gaussian(noise, options, estimate);
  if (!(noise > 0)) {
    // No noise: the record's presence shows with probability q.  Remove: L = +∞ w.p. q, else
    // log(1 − q); add: L = −log(1 − q) always (P = D₀ never shows it).  Both exact on rounding.
    const double h = options.value_discretization_interval;
    const double lr = std::log1p(-q);
    auto round = [&](double x) { return grid_index(x, h, estimate); };
    Pld remove, add;
    remove.offset = round(lr);
    remove.mass = {1 - q};
    remove.infinity = q;
    add.offset = round(-lr);
    add.mass = {1.0};
    return Directions{remove, add};
  }
  const Noise n{laplace, noise};
  return Directions{discretise(remove_law(n, q), options, estimate),
                    discretise(add_law(n, q), options, estimate)};
}

}  // namespace dptune::pld
