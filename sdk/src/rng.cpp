#include "dptune/rng.hpp"

#include <cmath>
#include <numbers>
#include <utility>

#include "dptune/errors.hpp"

namespace dptune {

RandomBitGenerator::~RandomBitGenerator() = default;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Xoshiro256::Xoshiro256(std::uint64_t seed, std::uint64_t stream) : seed_(seed), stream_(stream) {
  std::uint64_t mix = stream;
  std::uint64_t s = seed ^ splitmix64(mix);
  for (auto& word : state_) word = splitmix64(s);
}

std::uint64_t Xoshiro256::next_u64() {
  auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

std::string Xoshiro256::description() const {
  return "xoshiro256** (deterministic, NOT cryptographically secure) seed=" +
         std::to_string(seed_) + " stream=" + std::to_string(stream_);
}

double uniform01(RandomBitGenerator& rng) {
  return static_cast<double>(rng.next_u64() >> 11) * 0x1.0p-53;
}

double uniform_open01(RandomBitGenerator& rng) {
  // (k + 0.5) / 2^53 for k in [0, 2^53): symmetric, never 0 or 1.
  return (static_cast<double>(rng.next_u64() >> 11) + 0.5) * 0x1.0p-53;
}

std::uint64_t uniform_index(RandomBitGenerator& rng, std::uint64_t n) {
  require(n > 0, "uniform_index: n must be > 0");
  // Lemire (2019), "Fast random integer generation in an interval", with rejection: unbiased.
  __extension__ using uint128 = unsigned __int128;
  uint128 m = static_cast<uint128>(rng.next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<uint128>(rng.next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double laplace(RandomBitGenerator& rng, double scale) {
  require(scale > 0 && std::isfinite(scale), "laplace: scale must be positive and finite");
  // Inversion: a sign bit and an Exp(1) magnitude -log(U), U in (0, 1).
  const bool negative = (rng.next_u64() & 1U) != 0;
  const double magnitude = -std::log(uniform_open01(rng)) * scale;
  return negative ? -magnitude : magnitude;
}

double gaussian(RandomBitGenerator& rng, double sigma) {
  require(sigma >= 0 && std::isfinite(sigma), "gaussian: sigma must be >= 0 and finite");
  if (sigma == 0) return 0;
  const double u1 = uniform_open01(rng), u2 = uniform01(rng);
  return sigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

bool bernoulli(RandomBitGenerator& rng, double p) {
  require(p >= 0 && p <= 1, "bernoulli: p must be in [0, 1]");
  return uniform01(rng) < p;
}

std::int64_t two_sided_geometric(RandomBitGenerator& rng, double alpha) {
  require(alpha >= 0 && alpha < 1, "two_sided_geometric: alpha must be in [0, 1)");
  if (alpha == 0) return 0;
  // The difference of two iid Geometric(1 - alpha) variables (failures before success) has
  // P(k) = (1 - alpha) / (1 + alpha) * alpha^|k|.
  auto geometric = [&]() -> std::int64_t {
    return static_cast<std::int64_t>(std::floor(std::log(uniform_open01(rng)) / std::log(alpha)));
  };
  return geometric() - geometric();
}

void shuffle(RandomBitGenerator& rng, std::span<std::size_t> items) {
  for (std::size_t i = items.size(); i > 1; --i)
    std::swap(items[i - 1], items[uniform_index(rng, i)]);
}

}  // namespace dptune
