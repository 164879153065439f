// Secure aggregation (Bonawitz et al. 2017, §4): the server's side of the rounds and the unmasking.
#include <sodium.h>

#include <algorithm>
#include <map>
#include <set>

#include "protocol.hpp"

namespace dptune::dp_hype::secagg {

// ---- server -------------------------------------------------------------------------------------
struct Server::State {
  std::shared_ptr<const Config> config;
  std::map<PartyId, std::pair<Key, Key>> keys;  // U1: (c_pk, s_pk)
  std::vector<PartyId> u1, u2, u3;
  std::map<PartyId, std::vector<std::uint64_t>> masked;

  void require_threshold(std::size_t have, const char* what) const {
    if (have < config->threshold)
      throw SecAggAbort("secure aggregation aborted: only " + str(have) + " of " +
                        str(config->clients) + " clients " + what +
                        ", threshold t = " + str(config->threshold) + " (too many dropouts)");
  }
  /// Round 3's messages: shares[u] are the shares of b_u (u ∈ U3) or of s_u (u ∈ U2 \ U3), by
  /// holder; `responders` the survivors that sent theirs (each counted once).
  std::map<PartyId, std::vector<shamir::Share>> unmask_shares(Transport& transport,
                                                              std::set<PartyId>& responders) const {
    std::map<PartyId, std::vector<shamir::Share>> shares;
    for (auto& m : transport.receive(kServer, kUnmaskShares)) {
      if (!contains(u3, m.from) || !responders.insert(m.from).second) continue;
      Reader r(m.payload, "unmasking shares of client " + str(m.from));
      const std::uint32_t count = r.u32();
      for (std::uint32_t i = 0; i < count; ++i) {
        const PartyId u = r.u32();
        const bool dropped = r.u8() == 1;
        shamir::Share share;
        share.x = std::uint64_t{m.from} + 1;
        for (auto& y : share.y) y = r.u64();
        if (contains(u2, u) && dropped == !contains(u3, u)) shares[u].push_back(share);
      }
      r.end();
    }
    return shares;
  }
};

Server::Server(std::shared_ptr<const Config> config) : s_(std::make_unique<State>()) {
  ensure_sodium();
  s_->config = std::move(config);
}
Server::~Server() = default;
const std::vector<PartyId>& Server::survivors() const { return s_->u3; }

void Server::collect_keys(Transport& transport) {
  State& s = *s_;
  for (auto& m : transport.receive(kServer, kKeys)) {
    if (m.from >= s.config->clients || m.payload.size() != 64 || s.keys.count(m.from)) continue;
    Key c{}, k{};
    std::memcpy(c.data(), m.payload.data(), 32);
    std::memcpy(k.data(), m.payload.data() + 32, 32);
    s.keys[m.from] = {c, k};
    s.u1.push_back(m.from);
  }
  std::sort(s.u1.begin(), s.u1.end());
  s.require_threshold(s.u1.size(), "advertised keys (round 0)");
  for (PartyId u : s.u1) {
    Writer w;
    std::vector<PartyId> listed;
    for (PartyId v : s.config->neighbours[u])
      if (s.keys.count(v)) listed.push_back(v);
    w.u32(static_cast<std::uint32_t>(listed.size()));
    for (PartyId v : listed) {
      w.u32(v);
      w.raw(s.keys[v].first.data(), 32);
      w.raw(s.keys[v].second.data(), 32);
    }
    transport.send({kServer, u, kKeyList, w.take()});
  }
}

void Server::route_shares(Transport& transport) {
  State& s = *s_;
  std::map<PartyId, std::vector<std::pair<PartyId, std::vector<std::uint8_t>>>> inbox;
  for (auto& m : transport.receive(kServer, kShares)) {
    if (!s.keys.count(m.from) || contains(s.u2, m.from)) continue;
    Reader r(m.payload, "shares of client " + str(m.from));
    const std::uint32_t count = r.u32();
    std::vector<std::pair<PartyId, std::vector<std::uint8_t>>> items;
    for (std::uint32_t i = 0; i < count; ++i) {
      const PartyId v = r.u32();
      const std::uint32_t len = r.u32();
      const std::uint8_t* p = r.skip(len);
      items.emplace_back(v, std::vector<std::uint8_t>(p, p + len));
    }
    r.end();
    // The server cannot read these: each is a crypto_box for its recipient.
    for (auto& [v, c] : items) inbox[v].emplace_back(m.from, std::move(c));
    s.u2.push_back(m.from);
    std::sort(s.u2.begin(), s.u2.end());
  }
  s.require_threshold(s.u2.size(), "shared their keys (round 1)");
  for (PartyId v : s.u2) {
    Writer w;
    std::vector<std::pair<PartyId, std::vector<std::uint8_t>>> items;
    for (auto& item : inbox[v])
      if (contains(s.u2, item.first)) items.push_back(std::move(item));
    w.u32(static_cast<std::uint32_t>(items.size()));
    for (auto& [u, c] : items) {
      w.u32(u);
      w.u32(static_cast<std::uint32_t>(c.size()));
      w.raw(c.data(), c.size());
    }
    transport.send({kServer, v, kRoutedShares, w.take()});
  }
}

void Server::collect_masked(Transport& transport) {
  State& s = *s_;
  for (auto& m : transport.receive(kServer, kMasked)) {
    if (!contains(s.u2, m.from) || s.masked.count(m.from) ||
        m.payload.size() != std::size_t{s.config->length} * 8)
      continue;
    std::vector<std::uint64_t> y(s.config->length);
    std::memcpy(y.data(), m.payload.data(), m.payload.size());
    s.masked[m.from] = std::move(y);
  }
  for (const auto& [u, _] : s.masked) s.u3.push_back(u);
  s.require_threshold(s.u3.size(), "sent masked input (round 2)");
  Writer w;
  w.u32(static_cast<std::uint32_t>(s.u3.size()));
  for (PartyId u : s.u3) w.u32(u);
  const auto list = w.take();
  for (PartyId u : s.u3) transport.send({kServer, u, kSurvivors, list});
}

std::vector<std::uint64_t> Server::unmask(
    Transport& transport,
    const std::function<void(std::size_t, const std::function<void(std::size_t)>&)>& parallel_for) {
  State& s = *s_;
  std::set<PartyId> responders;
  auto shares = s.unmask_shares(transport, responders);
  s.require_threshold(responders.size(), "sent unmasking shares (round 3)");

  // Lagrange coefficients depend only on the share points: cache them (with the complete graph
  // almost every reconstruction uses the same first t holders).
  std::map<std::vector<std::uint64_t>, std::vector<std::uint64_t>> lagrange;
  auto recover = [&](PartyId u, const char* what) {
    // Read-only (runs on several threads): the lists were sorted and the coefficients cached.
    const auto found = shares.find(u);
    const std::size_t have = found == shares.end() ? 0 : found->second.size();
    if (have < s.config->threshold)
      throw SecAggAbort("secure aggregation aborted: only " + str(have) + " shares of " + what +
                        " of client " + str(u) +
                        " arrived, threshold t = " + str(s.config->threshold));
    const auto& list = found->second;
    std::vector<std::uint64_t> xs(s.config->threshold);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = list[i].x;
    const auto it = lagrange.find(xs);  // prepared before the parallel part
    shamir::Chunks c{};
    for (std::size_t i = 0; i < xs.size(); ++i)
      for (std::size_t k = 0; k < shamir::kChunks; ++k)
        c[k] = shamir::add(c[k], shamir::mul(it->second[i], list[i].y[k]));
    return shamir::from_chunks(c);
  };

  // Shares are grouped per client above (single-threaded: `shares` and `lagrange` are not
  // shared below except read-only after this point).  Per client, the masks to remove are
  // independent: compute them on `parallel_for`, then add them up in a fixed order.
  std::vector<PartyId> dropped;
  for (PartyId u : s.u2)
    if (!contains(s.u3, u)) dropped.push_back(u);
  std::vector<PartyId> jobs = s.u3;
  jobs.insert(jobs.end(), dropped.begin(), dropped.end());
  // Lagrange coefficients: prepare every point set first, so workers only read the cache.
  for (PartyId u : jobs) {
    const auto found = shares.find(u);
    if (found == shares.end() || found->second.size() < s.config->threshold)
      continue;  // recover() reports it
    auto& list = found->second;
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    std::vector<std::uint64_t> xs(s.config->threshold);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = list[i].x;
    if (!lagrange.count(xs)) lagrange.emplace(xs, shamir::lagrange_at_zero(xs));
  }
  std::vector<std::vector<std::uint64_t>> removal(jobs.size());
  auto job = [&](std::size_t i) {
    const PartyId u = jobs[i];
    std::vector<std::uint64_t> m(s.config->length, 0);
    if (i < s.u3.size()) {
      Key b = recover(u, "the self-mask seed");
      add_mask(m, b, -1);
      sodium_memzero(b.data(), 32);
    } else {
      Key sk = recover(u, "the mask key");
      Key pk{};
      crypto_scalarmult_base(pk.data(), sk.data());
      if (pk != s.keys.at(u).second)
        throw dptune::Error("secure aggregation: the reconstructed mask key of client " + str(u) +
                            " does not match its public key (corrupted shares)");
      // Survivor v added +PRG(s_vu) if v < u and -PRG(s_vu) otherwise: remove it.
      for (PartyId v : s.config->neighbours[u]) {
        if (!contains(s.u3, v)) continue;
        Key seed = pair_seed(sk, s.keys.at(v).second, *s.config, u, v);
        add_mask(m, seed, v < u ? -1 : +1);
        sodium_memzero(seed.data(), 32);
      }
      sodium_memzero(sk.data(), 32);
    }
    removal[i] = std::move(m);
  };
  if (parallel_for)
    parallel_for(jobs.size(), job);
  else
    for (std::size_t i = 0; i < jobs.size(); ++i) job(i);

  std::vector<std::uint64_t> sum(s.config->length, 0);
  for (const auto& [u, y] : s.masked)
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += y[i];
  for (const auto& m : removal)
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += m[i];
  return sum;
}

}  // namespace dptune::dp_hype::secagg
