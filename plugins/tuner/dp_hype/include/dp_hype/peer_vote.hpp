// DP-Hype's secure vote over the processes of a distributed run (the MPI executor's ranks),
// through the host's message channel (dptune::PeerChannel, ABI 2.9).  The protocol is the same
// code as in one process (secagg::Client and secagg::Server, Bonawitz et al. 2017, see
// secagg.hpp): only the Transport differs, PeerTransport below instead of InMemoryTransport.
//
// Roles: rank 0 runs the tuner and the server; the clients are dealt round-robin to ranks
// 1..N-1 (several per rank), which evaluate the candidates on their own clients' shards, vote,
// add their noise and take part in the protocol.  Rank 0 holds no client, so the server's
// process never sees a vote: what reaches it is the clients' public keys, ciphertexts it routes,
// masked inputs and Shamir shares (Bonawitz et al. 2017 §4).
//
// Why a host channel rather than MPI inside the plugin: the plugin stays a plugin of the SDK only
// (no MPI headers, no second MPI user in the process: the host already owns MPI with
// MPI_THREAD_SERIALIZED on one thread), the same tuner runs wherever the host has peers, and the
// host's heartbeats and lost-rank detection cover these messages too.
//
// Dropouts: a client whose messages of a round have not arrived when the server's round timeout
// (`round_timeout`) expires is a dropout; the server goes on with the others and removes the
// dropped clients' masks by Shamir reconstruction.  Fewer than the threshold: SecAggAbort, and
// every client rank is told to stop.  A rank that dies ends the MPI job (Open MPI aborts it); a
// rank that goes silent for DPTUNE_MPI_TIMEOUT is declared lost by the host, which ends the run.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dp_hype/chacha_rng.hpp"
#include "dp_hype/private_vote.hpp"
#include "dptune/plugin.hpp"

namespace dptune::dp_hype::peer {

/// The rank that holds client `client` among `ranks` ranks: round-robin over 1..ranks-1.
int rank_of(std::uint32_t client, int ranks);

/// What rank 0 sends every client rank at the start of a vote: public parameters only.
struct Plan {
  std::uint64_t run = 0;  // names this vote's messages (stale ones are ignored)
  std::uint32_t clients = 0, length = 0, k = 0, threshold = 0, degree = 0;
  std::uint64_t graph_seed = 0;
  std::array<std::uint8_t, 16> session{};
  ClientNoise noise;
  double round_timeout = 30;  // seconds the server waits for one round's messages
  /// Per client: the first protocol round it does not take part in (4: none).  A dropout made on
  /// the client's own rank: the server learns of it only by the messages that never come.
  std::vector<std::uint8_t> stop_before;
};

/// A client's vote and the input it hands to secure aggregation (client_input).
struct PreparedClient {
  std::vector<double> votes;
  ClientInput input;
};
/// Computes client `client`'s vote and input for `plan`, drawing its tie-breaks and noise from
/// `client_rng` (the client's own generator).
using MakeInput = std::function<PreparedClient(std::uint32_t client, const Plan& plan,
                                               ChaChaGenerator& client_rng)>;

/// Sees client `client`'s plaintext secure-aggregation input (`input`, the fixed-point words it
/// masks) and its votes (`votes`, encoded as secagg::encode(v, 1)) on its own rank, before the
/// protocol starts.
using ClientInputObserver = void (*)(std::uint32_t client, const std::vector<std::uint64_t>& input,
                                     const std::vector<std::uint64_t>& votes);
/// A seam for the test suite only: the test build of the plugin (tests/mpi) installs an observer
/// that writes the inputs to files, to check that the server's rank never receives them.  The
/// product never calls this, so a client's plaintext never leaves serve_clients there.
void set_client_input_observer(ClientInputObserver observer);

/// Rank 0: starts the client ranks with `plan`, waits until each has its inputs ready, and runs
/// the server's side of secure aggregation.  The client ranks must acknowledge the start within
/// plan.round_timeout seconds; their local evaluation may take as long as it needs (the host
/// detects lost ranks).  `bytes` counts the protocol payloads rank 0 received and sent.
SecureVoteResult server_vote(dptune::PeerChannel& channel, const Plan& plan);

/// A client rank (Tuner::serve_peer): waits for the start, prepares each of its clients with
/// `make_input` (each client's generator is a child of one root drawn from `rng`, so a seeded run
/// gives client j the same randomness whichever rank holds it) and takes part in the protocol.
/// Returns false when no start message came (nothing to do).
bool serve_clients(dptune::PeerChannel& channel, dptune::RandomBitGenerator& rng,
                   const MakeInput& make_input);

}  // namespace dptune::dp_hype::peer
