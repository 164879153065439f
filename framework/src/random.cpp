#include "dptune/host/random.hpp"

#include <sodium.h>

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

SecureRandom::SecureRandom() { ensure_sodium(); }

std::uint64_t SecureRandom::next_u64() {
  if (next_ == std::size(buffer_)) {
    randombytes_buf(buffer_, sizeof buffer_);
    next_ = 0;
  }
  return buffer_[next_++];
}

std::string SecureRandom::description() const {
  return std::string("libsodium randombytes (") + randombytes_implementation_name() +
         ", cryptographically secure)";
}

std::unique_ptr<dptune::RandomBitGenerator> RandomSource::make(std::uint64_t stream) const {
  std::unique_ptr<dptune::RandomBitGenerator> fresh;
  if (seed_)
    fresh = std::make_unique<dptune::Xoshiro256>(*seed_, stream);
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
