// dptune host: where randomness comes from.  Production: libsodium's CSPRNG.  With --seed: a
// deterministic xoshiro256** stream per task, derived from (seed, stream id), so results do not
// depend on the number of threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "dptune/rng.hpp"

namespace dptune::host {

/// The ChaCha20 keystream (RFC 8439) of `key` and `nonce` from block `counter` on, into `out`
/// (any length; the last block cut): 16 blocks at a time with AVX-512 when the CPU has it and
/// `allow_vector`, the rest through libsodium; the same bytes either way (tests compare them and
/// check RFC 8439's vectors).  Throws when the 32-bit block counter would wrap.
void chacha20_keystream(const std::array<unsigned char, 32>& key,
                        const std::array<unsigned char, 12>& nonce, std::uint32_t counter,
                        std::span<unsigned char> out, bool allow_vector = true);
/// True when chacha20_keystream computes on AVX-512 on this CPU.
bool chacha20_vectorised();

/// A fast-key-erasure ChaCha20 generator (Bernstein 2017, "Fast-key-erasure random-number
/// generators"): a 256-bit key from libsodium's randombytes_buf (the OS CSPRNG), then each refill
/// runs ChaCha20 (RFC 8439) under the current key over 4 KiB + 32
/// bytes (chacha20_keystream: 16 blocks at once on AVX-512, else libsodium's vectorised code),
/// keeps the last 32 as the next key and hands out the 4 KiB.  About ten times the
/// throughput of a getrandom call per buffer (the secure samplers read a word every few draws);
/// an output word is never derivable from a later state.  Thread-compatible: one instance per
/// thread.
class SecureRandom final : public dptune::RandomBitGenerator {
 public:
  SecureRandom();
  ~SecureRandom() override;
  SecureRandom(const SecureRandom&) = delete;
  SecureRandom& operator=(const SecureRandom&) = delete;
  std::uint64_t next_u64() override;
  bool cryptographically_secure() const override { return true; }
  std::string description() const override;

 private:
  static constexpr std::size_t kWords = 512;  // 4 KiB per ChaCha20 run
  std::array<unsigned char, 32> key_{};
  std::uint64_t buffer_[kWords + 4];  // the output words, then the next key
  std::size_t next_ = kWords;
};

/// Keeps the words a stream draws so that a resumed study replays them
/// (framework/src/study/study.hpp).
class RandomStreamRecorder {
 public:
  virtual ~RandomStreamRecorder() = default;
  virtual std::unique_ptr<dptune::RandomBitGenerator> wrap(
      std::uint64_t stream, std::unique_ptr<dptune::RandomBitGenerator> fresh) = 0;
};

/// ChaCha20's keystream under a secret key, one nonce per stream (RFC 8439 via libsodium): a
/// cryptographically secure stream that every process holding the key draws identically.
class KeyedRandom final : public dptune::RandomBitGenerator {
 public:
  KeyedRandom(const std::array<unsigned char, 32>& key, std::uint64_t stream);
  std::uint64_t next_u64() override;
  bool cryptographically_secure() const override { return true; }
  std::string description() const override;

 private:
  std::array<unsigned char, 32> key_;
  std::array<unsigned char, 12> nonce_{};
  std::uint32_t block_ = 0;
  std::uint64_t buffer_[64];
  std::size_t next_ = 64;
};

class RandomSource {
 public:
  /// `layout_key` (secure randomness only): the data layout's streams (1 <= stream < 2^32) are
  /// drawn from KeyedRandom under it, so that the ranks of an MPI job split the data alike.
  explicit RandomSource(std::optional<std::uint64_t> seed, RandomStreamRecorder* recorder = nullptr,
                        std::optional<std::array<unsigned char, 32>> layout_key = std::nullopt)
      : seed_(seed), recorder_(recorder), layout_key_(layout_key) {}
  /// A generator for one task; `stream` identifies the task deterministically.
  std::unique_ptr<dptune::RandomBitGenerator> make(std::uint64_t stream) const;
  bool secure() const { return !seed_.has_value(); }
  std::optional<std::uint64_t> seed() const { return seed_; }
  /// For reports: "libsodium ChaCha20, fast key erasure, ... cryptographically secure)" or
  /// "xoshiro256** seeded with 42 (deterministic, not cryptographically secure)".
  std::string description() const;

 private:
  // With a recorder, streams below 2^32 (the tuner's stream 0 and the data layout's) are made
  // through it; the per-evaluation streams ((batch + 1) << 32 | task) never are.
  std::optional<std::uint64_t> seed_;
  RandomStreamRecorder* recorder_ = nullptr;
  std::optional<std::array<unsigned char, 32>> layout_key_;
};

}  // namespace dptune::host
