// Mechanism and utility plugins, loaded as the host loads them.
#include <doctest/doctest.h>

#include <cmath>

#include "dptune/helpers/discrete.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/host/random.hpp"
#include "support.hpp"

using namespace dptune;

namespace {

struct Moments {
  double mean = 0, variance = 0, mean_abs = 0, lag1 = 0;
};

Moments moments(const std::vector<double>& x, double centre) {
  Moments m;
  const double n = static_cast<double>(x.size());
  for (double v : x) m.mean += v;
  m.mean /= n;
  for (double v : x) {
    m.variance += (v - m.mean) * (v - m.mean);
    m.mean_abs += std::abs(v - centre);
  }
  m.variance /= n - 1;
  m.mean_abs /= n;
  // Correlation of coordinates 2k and 2k+1 (the two outputs of one Box–Muller pair).
  double c = 0;
  for (std::size_t k = 0; k + 1 < x.size(); k += 2) c += (x[k] - m.mean) * (x[k + 1] - m.mean);
  m.lag1 = c / std::floor(n / 2) / m.variance;
  return m;
}

}  // namespace

TEST_CASE("gaussian mechanism: N(0, (σ Δ₂)²) per coordinate, event (discrete) Gaussian(σ)") {
  auto g = trainer_tests::mechanism("gaussian", {{"noise_multiplier", 2.0}});
  // noise: secure (the default) draws exact discrete Gaussian noise and says so; fast does not.
  CHECK(g->event() == DpEvent::discrete_gaussian_on_grid(2.0, 4194304));
  CHECK(trainer_tests::mechanism("gaussian",
                                 {{"noise_multiplier", 2.0}, {"noise", std::string("fast")}})
            ->event() == DpEvent::gaussian(2.0));
  const std::size_t n = 200001;  // odd: the last coordinate takes the single-output path
  const std::vector<double> values(n, 7.0);
  Sensitivity s;
  s.l2 = 1.5;  // stddev 3
  Xoshiro256 rng(2024);
  const std::vector<double> out = g->release(values, s, rng);
  REQUIRE(out.size() == n);
  const Moments m = moments(out, 7.0);
  // 5-sigma bounds: mean ± 5·3/√n, sample variance ± 5·9·√(2/n), E|X| = 3√(2/π).
  CHECK(std::abs(m.mean - 7.0) < 5 * 3 / std::sqrt(double(n)));
  CHECK(std::abs(m.variance - 9.0) < 5 * 9 * std::sqrt(2.0 / n));
  CHECK(std::abs(m.mean_abs - 3 * std::sqrt(2 / std::numbers::pi)) <
        5 * 3 * 0.6 / std::sqrt(double(n)));
  CHECK(std::abs(m.lag1) < 5 / std::sqrt(n / 2.0));
  // σ = 0: the values unchanged.
  auto exact = trainer_tests::mechanism("gaussian", {{"noise_multiplier", 0.0}});
  CHECK(exact->release(values, s, rng) == values);
}

TEST_CASE("gaussian mechanism: secure noise is at least the stated 2^22 grid units") {
  // An L2 sensitivity below 2^-977 clamps the grid step at 2^-1000, where the grid rule alone
  // would draw about σ(Δ/g + 1) = 1.5 · (10.7 + 1) grid units; the mechanism raises the noise to
  // its stated min_scale 2^22 (discrete_gaussian_on_grid), on which pld's pricing rests.
  auto g = trainer_tests::mechanism("gaussian", {{"noise_multiplier", 1.5}});
  const std::size_t n = 20000;
  const std::vector<double> values(n, 0.0);
  Sensitivity s;
  s.l2 = 1e-300;
  Xoshiro256 rng(11);
  std::vector<double> steps = g->release(values, s, rng);
  for (double& v : steps) v = std::ldexp(v, 1000);  // in grid steps (squares of 2^-978 underflow)
  const double units = std::sqrt(moments(steps, 0.0).variance);
  MESSAGE("noise stddev " << units << " grid steps");
  CHECK(units > 0.95 * 4194304.0);
  CHECK(units < 1.05 * 4194304.0);
}

namespace {

/// Words recorded in advance, then a live generator: what the gaussian mechanism's `prefetch`
/// documents it samples the third and later releases of a run from.
class RecordedThenLive final : public RandomBitGenerator {
 public:
  RecordedThenLive(std::vector<std::uint64_t> words, RandomBitGenerator& live)
      : words_(std::move(words)), live_(live) {}
  std::uint64_t next_u64() override {
    return next_ < words_.size() ? words_[next_++] : live_.next_u64();
  }
  bool cryptographically_secure() const override { return false; }
  std::string description() const override { return "recorded words"; }

 private:
  std::vector<std::uint64_t> words_;
  std::size_t next_ = 0;
  RandomBitGenerator& live_;
};

/// The releases of one run as the trainer makes them: a release, then a few words for the next
/// lot, each time.
std::vector<std::vector<double>> run_releases(const Mechanism& g, const std::vector<double>& values,
                                              const Sensitivity& s, RandomBitGenerator& rng,
                                              int releases) {
  std::vector<std::vector<double>> out;
  for (int r = 0; r < releases; ++r) {
    out.push_back(g.release(values, s, rng));
    for (int i = 0; i < 3; ++i) (void)rng.next_u64();  // the next lot's sampling
  }
  return out;
}

}  // namespace

TEST_CASE(
    "gaussian mechanism: noise drawn ahead (prefetch) is the documented function of the bits") {
  const std::size_t n = 5000;
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = std::sin(static_cast<double>(i)) * 3;
  Sensitivity s;
  s.l2 = 0.5;
  const double sigma = 1.1;
  const double grid = gaussian_grid(s.l2, sigma, n);
  const auto variance = grid_gaussian_variance(s.l2, sigma, grid, n);
  const int releases = 6;

  // The reference, from the SDK's functions: releases 1 and 2 from the generator at release time
  // (as `off` draws all of them); after release 2 and each later one, words taken at once for
  // the next release in pieces of 1 024 values, c/16·9 + c%16 + 64 words for a piece of c, from
  // which (then the generator) each piece's noise is sampled, in order.
  Xoshiro256 reference_rng(4242);
  std::vector<std::vector<double>> off_reference, ahead_reference;
  for (int r = 0; r < releases; ++r) {
    off_reference.push_back(grid_gaussian(values, s.l2, sigma, grid, reference_rng));
    for (int i = 0; i < 3; ++i) (void)reference_rng.next_u64();
  }
  Xoshiro256 ahead_rng(4242);
  std::vector<std::vector<std::uint64_t>> taken;  // per piece
  for (int r = 0; r < releases; ++r) {
    std::vector<std::int64_t> noise(n);
    if (r < 2) {
      discrete_gaussian_tabled(ahead_rng, variance.numerator, variance.denominator, noise);
    } else {
      for (std::size_t piece = 0; piece < taken.size(); ++piece) {
        RecordedThenLive source(taken[piece], ahead_rng);
        const std::size_t first = piece * 1024;
        discrete_gaussian_tabled(
            source, variance.numerator, variance.denominator,
            std::span(noise).subspan(first, std::min<std::size_t>(1024, n - first)));
      }
    }
    if (r >= 1) {
      taken.clear();
      for (std::size_t first = 0; first < n; first += 1024) {
        const std::size_t c = std::min<std::size_t>(1024, n - first);
        taken.emplace_back(c / 16 * 9 + c % 16 + 64);
        for (auto& word : taken.back()) word = ahead_rng.next_u64();
      }
    }
    ahead_reference.push_back(add_noise_on_grid(values, grid, noise));
    for (int i = 0; i < 3; ++i) (void)ahead_rng.next_u64();
  }
  REQUIRE(ahead_reference[2] != off_reference[2]);  // the two schemes do differ from release 3

  for (const char* mode : {"off", "auto", "on"}) {
    CAPTURE(mode);
    auto g = trainer_tests::mechanism(
        "gaussian", {{"noise_multiplier", sigma}, {"prefetch", std::string(mode)}});
    Xoshiro256 rng(4242);
    const auto released = run_releases(*g, values, s, rng, releases);
    const auto& expected = std::string(mode) == "off" ? off_reference : ahead_reference;
    for (int r = 0; r < releases; ++r) {
      CAPTURE(r);
      CHECK(released[r] == expected[r]);
    }
  }

  // Releases of fewer than 2 048 values are drawn at release time in every mode.
  {
    const std::vector<double> small(values.begin(), values.begin() + 2047);
    const double small_grid = gaussian_grid(s.l2, sigma, small.size());
    Xoshiro256 rng(5), replay(5);
    auto on = trainer_tests::mechanism(
        "gaussian", {{"noise_multiplier", sigma}, {"prefetch", std::string("on")}});
    for (int r = 0; r < 4; ++r)
      CHECK(on->release(small, s, rng) == grid_gaussian(small, s.l2, sigma, small_grid, replay));
  }

  // A release with another key (here another count) in between discards the words taken: the
  // next release is drawn from the generator again, and drawing ahead restarts after two.
  auto g = trainer_tests::mechanism("gaussian",
                                    {{"noise_multiplier", sigma}, {"prefetch", std::string("on")}});
  Xoshiro256 rng(9), replay(9);
  (void)g->release(values, s, rng);
  (void)g->release(values, s, rng);  // takes words for a third release of n values
  const std::vector<double> one = {0.25};
  (void)g->release(one, s, rng);
  (void)grid_gaussian(values, s.l2, sigma, grid, replay);
  (void)grid_gaussian(values, s.l2, sigma, grid, replay);
  for (std::size_t first = 0; first < n; first += 1024) {  // the words taken, piece by piece
    const std::size_t c = std::min<std::size_t>(1024, n - first);
    for (std::size_t i = 0; i < c / 16 * 9 + c % 16 + 64; ++i) (void)replay.next_u64();
  }
  (void)grid_gaussian(one, s.l2, sigma, gaussian_grid(s.l2, sigma, 1), replay);
  CHECK(g->release(values, s, rng) == grid_gaussian(values, s.l2, sigma, grid, replay));
}

TEST_CASE("gaussian mechanism: noise drawn ahead on the helper thread keeps the law") {
  // prefetch: on, releases 3 to 5 of 200 001 values (sampled on the helper thread from words
  // taken ahead): mean, variance and E|X| of N(0, (σ Δ₂)²) within 5 standard errors.
  auto g = trainer_tests::mechanism("gaussian",
                                    {{"noise_multiplier", 2.0}, {"prefetch", std::string("on")}});
  const std::size_t n = 200001;
  const std::vector<double> values(n, 7.0);
  Sensitivity s;
  s.l2 = 1.5;  // stddev 3
  Xoshiro256 rng(31);
  const auto released = run_releases(*g, values, s, rng, 5);
  for (int r = 2; r < 5; ++r) {
    CAPTURE(r);
    const Moments m = moments(released[r], 7.0);
    CHECK(std::abs(m.mean - 7.0) < 5 * 3 / std::sqrt(double(n)));
    CHECK(std::abs(m.variance - 9.0) < 5 * 9 * std::sqrt(2.0 / n));
    CHECK(std::abs(m.mean_abs - 3 * std::sqrt(2 / std::numbers::pi)) <
          5 * 3 * 0.6 / std::sqrt(double(n)));
  }
  CHECK(released[2] != released[3]);
}

namespace {

/// A generator that says it is cryptographically secure and counts the words it hands out.
class CountingSecure final : public RandomBitGenerator {
 public:
  explicit CountingSecure(std::uint64_t seed) : inner_(seed) {}
  std::uint64_t next_u64() override {
    ++words;
    return inner_.next_u64();
  }
  bool cryptographically_secure() const override { return true; }
  std::string description() const override { return "counting secure (test)"; }
  std::size_t words = 0;

 private:
  Xoshiro256 inner_;
};

}  // namespace

TEST_CASE("gaussian mechanism: fast noise reads two words of a secure stream per release") {
  // The ziggurat's normals come from xoshiro256** keyed by two words of a secure stream, not from
  // the stream itself (an unseeded fast run as fast as a seeded one), with the same law.
  auto g = trainer_tests::mechanism("gaussian",
                                    {{"noise_multiplier", 2.0}, {"noise", std::string("fast")}});
  const std::size_t n = 100000;
  const std::vector<double> values(n, 1.0);
  Sensitivity s;
  s.l2 = 0.5;
  CountingSecure rng(5);
  const std::vector<double> out = g->release(values, s, rng);
  CHECK(rng.words == 2);
  const auto m = moments(out, 1.0);
  CHECK(std::abs(m.mean - 1.0) < 4 / std::sqrt(static_cast<double>(n)));  // sd 1: 4 standard errors
  CHECK(m.variance == doctest::Approx(1.0).epsilon(0.02));
  const std::vector<double> again = g->release(values, s, rng);
  CHECK(rng.words == 4);
  CHECK(again != out);  // a fresh key per release
}

TEST_CASE(
    "gaussian mechanism: unseeded fast noise differs between runs, secure noise reads the stream") {
  // Two unseeded runs take their generators from host::RandomSource without a seed (the
  // production ChaCha20 stream, freshly keyed from the OS): their fast noise keys differ, so
  // their normals do.  A seeded source gives the same normals twice.
  auto fast = trainer_tests::mechanism("gaussian",
                                       {{"noise_multiplier", 1.0}, {"noise", std::string("fast")}});
  const std::vector<double> values(1000, 0.0);
  Sensitivity s;
  s.l2 = 1.0;
  const host::RandomSource unseeded(std::nullopt), seeded(7);
  const auto first_run = unseeded.make(5), second_run = unseeded.make(5);
  REQUIRE(first_run->cryptographically_secure());
  CHECK(fast->release(values, s, *first_run) != fast->release(values, s, *second_run));
  CHECK(fast->release(values, s, *seeded.make(5)) == fast->release(values, s, *seeded.make(5)));
  // Secure noise (the default) reads its exact noise from the generator it is given, the secure
  // stream in an unseeded run: at least the law's entropy (24 bits a value at the grid's scale of
  // at least 2^22, Knuth & Yao 1976), and about 30 bits a value (40 with slack for words fetched
  // in batches and not read) for a release drawn at release
  // time; never the two words of the fast path.
  auto secure = trainer_tests::mechanism(
      "gaussian", {{"noise_multiplier", 1.0}, {"prefetch", std::string("off")}});
  const std::size_t n = 20000;
  const std::vector<double> many(n, 0.0);
  CountingSecure stream(11);
  (void)secure->release(many, s, stream);
  CHECK(stream.words * 64 >= 24 * n);
  CHECK(stream.words * 64 <= 40 * n);
}

TEST_CASE("laplace mechanism: Laplace(0, b Δ₁) per coordinate, event Laplace(b)") {
  auto l = trainer_tests::mechanism("laplace", {{"noise_multiplier", 0.5}});
  CHECK(l->event() == DpEvent::laplace(0.5));
  const std::size_t n = 200000;
  const std::vector<double> values(n, -1.0);
  Sensitivity s;
  s.l1 = 2.0;  // scale 1: variance 2, E|X| = 1
  Xoshiro256 rng(7);
  const Moments m = moments(l->release(values, s, rng), -1.0);
  CHECK(std::abs(m.mean + 1.0) < 5 * std::sqrt(2.0 / n));
  CHECK(std::abs(m.variance - 2.0) < 5 * std::sqrt(20.0 / n));  // Var(X²) = 24 − 4
  CHECK(std::abs(m.mean_abs - 1.0) < 5 * 1.0 / std::sqrt(double(n)));
}

TEST_CASE("utilities: accuracy, binary and macro F1, log-loss score") {
  Predictions p;
  p.values = {0, 2, 2, 1};
  p.num_classes = 3;
  const std::vector<double> truth = {0, 1, 2, 1};
  CHECK(trainer_tests::utility("accuracy", {})->score(truth, p) == 0.75);

  // truth {0,0,1,2}, predicted {0,1,1,1}: per-class F1 2/3, 1/2, 0 → macro 7/18.
  Predictions q;
  q.values = {0, 1, 1, 1};
  auto macro = trainer_tests::utility("f1", {{"average", std::string("macro")}});
  CHECK(macro->score(std::vector<double>{0, 0, 1, 2}, q) ==
        doctest::Approx(7.0 / 18).epsilon(1e-15));
  CHECK(macro->score(truth, Predictions{truth, {}, 3}) == 1.0);
  // Binary F1 unchanged: positives >= 0.5 → tp 1 (index 1), fp 2, fn 0 → 2/4.
  CHECK(trainer_tests::utility("f1", {})->score(std::vector<double>{0, 0, 1, 0}, q) == 0.5);

  // exp(mean log p_true): p_true = 0.8 and 0.5 → √0.4.
  Predictions r;
  r.values = {1, 0};
  r.num_classes = 2;
  r.probabilities = {0.2, 0.8, 0.5, 0.5};
  auto ll = trainer_tests::utility("log_loss_score", {});
  CHECK(ll->score(std::vector<double>{1, 1}, r) == doctest::Approx(std::sqrt(0.4)).epsilon(1e-14));
  // A certain mistake is floored, not infinite: exp(log(1e-15)/1).
  r.probabilities = {1.0, 0.0, 0.5, 0.5};
  CHECK(ll->score(std::vector<double>{1, 0}, r) == doctest::Approx(std::sqrt(1e-15 * 0.5)));
  r.probabilities.clear();
  CHECK_THROWS_WITH_AS(ll->score(std::vector<double>{1, 0}, r),
                       doctest::Contains("no class probabilities"), PluginError);
}
