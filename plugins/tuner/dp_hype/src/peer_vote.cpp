#include "dp_hype/peer_vote.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "dptune/errors.hpp"

namespace dptune::dp_hype::peer {

namespace {

using Clock = std::chrono::steady_clock;

// Message kinds on the channel; every message starts with its kind (1 byte) and the run (8 bytes).
enum Kind : std::uint8_t {
  kStart = 1,     // 0 → client rank: the plan
  kAccepted = 2,  // client rank → 0: the plan arrived
  kReady = 3,     // client rank → 0: its clients' inputs are ready (1 byte: all noise exact)
  kFailed = 4,    // client rank → 0: it could not prepare its clients (the error)
  kSecagg = 5,    // either way: one secagg::Message (from, to, round, payload)
  kAbort = 6,     // 0 → client rank: the vote failed, stop
};

class Out {
 public:
  Out(Kind kind, std::uint64_t run) {
    u8(kind);
    u64(run);
  }
  Out& u8(std::uint8_t v) { return raw(&v, 1); }
  Out& u32(std::uint32_t v) { return raw(&v, 4); }
  Out& u64(std::uint64_t v) { return raw(&v, 8); }
  Out& f64(double v) { return raw(&v, 8); }
  Out& raw(const void* p, std::size_t n) {
    bytes_.append(static_cast<const char*>(p), n);
    return *this;
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class In {
 public:
  explicit In(std::string_view bytes) : bytes_(bytes) {}
  std::uint8_t u8() { return get<std::uint8_t>(); }
  std::uint32_t u32() { return get<std::uint32_t>(); }
  std::uint64_t u64() { return get<std::uint64_t>(); }
  double f64() { return get<double>(); }
  void raw(void* p, std::size_t n) {
    if (n > bytes_.size() - at_) throw dptune::Error("dp_hype: truncated peer message");
    std::memcpy(p, bytes_.data() + at_, n);
    at_ += n;
  }
  std::string_view rest() {
    const std::string_view r = bytes_.substr(at_);
    at_ = bytes_.size();
    return r;
  }
  void end() const {
    if (at_ != bytes_.size()) throw dptune::Error("dp_hype: trailing bytes in a peer message");
  }

 private:
  template <class T>
  T get() {
    T v;
    raw(&v, sizeof v);
    return v;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
};

std::string encode_plan(const Plan& p) {
  Out o(kStart, p.run);
  o.u32(p.clients).u32(p.length).u32(p.k).u32(p.threshold).u32(p.degree).u64(p.graph_seed);
  o.raw(p.session.data(), p.session.size());
  o.f64(p.noise.sensitivity).f64(p.noise.noise_multiplier).f64(p.noise.stddev);
  o.u64(p.noise.honest_shares).f64(p.round_timeout);
  o.raw(p.stop_before.data(), p.stop_before.size());
  return o.take();
}

Plan decode_plan(In& in, std::uint64_t run) {
  Plan p;
  p.run = run;
  p.clients = in.u32();
  p.length = in.u32();
  p.k = in.u32();
  p.threshold = in.u32();
  p.degree = in.u32();
  p.graph_seed = in.u64();
  in.raw(p.session.data(), p.session.size());
  p.noise.sensitivity = in.f64();
  p.noise.noise_multiplier = in.f64();
  p.noise.stddev = in.f64();
  p.noise.honest_shares = in.u64();
  p.round_timeout = in.f64();
  p.stop_before.resize(p.clients);
  in.raw(p.stop_before.data(), p.stop_before.size());
  in.end();
  return p;
}

std::shared_ptr<const secagg::Config> config_of(const Plan& p) {
  return std::make_shared<const secagg::Config>(
      secagg::make_config(p.clients, p.length, p.threshold, p.degree, p.graph_seed, p.session));
}

// secagg::Transport on the channel.  receive() pulls channel messages into per-(party, round)
// queues until what the caller waits for is there or the round's deadline passes: for the
// server, a message from every client that answered its previous round (all clients for the
// first), and whoever is missing at the deadline has dropped out (Bonawitz et al. 2017 §4: the
// server proceeds with the survivors); for a client, the server's one message.  Other kinds go to
// `other`.
class PeerTransport final : public secagg::Transport {
 public:
  using Other = std::function<void(const dptune::PeerMessage&, Kind, In&)>;
  PeerTransport(dptune::PeerChannel& channel, std::uint64_t run, std::uint32_t clients, double wait,
                Other other)
      : channel_(channel),
        run_(run),
        wait_(wait),
        expected_(clients, 1),
        other_(std::move(other)) {}

  void send(secagg::Message m) override {
    bytes_ += m.payload.size();
    const int to = m.to == secagg::kServer ? 0 : rank_of(m.to, channel_.size());
    Out o(kSecagg, run_);
    o.u32(m.from).u32(m.to).u32(m.round).raw(m.payload.data(), m.payload.size());
    channel_.send(to, o.take());
  }

  std::vector<secagg::Message> receive(secagg::PartyId to, std::uint32_t round) override {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(wait_));
    while (!complete(to, round) && !stopped_) {
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      if (left <= 0) break;
      pump(left);
    }
    std::vector<secagg::Message> out = std::move(queues_[{to, round}]);
    queues_.erase({to, round});
    if (to == secagg::kServer) {
      // The next server round waits for these senders only (U1 ⊇ U2 ⊇ U3).
      std::fill(expected_.begin(), expected_.end(), 0);
      for (const auto& m : out) expected_[m.from] = 1;
    }
    return out;
  }

  /// Takes one channel message (waiting at most `seconds`) and files it.
  void pump(double seconds) {
    const auto m = channel_.receive(seconds);
    if (!m) return;
    In in(m->payload);
    const auto kind = static_cast<Kind>(in.u8());
    if (in.u64() != run_) return;  // another vote's message
    if (kind == kAbort && m->from == 0) stopped_ = true;
    if (kind != kSecagg) return other_(*m, kind, in);
    secagg::Message s;
    s.from = in.u32();
    s.to = in.u32();
    s.round = in.u32();
    const std::string_view body = in.rest();
    s.payload.assign(body.begin(), body.end());
    // A rank speaks only for its own clients, and only the server (rank 0) for the server.
    const bool genuine =
        s.from == secagg::kServer
            ? m->from == 0
            : s.from < expected_.size() && rank_of(s.from, channel_.size()) == m->from;
    if (!genuine) return;
    bytes_ += s.payload.size();
    queues_[{s.to, s.round}].push_back(std::move(s));
  }

  bool stopped() const { return stopped_; }
  std::size_t bytes() const { return bytes_; }

 private:
  bool complete(secagg::PartyId to, std::uint32_t round) {
    const auto it = queues_.find({to, round});
    if (to != secagg::kServer) return it != queues_.end() && !it->second.empty();
    std::vector<char> seen(expected_.size(), 0);
    if (it != queues_.end())
      for (const auto& m : it->second) seen[m.from] = 1;
    for (std::size_t u = 0; u < expected_.size(); ++u)
      if (expected_[u] && !seen[u]) return false;
    return true;
  }

  dptune::PeerChannel& channel_;
  std::uint64_t run_;
  double wait_;
  std::vector<char> expected_;
  Other other_;
  std::map<std::pair<secagg::PartyId, std::uint32_t>, std::vector<secagg::Message>> queues_;
  bool stopped_ = false;
  std::size_t bytes_ = 0;
};

ClientInputObserver client_input_observer = nullptr;

/// Hands client `client`'s plaintext to the test suite's observer, when one is installed.
void observe_client(std::uint32_t client, const PreparedClient& c) {
  if (!client_input_observer) return;
  std::vector<std::uint64_t> votes;
  votes.reserve(c.votes.size());
  for (const double v : c.votes) votes.push_back(secagg::encode(v, 1));
  client_input_observer(client, c.input.encoded, votes);
}

}  // namespace

void set_client_input_observer(ClientInputObserver observer) { client_input_observer = observer; }

int rank_of(std::uint32_t client, int ranks) {
  dptune::require(ranks >= 2, "dp_hype: a vote over ranks needs at least 2 ranks");
  return 1 + static_cast<int>(client % static_cast<std::uint32_t>(ranks - 1));
}

SecureVoteResult server_vote(dptune::PeerChannel& channel, const Plan& plan) {
  dptune::require(plan.stop_before.size() == plan.clients, "dp_hype: one stop round per client");
  std::set<int> holders, accepted, ready;
  for (std::uint32_t j = 0; j < plan.clients; ++j) holders.insert(rank_of(j, channel.size()));
  bool exact = true;
  std::string failure;
  PeerTransport transport(channel, plan.run, plan.clients, plan.round_timeout,
                          [&](const dptune::PeerMessage& m, Kind kind, In& in) {
                            if (!holders.count(m.from)) return;
                            if (kind == kAccepted) accepted.insert(m.from);
                            if (kind == kReady) {
                              exact = exact && in.u8() == 1;
                              ready.insert(m.from);
                            }
                            if (kind == kFailed && failure.empty())
                              failure = "dp_hype: client rank " + std::to_string(m.from) + ": " +
                                        std::string(in.rest());
                          });
  try {
    const std::string start = encode_plan(plan);
    for (int r : holders) channel.send(r, start);
    const auto accept_by = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(plan.round_timeout));
    while (ready.size() < holders.size()) {
      if (!failure.empty()) throw dptune::PluginError(failure);
      if (accepted.size() < holders.size() && Clock::now() > accept_by)
        throw dptune::PluginError("dp_hype: " + std::to_string(holders.size() - accepted.size()) +
                                  " client rank(s) did not take up the vote within " +
                                  std::to_string(plan.round_timeout) + " s (round_timeout)");
      transport.pump(0.2);
    }
    secagg::Server server(config_of(plan));
    server.collect_keys(transport);
    server.route_shares(transport);
    server.collect_masked(transport);
    const std::vector<std::uint64_t> sum = server.unmask(transport);
    SecureVoteResult result;
    result.noisy_votes.resize(sum.size());
    for (std::size_t j = 0; j < sum.size(); ++j) result.noisy_votes[j] = secagg::decode(sum[j]);
    result.survivors = server.survivors();
    result.exact_noise = exact;
    result.rounding_bound = exact ? 0.0 : secagg::rounding_bound(result.survivors.size());
    result.bytes = transport.bytes();
    return result;
  } catch (...) {
    // The client ranks stop waiting for the server at once (a lost rank ends the job anyway).
    for (int r : holders) channel.send(r, Out(kAbort, plan.run).take());
    throw;
  }
}

namespace {

// Each of this rank's clients takes part in round 0..3 (secagg::Client's four steps), unless its
// plan stops it first or it failed an earlier round (then it has dropped out).
void take_part(std::vector<secagg::Client>& clients, const std::vector<std::uint8_t>& stop,
               PeerTransport& transport) {
  using Step = void (secagg::Client::*)(secagg::Transport&);
  const Step steps[4] = {&secagg::Client::advertise_keys, &secagg::Client::share_keys,
                         &secagg::Client::masked_input, &secagg::Client::unmask};
  std::vector<char> active(clients.size(), 1);
  for (std::uint32_t round = 0; round < 4 && !transport.stopped(); ++round)
    for (std::size_t i = 0; i < clients.size() && !transport.stopped(); ++i) {
      if (!active[i] || stop[i] <= round) {
        active[i] = 0;
        continue;
      }
      try {
        (clients[i].*steps[round])(transport);
      } catch (const std::exception&) {
        // E.g. the server's message never came, or the server aborted: this client has dropped
        // out, which is all the server needs to know (it sees the missing messages).
        active[i] = 0;
      }
    }
}

// Whether rank 0 called this vote off (it failed, e.g. another rank could not prepare): checked
// between clients while they prepare, so a long local evaluation stops early.  Nothing else is
// due before this rank reports ready.
bool called_off(dptune::PeerChannel& channel, std::uint64_t run) {
  while (const auto m = channel.receive(0)) {
    In in(m->payload);
    const auto kind = static_cast<Kind>(in.u8());
    if (kind == kAbort && m->from == 0 && in.u64() == run) return true;
  }
  return false;
}

}  // namespace

bool serve_clients(dptune::PeerChannel& channel, dptune::RandomBitGenerator& rng,
                   const MakeInput& make_input) {
  // The message that started this part is waiting; anything else before a start is stale.
  std::optional<Plan> plan;
  while (!plan) {
    const auto m = channel.receive(1.0);
    if (!m) return false;
    In in(m->payload);
    const auto kind = static_cast<Kind>(in.u8());
    const std::uint64_t run = in.u64();
    if (kind == kStart && m->from == 0) plan = decode_plan(in, run);
  }
  channel.send(0, Out(kAccepted, plan->run).take());
  std::vector<secagg::Client> clients;
  std::vector<std::uint8_t> stop;
  bool exact = true;
  try {
    const auto config = config_of(*plan);
    // One root per rank and vote, children per client (ChaChaGenerator::child): under a seed the
    // root is the same on every rank, so client j's randomness does not depend on where it runs.
    const auto root = ChaChaGenerator::derive(rng, "dp_hype clients").bytes32();
    for (std::uint32_t j = 0; j < plan->clients; ++j) {
      if (rank_of(j, channel.size()) != channel.rank()) continue;
      if (called_off(channel, plan->run)) return true;
      ChaChaGenerator own = ChaChaGenerator::child(root, rng.cryptographically_secure(), plan->run,
                                                   j, "dp_hype client " + std::to_string(j));
      PreparedClient prepared = make_input(j, *plan, own);
      observe_client(j, prepared);
      exact = exact && prepared.input.exact_noise;
      clients.emplace_back(j, config, ChaChaGenerator::derive(own, "keys").bytes32());
      clients.back().set_input(std::move(prepared.input.encoded));
      stop.push_back(plan->stop_before.at(j));
    }
  } catch (const std::exception& e) {
    channel.send(0, Out(kFailed, plan->run).raw(e.what(), std::strlen(e.what())).take());
    return true;
  }
  channel.send(0, Out(kReady, plan->run).u8(exact ? 1 : 0).take());
  // A client waits for the server's answer to a round: the server's own wait for the slowest
  // client, its work, and slack.
  const double wait = 2 * plan->round_timeout + 60;
  PeerTransport transport(channel, plan->run, plan->clients, wait,
                          [](const dptune::PeerMessage&, Kind, In&) {});
  take_part(clients, stop, transport);
  return true;
}

}  // namespace dptune::dp_hype::peer
