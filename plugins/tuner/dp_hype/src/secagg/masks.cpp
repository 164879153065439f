// Secure aggregation (Bonawitz et al. 2017, §4): pairwise mask seeds, mask expansion, nonces.
#include <sodium.h>

#include <algorithm>
#include <cstring>

#include "protocol.hpp"

namespace dptune::dp_hype::secagg {

void ensure_sodium() {
  if (sodium_init() < 0) throw dptune::Error("libsodium could not be initialised");
}

// The pairwise mask seed s_uv (Bonawitz §4, "KA.agree" then hashed): BLAKE2b of the X25519 shared
// point, the session and the ordered pair, so seeds differ across runs and pairs.
Key pair_seed(const Key& secret, const Key& peer_public, const Config& config, PartyId u,
              PartyId v) {
  Key point{};
  if (crypto_scalarmult(point.data(), secret.data(), peer_public.data()) != 0)
    throw SecAggAbort("secure aggregation aborted: client " + str(std::max(u, v)) + " or " +
                      str(std::min(u, v)) + " sent a low-order X25519 public key");
  crypto_generichash_state h;
  crypto_generichash_init(&h, nullptr, 0, 32);
  crypto_generichash_update(&h, point.data(), point.size());
  crypto_generichash_update(&h, config.session.data(), config.session.size());
  const std::uint32_t lo = std::min(u, v), hi = std::max(u, v);
  crypto_generichash_update(&h, reinterpret_cast<const unsigned char*>(&lo), 4);
  crypto_generichash_update(&h, reinterpret_cast<const unsigned char*>(&hi), 4);
  Key seed{};
  crypto_generichash_final(&h, seed.data(), seed.size());
  sodium_memzero(point.data(), point.size());
  return seed;
}

// PRG(seed): `length` words of the ChaCha20 keystream, added (sign +1) or subtracted (-1) mod 2^64.
// The keystream is written straight into a per-thread word buffer (one libsodium call per mask) and
// added in a tight loop the compiler vectorises.
void add_mask(std::vector<std::uint64_t>& acc, const Key& seed, int sign) {
  static const std::uint8_t nonce[crypto_stream_chacha20_NONCEBYTES] = {};
  thread_local std::vector<std::uint64_t> mask;
  mask.resize(acc.size());
  crypto_stream_chacha20(reinterpret_cast<unsigned char*>(mask.data()), mask.size() * 8, nonce,
                         seed.data());
  std::uint64_t* __restrict a = acc.data();
  const std::uint64_t* __restrict m = mask.data();
  const std::size_t len = acc.size();
  if (sign > 0)
    for (std::size_t i = 0; i < len; ++i) a[i] += m[i];
  else
    for (std::size_t i = 0; i < len; ++i) a[i] -= m[i];
  sodium_memzero(mask.data(), mask.size() * 8);
}

std::array<std::uint8_t, crypto_box_NONCEBYTES> box_nonce(const Config& config, PartyId from,
                                                          PartyId to) {
  static_assert(crypto_box_NONCEBYTES == 24);
  std::array<std::uint8_t, crypto_box_NONCEBYTES> n{};
  std::memcpy(n.data(), config.session.data(), 16);
  std::memcpy(n.data() + 16, &from, 4);
  std::memcpy(n.data() + 20, &to, 4);
  return n;
}

}  // namespace dptune::dp_hype::secagg
