// Secure aggregation by pairwise additive masking with double masking and dropout recovery, after
// Bonawitz et al., "Practical Secure Aggregation for Privacy-Preserving Machine Learning" (CCS
// 2017), §4 (the honest-but-curious protocol of Figure 4, without the consistency-check round that
// only the actively secure variant needs).  DP-Hype (Liebenow et al. 2025, §I-A, Algorithm 1 line
// 11) needs the server to learn the sum of the clients' noisy votes and nothing else.
//
// Threat model covered: an honest-but-curious server (follows the protocol, sees every message it
// receives or routes, tries to learn individual inputs) and clients that drop out at any round,
// including after key exchange.  Not covered: an actively malicious server (it could lie about who
// dropped to two different clients; Bonawitz's round 3 signatures stop that), malicious clients
// (input validation, GOPA in Liebenow et al. 2025 Appendix A-B), or collusion of the server with ≥
// t clients.
//
// Rounds (messages travel only through a Transport; clients talk to the server only):
//   0 AdvertiseKeys  client → server: two X25519 public keys, c (encryption) and s (masking).
//                    server → clients: the public keys of all who answered (U1).
//   1 ShareKeys      client u draws a self-mask seed b_u and Shamir-shares (threshold t) b_u
//                    and its mask secret key s_u among its neighbours; each share is encrypted for
//                    its recipient with crypto_box (X25519 on the c keys, XSalsa20-Poly1305) and
//                    routed by the server, which cannot read it.  U2 = those who sent shares.
//   2 MaskedInput    y_u = x_u + PRG(b_u) + Σ_{v∈U2∩N(u)} ±PRG(s_uv) mod 2^64, where
//                    s_uv = BLAKE2b(X25519(s_u, S_v) ‖ session ‖ pair), + if u < v, − if u > v, and
//                    PRG = ChaCha20 keystream.  U3 = those who sent y_u.
//   3 Unmasking      each survivor, told U3, sends for every neighbour u ∈ U2 the share of b_u if
//                    u ∈ U3, else the share of s_u — never both for the same u, so the server never
//                    holds both masks of a client whose y_u it has (a late y_u stays masked).
//   server           reconstructs b_u (u ∈ U3) and s_u (u ∈ U2 \ U3) from ≥ t shares,
//                    recomputes the dropped clients' pairwise masks with the survivors, removes
//                    all masks: Σ_{U3} x_u.
// Fewer than t clients or shares at any step: SecAggAbort, with a message naming round and counts.
//
// Neighbour graphs: `complete` (every pair, Bonawitz) or a circulant graph of even degree d over a
// public random permutation (the sparse communication graph of SecAgg+, Bell et al. CCS 2020),
// which cuts key agreement from n - 1 to d X25519 operations per client.  With a sparse graph each
// client refuses to unmask if the survivors' graph is disconnected (the server could then learn
// partial sums).
//
// Sources (src/secagg/): protocol.hpp (message tags, wire format, masks: what both parties share),
// wire.cpp (transport, fixed point), masks.cpp, graph.cpp (graphs, SecAgg+ parameters, Config),
// client.cpp, server.cpp, run.cpp (the rounds in one process).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dp_hype/shamir.hpp"
#include "dptune/errors.hpp"

namespace dptune::dp_hype::secagg {

using PartyId = std::uint32_t;
inline constexpr PartyId kServer = std::numeric_limits<PartyId>::max();

struct Message {
  PartyId from = 0;
  PartyId to = 0;
  std::uint32_t round = 0;
  std::vector<std::uint8_t> payload;
};

/// Byte messages between parties.  `receive` returns (and removes) every message for `to` in
/// `round` delivered so far; protocol code calls it only after the round's senders have finished (a
/// barrier in one process; over MPI, a receive of the expected senders with a timeout that declares
/// the missing ones dropped).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void send(Message message) = 0;
  virtual std::vector<Message> receive(PartyId to, std::uint32_t round) = 0;
};

/// Thread-safe in-memory transport.  With `record`, keeps a copy of every message, so tests can
/// inspect exactly what each party (in particular the server) was sent.
class InMemoryTransport final : public Transport {
 public:
  explicit InMemoryTransport(bool record = false) : record_(record) {}
  void send(Message message) override;
  std::vector<Message> receive(PartyId to, std::uint32_t round) override;
  /// Copies of all messages sent so far (only with record = true).
  std::vector<Message> log() const;
  std::size_t bytes_sent() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<PartyId, std::uint32_t>, std::vector<Message>> queues_;
  std::vector<Message> log_;
  std::size_t bytes_ = 0;
  bool record_;
};

/// The protocol aborted cleanly (too few survivors or shares); nothing about the inputs was
/// revealed.
class SecAggAbort : public dptune::Error {
 public:
  using dptune::Error::Error;
};

// ---- fixed-point encoding -----------------------------------------------------------------------
/// Real values travel as round(x · 2^f) mod 2^64 (two's complement), f = 32 fractional bits.  Each
/// encoding rounds by at most 2^-(f+1) = 1.2e-10, so the decoded sum of n encodings differs from
/// the real sum by at most n · 2^-33 (1.2e-7 for n = 1000), far below the noise (σ ≥ 1 in practice)
/// and the vote granularity (1).  Integer votes are encoded exactly; dp_hype encodes each client's
/// vote and its noise as two separate encodings, so the rounding only touches the noise and never
/// depends on the data.  The sum cannot wrap: encode() rejects |x| ≥ 2^31 / n.
inline constexpr int kFractionBits = 32;
/// Bound on |decoded sum − real sum| for `parties` encodings.
double rounding_bound(std::size_t parties);
/// Throws dptune::InvalidArgument if |x| · n · 2^f would not fit in 63 bits or x is not finite.
std::uint64_t encode(double x, std::size_t parties);
double decode(std::uint64_t value);

// ---- configuration ------------------------------------------------------------------------------
struct Config {
  std::uint32_t clients = 0;
  std::uint32_t length = 0;     // vector length (p candidates)
  std::uint32_t threshold = 0;  // Shamir threshold t, 1 ≤ t ≤ smallest degree
  /// neighbours[u]: sorted ids of u's neighbours (not u itself); symmetric.
  std::vector<std::vector<PartyId>> neighbours;
  std::array<std::uint8_t, 16> session{};  // public, fresh per run; binds nonces and mask seeds
  bool complete = true;                    // neighbours is the complete graph
};

/// Every pair of clients are neighbours (Bonawitz et al. 2017).
std::vector<std::vector<PartyId>> complete_graph(std::uint32_t clients);
/// Circulant graph of even `degree` (each client linked to degree/2 clients on each side) over a
/// random permutation drawn from `public_seed` (SecAgg+, Bell et al. 2020).  degree ≥ clients - 1
/// gives the complete graph.
std::vector<std::vector<PartyId>> circulant_graph(std::uint32_t clients, std::uint32_t degree,
                                                  std::uint64_t public_seed);

/// SecAgg+ graph parameters (Bell, Bonawitz, Gascón, Lepoint, Raykova, "Secure Single-Server
/// Aggregation with (Poly)Logarithmic Overhead", CCS 2020, the random Harary graph of §3-4): the
/// smallest even degree d (< n - 1) and a Shamir threshold t such that, when at most ⌊γn⌋ clients
/// are corrupt (colluding with an honest-but-curious server) and at most ⌊δn⌋ drop out, placed
/// uniformly at random by the public random ring order,
///   (security)     Pr[the honest survivors' graph is disconnected]             ≤ 2^-(s+1), and
///                  Pr[some client has ≥ t corrupt neighbours] ≤ n · 2^-(s+1)/n  = 2^-(s+1),
///                  so the server learns nothing beyond sums of ≥ (1 − γ − δ)n inputs except with
///                  probability ≤ 2^-s (s = 40 statistical security bits);
///   (correctness)  Pr[some client has < t surviving neighbours] ≤ 2^-c (c = 20): the protocol
///                  aborts for lack of shares with probability ≤ 2^-c.
/// Disconnection bound: removing nodes disconnects a Harary graph H(n, d) only if two disjoint runs
/// of d/2 consecutive ring positions are all removed; a union bound over the ≤ n(n − d − 1)/2 pairs
/// of runs, each all-bad with probability (B)_d / (n)_d for B = ⌊γn⌋ + ⌊δn⌋ bad clients.  Corrupt
/// and surviving neighbour counts are hypergeometric (d draws from n).  t = (largest count of
/// corrupt neighbours not excluded) + 1, at least 2; d is accepted when t ≤ the smallest surviving
/// count not excluded.  If no d < n − 1 works (small n or large γ + δ) the complete graph is
/// returned with t = ⌊γn⌋ + 1 (Bonawitz et al. 2017: t must exceed the corrupt clients) — but at
/// least ⌊(n−1)/2⌋ + 1 — and the same checks.  Throws dptune::InvalidArgument for γ, δ outside
/// [0, 1) or γ + δ > 0.9.
struct GraphParameters {
  std::uint32_t clients = 0;
  std::uint32_t degree = 0;  // n - 1 when complete
  std::uint32_t threshold = 0;
  bool complete = false;
  double corrupt_rate = 0, dropout_rate = 0;
  double security_bits = 40, correctness_bits = 20;
  /// log2 of the bounds achieved: Pr[honest survivors disconnected], Pr[some client has ≥ t
  /// corrupt neighbours], Pr[some client has < t surviving neighbours].
  double log2_disconnected = 0, log2_corrupt_reach_t = 0, log2_survivors_below_t = 0;
  std::string describe() const;
};
GraphParameters secagg_plus_parameters(std::uint32_t clients, double corrupt_rate,
                                       double dropout_rate, double security_bits = 40,
                                       double correctness_bits = 20);

/// Config with the default threshold t = ⌊d_min / 2⌋ + 1 when `threshold` is 0.
Config make_config(std::uint32_t clients, std::uint32_t length, std::uint32_t threshold,
                   std::uint32_t degree, std::uint64_t public_seed,
                   const std::array<std::uint8_t, 16>& session);

// ---- parties ------------------------------------------------------------------------------------
class Client {
 public:
  /// `seed`: 32 secret bytes from which the client draws its keys, self-mask seed and Shamir
  /// coefficients (a ChaCha20 keystream).
  Client(PartyId id, std::shared_ptr<const Config> config,
         const std::array<std::uint8_t, 32>& seed);
  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  PartyId id() const;
  /// The encoded input (length values mod 2^64), before round 2.
  void set_input(std::vector<std::uint64_t> encoded);
  void advertise_keys(Transport& transport);  // round 0
  void share_keys(Transport& transport);      // round 1
  void masked_input(Transport& transport);    // round 2
  void unmask(Transport& transport);          // round 3

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The server sees only what arrives through the transport.
class Server {
 public:
  explicit Server(std::shared_ptr<const Config> config);
  ~Server();
  void collect_keys(Transport& transport);    // after round 0: U1, broadcast keys
  void route_shares(Transport& transport);    // after round 1: U2, forward ciphertexts
  void collect_masked(Transport& transport);  // after round 2: U3, broadcast U3
  /// After round 3: Σ_{u∈U3} x_u mod 2^64.  Reconstructions and the dropped clients' pairwise
  /// masks are computed on `parallel_for` when given (independent per client), summed in order.
  std::vector<std::uint64_t> unmask(
      Transport& transport,
      const std::function<void(std::size_t, const std::function<void(std::size_t)>&)>&
          parallel_for = {});
  /// Clients whose input is in the sum (U3), after collect_masked.
  const std::vector<PartyId>& survivors() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Runs the four rounds with clients as objects on `parallel_for` (the tuner's thread pool) and the
/// server in between.  `drop_before[u]` = first round client u does not take part in (0..3; 4 or
/// absent: never drops).  Returns the sum of the survivors' inputs and the survivors.
struct Outcome {
  std::vector<std::uint64_t> sum;
  std::vector<PartyId> survivors;
};
using ParallelFor = std::function<void(std::size_t, const std::function<void(std::size_t)>&)>;
/// A ParallelFor on the calling thread plus one more (tests and benchmarks; the tuner uses the
/// host's executor).  The first exception is rethrown after both threads finish.
void two_threads(std::size_t n, const std::function<void(std::size_t)>& body);
Outcome run(const std::shared_ptr<const Config>& config, std::vector<Client>& clients,
            const std::vector<int>& drop_before, Transport& transport,
            const ParallelFor& parallel_for);

}  // namespace dptune::dp_hype::secagg
