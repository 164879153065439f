#include "dp_hype/chacha_rng.hpp"

#include <sodium.h>

#include <cstring>

#include "dptune/errors.hpp"

namespace dptune::dp_hype {

namespace {
void ensure_sodium() {
  if (sodium_init() < 0) throw dptune::Error("libsodium could not be initialised");
}
}  // namespace

ChaChaGenerator::ChaChaGenerator(const std::array<std::uint8_t, 32>& key, bool secure,
                                 std::string origin)
    : key_(key), secure_(secure), origin_(std::move(origin)) {
  ensure_sodium();
}

ChaChaGenerator::~ChaChaGenerator() {
  sodium_memzero(key_.data(), key_.size());
  sodium_memzero(buffer_.data(), sizeof(buffer_));
}

ChaChaGenerator ChaChaGenerator::derive(dptune::RandomBitGenerator& parent,
                                        const std::string& label) {
  std::array<std::uint8_t, 32> key{};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::uint64_t w = parent.next_u64();
    std::memcpy(key.data() + 8 * i, &w, 8);
  }
  return ChaChaGenerator(key, parent.cryptographically_secure(),
                         label + " from " + parent.description());
}

ChaChaGenerator ChaChaGenerator::child(const std::array<std::uint8_t, 32>& root, bool secure,
                                       std::uint64_t domain, std::uint64_t index,
                                       const std::string& label) {
  ensure_sodium();
  // BLAKE2b keyed with the root: a PRF, so children of one root are independent and each is as
  // unpredictable as the root.
  std::array<std::uint8_t, 16> message{};
  std::memcpy(message.data(), &domain, 8);
  std::memcpy(message.data() + 8, &index, 8);
  std::array<std::uint8_t, 32> key{};
  crypto_generichash(key.data(), key.size(), message.data(), message.size(), root.data(),
                     root.size());
  ChaChaGenerator out(key, secure, label);
  sodium_memzero(key.data(), key.size());
  return out;
}

void ChaChaGenerator::refill() {
  std::array<std::uint8_t, 8> nonce{};
  std::memcpy(nonce.data(), &block_, 8);
  ++block_;
  crypto_stream_chacha20(reinterpret_cast<unsigned char*>(buffer_.data()), sizeof(buffer_),
                         nonce.data(), key_.data());
  used_ = 0;
}

std::uint64_t ChaChaGenerator::next_u64() {
  if (used_ == buffer_.size()) refill();
  return buffer_[used_++];
}

std::array<std::uint8_t, 32> ChaChaGenerator::bytes32() {
  std::array<std::uint8_t, 32> out{};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::uint64_t w = next_u64();
    std::memcpy(out.data() + 8 * i, &w, 8);
  }
  return out;
}

std::string ChaChaGenerator::description() const { return "ChaCha20 keystream (" + origin_ + ")"; }

}  // namespace dptune::dp_hype
