#include "dptune/helpers/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "dptune/errors.hpp"
#include "dptune/params.hpp"
#include "dptune/plugin.hpp"

namespace dptune {

namespace {
std::string num(double x) { return to_string(Value{x}); }
}  // namespace

namespace {

// The search of calibrate_parameter: ε at δ of event_of(x), every evaluation remembered, checked
// for monotonicity in the direction the range's ends showed, and the best point that meets the
// target kept (the smallest such x when ε falls with x, the largest when it grows).
class Search {
 public:
  Search(const Accountant& accountant, const std::function<DpEvent(double)>& event_of,
         double target, double delta)
      : accountant_(accountant), event_of_(event_of), target_(target), delta_(delta) {}

  /// ε(x) − target.
  double gap(double x) { return evaluate(x).epsilon - target_; }

  const PrivacyGuarantee& evaluate(double x) {
    if (const auto it = seen_.find(x); it != seen_.end()) return it->second;
    PrivacyGuarantee g = accountant_.epsilon(event_of_(x), delta_);
    ++evaluations_;
    check_monotone(x, g.epsilon);
    const auto& kept = seen_.emplace(x, std::move(g)).first->second;
    bracket();
    return kept;
  }

  void set_direction(int direction) {
    direction_ = direction;
    bracket();
  }
  int direction() const { return direction_; }
  std::optional<double> feasible() const { return feasible_; }
  std::optional<double> infeasible() const { return infeasible_; }
  int evaluations() const { return evaluations_; }

 private:
  // A pair (x < y) whose ε moves against the direction by more than kWobble (relative) is a
  // violation: the family is not monotone in the parameter.  Smaller moves are the rounding of
  // accountants computed on grids (pld: losses on a grid of step h, tails truncated); the search
  // brackets the monotone envelope (bracket()), so they cannot make it return a point whose ε is
  // above the target.
  static constexpr double kWobble = 1e-3;
  void check_monotone(double x, double eps) const {
    if (direction_ == 0) return;
    auto check = [&](double lo_x, double lo_eps, double hi_x, double hi_eps) {
      const double slack = kWobble * std::max(1e-6, std::max(std::abs(lo_eps), std::abs(hi_eps)));
      const bool wrong = direction_ < 0 ? hi_eps > lo_eps + slack : lo_eps > hi_eps + slack;
      if (wrong)
        throw Error("epsilon is not monotone in the calibrated parameter (" + num(lo_x) + " -> " +
                    num(lo_eps) + ", " + num(hi_x) + " -> " + num(hi_eps) + ")");
    };
    const auto above = seen_.upper_bound(x);
    if (above != seen_.end()) check(x, eps, above->first, above->second.epsilon);
    if (above != seen_.begin()) {
      const auto below = std::prev(above);
      check(below->first, below->second.epsilon, x, eps);
    }
  }

  // The bracket on the monotone envelope of the evaluated points: for ε falling with x (direction
  // −1), ε̃(x) = max of ε(y) over the evaluated y ≥ x (rising: over y ≤ x).  ε̃ ≥ ε at every point,
  // so a point feasible for ε̃ is feasible for ε; and ε̃ is monotone, so the feasible points of ε̃
  // lie on one side of its infeasible ones and the bracket closes even where an accountant computed
  // on a grid (pld's discretised losses) wobbles by rounding.  The infeasible end is the last
  // infeasible point in the direction of feasibility, the feasible end the first feasible point
  // beyond it.
  void bracket() {
    feasible_.reset();
    infeasible_.reset();
    const bool falling = direction_ <= 0;
    const auto consider = [&](double x, double eps) {
      if (eps > target_) {
        infeasible_ = x;
        feasible_.reset();
      } else if (!feasible_) {
        feasible_ = x;
      }
    };
    if (falling) {
      for (const auto& [x, g] : seen_) consider(x, g.epsilon);
    } else {
      for (auto it = seen_.rbegin(); it != seen_.rend(); ++it)
        consider(it->first, it->second.epsilon);
    }
  }

  const Accountant& accountant_;
  const std::function<DpEvent(double)>& event_of_;
  double target_, delta_;
  int direction_ = 0;
  std::map<double, PrivacyGuarantee> seen_;
  std::optional<double> feasible_, infeasible_;
  int evaluations_ = 0;
};

/// The parameter at log-coordinate t: e^t, or the nearest integer strictly inside the integer
/// bracket (lo, hi) when the parameter is an integer.
double point_at(double t, bool integer, double lo, double hi) {
  const double x = std::exp(t);
  if (!integer) return x;
  return std::clamp(std::round(x), std::min(lo, hi) + 1, std::max(lo, hi) - 1);
}

/// True when the bracket between the feasible and infeasible points is as narrow as asked.
bool closed(const Search& s, const ParameterRange& range) {
  const double f = *s.feasible(), i = *s.infeasible();
  if (range.integer) return std::abs(f - i) <= 1;
  return std::max(f, i) / std::min(f, i) <= 1 + range.relative_tolerance;
}

// Brent's zero finder on g(t) = ε(e^t) − target over the bracket [a, b] of log-coordinates, where
// g(a) and g(b) differ in sign: inverse quadratic interpolation or the secant step when it stays
// well inside the bracket and shrinks it fast enough, bisection otherwise (Brent 1973, ch. 4).  It
// stops when the Search's feasible and infeasible points are close enough; for integers, once
// Brent stalls, the rest is bisection on the integers.
void brent(Search& s, const ParameterRange& range, double a, double b) {
  double fa = s.gap(std::exp(a)), fb = s.gap(std::exp(b));
  double c = a, fc = fa, d = b - a, e = d;
  for (int iteration = 0; iteration < 200 && !closed(s, range); ++iteration) {
    if ((fb > 0) == (fc > 0)) {
      c = a, fc = fa, d = e = b - a;
    }
    if (std::abs(fc) < std::abs(fb)) {
      a = b, b = c, c = a;
      fa = fb, fb = fc, fc = fa;
    }
    const double tol = 4 * std::numeric_limits<double>::epsilon() * std::abs(b) + 1e-15;
    const double half = 0.5 * (c - b);
    if (std::abs(half) <= tol || fb == 0) break;
    if (std::abs(e) >= tol && std::abs(fa) > std::abs(fb)) {
      double p = 0, q = 0;
      const double ratio = fb / fa;
      if (a == c) {  // secant
        p = 2 * half * ratio;
        q = 1 - ratio;
      } else {  // inverse quadratic interpolation
        const double qa = fa / fc, rb = fb / fc;
        p = ratio * (2 * half * qa * (qa - rb) - (b - a) * (rb - 1));
        q = (qa - 1) * (rb - 1) * (ratio - 1);
      }
      if (p > 0) q = -q;
      p = std::abs(p);
      if (2 * p < std::min(3 * half * q - std::abs(tol * q), std::abs(e * q))) {
        e = d;
        d = p / q;
      } else {
        d = e = half;
      }
    } else {
      d = e = half;
    }
    a = b, fa = fb;
    b += std::abs(d) > tol ? d : std::copysign(tol, half);
    const double x = point_at(b, range.integer, *s.feasible(), *s.infeasible());
    if (range.integer) b = std::log(x);
    fb = s.gap(x);
  }
  while (!closed(s, range)) {  // integers: finish by bisection between the two nearest points
    const double f = *s.feasible(), i = *s.infeasible();
    s.gap(range.integer ? std::floor(0.5 * (f + i)) : std::sqrt(f * i));
  }
}

}  // namespace

ParameterCalibration calibrate_parameter(const Accountant& accountant,
                                         const std::function<DpEvent(double)>& event_of,
                                         double target_epsilon, double delta,
                                         const ParameterRange& range) {
  require(std::isfinite(target_epsilon) && target_epsilon > 0,
          "calibration: target epsilon must be a finite number > 0, got " + num(target_epsilon));
  require(delta > 0 && delta < 1, "calibration: delta must be in (0, 1), got " + num(delta));
  require(range.lower > 0 && range.upper > range.lower && std::isfinite(range.upper),
          "calibration: need 0 < lower < upper < inf");
  require(range.relative_tolerance > 0, "calibration: relative_tolerance must be > 0");
  const double lower = range.integer ? std::ceil(range.lower) : range.lower;
  const double upper = range.integer ? std::floor(range.upper) : range.upper;
  require(upper > lower, "calibration: the range holds fewer than two integers");

  Search s(accountant, event_of, target_epsilon, delta);
  const double eps_lower = s.evaluate(lower).epsilon, eps_upper = s.evaluate(upper).epsilon;
  s.set_direction(eps_upper > eps_lower ? +1 : -1);
  if (!s.feasible())
    throw PrivacyError("calibration: no value in [" + num(lower) + ", " + num(upper) +
                       "] meets epsilon " + num(target_epsilon) + " at delta " + num(delta) +
                       " (epsilon " + num(eps_lower) + " at " + num(lower) + ", " + num(eps_upper) +
                       " at " + num(upper) + ")");
  if (s.infeasible()) brent(s, range, std::log(lower), std::log(upper));
  ParameterCalibration result;
  result.value = *s.feasible();
  result.direction = s.direction();
  result.guarantee = s.evaluate(result.value);
  result.evaluations = s.evaluations();
  return result;
}

NoiseCalibration calibrate_noise(const Accountant& accountant,
                                 const std::function<DpEvent(double)>& event_of,
                                 double target_epsilon, double delta,
                                 const CalibrationOptions& options) {
  ParameterRange range;
  range.lower = options.lower;
  range.upper = options.upper;
  range.relative_tolerance = options.relative_tolerance;
  const ParameterCalibration c =
      calibrate_parameter(accountant, event_of, target_epsilon, delta, range);
  if (c.direction > 0)
    throw Error("calibrate_noise: epsilon increases with the noise parameter between " +
                num(range.lower) + " and " + num(range.upper) +
                ": the event family is not a noise family");
  NoiseCalibration result;
  result.noise = c.value;
  result.guarantee = c.guarantee;
  result.evaluations = c.evaluations;
  return result;
}

}  // namespace dptune
