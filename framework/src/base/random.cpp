#include "dptune/host/random.hpp"

#include <sodium.h>

#include <cstring>

#include "dptune/errors.hpp"

namespace dptune::host {

namespace {
void ensure_sodium() {
  // sodium_init is idempotent and thread-safe; it returns 1 when already initialised.
  static const int status = sodium_init();
  if (status < 0)
    throw dptune::Error("libsodium failed to initialise: no secure randomness available");
}
}  // namespace

SecureRandom::SecureRandom() {
  ensure_sodium();
  randombytes_buf(key_.data(), key_.size());
}

SecureRandom::~SecureRandom() {
  sodium_memzero(key_.data(), key_.size());
  sodium_memzero(buffer_, sizeof buffer_);
}

std::uint64_t SecureRandom::next_u64() {
  if (next_ == kWords) {
    // One key per run, so the all-zero nonce never repeats under a key; the old key is
    // overwritten at once (fast key erasure).
    static_assert(sizeof buffer_ - kWords * 8 == crypto_stream_chacha20_ietf_KEYBYTES);
    const std::array<unsigned char, crypto_stream_chacha20_ietf_NONCEBYTES> nonce{};
    auto* bytes = reinterpret_cast<unsigned char*>(buffer_);
    crypto_stream_chacha20_ietf(bytes, sizeof buffer_, nonce.data(), key_.data());
    std::memcpy(key_.data(), bytes + kWords * 8, key_.size());
    sodium_memzero(bytes + kWords * 8, key_.size());
    next_ = 0;
  }
  const std::uint64_t word = buffer_[next_];
  buffer_[next_++] = 0;  // a handed-out word does not stay in memory
  return word;
}

std::string SecureRandom::description() const {
  return std::string("libsodium ChaCha20, fast key erasure, keyed from randombytes (") +
         randombytes_implementation_name() + ", cryptographically secure)";
}

KeyedRandom::KeyedRandom(const std::array<unsigned char, 32>& key, std::uint64_t stream)
    : key_(key) {
  ensure_sodium();
  static_assert(sizeof nonce_ == crypto_stream_chacha20_ietf_NONCEBYTES);
  static_assert(sizeof key_ == crypto_stream_chacha20_ietf_KEYBYTES);
  for (std::size_t i = 0; i < 8; ++i) nonce_[i] = static_cast<unsigned char>(stream >> (8 * i));
}

std::uint64_t KeyedRandom::next_u64() {
  if (next_ == std::size(buffer_)) {
    // 512 bytes = 8 ChaCha20 blocks from block counter block_; 2^32 blocks (256 GiB) per stream.
    constexpr std::uint32_t kBlocks = sizeof buffer_ / 64;
    if (block_ > UINT32_MAX - kBlocks) throw dptune::Error("keyed random stream exhausted");
    std::memset(buffer_, 0, sizeof buffer_);
    auto* bytes = reinterpret_cast<unsigned char*>(buffer_);
    crypto_stream_chacha20_ietf_xor_ic(bytes, bytes, sizeof buffer_, nonce_.data(), block_,
                                       key_.data());
    block_ += kBlocks;
    next_ = 0;
  }
  return buffer_[next_++];
}

std::string KeyedRandom::description() const {
  return "ChaCha20 keystream under a shared secret key (cryptographically secure)";
}

std::unique_ptr<dptune::RandomBitGenerator> RandomSource::make(std::uint64_t stream) const {
  std::unique_ptr<dptune::RandomBitGenerator> fresh;
  if (seed_)
    fresh = std::make_unique<dptune::Xoshiro256>(*seed_, stream);
  else if (layout_key_ && stream != 0 && stream < (std::uint64_t{1} << 32))
    fresh = std::make_unique<KeyedRandom>(*layout_key_, stream);
  else
    fresh = std::make_unique<SecureRandom>();
  if (recorder_ && stream < (std::uint64_t{1} << 32))
    return recorder_->wrap(stream, std::move(fresh));
  return fresh;
}

std::string RandomSource::description() const {
  if (seed_)
    return "xoshiro256** seeded with " + std::to_string(*seed_) +
           " (deterministic, NOT cryptographically secure: for tests and reproducible experiments)";
  return SecureRandom().description();
}

}  // namespace dptune::host
