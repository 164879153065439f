// Secure aggregation (Bonawitz et al. 2017, §4): the client's four rounds.
#include <sodium.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "dp_hype/chacha_rng.hpp"
#include "protocol.hpp"

namespace dptune::dp_hype::secagg {

// ---- client -------------------------------------------------------------------------------------
struct Client::State {
  PartyId id;
  std::shared_ptr<const Config> config;
  ChaChaGenerator rng;
  Key c_pk{}, c_sk{}, s_pk{}, s_sk{}, b{};
  std::vector<std::uint64_t> input;
  std::unordered_map<PartyId, std::pair<Key, Key>> peer_keys;  // neighbours in U1: (c_pk, s_pk)
  std::unordered_map<PartyId, Key> box_keys;                   // crypto_box_beforenm with each
  struct Held {
    shamir::Share s, b;
  };
  std::map<PartyId, Held> held;        // shares this client holds, by owner (= U2 ∩ N(id))
  std::vector<PartyId> u2_neighbours;  // sorted

  State(PartyId i, std::shared_ptr<const Config> c, const Key& seed)
      : id(i), config(std::move(c)), rng(seed, true, "client seed") {}
  ~State() {
    sodium_memzero(c_sk.data(), 32);
    sodium_memzero(s_sk.data(), 32);
    sodium_memzero(b.data(), 32);
    for (auto& [_, k] : box_keys) sodium_memzero(k.data(), 32);
  }
  const Message& one_from_server(std::vector<Message>& messages, const char* what) const {
    if (messages.size() != 1 || messages[0].from != kServer)
      throw dptune::Error("secure aggregation: client " + str(id) + " expected one " + what +
                          " message from the server, got " + str(messages.size()));
    return messages[0];
  }
};

Client::Client(PartyId id, std::shared_ptr<const Config> config, const Key& seed) {
  ensure_sodium();
  dptune::require(config && id < config->clients, "secure aggregation: bad client id");
  s_ = std::make_unique<State>(id, std::move(config), seed);
  crypto_box_seed_keypair(s_->c_pk.data(), s_->c_sk.data(), s_->rng.bytes32().data());
  s_->s_sk = s_->rng.bytes32();
  crypto_scalarmult_base(s_->s_pk.data(), s_->s_sk.data());
  s_->b = s_->rng.bytes32();
}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
PartyId Client::id() const { return s_->id; }

void Client::set_input(std::vector<std::uint64_t> encoded) {
  dptune::require(encoded.size() == s_->config->length,
                  "secure aggregation: client " + str(s_->id) + " input has " +
                      str(encoded.size()) + " values, expected " + str(s_->config->length));
  s_->input = std::move(encoded);
}

void Client::advertise_keys(Transport& transport) {
  Writer w;
  w.raw(s_->c_pk.data(), 32);
  w.raw(s_->s_pk.data(), 32);
  transport.send({s_->id, kServer, kKeys, w.take()});
}

void Client::share_keys(Transport& transport) {
  State& s = *s_;
  auto messages = transport.receive(s.id, kKeyList);
  const Message& m = s.one_from_server(messages, "key list");
  Reader r(m.payload, "key list");
  const std::uint32_t count = r.u32();
  std::vector<PartyId> recipients;
  for (std::uint32_t i = 0; i < count; ++i) {
    const PartyId v = r.u32();
    Key c{}, k{};
    r.raw(c.data(), 32);
    r.raw(k.data(), 32);
    if (v == s.id || !contains(s.config->neighbours[s.id], v)) continue;
    s.peer_keys[v] = {c, k};
    recipients.push_back(v);
  }
  r.end();
  std::sort(recipients.begin(), recipients.end());
  if (recipients.size() < s.config->threshold)
    throw SecAggAbort(
        "secure aggregation aborted: client " + str(s.id) + " has only " + str(recipients.size()) +
        " neighbours left after key exchange, threshold t = " + str(s.config->threshold));
  std::vector<std::uint64_t> xs(recipients.size());
  for (std::size_t i = 0; i < recipients.size(); ++i) xs[i] = std::uint64_t{recipients[i]} + 1;
  const auto s_shares = shamir::split(s.s_sk, s.config->threshold, xs, s.rng);
  const auto b_shares = shamir::split(s.b, s.config->threshold, xs, s.rng);
  Writer w;
  w.u32(static_cast<std::uint32_t>(recipients.size()));
  for (std::size_t i = 0; i < recipients.size(); ++i) {
    const PartyId v = recipients[i];
    Key box{};
    if (crypto_box_beforenm(box.data(), s.peer_keys[v].first.data(), s.c_sk.data()) != 0)
      throw SecAggAbort("secure aggregation aborted: client " + str(v) +
                        " sent a low-order encryption key");
    s.box_keys[v] = box;
    Writer p;
    p.u32(s.id);
    p.u32(v);
    for (auto y : s_shares[i].y) p.u64(y);
    for (auto y : b_shares[i].y) p.u64(y);
    auto plain = p.take();
    std::vector<std::uint8_t> cipher(plain.size() + crypto_box_MACBYTES);
    const auto nonce = box_nonce(*s.config, s.id, v);
    crypto_box_easy_afternm(cipher.data(), plain.data(), plain.size(), nonce.data(), box.data());
    sodium_memzero(plain.data(), plain.size());
    w.u32(v);
    w.u32(static_cast<std::uint32_t>(cipher.size()));
    w.raw(cipher.data(), cipher.size());
  }
  transport.send({s.id, kServer, kShares, w.take()});
}

void Client::masked_input(Transport& transport) {
  State& s = *s_;
  if (s.input.size() != s.config->length)
    throw dptune::Error("secure aggregation: client " + str(s.id) + " has no input");
  auto messages = transport.receive(s.id, kRoutedShares);
  const Message& m = s.one_from_server(messages, "routed shares");
  Reader r(m.payload, "routed shares");
  const std::uint32_t count = r.u32();
  for (std::uint32_t i = 0; i < count; ++i) {
    const PartyId u = r.u32();
    const std::uint32_t len = r.u32();
    const std::uint8_t* cipher = r.skip(len);
    auto key = s.box_keys.find(u);
    if (key == s.box_keys.end() || len != kSharePlain + crypto_box_MACBYTES)
      throw dptune::Error("secure aggregation: client " + str(s.id) +
                          " got a share from a non-neighbour " + str(u));
    std::vector<std::uint8_t> plain(kSharePlain);
    const auto nonce = box_nonce(*s.config, u, s.id);
    if (crypto_box_open_easy_afternm(plain.data(), cipher, len, nonce.data(), key->second.data()) !=
        0)
      throw dptune::Error("secure aggregation: client " + str(s.id) +
                          " could not authenticate the share from client " + str(u));
    Reader pr(plain, "share");
    if (pr.u32() != u || pr.u32() != s.id)
      throw dptune::Error("secure aggregation: misaddressed share from client " + str(u));
    State::Held h;
    h.s.x = h.b.x = std::uint64_t{s.id} + 1;
    for (auto& y : h.s.y) y = pr.u64();
    for (auto& y : h.b.y) y = pr.u64();
    sodium_memzero(plain.data(), plain.size());
    s.held[u] = h;
  }
  r.end();
  // U2 ∩ N(id): exactly the neighbours whose shares arrived (the server forwards those of U2).
  s.u2_neighbours.clear();
  for (const auto& [u, _] : s.held) s.u2_neighbours.push_back(u);

  // y = x + PRG(b) + Σ_{v ∈ U2 ∩ N(u)} ±PRG(s_uv)  (mod 2^64), Bonawitz et al. 2017 §4.
  std::vector<std::uint64_t> y = s.input;
  add_mask(y, s.b, +1);
  for (PartyId v : s.u2_neighbours) {
    Key seed = pair_seed(s.s_sk, s.peer_keys.at(v).second, *s.config, s.id, v);
    add_mask(y, seed, s.id < v ? +1 : -1);
    sodium_memzero(seed.data(), 32);
  }
  Writer w;
  for (auto v : y) w.u64(v);
  transport.send({s.id, kServer, kMasked, w.take()});
}

void Client::unmask(Transport& transport) {
  State& s = *s_;
  auto messages = transport.receive(s.id, kSurvivors);
  const Message& m = s.one_from_server(messages, "survivor list");
  Reader r(m.payload, "survivor list");
  const std::uint32_t count = r.u32();
  std::vector<PartyId> u3(count);
  for (auto& u : u3) {
    u = r.u32();
    if (u >= s.config->clients)
      throw dptune::Error("secure aggregation: survivor list names unknown client " + str(u));
  }
  r.end();
  std::sort(u3.begin(), u3.end());
  if (u3.size() < s.config->threshold)
    throw SecAggAbort("secure aggregation aborted: client " + str(s.id) + " was told only " +
                      str(u3.size()) +
                      " clients survived, threshold t = " + str(s.config->threshold));
  if (!contains(u3, s.id))
    throw dptune::Error("secure aggregation: client " + str(s.id) + " is not in the survivor list");
  if (!s.config->complete) {
    // With a sparse graph, a disconnected survivor graph would let the server sum one component.
    std::vector<char> alive(s.config->clients, 0), seen(s.config->clients, 0);
    for (PartyId u : u3) alive[u] = 1;
    std::vector<PartyId> stack{u3.front()};
    seen[u3.front()] = 1;
    std::size_t reached = 0;
    while (!stack.empty()) {
      const PartyId u = stack.back();
      stack.pop_back();
      ++reached;
      for (PartyId v : s.config->neighbours[u])
        if (alive[v] && !seen[v]) {
          seen[v] = 1;
          stack.push_back(v);
        }
    }
    if (reached != u3.size())
      throw SecAggAbort("secure aggregation aborted: client " + str(s.id) +
                        " refuses to unmask, the survivors' neighbour graph is disconnected");
  }
  Writer w;
  w.u32(static_cast<std::uint32_t>(s.held.size()));
  for (const auto& [u, h] : s.held) {
    // Never both shares of one client: b_u for survivors, s_u for the dropped (Bonawitz §4).
    const bool survived = contains(u3, u);
    const shamir::Share& share = survived ? h.b : h.s;
    w.u32(u);
    w.u8(survived ? 0 : 1);
    for (auto y : share.y) w.u64(y);
  }
  transport.send({s.id, kServer, kUnmaskShares, w.take()});
}

}  // namespace dptune::dp_hype::secagg
