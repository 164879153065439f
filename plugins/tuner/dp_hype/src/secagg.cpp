#include "dp_hype/secagg.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include <sodium.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "dp_hype/chacha_rng.hpp"

namespace dptune::dp_hype::secagg {

static_assert(std::endian::native == std::endian::little,
              "the wire format and the mask expansion assume a little-endian host");

namespace {

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

std::string str(std::size_t n) { return std::to_string(n); }

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

constexpr std::size_t kSharePlain = 4 + 4 + 2 * 8 * shamir::kChunks;

bool contains(const std::vector<PartyId>& sorted, PartyId id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

}  // namespace

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

// ---- graphs and configuration -------------------------------------------------------------------
std::vector<std::vector<PartyId>> complete_graph(std::uint32_t clients) {
  std::vector<std::vector<PartyId>> g(clients);
  for (PartyId u = 0; u < clients; ++u)
    for (PartyId v = 0; v < clients; ++v)
      if (u != v) g[u].push_back(v);
  return g;
}

std::vector<std::vector<PartyId>> circulant_graph(std::uint32_t clients, std::uint32_t degree,
                                                  std::uint64_t public_seed) {
  if (degree + 1 >= clients) return complete_graph(clients);
  dptune::require(degree >= 2 && degree % 2 == 0,
                  "secure aggregation: neighbour degree must be even and >= 2, got " + str(degree));
  // Public random placement on a ring; each client is linked to degree/2 ring neighbours per side.
  std::array<std::uint8_t, 32> key{};
  std::memcpy(key.data(), &public_seed, 8);
  ChaChaGenerator rng(key, false, "public graph seed");
  std::vector<std::size_t> ring(clients);
  for (std::size_t i = 0; i < clients; ++i) ring[i] = i;
  dptune::shuffle(rng, ring);
  std::vector<std::set<PartyId>> sets(clients);
  for (std::size_t i = 0; i < clients; ++i)
    for (std::uint32_t d = 1; d <= degree / 2; ++d) {
      const auto a = static_cast<PartyId>(ring[i]),
                 b = static_cast<PartyId>(ring[(i + d) % clients]);
      sets[a].insert(b);
      sets[b].insert(a);
    }
  std::vector<std::vector<PartyId>> g(clients);
  for (std::size_t u = 0; u < clients; ++u) g[u].assign(sets[u].begin(), sets[u].end());
  return g;
}

// ---- SecAgg+ parameters (Bell et al. 2020) ---------------------------------------------------
namespace {

double log_choose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// ln Pr[X ≥ a] for X hypergeometric: `draws` from a population of `population` holding `marked`.
double log_hypergeometric_tail(std::uint32_t population, std::uint32_t marked, std::uint32_t draws,
                               std::uint32_t a) {
  const std::uint32_t hi = std::min(marked, draws);
  const std::uint32_t lo = draws > population - marked ? draws - (population - marked) : 0;
  if (a > hi) return -HUGE_VAL;
  a = std::max(a, lo);
  const double total = log_choose(population, draws);
  std::vector<double> terms;
  for (std::uint32_t x = a; x <= hi; ++x)
    terms.push_back(log_choose(marked, x) + log_choose(population - marked, draws - x) - total);
  const double m = *std::max_element(terms.begin(), terms.end());
  double sum = 0;
  for (double t : terms) sum += std::exp(t - m);
  return std::min(0.0, m + std::log(sum));
}

}  // namespace

std::string GraphParameters::describe() const {
  auto rate = [](double r) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", r);
    return std::string(b);
  };
  auto bits = [](double l2) {
    return std::isinf(l2) ? std::string("0 (impossible)")
                          : "2^" + std::to_string(static_cast<int>(std::floor(l2)));
  };
  std::string out =
      complete ? "complete graph (Bonawitz et al. 2017)"
               : "SecAgg+ random Harary graph (Bell et al. 2020), degree " + std::to_string(degree);
  out += ", Shamir threshold t = " + std::to_string(threshold) + " per neighbourhood; assumes <= " +
         std::to_string(static_cast<int>(std::floor(corrupt_rate * clients + 1e-9))) +
         " corrupt clients (" + rate(corrupt_rate) + " n) colluding with the server and <= " +
         std::to_string(static_cast<int>(std::floor(dropout_rate * clients + 1e-9))) +
         " dropouts (" + rate(dropout_rate) +
         " n): Pr[honest survivors disconnected] <= " + bits(log2_disconnected) +
         ", Pr[a client has >= t corrupt neighbours] <= " + bits(log2_corrupt_reach_t) +
         " (security target 2^-" + std::to_string(static_cast<int>(security_bits)) +
         "), Pr[a client has < t surviving neighbours, abort] <= " + bits(log2_survivors_below_t) +
         " (correctness target 2^-" + std::to_string(static_cast<int>(correctness_bits)) + ")";
  return out;
}

GraphParameters secagg_plus_parameters(std::uint32_t clients, double corrupt_rate,
                                       double dropout_rate, double security_bits,
                                       double correctness_bits) {
  dptune::require(clients >= 2, "secure aggregation: need at least 2 clients, got " + str(clients));
  if (!(corrupt_rate >= 0 && corrupt_rate < 1) || !(dropout_rate >= 0 && dropout_rate < 1) ||
      corrupt_rate + dropout_rate > 0.9)
    throw dptune::InvalidArgument(
        "secure aggregation: corrupt and dropout rates must be in [0, 1) with sum <= 0.9, got " +
        std::to_string(corrupt_rate) + " and " + std::to_string(dropout_rate));
  dptune::require(security_bits > 0 && correctness_bits > 0,
                  "secure aggregation: security and correctness bits must be positive");
  const double n = clients;
  // A tiny slack so that e.g. 0.05 · 1000 counts as 50, not 49.999….
  const auto corrupt = static_cast<std::uint32_t>(std::floor(corrupt_rate * n + 1e-9));
  const auto dropped = static_cast<std::uint32_t>(std::floor(dropout_rate * n + 1e-9));
  const std::uint32_t bad = corrupt + dropped;
  const double ln2 = std::log(2.0);
  // Each bad event gets 2^-(s+1) (two of them: 2^-s in all); per-client events a 1/n share.
  const double log_security = -(security_bits + 1) * ln2;
  const double log_per_client_security = log_security - std::log(n);
  const double log_per_client_correct = -correctness_bits * ln2 - std::log(n);

  GraphParameters g;
  g.clients = clients;
  g.corrupt_rate = corrupt_rate;
  g.dropout_rate = dropout_rate;
  g.security_bits = security_bits;
  g.correctness_bits = correctness_bits;
  for (std::uint32_t d = 2; d + 1 < clients; d += 2) {
    // Security 1: the honest survivors stay connected.
    double log_disc = -HUGE_VAL;
    if (d <= bad) {
      log_disc = std::log(n) + std::log(n - d - 1) - ln2;  // pairs of runs of d/2
      for (std::uint32_t i = 0; i < d; ++i) log_disc += std::log((bad - i) / (n - i));
    }
    if (log_disc > log_security) continue;
    // Security 2: t exceeds every client's corrupt neighbours (neighbours: d of the n - 1 others).
    std::uint32_t t = 1;
    while (log_hypergeometric_tail(clients - 1, corrupt, d, t) > log_per_client_security) ++t;
    t = std::max<std::uint32_t>(t, 2);
    if (t > d) continue;
    // Correctness: ≥ t neighbours survive, i.e. fewer than d - t + 1 of them drop.
    const double log_short = log_hypergeometric_tail(clients - 1, dropped, d, d - t + 1);
    if (log_short > log_per_client_correct) continue;
    g.degree = d;
    g.threshold = t;
    g.log2_disconnected = log_disc / ln2;
    g.log2_corrupt_reach_t =
        (log_hypergeometric_tail(clients - 1, corrupt, d, t) + std::log(n)) / ln2;
    g.log2_survivors_below_t = (log_short + std::log(n)) / ln2;
    if (std::isinf(g.log2_corrupt_reach_t)) g.log2_corrupt_reach_t = -HUGE_VAL;
    return g;
  }
  // Complete graph: every client's neighbours are all others; the counts are deterministic.
  g.complete = true;
  g.degree = clients - 1;
  g.threshold = std::max(corrupt + 1, (clients - 1) / 2 + 1);
  g.log2_disconnected = -HUGE_VAL;
  g.log2_corrupt_reach_t = -HUGE_VAL;
  g.log2_survivors_below_t = clients - 1 - dropped >= g.threshold ? -HUGE_VAL : 0.0;
  if (g.log2_survivors_below_t == 0.0)
    throw dptune::InvalidArgument("secure aggregation: no graph tolerates " + str(dropped) +
                                  " dropouts and " + str(corrupt) + " corrupt clients among " +
                                  str(clients) + " (threshold " + str(g.threshold) + ")");
  return g;
}

Config make_config(std::uint32_t clients, std::uint32_t length, std::uint32_t threshold,
                   std::uint32_t degree, std::uint64_t public_seed,
                   const std::array<std::uint8_t, 16>& session) {
  dptune::require(clients >= 2, "secure aggregation: need at least 2 clients, got " + str(clients));
  dptune::require(length >= 1, "secure aggregation: vector length must be >= 1");
  Config c;
  c.clients = clients;
  c.length = length;
  c.session = session;
  c.complete = degree == 0 || degree + 1 >= clients;
  c.neighbours =
      c.complete ? complete_graph(clients) : circulant_graph(clients, degree, public_seed);
  std::size_t dmin = clients;
  for (const auto& nb : c.neighbours) dmin = std::min(dmin, nb.size());
  c.threshold = threshold ? threshold : static_cast<std::uint32_t>(dmin / 2 + 1);
  dptune::require(c.threshold >= 1 && c.threshold <= dmin,
                  "secure aggregation: threshold t = " + str(c.threshold) + " must be in [1, " +
                      str(dmin) + "] (the number of neighbours per client)");
  return c;
}

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
  // shares[u]: shares of b_u (u ∈ U3) or of s_u (u ∈ U2 \ U3), by holder.
  std::map<PartyId, std::vector<shamir::Share>> shares;
  std::set<PartyId> responders;
  for (auto& m : transport.receive(kServer, kUnmaskShares)) {
    if (!contains(s.u3, m.from) || !responders.insert(m.from).second) continue;
    Reader r(m.payload, "unmasking shares of client " + str(m.from));
    const std::uint32_t count = r.u32();
    for (std::uint32_t i = 0; i < count; ++i) {
      const PartyId u = r.u32();
      const bool dropped = r.u8() == 1;
      shamir::Share share;
      share.x = std::uint64_t{m.from} + 1;
      for (auto& y : share.y) y = r.u64();
      if (contains(s.u2, u) && dropped == !contains(s.u3, u)) shares[u].push_back(share);
    }
    r.end();
  }
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

// ---- one-process driver -------------------------------------------------------------------------
Outcome run(std::shared_ptr<const Config> config, std::vector<Client>& clients,
            const std::vector<int>& drop_before, Transport& transport,
            const ParallelFor& parallel_for) {
  dptune::require(clients.size() == config->clients, "secure aggregation: " + str(clients.size()) +
                                                         " clients for a configuration of " +
                                                         str(config->clients));
  auto active = [&](std::size_t u, int round) {
    return u >= drop_before.size() || drop_before[u] > round;
  };
  Server server(config);
  parallel_for(clients.size(), [&](std::size_t u) {
    if (active(u, 0)) clients[u].advertise_keys(transport);
  });
  server.collect_keys(transport);
  parallel_for(clients.size(), [&](std::size_t u) {
    if (active(u, 1)) clients[u].share_keys(transport);
  });
  server.route_shares(transport);
  parallel_for(clients.size(), [&](std::size_t u) {
    if (active(u, 2)) clients[u].masked_input(transport);
  });
  server.collect_masked(transport);
  parallel_for(clients.size(), [&](std::size_t u) {
    if (active(u, 3)) clients[u].unmask(transport);
  });
  Outcome out;
  out.sum = server.unmask(transport, parallel_for);
  out.survivors = server.survivors();
  return out;
}

void two_threads(std::size_t n, const std::function<void(std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex m;
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(m);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::thread other(work);
  work();
  other.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace dptune::dp_hype::secagg
