// Draws per second of the exact samplers (discrete.hpp; Canonne, Kamath & Steinke 2020) against the
// SDK's continuous Gaussian (Box-Muller) and Laplace (inversion) samplers, in the same run, on the
// deterministic generator (xoshiro256**) and on the production one (libsodium randombytes).
//   build/bin/bench_discrete [draws per case, default 2000000] [exact]
// (`exact`: only the reference samplers against the block-table ones, ns and bits per draw)
// Time is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the build machine is shared.  Each case
// is timed three times and the fastest run is reported.  Discrete samplers are timed in batches
// (one span call: the bits of a 64-bit word are shared between draws) and one call per draw.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dptune/helpers/discrete.hpp"
#include "dptune/helpers/fast_normal.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/host/random.hpp"
#include "dptune/rng.hpp"

namespace {

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

volatile double g_sink = 0;  // keeps the draws observable

/// Best of three runs of `body`, which makes `draws` draws; returns draws per second.
double draws_per_second(std::size_t draws, const std::function<double()>& body) {
  double best = 1e300;
  for (int run = 0; run < 3; ++run) {
    const double start = thread_seconds();
    g_sink = g_sink + body();
    best = std::min(best, thread_seconds() - start);
  }
  return static_cast<double>(draws) / best;
}

struct Row {
  std::string name;
  double rate;
};

void print(const Row& row, double reference) {
  std::printf("  %-44s %8.2f M draws/s   %6.3f x continuous   %7.1f us per 9.6k draws\n",
              row.name.c_str(), row.rate / 1e6, row.rate / reference, 9600.0 / row.rate * 1e6);
}

void bench_generator(dptune::RandomBitGenerator& rng, std::size_t n) {
  std::printf("generator: %s\n", rng.description().c_str());
  std::vector<std::int64_t> batch(n);
  auto sum_batch = [&] {
    double s = 0;
    for (auto x : batch) s += static_cast<double>(x);
    return s;
  };
  for (const std::uint64_t sigma : {std::uint64_t{1}, std::uint64_t{10}, std::uint64_t{1000}}) {
    const double sd = static_cast<double>(sigma);
    const double continuous = draws_per_second(n, [&] {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += dptune::gaussian(rng, sd);
      return s;
    });
    const double batched = draws_per_second(n, [&] {
      dptune::discrete_gaussian(rng, sigma * sigma, 1, batch);
      return sum_batch();
    });
    const double single = draws_per_second(n, [&] {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i)
        s += static_cast<double>(dptune::discrete_gaussian(rng, sigma * sigma, 1));
      return s;
    });
    std::printf(" sigma = %llu\n", static_cast<unsigned long long>(sigma));
    print({"continuous gaussian (Box-Muller)", continuous}, continuous);
    print({"discrete_gaussian, batch of " + std::to_string(n), batched}, continuous);
    print({"discrete_gaussian, one call per draw", single}, continuous);
  }
  {
    // The grid's noise, as DP-SGD draws it on the digits MLP (9 610 parameters, L2 sensitivity 1,
    // noise multiplier 1): sigma about 2^22 grid units, sigma^2 a dyadic rational.
    constexpr std::size_t kParams = 9610;
    const double grid = dptune::gaussian_grid(1.0, 1.0, kParams);
    const auto variance = dptune::grid_gaussian_variance(1.0, 1.0, grid, kParams);
    const double continuous = draws_per_second(n, [&] {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += dptune::gaussian(rng, 4194304.0);
      return s;
    });
    const double batched = draws_per_second(n, [&] {
      dptune::discrete_gaussian(rng, variance.numerator, variance.denominator, batch);
      return sum_batch();
    });
    const std::vector<double> gradient(kParams, 0.25);
    const std::size_t releases = std::max<std::size_t>(1, n / kParams);
    const double released = draws_per_second(releases * kParams, [&] {
      double s = 0;
      for (std::size_t r = 0; r < releases; ++r)
        s += dptune::grid_gaussian(gradient, 1.0, 1.0, grid, rng)[r % kParams];
      return s;
    });
    std::printf(" sigma^2 = %llu/%llu grid units (DP-SGD on the digits MLP, grid %g)\n",
                static_cast<unsigned long long>(variance.numerator),
                static_cast<unsigned long long>(variance.denominator), grid);
    print({"continuous gaussian (Box-Muller)", continuous}, continuous);
    print({"discrete_gaussian, batch of " + std::to_string(n), batched}, continuous);
    print({"grid_gaussian, releases of 9610 values", released}, continuous);
  }
  for (const std::uint64_t scale : {std::uint64_t{1}, std::uint64_t{10}, std::uint64_t{1000}}) {
    const double b = static_cast<double>(scale);
    const double continuous = draws_per_second(n, [&] {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += dptune::laplace(rng, b);
      return s;
    });
    const double batched = draws_per_second(n, [&] {
      dptune::discrete_laplace(rng, scale, 1, batch);
      return sum_batch();
    });
    std::printf(" laplace scale = %llu\n", static_cast<unsigned long long>(scale));
    print({"continuous laplace (inversion)", continuous}, continuous);
    print({"discrete_laplace, batch of " + std::to_string(n), batched}, continuous);
  }
  // The raw generator, for scale: 64 bits per call.
  const double words = draws_per_second(n, [&] {
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < n; ++i) x ^= rng.next_u64();
    return static_cast<double>(x & 1U);
  });
  std::printf(" raw generator: %.1f M words/s (%.2f GB/s)\n", words / 1e6, words * 8 / 1e9);
}

/// Counts the words read from another generator (for bits per draw).
class CountingBits final : public dptune::RandomBitGenerator {
 public:
  explicit CountingBits(dptune::RandomBitGenerator& inner) : inner_(inner) {}
  std::uint64_t next_u64() override {
    ++words_;
    return inner_.next_u64();
  }
  bool cryptographically_secure() const override { return inner_.cryptographically_secure(); }
  std::string description() const override { return inner_.description(); }
  double words() const { return static_cast<double>(words_); }

 private:
  dptune::RandomBitGenerator& inner_;
  long words_ = 0;
};

/// The reference samplers (CKS 2020) against the block-table samplers at the DP-SGD grid's sigma
/// and at a discrete Laplace of the same scale: ns per draw (best of three batches of n) and random
/// bits per draw, in the same run.
void bench_exact(dptune::RandomBitGenerator& rng, std::size_t n) {
  std::printf("exact samplers, %s: ns per draw, random bits per draw (batches of %zu)\n",
              rng.description().c_str(), n);
  constexpr std::size_t kParams = 9610;
  const double grid = dptune::gaussian_grid(1.0, 1.0, kParams);
  const auto variance = dptune::grid_gaussian_variance(1.0, 1.0, grid, kParams);
  std::vector<std::int64_t> batch(n);
  using Sampler =
      void (*)(dptune::RandomBitGenerator&, std::uint64_t, std::uint64_t, std::span<std::int64_t>);
  struct Case {
    const char* name;
    Sampler sampler;
    std::uint64_t num, den;
  };
  const Case cases[] = {
      {"discrete_gaussian (reference), grid sigma", dptune::discrete_gaussian, variance.numerator,
       variance.denominator},
      {"discrete_gaussian_tabled, grid sigma", dptune::discrete_gaussian_tabled, variance.numerator,
       variance.denominator},
      {"discrete_laplace (reference), scale 2^22", dptune::discrete_laplace, 4194304, 1},
      {"discrete_laplace_tabled, scale 2^22", dptune::discrete_laplace_tabled, 4194304, 1},
      {"discrete_gaussian (reference), sigma 10", dptune::discrete_gaussian, 100, 1},
      {"discrete_gaussian_tabled, sigma 10", dptune::discrete_gaussian_tabled, 100, 1}};
  {  // for scale: the ziggurat normals of `noise: fast`, one 64-bit word each
    std::vector<double> normals(n);
    const double rate = draws_per_second(n, [&] {
      dptune::ZigguratNormal::instance().add_to(rng, 1.0, normals);
      return normals[n / 2];
    });
    std::printf("  %-44s %7.2f ns per draw  %6.2f bits per draw\n",
                "ziggurat normal (noise: fast), for scale", 1e9 / rate, 64.0);
  }
  for (const Case& c : cases) {
    c.sampler(rng, c.num, c.den, std::span(batch).first(1));  // builds the table, if any
    CountingBits counting(rng);
    const double rate = draws_per_second(n, [&] {
      c.sampler(counting, c.num, c.den, batch);
      return static_cast<double>(batch[n / 2]);
    });
    std::printf("  %-44s %7.2f ns per draw  %6.2f bits per draw\n", c.name, 1e9 / rate,
                64.0 * counting.words() / (3.0 * static_cast<double>(n)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  if (argc > 2 && std::string(argv[2]) == "exact") {  // the exact samplers only
    dptune::Xoshiro256 fast(42);
    bench_exact(fast, n);
    dptune::host::SecureRandom secure;
    bench_exact(secure, n);
    return 0;
  }
  dptune::Xoshiro256 fast(42);
  bench_generator(fast, n);
  dptune::host::SecureRandom secure;
  bench_generator(secure, n);
  std::printf(
      "(9.6k draws = one DP-SGD step of the digits MLP; that step computes in ~0.2 "
      "ms)\n");
  return 0;
}
