// Exact integer samplers (sdk/include/dptune/helpers/discrete.hpp; Canonne, Kamath & Steinke 2020).
//
// Three kinds of evidence: (1) known answers on scripted bit streams, derived by hand from the
// algorithms (bits are read most significant first); they pin the samplers down as exact functions
// of the bit stream, with no floating-point decision in between; (2) with fixed seeds, chi-square
// tests against the exact normalised pmf with p-value threshold 1e-6, per-value z-tests with a
// Bonferroni bound, moments within 5.5 standard errors (each check fails by chance with
// probability below 1e-6, so the suite cannot flake in practice, and the seeds are fixed anyway);
// (3) parameter ranges and the absence of allocation.
// The replacement operator new/delete below pair malloc with free on purpose; GCC 12 cannot see
// that and warns at every inlined std::allocator call.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/helpers/discrete.hpp"
#include "dptune/rng.hpp"

// Counts every allocation of this test binary, to show that a batch of draws allocates nothing.
namespace {
std::atomic<long> g_allocations{0};
}
void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace dptune;

/// Hands out a fixed list of 64-bit words and fails the test when asked for more.
class ScriptedBits final : public RandomBitGenerator {
 public:
  explicit ScriptedBits(std::vector<std::uint64_t> words) : words_(std::move(words)) {}
  std::uint64_t next_u64() override {
    if (next_ == words_.size()) throw std::logic_error("scripted bit stream exhausted");
    return words_[next_++];
  }
  bool cryptographically_secure() const override { return false; }
  std::string description() const override { return "scripted"; }
  std::size_t words_read() const { return next_; }

 private:
  std::vector<std::uint64_t> words_;
  std::size_t next_ = 0;
};

/// The bits `pattern` (a string of '0'/'1', first bit first) at the top of a 64-bit word.
std::uint64_t word_from(const char* pattern) {
  std::uint64_t word = 0;
  int position = 63;
  for (const char* c = pattern; *c != 0; ++c, --position)
    if (*c == '1') word |= std::uint64_t{1} << position;
  return word;
}

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
double chi_square_p(const std::vector<std::int64_t>& samples, const Pmf& pmf, int edge) {
  std::map<int, long> counts;
  for (auto x : samples) {
    const auto clipped =
        static_cast<int>(std::max<std::int64_t>(-edge, std::min<std::int64_t>(edge, x)));
    ++counts[clipped];
  }
  const double n = static_cast<double>(samples.size());
  double statistic = 0;
  for (int k = -edge; k <= edge; ++k) {
    const double p = k == -edge ? pmf.at_most(-edge) : k == edge ? pmf.at_least(edge) : pmf.at(k);
    const double expected = n * p;
    REQUIRE(expected >= 5);  // the chi-square approximation needs it
    const double observed = static_cast<double>(counts[k]);
    statistic += (observed - expected) * (observed - expected) / expected;
    INFO("bin " << k << ": observed " << observed << ", expected " << expected);
    CHECK(std::abs(observed - expected) <= 5.5 * std::sqrt(expected * (1 - p)));
  }
  return chi_square_p_value(statistic, 2 * edge);  // 2 edge + 1 bins, probabilities fixed
}

struct Moments {
  double mean, variance, fourth;
};
Moments moments_of(const Pmf& pmf) {
  Moments m{0, 0, 0};
  for (int k = -pmf.reach_; k <= pmf.reach_; ++k) {
    const double p = pmf.at(k), kk = static_cast<double>(k) * k;
    m.variance += kk * p;
    m.fourth += kk * kk * p;
  }
  return m;
}

/// Sample mean within 5.5 standard errors of 0, sample second moment within 5.5 standard errors
/// of the exact variance.
void check_moments(const std::vector<std::int64_t>& samples, double variance, double fourth) {
  const double n = static_cast<double>(samples.size());
  double sum = 0, sum_sq = 0;
  for (auto x : samples) {
    sum += static_cast<double>(x);
    sum_sq += static_cast<double>(x) * static_cast<double>(x);
  }
  CHECK(std::abs(sum / n) <= 5.5 * std::sqrt(variance / n));
  CHECK(std::abs(sum_sq / n - variance) <= 5.5 * std::sqrt((fourth - variance * variance) / n));
}

void check_symmetric(const std::vector<std::int64_t>& samples) {
  long positive = 0, negative = 0;
  for (auto x : samples) {
    if (x > 0) ++positive;
    if (x < 0) ++negative;
  }
  const double total = static_cast<double>(positive + negative);
  CHECK(std::abs(static_cast<double>(positive - negative)) <= 5.5 * std::sqrt(total));
}

}  // namespace

TEST_CASE("chi-square p-value helper matches known quantiles") {
  // Independently known: P(chi2_1 > 3.841459) = 0.05, P(chi2_10 > 18.307038) = 0.05,
  // P(chi2_2 > x) = exp(-x/2).
  CHECK(chi_square_p_value(3.841459, 1) == doctest::Approx(0.05).epsilon(1e-5));
  CHECK(chi_square_p_value(18.307038, 10) == doctest::Approx(0.05).epsilon(1e-5));
  CHECK(chi_square_p_value(30.0, 2) == doctest::Approx(std::exp(-15.0)).epsilon(1e-9));
  CHECK(chi_square_p_value(1.0, 2) == doctest::Approx(std::exp(-0.5)).epsilon(1e-9));
}

// ---- known answers on scripted bit streams ------------------------------------------------------

TEST_CASE("uniform_below: rejection sampling on ceil(log2 m) bits, known answers") {
  // m = 6 reads 3 bits: 110 = 6 is rejected, 011 = 3 is returned.
  ScriptedBits six({word_from("110011")});
  CHECK(uniform_below(six, 6) == 3);
  // m = 1 reads nothing.
  ScriptedBits none({});
  CHECK(uniform_below(none, 1) == 0);
  CHECK(none.words_read() == 0);
  // A batch shares words: 21 draws of 3 bits use 63 ones, the 22nd takes the last 1 and "00".
  ScriptedBits two_words({~std::uint64_t{0}, 0});
  std::vector<std::uint64_t> out(22);
  uniform_below(two_words, 8, out);
  for (int i = 0; i < 21; ++i) CHECK(out[i] == 7);
  CHECK(out[21] == 4);
  CHECK(two_words.words_read() == 2);
  // m = 2^64 - 1 reads 64 bits; the all-ones word is rejected.
  ScriptedBits wide({~std::uint64_t{0}, 12345});
  CHECK(uniform_below(wide, ~std::uint64_t{0}) == 12345);
}

TEST_CASE("bernoulli_exp: known answers of Algorithm 1 on scripted bits") {
  // gamma = 0: true without reading a bit.
  ScriptedBits none({});
  CHECK(bernoulli_exp(none, 0, 7));
  CHECK(none.words_read() == 0);
  // gamma = 1/2.  K = 1: Bernoulli(1/2) compares U with 0.1: bit 1 ties, expansion ends: fails,
  // K = 1 is odd: true.
  ScriptedBits tie({word_from("1")});
  CHECK(bernoulli_exp(tie, 1, 2));
  // Bits 0,0,1: Bernoulli(1/2) succeeds (0 < 0.1), K = 2; Bernoulli(1/4) = 0.01: bit 0 ties 0,
  // bit 1 ties 1 and the expansion ends: fails.  K = 2 is even: false.
  ScriptedBits even({word_from("001")});
  CHECK_FALSE(bernoulli_exp(even, 1, 2));
  // gamma = 3/2 = 1 + 1/2.  Bernoulli(exp(-1)) compares U with exp(-1) = 0.0101111000...:
  // bit 0 ties, bit 0 < 1: true.  Then Bernoulli(exp(-1/2)) with bit 1: true (as above).
  ScriptedBits gamma_three_halves({word_from("001")});
  CHECK(bernoulli_exp(gamma_three_halves, 3, 2));
  // Same gamma, first bit 1 > 0: Bernoulli(exp(-1)) fails, the fractional part is never looked
  // at.
  ScriptedBits early_exit({word_from("1")});
  CHECK_FALSE(bernoulli_exp(early_exit, 3, 2));
  // Bits 0,1,0,1,1,1,1 tie exp(-1) = 0.0101111 0..., then 1 > 0: false.
  ScriptedBits long_tie({word_from("01011111")});
  CHECK_FALSE(bernoulli_exp(long_tie, 2, 1));
  // gamma = 1 exactly goes through Algorithm 1: K=1 certain, K=2 Bernoulli(1/2) with bit 1
  // fails; K = 2 even: false.  Bit 0 then 1: K = 3 (1/3 = 0.01...: 1 > 0 fails), odd: true.
  ScriptedBits gamma_one({word_from("1")});
  CHECK_FALSE(bernoulli_exp(gamma_one, 1, 1));
  ScriptedBits gamma_one_true({word_from("01")});
  CHECK(bernoulli_exp(gamma_one_true, 1, 1));
  // gamma = 1/100 (denominators >= 64 are compared 32 bits per division).  1/100 =
  // 0.0000001010001111...: bits 0000000 tie, then 0 < 1: Bernoulli(1/100) succeeds, K = 2;
  // 1/200 = 0.00000001...: bit 1 > 0 fails.  K = 2 is even: false.
  ScriptedBits hundredth({word_from("000000001")});
  CHECK_FALSE(bernoulli_exp(hundredth, 1, 100));
  // Bits 0000001 tie, 0 ties, 1 ties, 1 > 0 fails at K = 1: true.
  ScriptedBits hundredth_true({word_from("0000001011")});
  CHECK(bernoulli_exp(hundredth_true, 1, 100));
}

TEST_CASE("discrete_laplace: known answer of Algorithm 2 on scripted bits") {
  // Scale 1/1 (t = s = 1): U = 0 and Bernoulli(exp(0)) read nothing.  V counts the successes of
  // Bernoulli(exp(-1)), i.e. of U' < exp(-1) = 0.0101111...:
  //   bit 1 > 0 fails                                   -> V = 0, X = 0
  //   sign bit 1 with Y = 0: rejected, start again
  //   bits 0 (tie), 0 < 1: succeeds                     -> V = 1
  //   bit 1 > 0 fails                                   -> X = 1, Y = 1
  //   sign bit 1: result -1.
  ScriptedBits bits({word_from("110011")});
  CHECK(discrete_laplace(bits, 1, 1) == -1);
  CHECK(bits.words_read() == 1);
}

TEST_CASE("discrete_gaussian: known answer of Algorithm 3 on scripted bits") {
  // sigma^2 = 1: t = floor(1) + 1 = 2, exponent (|y| - 1/2)^2 / 2 = (2|y| - 1)^2 / 8.
  //   proposal: U bit 1 (U = 1), Bernoulli(exp(-1/2)) bit 1 (true), V bit 1 (V = 0), sign 1: -1
  //   accept Bernoulli(exp(-1/8)): K=1 Bernoulli(1/8) = 0.001: bits 0,0 tie, bit 0 < 1 succeeds;
  //     K=2 Bernoulli(1/16) = 0.0001: bit 1 > 0 fails; K = 2 even: rejected
  //   proposal: bits 1,1,1 then sign 0: +1
  //   accept: Bernoulli(1/8) with bit 1 fails at once, K = 1 odd: accepted.  Result +1.
  ScriptedBits bits(
      {word_from("1111"
                 "0001"
                 "1110"
                 "1")});
  CHECK(discrete_gaussian(bits, 1, 1) == 1);
  ScriptedBits ones({~std::uint64_t{0}});  // first proposal -1, accepted at once
  CHECK(discrete_gaussian(ones, 1, 1) == -1);
  ScriptedBits none({});
  CHECK(discrete_gaussian(none, 0, 1) == 0);  // sigma = 0
}

TEST_CASE("samplers are exact functions of the bit stream: the FPU rounding mode changes nothing") {
  auto draw_all = [] {
    Xoshiro256 rng(99);
    std::vector<std::int64_t> out(2000);
    discrete_gaussian(rng, 9, 4, std::span(out).first(1000));
    discrete_laplace(rng, 7, 3, std::span(out).last(1000));
    return out;
  };
  const int original = std::fegetround();
  std::fesetround(FE_TONEAREST);
  const auto nearest = draw_all();
  std::fesetround(FE_UPWARD);
  const auto upward = draw_all();
  std::fesetround(FE_TOWARDZERO);
  const auto toward_zero = draw_all();
  std::fesetround(original);
  CHECK(nearest == upward);
  CHECK(nearest == toward_zero);
  // Single draws and a batch read the same bits in the same order when each single draw starts
  // on a fresh word; at least, the same seed gives the same single draws.
  Xoshiro256 a(5), b(5);
  for (int i = 0; i < 100; ++i)
    CHECK(discrete_gaussian(a, 1000000, 1) == discrete_gaussian(b, 1000000, 1));
}

// ---- distributions against the exact pmf --------------------------------------------------------

TEST_CASE("bernoulli_exp: frequencies match exp(-gamma), including gamma > 1") {
  struct Case {
    std::uint64_t num, den;
  };
  const Case cases[] = {{0, 1}, {1, 3}, {1, 2}, {1, 1},
                        {3, 2}, {7, 3}, {5, 1}, {1000000007, 1000000000}};
  Xoshiro256 rng(2020);
  const int n = 400000;
  for (const auto& c : cases) {
    long hits = 0;
    for (int i = 0; i < n; ++i) hits += bernoulli_exp(rng, c.num, c.den) ? 1 : 0;
    const double p = std::exp(-static_cast<double>(c.num) / static_cast<double>(c.den));
    INFO("gamma = " << c.num << "/" << c.den << ": " << hits << " of " << n);
    CHECK(std::abs(static_cast<double>(hits) - n * p) <= 5.5 * std::sqrt(n * p * (1 - p)) + 1e-9);
  }
}

TEST_CASE("uniform_below: chi-square on m = 6 and the top bit on m = 2^63 + 1") {
  Xoshiro256 rng(6);
  std::vector<std::uint64_t> draws(600000);
  uniform_below(rng, 6, draws);
  long counts[6] = {};
  for (auto x : draws) {
    REQUIRE(x < 6);
    ++counts[x];
  }
  double statistic = 0;
  for (long c : counts) statistic += (c - 100000.0) * (c - 100000.0) / 100000.0;
  CHECK(chi_square_p_value(statistic, 5) > 1e-6);
  // m = 2^63 + 1: values >= 2^63 have probability 1/m (only 2^63 itself); half the draws of a
  // modulo reduction of 64 bits would be biased low, here [0, 2^62) has probability 2^62/m.
  const std::uint64_t m = (std::uint64_t{1} << 63) + 1;
  long low = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const auto x = uniform_below(rng, m);
    REQUIRE(x < m);
    low += x < (std::uint64_t{1} << 62) ? 1 : 0;
  }
  CHECK(std::abs(low - n / 2.0) <= 5.5 * std::sqrt(n / 4.0));
}

TEST_CASE("discrete_gaussian sigma^2 = 4: chi-square against the exact pmf, moments, symmetry") {
  Xoshiro256 rng(4);
  std::vector<std::int64_t> samples(1000000);
  discrete_gaussian(rng, 4, 1, samples);
  const Pmf pmf([](int k) { return std::exp(-static_cast<long double>(k) * k / 8); }, 200);
  // Bins: each k in (-9, 9), tails pooled from |k| = 9 (expected 8.7 there); the values up to
  // +-12 fall in the pooled tails.
  const double p = chi_square_p(samples, pmf, 9);
  INFO("chi-square p-value " << p);
  CHECK(p > 1e-6);
  // The values 10..12 on either side, individually: expected counts 0.74, 0.014, 1.4e-4 (p(10) =
  // e^-12.5 / 5.013); more than 9 of any of them has Poisson probability below 1e-8.
  for (int k = 10; k <= 12; ++k)
    for (int value : {-k, k}) {
      const auto count = std::count(samples.begin(), samples.end(), value);
      INFO("value " << value << " drawn " << count << " times, expected " << 1e6 * pmf.at(value));
      CHECK(count <= 9);
    }
  const Moments m = moments_of(pmf);
  // The discrete Gaussian's variance is below sigma^2 (CKS 2020, Cor. 9), by less than
  // 8 pi^2 sigma^2 e^(-2 pi^2 sigma^2) ~ 1e-32 here: sigma^2 in double precision.
  CHECK(m.variance == doctest::Approx(4).epsilon(1e-14));
  check_moments(samples, m.variance, m.fourth);
  check_symmetric(samples);
}

TEST_CASE("discrete_gaussian with a rational sigma^2 = 9/4 and a wide sigma^2 = 10^6") {
  Xoshiro256 rng(94);
  std::vector<std::int64_t> samples(500000);
  discrete_gaussian(rng, 9, 4, samples);
  const Pmf pmf([](int k) { return std::exp(-static_cast<long double>(k) * k * 4 / 18); }, 200);
  CHECK(chi_square_p(samples, pmf, 6) > 1e-6);
  check_symmetric(samples);
  // sigma^2 = 10^6: the variance of the discrete Gaussian equals sigma^2 to within 1e-100.
  std::vector<std::int64_t> wide(200000);
  discrete_gaussian(rng, 1000000, 1, wide);
  const double sigma2 = 1e6;
  check_moments(wide, sigma2, 3 * sigma2 * sigma2);
  check_symmetric(wide);
  // A small sigma^2 = 1/10 (t = 1): P(0) = 1 / sum exp(-5 k^2).
  std::vector<std::int64_t> narrow(400000);
  discrete_gaussian(rng, 1, 10, narrow);
  const Pmf narrow_pmf([](int k) { return std::exp(-5.0L * k * k); }, 20);
  CHECK(chi_square_p(narrow, narrow_pmf, 1) > 1e-6);
}

TEST_CASE("discrete_laplace: chi-square against alpha^|k| for scales 3/2, 5 and 1/3") {
  struct Case {
    std::uint64_t num, den;
    int edge;
  };
  const Case cases[] = {{3, 2, 12}, {5, 1, 30}, {1, 3, 2}};
  Xoshiro256 rng(2);
  for (const auto& c : cases) {
    std::vector<std::int64_t> samples(500000);
    discrete_laplace(rng, c.num, c.den, samples);
    const long double rate = static_cast<long double>(c.den) / static_cast<long double>(c.num);
    const Pmf pmf([rate](int k) { return std::exp(-rate * std::abs(k)); }, 3000);
    INFO("scale " << c.num << "/" << c.den);
    CHECK(chi_square_p(samples, pmf, c.edge) > 1e-6);
    const Moments m = moments_of(pmf);
    check_moments(samples, m.variance, m.fourth);
    check_symmetric(samples);
  }
}

/// Chi-square of `samples` against `pmf` on bins of `width` integers: [b w, (b + 1) w) for
/// -edge <= b < edge, the two tails merged into the outer bins; also a z-test per bin.
double binned_chi_square_p(const std::vector<std::int64_t>& samples, const Pmf& pmf, int width,
                           int edge) {
  std::map<int, long> counts;
  for (auto x : samples) {
    const auto bin = static_cast<int>(std::floor(static_cast<double>(x) / width));
    ++counts[std::max(-edge, std::min(edge - 1, bin))];
  }
  const double n = static_cast<double>(samples.size());
  double statistic = 0;
  for (int b = -edge; b < edge; ++b) {
    const int low = b * width, high = (b + 1) * width - 1;
    const double p = b == -edge      ? pmf.at_most(high)
                     : b == edge - 1 ? 1.0 - pmf.at_most(low - 1)
                                     : pmf.at_most(high) - pmf.at_most(low - 1);
    const double expected = n * p;
    REQUIRE(expected >= 5);
    const double observed = static_cast<double>(counts[b]);
    statistic += (observed - expected) * (observed - expected) / expected;
    INFO("bin " << b << ": observed " << observed << ", expected " << expected);
    CHECK(std::abs(observed - expected) <= 5.5 * std::sqrt(expected * (1 - p)));
  }
  return chi_square_p_value(statistic, 2 * edge - 1);
}

TEST_CASE("large scales go through the exp(-j/256) table: exact pmfs by chi-square") {
  // Scales t >= 256 split every Bernoulli(exp(-x)) into a table factor and a rest below 2^-8.
  // Discrete Laplace 600/200 (t = 600 >= 256): Y = floor(X / 200) has P(y) ∝ exp(-|y| / 3).
  Xoshiro256 rng(256);
  std::vector<std::int64_t> laplace(500000);
  discrete_laplace(rng, 600, 200, laplace);
  const Pmf laplace_pmf([](int k) { return std::exp(-std::abs(k) / 3.0L); }, 3000);
  CHECK(chi_square_p(laplace, laplace_pmf, 24) > 1e-6);
  // Discrete Gaussian sigma^2 = 300^2 + 1/8 (t = 301, a dyadic denominator as on the grid), in
  // bins of 60 integers out to 4 sigma, and its moments.
  std::vector<std::int64_t> gaussian(600000);
  discrete_gaussian(rng, 720001, 8, gaussian);
  const long double sigma2 = 720001.0L / 8;
  const Pmf gaussian_pmf(
      [&](int k) { return std::exp(-static_cast<long double>(k) * k / (2 * sigma2)); }, 12000);
  CHECK(binned_chi_square_p(gaussian, gaussian_pmf, 60, 20) > 1e-6);
  const Moments m = moments_of(gaussian_pmf);
  check_moments(gaussian, m.variance, m.fourth);
  check_symmetric(gaussian);
}

// ---- parameter ranges, allocation ---------------------------------------------------------------

TEST_CASE("bad parameters are refused with InvalidArgument") {
  Xoshiro256 rng(1);
  CHECK_THROWS_AS(uniform_below(rng, 0), InvalidArgument);
  CHECK_THROWS_AS(bernoulli_exp(rng, 1, 0), InvalidArgument);
  CHECK_THROWS_AS(discrete_laplace(rng, 0, 1), InvalidArgument);
  CHECK_THROWS_AS(discrete_laplace(rng, 1, 0), InvalidArgument);
  CHECK_THROWS_AS(discrete_laplace(rng, kDiscreteLaplaceMaxScaleNum + 1, 1), InvalidArgument);
  CHECK_THROWS_AS(discrete_gaussian(rng, 1, 0), InvalidArgument);
  CHECK_THROWS_AS(discrete_gaussian(rng, kDiscreteGaussianMaxTerm + 1, 1), InvalidArgument);
  CHECK_THROWS_AS(discrete_gaussian(rng, 1, kDiscreteGaussianMaxTerm + 1), InvalidArgument);
  std::vector<std::int64_t> out(3);
  CHECK_THROWS_AS(discrete_gaussian(rng, 4, 0, out), InvalidArgument);
  // The limits themselves are accepted.
  CHECK_NOTHROW(discrete_laplace(rng, kDiscreteLaplaceMaxScaleNum, 1));
  CHECK_NOTHROW(discrete_gaussian(rng, kDiscreteGaussianMaxTerm, 1));
  CHECK_NOTHROW(discrete_gaussian(rng, 1, kDiscreteGaussianMaxTerm));
  CHECK_NOTHROW(discrete_gaussian(rng, kDiscreteGaussianMaxTerm, kDiscreteGaussianMaxTerm - 1));
  CHECK(bernoulli_exp(rng, ~std::uint64_t{0}, 1) == false);  // exp(-(2^64 - 1))
}

TEST_CASE("a batch of draws allocates nothing") {
  Xoshiro256 rng(8);
  std::vector<std::int64_t> out(10000);
  std::vector<std::uint64_t> uniform(10000);
  const long before = g_allocations.load();
  discrete_gaussian(rng, 100, 1, out);
  discrete_laplace(rng, 10, 1, out);
  uniform_below(rng, 1000, uniform);
  for (int i = 0; i < 1000; ++i) (void)bernoulli_exp(rng, 7, 3);
  CHECK(g_allocations.load() == before);
}

// ---- the block-table samplers (discrete_gaussian_tabled, discrete_laplace_tabled) ---------------
// The same laws by another exact method: chi-square against the exact pmf, against the reference
// samplers above (two-sample), bits read per draw, and the same refusals.

namespace {

/// Counts the 64-bit words read (xoshiro256** underneath).
class CountingBits final : public RandomBitGenerator {
 public:
  explicit CountingBits(std::uint64_t seed) : inner_(seed) {}
  std::uint64_t next_u64() override {
    ++words_;
    return inner_.next_u64();
  }
  bool cryptographically_secure() const override { return false; }
  std::string description() const override { return "counting"; }
  double bits() const { return 64.0 * static_cast<double>(words_); }

 private:
  Xoshiro256 inner_;
  long words_ = 0;
};

/// Chi-square of samples against bin probabilities (the bins: (-inf, e_0), [e_0, e_1), ...,
/// [e_last, inf)), each expected count >= 5; the p-value with bins - 1 degrees of freedom.
double binned_p(const std::vector<std::int64_t>& samples, const std::vector<std::int64_t>& edges,
                const std::vector<double>& probabilities) {
  std::vector<long> counts(edges.size() + 1, 0);
  for (auto x : samples)
    ++counts[static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), x) -
                                      edges.begin())];
  const double n = static_cast<double>(samples.size());
  double statistic = 0;
  for (std::size_t b = 0; b < counts.size(); ++b) {
    const double expected = n * probabilities[b];
    REQUIRE(expected >= 5);
    const double d = static_cast<double>(counts[b]) - expected;
    statistic += d * d / expected;
    INFO("bin " << b << ": observed " << counts[b] << ", expected " << expected);
    CHECK(std::abs(d) <= 5.5 * std::sqrt(expected * (1 - probabilities[b])));
  }
  return chi_square_p_value(statistic, static_cast<int>(counts.size()) - 1);
}

/// Bins of the discrete Gaussian with a large sigma by the normal CDF at half-integers: the sum of
/// exp(-k^2 / 2 sigma^2) over a < k <= b equals the integral over (a + 1/2, b + 1/2] up to a
/// relative error of order 1/sigma^2 (midpoint rule), and the normaliser equals sigma sqrt(2 pi)
/// up to e^(-2 pi^2 sigma^2) (Poisson summation): below 1e-12 at sigma = 2^22.
std::vector<double> normal_bins(const std::vector<std::int64_t>& edges, long double sigma) {
  auto cdf = [&](std::int64_t k) {  // P(X < k) = P(X <= k - 1)
    return 0.5L * std::erfc(-(static_cast<long double>(k) - 0.5L) / (sigma * std::sqrt(2.0L)));
  };
  std::vector<double> p;
  long double previous = 0;
  for (auto e : edges) {
    const long double c = cdf(e);
    p.push_back(static_cast<double>(c - previous));
    previous = c;
  }
  p.push_back(static_cast<double>(1 - previous));
  return p;
}

/// Bins of the discrete Laplace P(k) = (1 - a)/(1 + a) a^|k|, a = exp(-1/scale), in closed form:
/// P(X >= k) = a^k / (1 + a) for k >= 1.
std::vector<double> laplace_bins(const std::vector<std::int64_t>& edges, long double scale) {
  const long double a = std::exp(-1 / scale);
  auto at_least = [&](std::int64_t k) {  // P(X >= k)
    if (k >= 1) return std::pow(a, static_cast<long double>(k)) / (1 + a);
    return 1 - std::pow(a, static_cast<long double>(1 - k)) / (1 + a);  // 1 - P(X <= k - 1)
  };
  std::vector<double> p;
  long double previous = 1;  // P(X >= -inf)
  for (auto e : edges) {
    const long double c = at_least(e);
    p.push_back(static_cast<double>(previous - c));
    previous = c;
  }
  p.push_back(static_cast<double>(previous));
  return p;
}

std::vector<std::int64_t> even_edges(double half_width, int bins) {
  std::vector<std::int64_t> edges;
  for (int i = 1; i < bins; ++i)
    edges.push_back(
        static_cast<std::int64_t>(std::llround(-half_width + 2 * half_width * i / bins)));
  return edges;
}

}  // namespace

TEST_CASE("tabled discrete Gaussian: chi-square against the exact pmf at sigma 1.5, 10 and 2^22") {
  Xoshiro256 rng(1500);
  std::vector<std::int64_t> samples(1000000);
  discrete_gaussian_tabled(rng, 9, 4, samples);
  const Pmf small([](int k) { return std::exp(-static_cast<long double>(k) * k * 4 / 18); }, 200);
  CHECK(chi_square_p(samples, small, 6) > 1e-6);
  check_symmetric(samples);
  discrete_gaussian_tabled(rng, 100, 1, samples);
  const Pmf ten([](int k) { return std::exp(-static_cast<long double>(k) * k / 200); }, 400);
  CHECK(chi_square_p(samples, ten, 35) > 1e-6);
  const Moments m = moments_of(ten);
  check_moments(samples, m.variance, m.fourth);
  // The DP-SGD grid's sigma^2 = 140744067154917/8 (sigma = 2^22 + 98), in 64 bins over 4 sigma.
  const long double sigma2 = 140744067154917.0L / 8;
  discrete_gaussian_tabled(rng, 140744067154917ULL, 8, samples);
  const auto edges = even_edges(4 * std::sqrt(static_cast<double>(sigma2)), 64);
  CHECK(binned_p(samples, edges, normal_bins(edges, std::sqrt(sigma2))) > 1e-6);
  check_moments(samples, static_cast<double>(sigma2), 3 * static_cast<double>(sigma2 * sigma2));
  check_symmetric(samples);
  // A narrow one (sigma^2 = 1/10, below one grid step of the blocks).
  std::vector<std::int64_t> narrow(400000);
  discrete_gaussian_tabled(rng, 1, 10, narrow);
  const Pmf narrow_pmf([](int k) { return std::exp(-5.0L * k * k); }, 20);
  CHECK(chi_square_p(narrow, narrow_pmf, 1) > 1e-6);
}

TEST_CASE("tabled discrete Laplace: chi-square against the exact pmf at scales 3/2, 10 and 2^22") {
  Xoshiro256 rng(1501);
  std::vector<std::int64_t> samples(1000000);
  discrete_laplace_tabled(rng, 3, 2, samples);
  const Pmf small([](int k) { return std::exp(-2.0L * std::abs(k) / 3); }, 400);
  CHECK(chi_square_p(samples, small, 14) > 1e-6);
  discrete_laplace_tabled(rng, 10, 1, samples);
  const Pmf ten([](int k) { return std::exp(-std::abs(k) / 10.0L); }, 1000);
  CHECK(chi_square_p(samples, ten, 80) > 1e-6);
  const Moments m = moments_of(ten);
  check_moments(samples, m.variance, m.fourth);
  const long double scale = 4194304;
  discrete_laplace_tabled(rng, 4194304, 1, samples);
  const auto edges = even_edges(9 * 4194304.0, 90);
  CHECK(binned_p(samples, edges, laplace_bins(edges, scale)) > 1e-6);
  check_symmetric(samples);
  discrete_laplace_tabled(rng, 1, 3, samples);  // scale 1/3
  const Pmf narrow([](int k) { return std::exp(-3.0L * std::abs(k)); }, 40);
  CHECK(chi_square_p(samples, narrow, 3) > 1e-6);
}

TEST_CASE("tabled samplers and the reference samplers draw the same law (two-sample chi-square)") {
  // Homogeneity test of two samples of 400 000 in bins with at least 20 expected per sample.
  auto same_law = [](const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b,
                     const std::vector<std::int64_t>& edges) {
    std::vector<long> ca(edges.size() + 1, 0), cb(edges.size() + 1, 0);
    for (auto x : a) ++ca[std::upper_bound(edges.begin(), edges.end(), x) - edges.begin()];
    for (auto x : b) ++cb[std::upper_bound(edges.begin(), edges.end(), x) - edges.begin()];
    double statistic = 0;
    for (std::size_t i = 0; i < ca.size(); ++i) {
      const double total = static_cast<double>(ca[i] + cb[i]);
      REQUIRE(total >= 40);
      const double d = static_cast<double>(ca[i] - cb[i]);
      statistic += d * d / total;  // equal sample sizes
    }
    return chi_square_p_value(statistic, static_cast<int>(ca.size()) - 1);
  };
  Xoshiro256 rng(1502);
  std::vector<std::int64_t> tabled(400000), reference(400000);
  struct GaussianCase {
    std::uint64_t num, den;
    double sigma;
  };
  for (const GaussianCase& c : {GaussianCase{9, 4, 1.5}, GaussianCase{100, 1, 10},
                                GaussianCase{720001, 8, 300.0}, GaussianCase{1000000, 1, 1000}}) {
    discrete_gaussian_tabled(rng, c.num, c.den, tabled);
    discrete_gaussian(rng, c.num, c.den, reference);
    std::vector<std::int64_t> edges;
    if (c.sigma < 20)
      for (int k = -static_cast<int>(3 * c.sigma); k <= static_cast<int>(3 * c.sigma); ++k)
        edges.push_back(k);
    else
      edges = even_edges(3.5 * c.sigma, 40);
    INFO("sigma^2 = " << c.num << "/" << c.den);
    CHECK(same_law(tabled, reference, edges) > 1e-6);
  }
  for (const auto& [num, den, scale] :
       {std::tuple{3ULL, 2ULL, 1.5}, std::tuple{600ULL, 200ULL, 3.0},
        std::tuple{1000ULL, 1ULL, 1000.0}}) {
    discrete_laplace_tabled(rng, num, den, tabled);
    discrete_laplace(rng, num, den, reference);
    std::vector<std::int64_t> edges;
    if (scale < 20)
      for (int k = -static_cast<int>(6 * scale); k <= static_cast<int>(6 * scale); ++k)
        edges.push_back(k);
    else
      edges = even_edges(6 * scale, 40);
    INFO("scale " << num << "/" << den);
    CHECK(same_law(tabled, reference, edges) > 1e-6);
  }
}

TEST_CASE("tabled samplers read at most 32 random bits per draw at sigma 2^22") {
  // No exact sampler reads fewer bits on average than the law's entropy (Knuth & Yao 1976):
  // log2(sigma sqrt(2 pi e)) for the discrete Gaussian at this sigma (its pmf is the normal
  // density at the integers to within e^(-2 pi^2 sigma^2)), and for the discrete Laplace
  // P(k) = (1 - a)/(1 + a) a^|k| by its sum.  The reference sampler reads about 77.
  const double sigma = std::sqrt(140744067154917.0 / 8);
  const double gaussian_entropy = std::log2(sigma * std::sqrt(2 * M_PI * std::exp(1.0)));
  const long double a = std::exp(-1.0L / 4194304), c = (1 - a) / (1 + a);
  // H = -log2 c - E|k| log2 a, E|k| = 2 a / ((1 - a)(1 + a)).
  const double laplace_entropy =
      static_cast<double>(-std::log2(c) - 2 * a / ((1 - a) * (1 + a)) * std::log2(a));
  std::vector<std::int64_t> out(1000000);
  CountingBits tabled(1), reference(1), laplace(1);
  discrete_gaussian_tabled(tabled, 140744067154917ULL, 8, std::span(out).first(10));  // the table
  const double before = tabled.bits();
  discrete_gaussian_tabled(tabled, 140744067154917ULL, 8, out);
  const double tabled_bits = (tabled.bits() - before) / 1e6;
  discrete_gaussian(reference, 140744067154917ULL, 8, std::span(out).first(100000));
  const double reference_bits = reference.bits() / 1e5;
  discrete_laplace_tabled(laplace, 4194304, 1, out);
  const double laplace_bits = laplace.bits() / 1e6;
  MESSAGE("bits per draw: tabled Gaussian "
          << tabled_bits << " (entropy " << gaussian_entropy << "), reference " << reference_bits
          << ", tabled Laplace " << laplace_bits << " (entropy " << laplace_entropy << ")");
  CHECK(gaussian_entropy == doctest::Approx(24.05).epsilon(0.001));
  CHECK(tabled_bits <= 32);
  CHECK(tabled_bits >= gaussian_entropy);
  CHECK(reference_bits >= 70);
  CHECK(laplace_bits <= 32);
  CHECK(laplace_bits >= laplace_entropy);
}

TEST_CASE("tabled samplers: exact functions of the bit stream, refusals, no allocation") {
  auto draw_all = [] {
    Xoshiro256 rng(99);
    std::vector<std::int64_t> out(3000);
    discrete_gaussian_tabled(rng, 9, 4, std::span(out).first(1000));
    discrete_gaussian_tabled(rng, 140744067154917ULL, 8, std::span(out).subspan(1000, 1000));
    discrete_laplace_tabled(rng, 7, 3, std::span(out).last(1000));
    return out;
  };
  const int original = std::fegetround();
  std::fesetround(FE_TONEAREST);
  const auto nearest = draw_all();
  std::fesetround(FE_UPWARD);
  const auto upward = draw_all();
  std::fesetround(FE_DOWNWARD);
  const auto downward = draw_all();
  std::fesetround(original);
  CHECK(nearest == upward);
  CHECK(nearest == downward);
  Xoshiro256 rng(1);
  CHECK_THROWS_AS(discrete_laplace_tabled(rng, 0, 1), InvalidArgument);
  CHECK_THROWS_AS(discrete_laplace_tabled(rng, 1, 0), InvalidArgument);
  CHECK_THROWS_AS(discrete_laplace_tabled(rng, kDiscreteLaplaceMaxScaleNum + 1, 1),
                  InvalidArgument);
  CHECK_THROWS_AS(discrete_gaussian_tabled(rng, 1, 0), InvalidArgument);
  CHECK_THROWS_AS(discrete_gaussian_tabled(rng, kDiscreteGaussianMaxTerm + 1, 1), InvalidArgument);
  CHECK_NOTHROW(discrete_laplace_tabled(rng, kDiscreteLaplaceMaxScaleNum, 1));
  CHECK_NOTHROW(discrete_gaussian_tabled(rng, kDiscreteGaussianMaxTerm, 1));
  CHECK_NOTHROW(discrete_gaussian_tabled(rng, 1, kDiscreteGaussianMaxTerm));
  CHECK(discrete_gaussian_tabled(rng, 0, 1) == 0);
  std::vector<std::int64_t> out(10000);
  discrete_gaussian_tabled(rng, 100, 1, out);  // builds the table
  const long before = g_allocations.load();
  discrete_gaussian_tabled(rng, 100, 1, out);
  CHECK(g_allocations.load() == before);
}

TEST_CASE("tabled samplers: an exception inside a draw reaches the caller") {
  // A generator that fails after its first 2 040 words: the batch of 10 000 draws fetches 8 x 254
  // words at first (15/32 of a word a draw and two for each of the eight streams of 1 250 draws,
  // cut to what a stream holds), then more inside the loop (between rounds, or from inside a
  // draw), where the failure happens.  It must reach the caller as thrown (the sampler's loop was
  // compiled with target_clones, through which g++ 12 let no exception pass: std::terminate).
  struct Failure {};
  class FailingAfter final : public RandomBitGenerator {
   public:
    explicit FailingAfter(int words) : left_(words) {}
    std::uint64_t next_u64() override {
      if (left_-- == 0) throw Failure{};
      return inner_.next_u64();
    }
    bool cryptographically_secure() const override { return false; }
    std::string description() const override { return "failing"; }

   private:
    int left_;
    Xoshiro256 inner_{5};
  };
  std::vector<std::int64_t> out(10000);
  FailingAfter gaussian_source(2040), laplace_source(2040);
  CHECK_THROWS_AS(discrete_gaussian_tabled(gaussian_source, 140744067154917ULL, 8, out), Failure);
  CHECK_THROWS_AS(discrete_laplace_tabled(laplace_source, 4194304, 1, out), Failure);
  // (and the generator was indeed read from inside the draws, past the first batches)
  FailingAfter enough(100000);
  CHECK_NOTHROW(discrete_gaussian_tabled(enough, 140744067154917ULL, 8, out));
}

TEST_CASE("tabled samplers: seeded draws and words read are those of the eight-stream schedule") {
  // Known answers computed with the baseline kernel (the schedule of eight streams run one lane
  // after the other, fill_lanes in discrete.cpp, compiled without the AVX-512 code), by a
  // separate program that called it directly: the same draws from the same words, and the same
  // number of the generator's words taken (the next word after the batch), for the grid's sigma, a
  // small sigma (columns without alias, block width 1), a batch of three and one, and the discrete
  // Laplace.  Whatever kernel this CPU runs must give them; a change of the function from the bit
  // stream to the draws, or of when the streams fetch words, changes them.
  struct KnownAnswer {
    bool gaussian;
    std::uint64_t num, den;
    std::size_t count;
    std::uint64_t hash;
    std::int64_t first, second, last;
    std::uint64_t next_word;
  };
  const KnownAnswer answers[] = {
      {true, 140744067154917ULL, 8, 100001, 0xc62f30552125c5faULL, -2618602, 3543149, -818166,
       0x514afae3ed5bb63fULL},
      {true, 9, 4, 100000, 0x98e796cb542eb6adULL, -1, -1, 4, 0x277090c7a3d99843ULL},
      {true, 100, 1, 3, 0xbf8702185d8567f9ULL, -5, 16, -3, 0xd424b89ed05c22e7ULL},
      {false, 4194304, 1, 100001, 0x966ac67a143eab0eULL, -2812372, -4006106, 7138206,
       0x6d7ac5a174773644ULL},
      {false, 7, 3, 99999, 0x9c45b95a8887f822ULL, -1, -2, 9, 0xffaed76f37816356ULL},
      {true, 140744067154917ULL, 8, 1, 0x6ce79ab3aa124ea9ULL, -2618602, -2618602, -2618602,
       0x5fea3e3b9eff35beULL}};
  for (const KnownAnswer& a : answers) {
    Xoshiro256 rng(2029, 7);
    std::vector<std::int64_t> out(a.count);
    if (a.gaussian)
      discrete_gaussian_tabled(rng, a.num, a.den, out);
    else
      discrete_laplace_tabled(rng, a.num, a.den, out);
    std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a over the 64-bit values
    for (const std::int64_t x : out) {
      hash ^= static_cast<std::uint64_t>(x);
      hash *= 1099511628211ULL;
    }
    INFO((a.gaussian ? "gaussian " : "laplace ") << a.num << "/" << a.den << ", " << a.count);
    CHECK(hash == a.hash);
    CHECK(out.front() == a.first);
    CHECK(out[a.count > 1 ? 1 : 0] == a.second);
    CHECK(out.back() == a.last);
    CHECK(rng.next_u64() == a.next_word);
  }
}
