// A RandomBitGenerator on the ChaCha20 keystream (libsodium crypto_stream_chacha20) under a 32-byte
// key.  DP-Hype gives every client its own generator (clients run concurrently and, later, on other
// MPI ranks), keyed from the tuner's generator: when that one is cryptographically secure, so is
// every client's (ChaCha20 is a PRF); with --seed the whole run is reproducible.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "dptune/rng.hpp"

namespace dptune::dp_hype {

class ChaChaGenerator final : public dptune::RandomBitGenerator {
 public:
  /// `secure` is what cryptographically_secure() reports: true only if the key came from a secure
  /// source.
  ChaChaGenerator(const std::array<std::uint8_t, 32>& key, bool secure, std::string origin);
  /// Keyed with 256 bits drawn from `parent`; secure iff the parent is.
  static ChaChaGenerator derive(dptune::RandomBitGenerator& parent, const std::string& label);
  /// Child `index` of `root` in `domain`: keyed with BLAKE2b_root(domain ‖ index), so any process
  /// that holds the root makes the same child without drawing the others first (DP-Hype's
  /// clients on MPI ranks, whichever rank holds them).  `secure`: whether the root is secret.
  static ChaChaGenerator child(const std::array<std::uint8_t, 32>& root, bool secure,
                               std::uint64_t domain, std::uint64_t index, const std::string& label);
  ~ChaChaGenerator() override;
  std::uint64_t next_u64() override;
  bool cryptographically_secure() const override { return secure_; }
  std::string description() const override;
  /// 32 fresh bytes (keys, seeds).
  std::array<std::uint8_t, 32> bytes32();

 private:
  void refill();
  std::array<std::uint8_t, 32> key_;
  std::uint64_t block_ = 0;  // nonce counter: each refill uses a fresh 64-bit nonce
  std::array<std::uint64_t, 64> buffer_{};
  std::size_t used_ = 64;
  bool secure_;
  std::string origin_;
};

}  // namespace dptune::dp_hype
