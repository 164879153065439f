// Grid releases with exact discrete noise (sdk/include/dptune/helpers/grid_noise.hpp;).
//
// (a) known answers: every release is an exact multiple of the grid step, and with fixed seeds
//     (release - rounded value) / g follows the closed-form discrete Laplace / Gaussian pmf of the
//     rational parameter the sampler was given (chi-square, p-value threshold 1e-6; the seeds are
//     fixed, so the test cannot flake);
// (b) Mironov's attack (Mironov 2012) on f(D) = 0 vs f(D') = 1 with b = 1: the fast
//     floating-point sampler's outputs under D are mostly impossible under D' (measured here with
//     the SDK's own sampler, inverted exactly), whereas every grid release under either input lies
//     on the same lattice g Z, the support of both output distributions;
// (c) the noise's standard deviation is σ Δ up to the grid's tiny inflation;
// (d) the grid rule and the refusals (non-finite input, Δ = 0, empty vector, non-power-of-two).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/helpers/discrete.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/rng.hpp"

namespace {

// ---- statistics: regularised upper incomplete gamma Q(a, x), for chi-square p-values
// (power series for x < a + 1, modified Lentz continued fraction otherwise).
double upper_regularised_gamma(double a, double x) {
  const double log_prefactor = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 1000 && std::abs(term) > 1e-17 * std::abs(sum); ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return 1 - sum * std::exp(log_prefactor);
  }
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < 1e-16) break;
  }
  return std::exp(log_prefactor) * h;
}

double chi_square_p_value(double statistic, int degrees_of_freedom) {
  return upper_regularised_gamma(degrees_of_freedom / 2.0, statistic / 2.0);
}

/// Exact pmf on the integers from unnormalised weights w(k), normalised over |k| <= reach (the
/// tail beyond is below 1e-30 for the cases tested).
struct Pmf {
  template <class Weight>
  Pmf(Weight weight, int reach) : reach_(reach), p_(2 * reach + 1) {
    long double total = 0;
    for (int k = -reach; k <= reach; ++k) total += (p_[k + reach] = weight(k));
    for (auto& p : p_) p /= total;
  }
  double at(int k) const { return std::abs(k) > reach_ ? 0 : static_cast<double>(p_[k + reach_]); }
  double at_most(int k) const {
    long double s = 0;
    for (int j = -reach_; j <= k; ++j) s += p_[j + reach_];
    return static_cast<double>(s);
  }
  double at_least(int k) const { return at_most(-k); }  // symmetric

  int reach_;
  std::vector<long double> p_;
};

/// Chi-square of `samples` against `pmf` on the bins (-inf, -edge], each k in (-edge, edge),
/// [edge, inf); also a z-test per bin (|z| <= 5.5, Bonferroni-safe for the bin count used here).
/// Chi-square p-value of integer samples against pmf(k) (normalised over |k| <= reach) on the
/// bins (-inf, -edge], each k in (-edge, edge), [edge, inf).
template <class Pmf>
double chi_square_p(const std::vector<std::int64_t>& samples, Pmf pmf, int edge, int reach) {
  long double total = 0;
  std::map<int, long double> p;
  for (int k = -reach; k <= reach; ++k) total += pmf(k);
  for (int k = -reach; k <= reach; ++k) {
    const int bin = std::max(-edge, std::min(edge, k));
    p[bin] += pmf(k) / total;
  }
  std::map<int, long> counts;
  for (auto x : samples)
    ++counts[static_cast<int>(std::max<std::int64_t>(-edge, std::min<std::int64_t>(edge, x)))];
  const double n = static_cast<double>(samples.size());
  double statistic = 0;
  for (int k = -edge; k <= edge; ++k) {
    const double expected = n * static_cast<double>(p[k]);
    REQUIRE(expected >= 5);
    const double observed = static_cast<double>(counts[k]);
    statistic += (observed - expected) * (observed - expected) / expected;
  }
  return chi_square_p_value(statistic, 2 * edge);
}

/// True when x is an integer multiple of 2^exponent.
bool on_grid(double x, int exponent) {
  const double steps = std::ldexp(x, -exponent);
  return steps == std::nearbyint(steps);
}

int exponent_of(double grid) {
  int e = 0;
  std::frexp(grid, &e);
  return e - 1;
}

/// The grid steps (release - value) / g of `draws` one-coordinate releases.
template <class Release>
std::vector<std::int64_t> offsets(Release release, double value, double grid, int draws) {
  std::vector<std::int64_t> out;
  const double rounded =
      std::ldexp(std::nearbyint(std::ldexp(value, -exponent_of(grid))), exponent_of(grid));
  for (int i = 0; i < draws; ++i) {
    const double r = release();
    REQUIRE(on_grid(r, exponent_of(grid)));
    out.push_back(static_cast<std::int64_t>(std::ldexp(r - rounded, -exponent_of(grid))));
  }
  return out;
}

/// Whether x can be the fast sampler's release 1 + laplace(rng, 1) (dptune::laplace: a sign bit,
/// then -log(U) with U = (j + 0.5) 2^-53): searches the j whose magnitude could round to x.
bool fast_output_possible_from_one(double x) {
  const double target = std::abs(x - 1.0);
  const bool negative = x < 1.0;
  const double u0 = std::exp(-target);
  const double centre = u0 * 0x1.0p53 - 0.5;
  const double ulp =
      std::nextafter(std::abs(x), std::numeric_limits<double>::infinity()) - std::abs(x);
  const double width = std::ceil(4 * u0 * 0x1.0p53 * (ulp + 0x1.0p-52)) + 4;
  const auto first = static_cast<std::int64_t>(std::max(0.0, std::floor(centre - width)));
  const auto last = static_cast<std::int64_t>(std::min(0x1.0p53 - 1, std::ceil(centre + width)));
  for (std::int64_t j = first; j <= last; ++j) {
    const double magnitude = -std::log((static_cast<double>(j) + 0.5) * 0x1.0p-53);
    if (1.0 + (negative ? -magnitude : magnitude) == x) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("grid_gaussian: exact multiples of g and the discrete Gaussian pmf of its parameter") {
  // Δ₂ = 1, σ = 1, g = 1/4, d = 1: σ in grid units 1 · (4 + 1) = 5 (rounded up by < 2^-44).
  dptune::Xoshiro256 rng(20261123);
  const double grid = 0.25;
  const auto variance = dptune::grid_gaussian_variance(1.0, 1.0, grid, 1);
  const double sigma2 =
      static_cast<double>(variance.numerator) / static_cast<double>(variance.denominator);
  CHECK(sigma2 >= 25.0);
  CHECK(sigma2 <= 25.0 * (1 + 1e-12));
  const double value[] = {0.3};  // rounds to 1.2 → 1 grid step
  const auto samples = offsets([&] { return dptune::grid_gaussian(value, 1.0, 1.0, grid, rng)[0]; },
                               0.3, grid, 200000);
  const double p = chi_square_p(
      samples, [&](int k) { return std::exp(-static_cast<long double>(k) * k / (2 * sigma2)); }, 15,
      80);
  INFO("chi-square p-value " << p);
  CHECK(p > 1e-6);
}

TEST_CASE("add_noise_on_grid: grid_gaussian is the tabled noise added on the grid") {
  // The split the gaussian mechanism uses to draw its noise ahead: the same values, bit for bit.
  const std::vector<double> values = {0.3, -1.7, 1e-9, 123.456, -0.125, 0.0};
  const double l2 = 0.75, multiplier = 1.3;
  const double grid = dptune::gaussian_grid(l2, multiplier, values.size());
  dptune::Xoshiro256 whole(77), split(77);
  for (int release = 0; release < 3; ++release) {
    const std::vector<double> expected = dptune::grid_gaussian(values, l2, multiplier, grid, whole);
    const auto variance = dptune::grid_gaussian_variance(l2, multiplier, grid, values.size());
    std::vector<std::int64_t> noise(values.size());
    dptune::discrete_gaussian_tabled(split, variance.numerator, variance.denominator, noise);
    CHECK(dptune::add_noise_on_grid(values, grid, noise) == expected);
  }
  std::vector<std::int64_t> noise(values.size(), 0);
  CHECK_THROWS_AS(dptune::add_noise_on_grid(values, 0.3, noise), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::add_noise_on_grid(values, grid, std::span(noise).first(2)),
                  dptune::InvalidArgument);
  const std::vector<double> bad = {1.0, std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_AS(dptune::add_noise_on_grid(bad, grid, std::span(noise).first(2)),
                  dptune::InvalidArgument);
  // Rounding half away from zero, then the noise, in grid steps of 1/4.
  const std::vector<double> ties = {0.125, -0.125, 0.375};
  const std::vector<std::int64_t> offsets_in_steps = {0, 2, -1};
  CHECK(dptune::add_noise_on_grid(ties, 0.25, offsets_in_steps) ==
        std::vector<double>{0.25, 0.25, 0.25});
}

TEST_CASE("grid_laplace: exact multiples of g and the discrete Laplace pmf of its parameter") {
  // Δ₁ = 1, b = 0.5, g = 1/4, d = 1: scale 0.5 · (4 + 1) = 2.5 grid units.
  dptune::Xoshiro256 rng(7);
  const double grid = 0.25;
  const auto scale = dptune::grid_laplace_scale(1.0, 0.5, grid, 1);
  const double t = static_cast<double>(scale.numerator) / static_cast<double>(scale.denominator);
  CHECK(t >= 2.5);
  CHECK(t <= 2.5 * (1 + 1e-12));
  const double value[] = {-0.3};  // -1.2 → -1 grid step
  const auto samples = offsets([&] { return dptune::grid_laplace(value, 1.0, 0.5, grid, rng)[0]; },
                               -0.3, grid, 200000);
  const double p = chi_square_p(
      samples, [&](int k) { return std::exp(-std::abs(static_cast<long double>(k)) / t); }, 12,
      300);
  INFO("chi-square p-value " << p);
  CHECK(p > 1e-6);
}

TEST_CASE(
    "Mironov's attack: the fast sampler separates f(D) = 0 from f(D') = 1, the grid does not") {
  // The old flaw: outputs of 0 + Laplace(1) that 1 + Laplace(1) can never produce.
  dptune::Xoshiro256 rng(2012);
  const int draws = 4000;
  int impossible = 0;
  for (int i = 0; i < draws; ++i)
    if (!fast_output_possible_from_one(0.0 + dptune::laplace(rng, 1.0))) ++impossible;
  const double fraction = static_cast<double>(impossible) / draws;
  INFO("fraction of fast D-outputs impossible under D': " << fraction);
  CHECK(fraction > 0.5);
  // Sanity of the inversion: outputs of D' itself are always found possible.
  for (int i = 0; i < 500; ++i)
    CHECK(fast_output_possible_from_one(1.0 + dptune::laplace(rng, 1.0)));

  // The grid release: both inputs give multiples of the same g, so each output's difference
  // from either rounded input is a whole number of steps — possible under both, since the discrete
  // Laplace has every integer in its support.  The sets of possible outputs are the same lattice.
  const double grid = dptune::laplace_grid(1.0, 1.0, 1);
  const int e = exponent_of(grid);
  CHECK(grid == std::ldexp(1.0, -29));  // b (1/g + 1) <= 2^30: g = 2^-29
  const double d0[] = {0.0}, d1[] = {1.0};
  for (int i = 0; i < draws; ++i) {
    const double r0 = dptune::grid_laplace(d0, 1.0, 1.0, grid, rng)[0];
    const double r1 = dptune::grid_laplace(d1, 1.0, 1.0, grid, rng)[0];
    REQUIRE(on_grid(r0, e));
    REQUIRE(on_grid(r1, e));
    REQUIRE(on_grid(r0 - 1.0, e));  // r0 = 1 + (integer) g: an output D' can produce
    REQUIRE(on_grid(r1 - 0.0, e));
  }
}

TEST_CASE("grid_gaussian: noise standard deviation σ Δ₂ up to the grid's inflation") {
  dptune::Xoshiro256 rng(99);
  const std::vector<double> zeros(50000, 0.0);
  const double l2 = 2.0, sigma = 1.5;
  const double grid = dptune::gaussian_grid(l2, sigma, zeros.size());
  const std::vector<double> out = dptune::grid_gaussian(zeros, l2, sigma, grid, rng);
  double sum = 0, squares = 0;
  for (double x : out) {
    sum += x;
    squares += x * x;
  }
  const double n = static_cast<double>(out.size());
  const double sd = std::sqrt(squares / n);
  // Relative standard error of the sample sd: 1/sqrt(2n) ≈ 0.32%; 5 of them.
  CHECK(sd == doctest::Approx(sigma * l2).epsilon(0.016));
  CHECK(std::abs(sum / n) < 5 * sigma * l2 / std::sqrt(n));
  // The inflation g sqrt(d) / Δ is tiny and on the safe side.
  CHECK(grid * std::sqrt(n) / l2 < 1e-4);
}

TEST_CASE("grid rule and refusals") {
  dptune::Xoshiro256 rng(1);
  // Gaussian: σ (Δ/g + sqrt d) <= 2^23 with g the smallest power of two allowing it.
  const double g = dptune::gaussian_grid(1.0, 1.0, 1);
  CHECK(1.0 * (1.0 / g + 1.0) <= 8388608.0);
  CHECK(1.0 * (2.0 / g + 1.0) > 8388608.0);
  // No noise: values unchanged (Δ = 0: a constant query; multiplier 0: the event claims nothing).
  const double v[] = {0.1, -3.7};
  CHECK(dptune::grid_gaussian(v, 0.0, 1.0, dptune::gaussian_grid(0.0, 1.0, 2), rng) ==
        std::vector<double>{0.1, -3.7});
  CHECK(dptune::grid_laplace(v, 1.0, 0.0, 1.0, rng) == std::vector<double>{0.1, -3.7});
  CHECK(dptune::grid_gaussian({}, 1.0, 1.0, g, rng).empty());
  const double bad[] = {std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_AS(dptune::grid_gaussian(bad, 1.0, 1.0, g, rng), dptune::InvalidArgument);
  const double inf[] = {std::numeric_limits<double>::infinity()};
  CHECK_THROWS_AS(dptune::grid_laplace(inf, 1.0, 1.0, 0.5, rng), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::grid_gaussian(v, 1.0, 1.0, 0.3, rng), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::gaussian_grid(-1.0, 1.0, 1), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::gaussian_grid(1.0, 1e7, 1), dptune::InvalidArgument);  // σ > 2^21
  const double huge[] = {1e300};
  CHECK_THROWS_AS(dptune::grid_gaussian(huge, 1.0, 1.0, g, rng), dptune::InvalidArgument);
}
