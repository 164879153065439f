// dptune SDK: random bits and the project's own samplers.
//
// Every sampler is defined here on top of a 64-bit generator, never through <random>'s
// distributions, whose streams differ between standard libraries: golden values in tests must not
// depend on the libc++. The host hands plugins either a cryptographically secure generator (the
// default, libsodium) or, with
// `--seed`, a deterministic one; reports say which produced their numbers.
#pragma once

#include <boost/config.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace dptune {

class BOOST_SYMBOL_VISIBLE RandomBitGenerator {
 public:
  virtual ~RandomBitGenerator();
  /// 64 uniformly random bits.
  virtual std::uint64_t next_u64() = 0;
  /// True only for generators fit for production noise (unpredictable, from the OS CSPRNG).
  virtual bool cryptographically_secure() const = 0;
  /// Human-readable name, e.g. "libsodium randombytes (ChaCha20)" or "xoshiro256** seed=42
  /// stream=3".
  virtual std::string description() const = 0;
};

/// xoshiro256** (Blackman & Vigna 2018) seeded through splitmix64: fast, reproducible, NOT secure.
/// Streams are independent by construction of their seed: seed ^ splitmix64(stream).
class BOOST_SYMBOL_VISIBLE Xoshiro256 final : public RandomBitGenerator {
 public:
  explicit Xoshiro256(std::uint64_t seed, std::uint64_t stream = 0);
  std::uint64_t next_u64() override;
  bool cryptographically_secure() const override { return false; }
  std::string description() const override;

 private:
  std::uint64_t state_[4];
  std::uint64_t seed_, stream_;
};

/// splitmix64 step (Steele, Lea, Flood 2014); exposed for deriving seeds.
std::uint64_t splitmix64(std::uint64_t& state);

// ---- samplers -----------------------------------------------------------------------------------
/// Uniform on [0, 1) with 53 random bits.
double uniform01(RandomBitGenerator& rng);
/// Uniform on (0, 1): never 0, so log() is finite.
double uniform_open01(RandomBitGenerator& rng);
/// Uniform integer in [0, n), unbiased (Lemire's method with rejection).  n > 0.
std::uint64_t uniform_index(RandomBitGenerator& rng, std::uint64_t n);
/// Laplace(0, scale) by inversion of a uniform (scale > 0).
double laplace(RandomBitGenerator& rng, double scale);
/// Normal(0, sigma^2) by the Box–Muller transform (sigma >= 0).
double gaussian(RandomBitGenerator& rng, double sigma);
/// Bernoulli(p).
bool bernoulli(RandomBitGenerator& rng, double p);
/// Two-sided geometric (discrete Laplace) with P(k) ∝ alpha^|k|, 0 <= alpha < 1.
std::int64_t two_sided_geometric(RandomBitGenerator& rng, double alpha);
/// Fisher–Yates shuffle of indices.
void shuffle(RandomBitGenerator& rng, std::span<std::size_t> items);

}  // namespace dptune
