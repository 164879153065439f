// The fast paths of sdk/src/helpers/discrete.cpp are the same functions of the bit stream as their
// bit-by-bit definitions: same result and same bits consumed, from any position in the buffer.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

// The sampler source itself, to reach its anonymous namespace.
// NOLINTNEXTLINE(bugprone-suspicious-include)
#include "../../sdk/src/helpers/discrete.cpp"
#include "test_size.hpp"

namespace dptune {
namespace {

/// CKS-style lazy comparison of U with p/q, one bit at a time (the definition).
bool ratio_bit_by_bit(BitPool& pool, u128 p, u128 q) {
  if (p >= q) return true;
  if (p == 0) return false;
  u128 remainder = p;
  for (;;) {
    remainder <<= 1;
    const bool expansion_bit = remainder >= q;
    if (expansion_bit) remainder -= q;
    if (pool.bit() != expansion_bit) return expansion_bit;
    if (remainder == 0) return false;
  }
}

TEST_CASE("Bernoulli(p/q) by 32-bit chunks equals the bit-by-bit comparison") {
  Xoshiro256 parameters(11);
  const std::uint64_t edge_denominators[] = {
      64, 65, 100, 1000, 4004, (1ULL << 31) + 1, (1ULL << 32) - 1, 1ULL << 32};
  for (int trial = 0; trial < 300000; ++trial) {
    const std::uint64_t q = trial % 3 == 0   ? edge_denominators[trial % 8]
                            : trial % 3 == 1 ? 64 + parameters.next_u64() % 4000
                                             : 64 + parameters.next_u64() % ((1ULL << 32) - 63);
    const std::uint64_t p = 1 + parameters.next_u64() % (q - 1);
    const std::uint64_t seed = parameters.next_u64();
    Xoshiro256 a(seed), b(seed);
    BitPool fast(a), reference(b);
    const int offset = trial % 97;  // any position in the 128-bit buffer
    if (offset > 0) {
      fast.bits(offset % 64 + 1);
      reference.bits(offset % 64 + 1);
    }
    const bool fast_result = bernoulli_ratio(fast, p, q);
    const bool reference_result = ratio_bit_by_bit(reference, p, q);
    INFO("p = " << p << ", q = " << q << ", offset " << offset);
    REQUIRE(fast_result == reference_result);
    REQUIRE(fast.bits(64) == reference.bits(64));  // the same bits were consumed
  }
}

TEST_CASE("BitPool hands out the generator's words most significant bit first") {
  Xoshiro256 a(3), b(3);
  BitPool pool(a);
  const std::uint64_t w0 = b.next_u64(), w1 = b.next_u64();
  CHECK(pool.bits(3) == w0 >> 61);
  CHECK(pool.peek32() == static_cast<std::uint32_t>(w0 >> 29));
  pool.skip(32);
  CHECK(pool.bits(29) == (w0 & ((1ULL << 29) - 1)));
  CHECK(pool.bit() == ((w1 >> 63) != 0));
  CHECK(pool.bits(64) == ((w1 << 1) | (b.next_u64() >> 63)));
}

TEST_CASE("the 128 bits of exp(-1) agree with the libm value") {
  // The top 53 bits, as a double, are exp(-1) rounded down to 53 bits.
  const double top =
      static_cast<double>(static_cast<std::uint64_t>(kExpMinusOneBits >> 75)) * 0x1.0p-53;
  CHECK(std::abs(top - std::exp(-1.0)) <= 0x1.0p-53);
}

TEST_CASE("Bernoulli(exp(-1)) by the expansion: frequencies") {
  Xoshiro256 rng(17);
  BitPool pool(rng);
  const int n = 1000000;
  int hits = 0;
  for (int i = 0; i < n; ++i) hits += bernoulli_exp_minus_one(pool) ? 1 : 0;
  const double p = std::exp(-1.0);
  CHECK(std::abs(hits - n * p) <= 5.5 * std::sqrt(n * p * (1 - p)));
}

TEST_CASE("the table of exp(-j/256) agrees with long double exp and decreases") {
  for (int j = 1; j < 256; ++j) {
    const Expansion128& e = kExpSteps[j - 1];
    // The top 64 bits are floor(2^64 exp(-j/256)); long double exp errs by about 2^-64.
    const long double top = static_cast<long double>(e.high) * 0x1.0p-64L;
    INFO("j = " << j);
    CHECK(std::abs(top - std::exp(-static_cast<long double>(j) / 256)) <= 0x1.0p-60L);
    if (j > 1) CHECK(e.high < kExpSteps[j - 2].high);
  }
  // exp(-128/256)^2 = exp(-1): the squared top word against the constant of exp(-1).
  const u128 half = kExpSteps[127].high;
  const auto squared = static_cast<std::uint64_t>((half * half) >> 64);
  const auto e1 = static_cast<std::uint64_t>(kExpMinusOneBits >> 64);
  CHECK((squared > e1 ? squared - e1 : e1 - squared) <= 2);
}

TEST_CASE("Bernoulli(exp(-w/256 - r/(256 q))) by the table: frequencies") {
  struct Case {
    std::uint64_t w, r, q;
  };
  // The rest alone, a table entry, whole multiples of exp(-1), and all three.
  const Case cases[] = {
      {0, 0, 1},        {0, 5, 7},   {1, 0, 3},   {77, 2, 3},
      {255, 999, 1000}, {256, 0, 1}, {700, 1, 2}, {3, (1ULL << 40) - 1, 1ULL << 40}};
  Xoshiro256 rng(31);
  BitPool pool(rng);
  const int n = 400000;
  for (const auto& c : cases) {
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += bernoulli_exp_split(pool, c.w, c.r, c.q) ? 1 : 0;
    const double p = std::exp(-(static_cast<double>(c.w) + static_cast<double>(c.r) / c.q) / 256);
    INFO("w = " << c.w << ", r/q = " << c.r << "/" << c.q);
    CHECK(std::abs(hits - n * p) <= 5.5 * std::sqrt(n * p * (1 - p)) + 1e-9);
  }
}

TEST_CASE("floor_sqrt is exact") {
  for (std::uint64_t a : {0ULL, 1ULL, 2ULL, 3ULL, 4294967295ULL, 65535ULL, 1000ULL}) {
    CHECK(floor_sqrt(a * a) == a);
    if (a > 0) CHECK(floor_sqrt(a * a - 1) == a - 1);
    if (a < 4294967295ULL) CHECK(floor_sqrt(a * a + 2 * a) == a);  // (a + 1)^2 - 1
  }
  CHECK(floor_sqrt(~0ULL) == 4294967295ULL);
}

}  // namespace
}  // namespace dptune

// ---- the block-table sampler
// ---------------------------------------------------------------------

namespace dptune {
namespace {

/// Reaches BlockTable's private rounds.
struct BlockTableProbe {
  using Outcome = BlockTable::Outcome;
  static Outcome window(const BlockTable& t, std::uint64_t bits, int& used, std::int64_t& v) {
    return t.round_in_window(bits, used, v);
  }
  static bool round(const BlockTable& t, BitPool& pool, std::int64_t& v) {
    return t.round(pool, v);
  }
  using Kernel = BlockTable::Kernel;
  static bool runs(Kernel kernel) { return BlockTable::runs(kernel); }
  static void fill_with(const BlockTable& t, Kernel kernel, RandomBitGenerator& rng,
                        std::span<std::int64_t> out) {
    t.fill_with(kernel, rng, out);
  }
};

struct CountingGenerator final : RandomBitGenerator {
  Xoshiro256 inner{1};
  int words = 0;
  std::uint64_t next_u64() override {
    ++words;
    return inner.next_u64();
  }
  bool cryptographically_secure() const override { return false; }
  std::string description() const override { return "counting"; }
};

/// exp(-num/den) as a long double, for comparison with the integer brackets.
long double exp_of(u128 num, u128 den) {
  return std::exp(-static_cast<long double>(num) / static_cast<long double>(den));
}

TEST_CASE("exp_bracket holds exp(-z) between bounds about 2^-118 apart") {
  Xoshiro256 parameters(118);
  for (int trial = 0; trial < 20000; ++trial) {
    const u128 den = 1 + parameters.next_u64() % (trial % 2 == 0 ? 1000 : (1ULL << 49));
    const u128 num = u128{parameters.next_u64() % 40} * den + parameters.next_u64() % den;
    const auto bracket = exp_bracket(num, den);
    REQUIRE(bracket.has_value());
    REQUIRE(bracket->low <= bracket->high);
    REQUIRE(bracket->low >= (kOne >> 1));  // normalised
    CHECK(bracket->high - bracket->low <= 1024);
    // value = [low, high] 2^-(127 + shift); long double has 64 bits, so compare at 2^-60.
    const long double scale = std::ldexp(1.0L, -127 - static_cast<int>(bracket->shift));
    const long double low = static_cast<long double>(bracket->low) * scale;
    const long double high = static_cast<long double>(bracket->high) * scale;
    const long double truth = exp_of(num, den);
    INFO("z = " << static_cast<double>(num) << " / " << static_cast<double>(den));
    CHECK(low <= truth * (1 + 0x1.0p-58L));
    CHECK(high >= truth * (1 - 0x1.0p-58L));
    CHECK(high - low <= truth * 0x1.0p-58L);
  }
  // Exact points: exp(0) = 1 and exp(-1) itself.
  const auto one = exp_bracket(0, 7);
  CHECK(one->high == kOne);
  CHECK(one->shift == 0);
  CHECK(exp_bracket(u128{1} << 21, 2) == std::nullopt);  // z = 2^20: negligible
}

/// Draws from `table` against the exact pmf rho(k) = exp(-z(|k|)), normalised over |k| <= reach.
template <class Exponent>
double table_chi_square_p(const BlockTable& table, Exponent z, int reach, int edge,
                          std::uint64_t seed, int draws) {
  Xoshiro256 rng(seed);
  std::vector<std::int64_t> samples(static_cast<std::size_t>(draws));
  table.fill(rng, samples);
  std::vector<long double> p(2 * reach + 1);
  long double total = 0;
  for (int k = -reach; k <= reach; ++k) total += p[k + reach] = std::exp(-z(std::abs(k)));
  std::vector<long> counts(2 * edge + 1, 0);
  for (auto x : samples) ++counts[std::clamp<std::int64_t>(x, -edge, edge) + edge];
  double statistic = 0;
  for (int b = -edge; b <= edge; ++b) {
    long double mass = 0;
    for (int k = -reach; k <= reach; ++k)
      if (std::clamp(k, -edge, edge) == b) mass += p[k + reach] / total;
    const double expected = draws * static_cast<double>(mass);
    REQUIRE(expected >= 5);
    const double d = static_cast<double>(counts[b + edge]) - expected;
    statistic += d * d / expected;
  }
  // Upper tail of chi-square with 2 edge degrees of freedom by the Wilson-Hilferty cube root.
  const double dof = 2.0 * edge, h = 2 / (9 * dof);
  const double zscore = (std::cbrt(statistic / dof) - (1 - h)) / std::sqrt(h);
  return 0.5 * std::erfc(zscore / std::sqrt(2.0));
}

TEST_CASE("block table with few blocks: wedges and tail are exact (chi-square)") {
  // sigma^2 = 100 (z = k^2 / 200) with 3 blocks of 16 over [0, 48) and tail segments beyond:
  // about a third of the draws go through the 128-bit bounds or the tail.
  const BlockTable gaussian(Law::Gaussian, 1, 200, 40, 3);
  const auto gz = [](int k) { return static_cast<long double>(k) * k / 200; };
  CHECK(table_chi_square_p(gaussian, gz, 120, 30, 7, 400000) > 1e-6);
  // The tail alone: one block of 1 ([0, 1)), everything else in tail segments.
  const BlockTable tail_heavy(Law::Gaussian, 1, 200, 0, 1);
  CHECK(table_chi_square_p(tail_heavy, gz, 120, 30, 8, 400000) > 1e-6);
  // Laplace scale 5/2 (z = 2k / 5) in 3 blocks of 8, and a scale 1/3 (z = 3k).
  const BlockTable laplace(Law::Laplace, 2, 5, 20, 3);
  const auto lz = [](int k) { return 2.0L * k / 5; };
  CHECK(table_chi_square_p(laplace, lz, 200, 12, 9, 400000) > 1e-6);
  const BlockTable narrow(Law::Laplace, 3, 1, 2, 3);
  CHECK(table_chi_square_p(
            narrow, [](int k) { return 3.0L * k; }, 40, 3, 10, 400000) > 1e-6);
}

TEST_CASE("the window round is the general round on the same bits") {
  // Wherever round_in_window decides, round() from the same bits gives the same value and
  // consumes the same bits; so the fast path changes nothing in the function of the stream.
  const BlockTable tables[] = {
      BlockTable(Law::Gaussian, 8, 2 * 140744067154917ULL, 4 * 4194402 + 2),
      BlockTable(Law::Gaussian, 4, 18, 8), BlockTable(Law::Laplace, 1, 1000, 8002),
      BlockTable(Law::Gaussian, 1, 200, 40, 3)};
  Xoshiro256 seeds(77);
  int decided = 0;
  for (const BlockTable& table : tables)
    for (int trial = 0; trial < 50000; ++trial) {
      Xoshiro256 a(seeds.next_u64());
      BitPool::State bits{(u128{a.next_u64()} << 64) | a.next_u64(), 64 + trial % 64};
      bits.buffer &= ~u128{0} << (128 - bits.left);  // the pool keeps zeros below its bits
      std::int64_t from_window = 0, from_round = 0;
      int used = 0;
      const auto outcome = BlockTableProbe::window(
          table, static_cast<std::uint64_t>(bits.buffer >> 64), used, from_window);
      if (outcome == BlockTableProbe::Outcome::Undecided) continue;
      ++decided;
      CountingGenerator more;  // round() may refill before it looks at the bits it needs
      BitPool pool(more, bits);
      const bool accepted = BlockTableProbe::round(table, pool, from_round);
      REQUIRE(accepted == (outcome == BlockTableProbe::Outcome::Accepted));
      if (accepted) REQUIRE(from_round == from_window);
      const int consumed_by_round = bits.left + 64 * more.words - pool.state().left;
      REQUIRE(consumed_by_round == used);
    }
  CHECK(decided > 150000);
}

TEST_CASE("block table: every kernel draws what the one-lane-at-a-time schedule draws") {
  // The AVX-512 kernel (eight windows at once) and the x86-64-v3 compilation against the
  // baseline compilation of the schedule (fill_lanes: lane after lane), where this CPU runs
  // them: the same draws, the same number of the generator's words taken, and the generator
  // left at the same word.  Batch sizes around multiples of eight (partial last rounds, lanes
  // without draws), the grid's sigma and the Laplace of scale 2^22 on 10^6 draws each (refills
  // between rounds at every position), and the few-block tables whose windows are often slow
  // (the wedges, the tail: draws settled by the general path, refilling inside a draw).
  using Kernel = BlockTableProbe::Kernel;
  struct Counting final : RandomBitGenerator {
    explicit Counting(std::uint64_t seed) : inner(seed) {}
    Xoshiro256 inner;
    std::size_t words = 0;
    std::uint64_t next_u64() override {
      ++words;
      return inner.next_u64();
    }
    bool cryptographically_secure() const override { return false; }
    std::string description() const override { return "counting"; }
  };
  struct Case {
    BlockTable table;
    std::vector<std::size_t> sizes;
  };
  const std::vector<std::size_t> small = {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 1023, 9610};
  // The light size (the quick set) compares a tenth of the long batches: refills between rounds
  // still fall at every position of a window many times over.
  const std::size_t million = dptune_test::full_or_light<std::size_t>(1000000, 100000);
  const std::size_t long_few = dptune_test::full_or_light<std::size_t>(100000, 10000);
  const Case cases[] = {
      {BlockTable(Law::Gaussian, 8, 2 * 140744067154917ULL, 4 * 4194402 + 2), {million}},
      {BlockTable(Law::Laplace, 1, 4194304, 8 * 4194304 + 2), {million}},
      {BlockTable(Law::Gaussian, 8, 2 * 140744067154917ULL, 4 * 4194402 + 2), small},
      {BlockTable(Law::Gaussian, 1, 200, 42), small},
      {BlockTable(Law::Gaussian, 4, 18, 8), small},
      {BlockTable(Law::Laplace, 3, 7, 20), small},
      {BlockTable(Law::Gaussian, 1, 200, 40, 3), {long_few, 17, 9}},
      {BlockTable(Law::Gaussian, 1, 200, 0, 1), {long_few, 23}},
      {BlockTable(Law::Laplace, 2, 5, 20, 3), {long_few, 31}}};
  std::size_t compared = 0, kernels = 0;
  std::uint64_t seed = 4000;
  for (const Case& c : cases)
    for (const std::size_t size : c.sizes) {
      ++seed;
      Counting reference_rng(seed);
      std::vector<std::int64_t> reference(size);
      BlockTableProbe::fill_with(c.table, Kernel::Baseline, reference_rng, reference);
      const std::size_t reference_words = reference_rng.words;
      const std::uint64_t reference_next = reference_rng.next_u64();
      for (const Kernel kernel : {Kernel::V3, Kernel::Avx512}) {
        if (!BlockTableProbe::runs(kernel)) continue;
        Counting rng(seed);
        std::vector<std::int64_t> out(size);
        BlockTableProbe::fill_with(c.table, kernel, rng, out);
        INFO("kernel " << static_cast<int>(kernel) << ", batch of " << size << ", seed " << seed);
        CHECK(out == reference);
        CHECK(rng.words == reference_words);
        CHECK(rng.next_u64() == reference_next);
        compared += size;
        ++kernels;
      }
    }
  if (!BlockTableProbe::runs(Kernel::Avx512))
    MESSAGE("this CPU has no AVX-512: the vector kernel was not compared");
  MESSAGE(compared << " draws compared over " << kernels << " kernel runs");
  CHECK(compared >= (BlockTableProbe::runs(Kernel::Avx512) ? 2 * million : 0U));
}

}  // namespace
}  // namespace dptune
