// The fast paths of sdk/src/helpers/discrete.cpp are the same functions of the bit stream as their
// bit-by-bit definitions: same result and same bits consumed, from any position in the buffer.
#include <doctest/doctest.h>

#include <cmath>

// The sampler source itself, to reach its anonymous namespace.
// NOLINTNEXTLINE(bugprone-suspicious-include)
#include "../../sdk/src/helpers/discrete.cpp"

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
