// Shamir sharing over GF(2^61 - 1): field arithmetic, reconstruction from any t shares, threshold
// behaviour, and that t - 1 shares are consistent with every secret.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "dp_hype/shamir.hpp"
#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

using namespace dptune::dp_hype::shamir;

namespace {
Secret secret_from(dptune::RandomBitGenerator& rng) {
  Secret s{};
  for (auto& b : s) b = static_cast<std::uint8_t>(rng.next_u64());
  return s;
}
__extension__ typedef unsigned __int128 u128;
}  // namespace

TEST_CASE("GF(2^61-1): multiplication and inverse agree with 128-bit reference arithmetic") {
  dptune::Xoshiro256 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t a = random_element(rng), b = random_element(rng);
    CHECK(a < kPrime);
    CHECK(mul(a, b) == static_cast<std::uint64_t>(static_cast<u128>(a) * b % kPrime));
    CHECK(add(a, b) == (a + b) % kPrime);
    CHECK(sub(a, b) == (a + kPrime - b) % kPrime);
    if (a) CHECK(mul(a, inverse(a)) == 1);
  }
  CHECK(mul(kPrime - 1, kPrime - 1) == 1);  // (-1)(-1)
  CHECK_THROWS_AS(inverse(0), dptune::Error);
}

TEST_CASE("Shamir: a 32-byte secret round-trips through its 5 chunks") {
  dptune::Xoshiro256 rng(1);
  for (int i = 0; i < 100; ++i) {
    const Secret s = secret_from(rng);
    const Chunks c = to_chunks(s);
    for (auto x : c) CHECK(x < (std::uint64_t{1} << 56));
    CHECK(from_chunks(c) == s);
  }
  Chunks bad{};
  bad[4] = std::uint64_t{1} << 40;  // the last chunk holds only 4 bytes
  CHECK_THROWS_AS(from_chunks(bad), dptune::Error);
}

TEST_CASE("Shamir: every t-subset of the shares reconstructs the secret, fewer than t throw") {
  dptune::Xoshiro256 rng(2);
  const Secret secret = secret_from(rng);
  std::vector<std::uint64_t> xs{3, 5, 8, 13, 21, 34, 55};
  const std::size_t t = 4;
  const auto shares = split(secret, t, xs, rng);
  REQUIRE(shares.size() == xs.size());
  // All C(7, 4) = 35 subsets.
  int subsets = 0;
  for (unsigned mask = 0; mask < (1u << xs.size()); ++mask) {
    if (__builtin_popcount(mask) != static_cast<int>(t)) continue;
    std::vector<Share> chosen;
    for (std::size_t i = 0; i < xs.size(); ++i)
      if (mask & (1u << i)) chosen.push_back(shares[i]);
    std::reverse(chosen.begin(), chosen.end());  // order does not matter
    CHECK(reconstruct(chosen, t) == secret);
    ++subsets;
  }
  CHECK(subsets == 35);
  std::vector<Share> few(shares.begin(), shares.begin() + 3);
  CHECK_THROWS_WITH_AS(reconstruct(few, t), doctest::Contains("3 shares, threshold 4"),
                       dptune::Error);
  // Interpolating t - 1 shares as if the threshold were t - 1 does not give the secret.
  CHECK_THROWS_AS(reconstruct(few, 3), dptune::Error);  // not even a valid 32-byte secret (w.h.p.)
}

TEST_CASE("Shamir: t - 1 shares are consistent with any other secret (they reveal nothing)") {
  dptune::Xoshiro256 rng(3);
  const Secret a = secret_from(rng), b = secret_from(rng);
  std::vector<std::uint64_t> xs{1, 2, 3, 4, 5};
  const std::size_t t = 3;
  const auto shares = split(a, t, xs, rng);
  // The degree-(t-1) polynomial through (0, b) and the first t - 1 shares of a exists; its value
  // at x = 4 together with those t - 1 shares reconstructs b.
  std::vector<std::uint64_t> pts{0, shares[0].x, shares[1].x};
  const Chunks cb = to_chunks(b);
  Share forged;
  forged.x = 4;
  for (std::size_t k = 0; k < kChunks; ++k) {
    const std::uint64_t ys[3] = {cb[k], shares[0].y[k], shares[1].y[k]};
    std::uint64_t value = 0;  // Lagrange at x = 4
    for (int i = 0; i < 3; ++i) {
      std::uint64_t num = 1, den = 1;
      for (int j = 0; j < 3; ++j)
        if (j != i) {
          num = mul(num, sub(4, pts[j]));
          den = mul(den, sub(pts[i], pts[j]));
        }
      value = add(value, mul(ys[i], mul(num, inverse(den))));
    }
    forged.y[k] = value;
  }
  std::vector<Share> mixed{shares[0], shares[1], forged};
  CHECK(reconstruct(mixed, t) == b);
  CHECK(reconstruct(std::vector<Share>{shares[0], shares[1], shares[3]}, t) == a);
}

TEST_CASE("Shamir: argument checks") {
  dptune::Xoshiro256 rng(4);
  const Secret s{};
  std::vector<std::uint64_t> xs{1, 2, 3};
  CHECK_THROWS_AS(split(s, 0, xs, rng), dptune::InvalidArgument);
  CHECK_THROWS_AS(split(s, 4, xs, rng), dptune::InvalidArgument);
  std::vector<std::uint64_t> zero{0, 1, 2};
  CHECK_THROWS_AS(split(s, 2, zero, rng), dptune::InvalidArgument);
  std::vector<std::uint64_t> dup{1, 2, 2};
  CHECK_THROWS_AS(split(s, 2, dup, rng), dptune::InvalidArgument);
  // Threshold 1: every share is the secret itself (degree-0 polynomial).
  const auto one = split(s, 1, xs, rng);
  for (const auto& sh : one) CHECK(sh.y == to_chunks(s));
}
