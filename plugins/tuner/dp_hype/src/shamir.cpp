#include "dp_hype/shamir.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune::dp_hype::shamir {

namespace {
__extension__ typedef unsigned __int128 u128;
}

std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t s = a + b;  // < 2^62, no overflow
  return s >= kPrime ? s - kPrime : s;
}

std::uint64_t sub(std::uint64_t a, std::uint64_t b) { return a >= b ? a - b : a + kPrime - b; }

std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  // 2^61 ≡ 1 (mod p): fold the 122-bit product's high part onto its low 61 bits.
  const u128 z = static_cast<u128>(a) * b;
  std::uint64_t lo = static_cast<std::uint64_t>(z) & kPrime;
  std::uint64_t hi = static_cast<std::uint64_t>(z >> 61);
  return add(lo, hi >= kPrime ? hi - kPrime : hi);
}

std::uint64_t inverse(std::uint64_t a) {
  if (a % kPrime == 0) throw dptune::Error("shamir: inverse of zero");
  std::uint64_t result = 1, base = a % kPrime, e = kPrime - 2;
  while (e) {
    if (e & 1) result = mul(result, base);
    base = mul(base, base);
    e >>= 1;
  }
  return result;
}

std::uint64_t random_element(dptune::RandomBitGenerator& rng) {
  for (;;) {
    const std::uint64_t v = rng.next_u64() >> 3;  // 61 bits
    if (v < kPrime) return v;
  }
}

Chunks to_chunks(const Secret& secret) {
  Chunks c{};
  for (std::size_t i = 0; i < 32; ++i) c[i / 7] |= std::uint64_t{secret[i]} << (8 * (i % 7));
  return c;
}

Secret from_chunks(const Chunks& chunks) {
  Secret s{};
  for (std::size_t k = 0; k < kChunks; ++k) {
    const std::size_t bytes = k + 1 < kChunks ? 7 : 32 - 7 * (kChunks - 1);
    if (chunks[k] >> (8 * bytes))
      throw dptune::Error(
          "shamir: reconstructed value is not a 32-byte secret (inconsistent shares)");
  }
  for (std::size_t i = 0; i < 32; ++i)
    s[i] = static_cast<std::uint8_t>(chunks[i / 7] >> (8 * (i % 7)));
  return s;
}

std::vector<Share> split(const Secret& secret, std::size_t threshold,
                         std::span<const std::uint64_t> xs, dptune::RandomBitGenerator& rng) {
  dptune::require(threshold >= 1, "shamir::split: threshold must be >= 1");
  dptune::require(threshold <= xs.size(), "shamir::split: threshold " + std::to_string(threshold) +
                                              " exceeds the number of shares " +
                                              std::to_string(xs.size()));
  std::unordered_set<std::uint64_t> seen;
  for (std::uint64_t x : xs) {
    dptune::require(x != 0 && x < kPrime, "shamir::split: share points must be in [1, p)");
    dptune::require(seen.insert(x).second,
                    "shamir::split: repeated share point " + std::to_string(x));
  }
  const Chunks constant = to_chunks(secret);
  // coefficients[k][d]: chunk k's polynomial, degree d (d = 0 the secret).
  std::vector<std::array<std::uint64_t, kChunks>> coefficients(threshold);
  coefficients[0] = constant;
  for (std::size_t d = 1; d < threshold; ++d)
    for (std::size_t k = 0; k < kChunks; ++k) coefficients[d][k] = random_element(rng);
  std::vector<Share> shares(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    shares[i].x = xs[i];
    Chunks acc{};
    for (std::size_t d = threshold; d-- > 0;)  // Horner
      for (std::size_t k = 0; k < kChunks; ++k)
        acc[k] = add(mul(acc[k], xs[i]), coefficients[d][k]);
    shares[i].y = acc;
  }
  return shares;
}

std::vector<std::uint64_t> lagrange_at_zero(std::span<const std::uint64_t> xs) {
  // λ_i = Π_{j≠i} x_j / (x_j - x_i); one inversion per i of the product of denominators.
  std::vector<std::uint64_t> lambda(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    std::uint64_t num = 1, den = 1;
    for (std::size_t j = 0; j < xs.size(); ++j) {
      if (j == i) continue;
      if (xs[j] == xs[i])
        throw dptune::Error("shamir: two shares at the same point " + std::to_string(xs[i]));
      num = mul(num, xs[j]);
      den = mul(den, sub(xs[j], xs[i]));
    }
    lambda[i] = mul(num, inverse(den));
  }
  return lambda;
}

Secret reconstruct(std::span<const Share> shares, std::size_t threshold) {
  if (threshold == 0) throw dptune::Error("shamir::reconstruct: threshold must be >= 1");
  if (shares.size() < threshold)
    throw dptune::Error("shamir::reconstruct: " + std::to_string(shares.size()) +
                        " shares, threshold " + std::to_string(threshold));
  std::vector<std::uint64_t> xs(threshold);
  for (std::size_t i = 0; i < threshold; ++i) xs[i] = shares[i].x;
  const auto lambda = lagrange_at_zero(xs);
  Chunks c{};
  for (std::size_t i = 0; i < threshold; ++i)
    for (std::size_t k = 0; k < kChunks; ++k) c[k] = add(c[k], mul(lambda[i], shares[i].y[k]));
  return from_chunks(c);
}

}  // namespace dptune::dp_hype::shamir
