// Secure aggregation (Bonawitz et al. 2017, §4): what both parties share: message tags, the
// little-endian wire format, and the cryptographic helpers for pairwise seeds, masks and box
// nonces.  Private to the protocol's sources (include/dp_hype/secagg.hpp is the interface).
#pragma once

#include <sodium.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dp_hype/secagg.hpp"

namespace dptune::dp_hype::secagg {

static_assert(std::endian::native == std::endian::little,
              "the wire format and the mask expansion assume a little-endian host");

using Key = std::array<std::uint8_t, 32>;

// Message tags: client → server on even rounds, server → client on odd ones.
enum Tag : std::uint32_t {
  kKeys = 0,
  kKeyList = 1,
  kShares = 2,
  kRoutedShares = 3,
  kMasked = 4,
  kSurvivors = 5,
  kUnmaskShares = 6,
};

inline std::string str(std::size_t n) { return std::to_string(n); }

// ---- wire format: little-endian integers and raw bytes ------------------------------------------
class Writer {
 public:
  void u8(std::uint8_t v) { buf_.push_back(v); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  std::vector<std::uint8_t> take() { return std::move(buf_); }

 private:
  std::vector<std::uint8_t> buf_;
};

class Reader {
 public:
  Reader(const std::vector<std::uint8_t>& b, std::string what) : b_(b), what_(std::move(what)) {}
  std::uint8_t u8() {
    std::uint8_t v;
    raw(&v, 1);
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v;
    raw(&v, 4);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v;
    raw(&v, 8);
    return v;
  }
  void raw(void* p, std::size_t n) {
    if (n > b_.size() - pos_) throw dptune::Error("secure aggregation: truncated " + what_);
    std::memcpy(p, b_.data() + pos_, n);
    pos_ += n;
  }
  const std::uint8_t* skip(std::size_t n) {
    if (n > b_.size() - pos_) throw dptune::Error("secure aggregation: truncated " + what_);
    const std::uint8_t* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  void end() const {
    if (pos_ != b_.size()) throw dptune::Error("secure aggregation: trailing bytes in " + what_);
  }

 private:
  const std::vector<std::uint8_t>& b_;
  std::string what_;
  std::size_t pos_ = 0;
};

inline bool contains(const std::vector<PartyId>& sorted, PartyId id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

// ---- masks and encryption (Bonawitz et al. 2017, §4) --------------------------------------------
void ensure_sodium();

// The pairwise mask seed s_uv (Bonawitz §4, "KA.agree" then hashed): BLAKE2b of the X25519 shared
// point, the session and the ordered pair, so seeds differ across runs and pairs.
Key pair_seed(const Key& secret, const Key& peer_public, const Config& config, PartyId u,
              PartyId v);

// PRG(seed): `length` words of the ChaCha20 keystream, added (sign +1) or subtracted (-1) mod 2^64.
void add_mask(std::vector<std::uint64_t>& acc, const Key& seed, int sign);

// The crypto_box nonce of the share sent from `from` to `to`: the session and the pair.
std::array<std::uint8_t, crypto_box_NONCEBYTES> box_nonce(const Config& config, PartyId from,
                                                          PartyId to);

// Plaintext of one encrypted share: sender, recipient, the shares of s_u and b_u.
constexpr std::size_t kSharePlain = 4 + 4 + std::size_t{2} * 8 * shamir::kChunks;

}  // namespace dptune::dp_hype::secagg
