// Secure aggregation: the in-memory transport and the fixed-point encoding of real values.
#include <algorithm>
#include <cmath>
#include <string>

#include "protocol.hpp"

namespace dptune::dp_hype::secagg {

// ---- transport ----------------------------------------------------------------------------------
void InMemoryTransport::send(Message message) {
  std::lock_guard lock(mutex_);
  bytes_ += message.payload.size();
  if (record_) log_.push_back(message);
  queues_[{message.to, message.round}].push_back(std::move(message));
}

std::vector<Message> InMemoryTransport::receive(PartyId to, std::uint32_t round) {
  std::lock_guard lock(mutex_);
  auto it = queues_.find({to, round});
  if (it == queues_.end()) return {};
  std::vector<Message> out = std::move(it->second);
  queues_.erase(it);
  return out;
}

std::vector<Message> InMemoryTransport::log() const {
  std::lock_guard lock(mutex_);
  return log_;
}

std::size_t InMemoryTransport::bytes_sent() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

// ---- fixed point --------------------------------------------------------------------------------
double rounding_bound(std::size_t parties) {
  return static_cast<double>(parties) * std::ldexp(1.0, -(kFractionBits + 1));
}

std::uint64_t encode(double x, std::size_t parties) {
  const double limit =
      std::ldexp(1.0, 63 - kFractionBits) / static_cast<double>(std::max<std::size_t>(parties, 1));
  if (!std::isfinite(x) || std::abs(x) >= limit)
    throw dptune::InvalidArgument("secure aggregation: value " + std::to_string(x) +
                                  " outside the fixed-point range (|x| < " + std::to_string(limit) +
                                  " for " + str(parties) + " parties)");
  const auto v = static_cast<std::int64_t>(std::llround(std::ldexp(x, kFractionBits)));
  return static_cast<std::uint64_t>(v);
}

double decode(std::uint64_t value) {
  return std::ldexp(static_cast<double>(static_cast<std::int64_t>(value)), -kFractionBits);
}

}  // namespace dptune::dp_hype::secagg
