// Grid releases with exact discrete noise (see grid_noise.hpp for the accounting of the rounding).
#include "dptune/helpers/grid_noise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "dptune/errors.hpp"
#include "dptune/helpers/discrete.hpp"

namespace dptune {

namespace {

// Noise in grid units at most 2^23 (Gaussian σ) or 2^30 (Laplace scale): σ² <= 2^46 stays below
// the discrete Gaussian's 2^48 limit with room for the rounding up.
constexpr double kGaussianUnits = 8388608.0;          // 2^23
constexpr double kLaplaceUnits = 1073741824.0;        // 2^30
constexpr double kMaxGaussianSpread = 2097152.0;      // σ sqrt(d) <= 2^21
constexpr double kMaxLaplaceSpread = 268435456.0;     // b d <= 2^28
constexpr double kMaxGridSteps = 4503599627370496.0;  // 2^52
constexpr int kMinExponent = -1000, kMaxExponent = 1000;

void check_noise_inputs(const char* who, double sensitivity, double multiplier) {
  if (!(std::isfinite(sensitivity) && sensitivity >= 0))
    throw InvalidArgument(std::string(who) + ": the sensitivity must be finite and >= 0, got " +
                          std::to_string(sensitivity));
  if (!(std::isfinite(multiplier) && multiplier >= 0))
    throw InvalidArgument(std::string(who) +
                          ": the noise multiplier must be finite and >= 0, got " +
                          std::to_string(multiplier));
}

/// The exponent e of the smallest power of two 2^e >= x > 0, clamped below at kMinExponent (a
/// coarser grid only inflates the noise).
int ceil_log2(double x) {
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  if (m == 0.5) --e;
  return std::max(e, kMinExponent);
}

/// The grid step 2^e with Δ/g <= room, i.e. g >= Δ/room; 1.0 when no noise is drawn.
double grid_for(const char* who, double sensitivity, double multiplier, double room) {
  if (sensitivity == 0 || multiplier == 0) return 1.0;
  const int e = ceil_log2(sensitivity / room);
  if (e > kMaxExponent)
    throw InvalidArgument(std::string(who) + ": sensitivity " + std::to_string(sensitivity) +
                          " too large for a grid release");
  return std::ldexp(1.0, e);
}

/// The exponent of a power-of-two grid step; throws when `grid` is not one.
int grid_exponent(const char* who, double grid) {
  int e = 0;
  if (!(std::isfinite(grid) && grid > 0) || std::frexp(grid, &e) != 0.5 || e - 1 < kMinExponent ||
      e - 1 > kMaxExponent)
    throw InvalidArgument(std::string(who) + ": the grid step must be a power of two in [2^" +
                          std::to_string(kMinExponent) + ", 2^" + std::to_string(kMaxExponent) +
                          "], got " + std::to_string(grid));
  return e - 1;
}

/// num / 2^s >= value for value > 0, with num <= max_num and s <= max_shift as large as allowed.
/// value is first raised by 2^-45 relative: the double computation of the noise parameter (one
/// square root, a sum, a product, a square) errs by under 5 ulps = 5 · 2^-53, so the raised value
/// exceeds the exact real parameter and the result is rounded UP (more noise than needed, never
/// less).
GridNoiseParameter rational_up(const char* who, double value, std::uint64_t max_num,
                               int max_shift) {
  const double raised = value * (1.0 + std::ldexp(1.0, -45));
  const auto limit = static_cast<double>(max_num);
  if (!(std::isfinite(raised) && raised > 0 && std::ceil(raised) <= limit))
    throw InvalidArgument(std::string(who) + ": noise parameter " + std::to_string(value) +
                          " in grid units outside the sampler's range");
  // The largest shift <= max_shift with ceil(raised 2^shift) <= limit: the valid shifts are a
  // prefix (ceil(raised 2^s) grows with s), so start next to the answer (raised = f 2^e with
  // f in [1/2, 1), limit = 2^l: the answer is about l - e) and step to it, rather than from 0.
  int exponent = 0;
  (void)std::frexp(raised, &exponent);
  int shift = std::clamp(std::ilogb(limit) - exponent, 0, max_shift);
  while (shift > 0 && std::ceil(std::ldexp(raised, shift)) > limit) --shift;
  while (shift < max_shift && std::ceil(std::ldexp(raised, shift + 1)) <= limit) ++shift;
  return {static_cast<std::uint64_t>(std::ceil(std::ldexp(raised, shift))),
          std::uint64_t{1} << shift};
}

/// round(v / g) + noise[i], times g.  v / g is exact (a power-of-two scaling of a value below
/// 2^52 grid steps); the rounding is half away from zero (as std::llround), a fixed
/// deterministic rounding, which is all the sensitivity argument needs.  The product with g is a
/// deterministic function of the integer sum (post-processing), exact whenever the sum is below
/// 2^53 in magnitude.  Both scalings are products with the powers of two 2^-e and 2^e (|e| <=
/// 1000, so both are normal doubles): IEEE multiplication rounds the exact product as ldexp does,
/// so the results are those of ldexp, without a library call per value.
std::vector<double> add_on_grid(const char* who, std::span<const double> values, int exponent,
                                std::span<const std::int64_t> noise) {
  const double to_steps = std::ldexp(1.0, -exponent), to_values = std::ldexp(1.0, exponent);
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double steps = values[i] * to_steps;
    if (!(std::abs(steps) <= kMaxGridSteps)) [[unlikely]]
      throw InvalidArgument(std::string(who) + ": value " + std::to_string(values[i]) +
                            " is beyond 2^52 grid steps of " +
                            std::to_string(std::ldexp(1.0, exponent)) +
                            " (rescale the query, or use noise: fast)");
    // Half away from zero: trunc, then one step out when the dropped part is at least 1/2 (the
    // difference steps - whole is exact for |steps| <= 2^52).
    const double whole = std::trunc(steps);
    const double dropped = steps - whole;
    auto rounded = static_cast<std::int64_t>(whole);
    if (dropped >= 0.5) ++rounded;
    if (dropped <= -0.5) --rounded;
    std::int64_t sum = 0;
    if (__builtin_add_overflow(rounded, noise[i], &sum)) [[unlikely]]
      throw Error(std::string(who) + ": noise draw beyond the int64 range");
    out[i] = static_cast<double>(sum) * to_values;
  }
  return out;
}

void check_values(const char* who, std::span<const double> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw InvalidArgument(std::string(who) + ": value " + std::to_string(i) + " is not finite (" +
                            std::to_string(values[i]) + ")");
}

}  // namespace

double laplace_grid(double l1, double multiplier, std::size_t count) {
  check_noise_inputs("laplace grid", l1, multiplier);
  const double d = static_cast<double>(count);
  if (multiplier * d > kMaxLaplaceSpread)
    throw InvalidArgument("laplace grid: noise multiplier " + std::to_string(multiplier) + " × " +
                          std::to_string(count) +
                          " coordinates exceeds 2^28 (use noise: fast, knowing it is insecure)");
  return grid_for("laplace grid", l1, multiplier, kLaplaceUnits / multiplier - d);
}

double gaussian_grid(double l2, double multiplier, std::size_t count) {
  check_noise_inputs("gaussian grid", l2, multiplier);
  const double root_d = std::sqrt(static_cast<double>(count));
  if (multiplier * root_d > kMaxGaussianSpread)
    throw InvalidArgument("gaussian grid: noise multiplier " + std::to_string(multiplier) +
                          " × sqrt(" + std::to_string(count) +
                          " coordinates) exceeds 2^21 (use noise: fast, knowing it is insecure)");
  return grid_for("gaussian grid", l2, multiplier, kGaussianUnits / multiplier - root_d);
}

GridNoiseParameter grid_laplace_scale(double l1, double multiplier, double grid,
                                      std::size_t count) {
  check_noise_inputs("grid_laplace", l1, multiplier);
  const int e = grid_exponent("grid_laplace", grid);
  // Inflated sensitivity in grid units: l1/g + d (one step per coordinate).
  const double scale = multiplier * (std::ldexp(l1, -e) + static_cast<double>(count));
  return rational_up("grid_laplace", scale, kDiscreteLaplaceMaxScaleNum, 62);
}

GridNoiseParameter grid_gaussian_variance(double l2, double multiplier, double grid,
                                          std::size_t count) {
  check_noise_inputs("grid_gaussian", l2, multiplier);
  const int e = grid_exponent("grid_gaussian", grid);
  // Inflated sensitivity in grid units: l2/g + sqrt(d).
  const double sigma = multiplier * (std::ldexp(l2, -e) + std::sqrt(static_cast<double>(count)));
  return rational_up("grid_gaussian", sigma * sigma, kDiscreteGaussianMaxTerm, 48);
}

std::vector<double> grid_laplace(std::span<const double> values, double l1, double multiplier,
                                 double grid, RandomBitGenerator& rng) {
  check_values("grid_laplace", values);
  if (l1 == 0 || multiplier == 0) {
    check_noise_inputs("grid_laplace", l1, multiplier);
    return {values.begin(), values.end()};
  }
  const GridNoiseParameter scale = grid_laplace_scale(l1, multiplier, grid, values.size());
  std::vector<std::int64_t> noise(values.size());
  discrete_laplace_tabled(rng, scale.numerator, scale.denominator, noise);
  return add_on_grid("grid_laplace", values, grid_exponent("grid_laplace", grid), noise);
}

std::vector<double> add_noise_on_grid(std::span<const double> values, double grid,
                                      std::span<const std::int64_t> noise) {
  check_values("add_noise_on_grid", values);
  const int e = grid_exponent("add_noise_on_grid", grid);
  if (noise.size() != values.size())
    throw InvalidArgument("add_noise_on_grid: " + std::to_string(noise.size()) +
                          " noise values for " + std::to_string(values.size()) + " values");
  return add_on_grid("add_noise_on_grid", values, e, noise);
}

std::vector<double> grid_gaussian(std::span<const double> values, double l2, double multiplier,
                                  double grid, RandomBitGenerator& rng) {
  check_values("grid_gaussian", values);
  if (l2 == 0 || multiplier == 0) {
    check_noise_inputs("grid_gaussian", l2, multiplier);
    return {values.begin(), values.end()};
  }
  const GridNoiseParameter variance = grid_gaussian_variance(l2, multiplier, grid, values.size());
  std::vector<std::int64_t> noise(values.size());
  discrete_gaussian_tabled(rng, variance.numerator, variance.denominator, noise);
  return add_on_grid("grid_gaussian", values, grid_exponent("grid_gaussian", grid), noise);
}

}  // namespace dptune
