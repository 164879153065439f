// DP-Hype's vote over peers (plugins/tuner/dp_hype/include/dp_hype/peer_vote.hpp) with the ranks
// as threads on an in-memory dptune::PeerChannel: the same protocol the MPI executor carries
// (tests/mpi/mpi_test.sh runs it over mpirun).
#include <doctest/doctest.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "dp_hype/peer_vote.hpp"

namespace {

/// Ranks as threads: one inbox per rank; rank 0's inbox is also recorded.
class Hub {
 public:
  explicit Hub(int ranks) : boxes_(static_cast<std::size_t>(ranks)) {}
  class End final : public dptune::PeerChannel {
   public:
    End(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(hub_.boxes_.size()); }
    void send(int to, std::string payload) override {
      std::lock_guard lock(hub_.mutex_);
      if (to == 0) hub_.seen_by_0_.push_back(payload);
      hub_.boxes_.at(static_cast<std::size_t>(to)).push_back({rank_, std::move(payload)});
      hub_.wake_.notify_all();
    }
    std::optional<dptune::PeerMessage> receive(double seconds) override {
      std::unique_lock lock(hub_.mutex_);
      auto& box = hub_.boxes_[static_cast<std::size_t>(rank_)];
      hub_.wake_.wait_for(lock, std::chrono::duration<double>(seconds),
                          [&] { return !box.empty(); });
      if (box.empty()) return std::nullopt;
      auto m = std::move(box.front());
      box.pop_front();
      return m;
    }

   private:
    Hub& hub_;
    int rank_;
  };
  std::vector<std::string> seen_by_0() {
    std::lock_guard lock(mutex_);
    return seen_by_0_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::deque<dptune::PeerMessage>> boxes_;
  std::vector<std::string> seen_by_0_;
};

dptune::dp_hype::peer::Plan plan_for(std::uint32_t clients, std::uint32_t length) {
  dptune::dp_hype::peer::Plan plan;
  plan.run = 0x1234;
  plan.clients = clients;
  plan.length = length;
  plan.k = 1;
  plan.graph_seed = 99;
  plan.session[0] = 7;
  plan.round_timeout = 0.5;
  plan.stop_before.assign(clients, 4);
  return plan;
}

// Client j votes for candidate j mod length and adds "noise" j / 4 - 1/4 to every entry (exact in
// fixed point): inputs the test knows.
dptune::dp_hype::peer::PreparedClient input_of(std::uint32_t j,
                                               const dptune::dp_hype::peer::Plan& plan) {
  dptune::dp_hype::peer::PreparedClient c;
  c.votes.assign(plan.length, 0.0);
  c.votes[j % plan.length] = 1.0;
  c.input.exact_noise = true;
  for (std::uint32_t i = 0; i < plan.length; ++i)
    c.input.encoded.push_back(
        dptune::dp_hype::secagg::encode(c.votes[i], std::size_t{2} * plan.clients) +
        dptune::dp_hype::secagg::encode(j / 4.0 - 0.25, std::size_t{2} * plan.clients));
  return c;
}

struct Run {
  dptune::dp_hype::SecureVoteResult result;
  std::vector<std::string> seen_by_0;
  std::vector<std::vector<std::uint64_t>> inputs;
};

Run vote(int ranks, const dptune::dp_hype::peer::Plan& plan) {
  Hub hub(ranks);
  Run run;
  run.inputs.resize(plan.clients);
  std::mutex inputs_mutex;
  std::vector<std::thread> workers;
  for (int r = 1; r < ranks; ++r)
    workers.emplace_back([&, r] {
      Hub::End end(hub, r);
      dptune::Xoshiro256 rng(5, static_cast<std::uint64_t>(r));
      dptune::dp_hype::peer::serve_clients(
          end, rng,
          [&](std::uint32_t j, const dptune::dp_hype::peer::Plan& p,
              dptune::dp_hype::ChaChaGenerator&) {
            auto c = input_of(j, p);
            std::lock_guard lock(inputs_mutex);
            run.inputs[j] = c.input.encoded;
            return c;
          });
    });
  Hub::End server(hub, 0);
  std::exception_ptr error;
  try {
    run.result = dptune::dp_hype::peer::server_vote(server, plan);
  } catch (...) {
    error = std::current_exception();
  }
  // The client ranks return by themselves (told to stop on an abort).
  for (auto& t : workers) t.join();
  if (error) std::rethrow_exception(error);
  run.seen_by_0 = hub.seen_by_0();
  return run;
}

void check_sum(const Run& run, const std::vector<std::uint32_t>& survivors) {
  CHECK(run.result.survivors == survivors);
  for (std::size_t i = 0; i < run.result.noisy_votes.size(); ++i) {
    std::uint64_t sum = 0;
    for (auto j : survivors) sum += run.inputs[j][i];
    CHECK(run.result.noisy_votes[i] == dptune::dp_hype::secagg::decode(sum));
  }
  // Rank 0 never receives a client's input (any offset of any payload).
  for (const auto& input : run.inputs) {
    const std::string bytes(reinterpret_cast<const char*>(input.data()), input.size() * 8);
    for (const auto& payload : run.seen_by_0) CHECK(payload.find(bytes) == std::string::npos);
  }
}

}  // namespace

TEST_CASE("dp_hype over peers: the server's sum is the clients' inputs, none seen in the clear") {
  const auto plan = plan_for(5, 3);
  const Run run = vote(3, plan);
  check_sum(run, {0, 1, 2, 3, 4});
  // Decoded: votes 2, 2, 1 plus five noise shares summing to 10/4 - 5/4.
  CHECK(run.result.noisy_votes == std::vector<double>{3.25, 3.25, 2.25});
  CHECK(run.result.exact_noise);
  CHECK(dptune::dp_hype::peer::rank_of(0, 3) == 1);
  CHECK(dptune::dp_hype::peer::rank_of(1, 3) == 2);
  CHECK(dptune::dp_hype::peer::rank_of(4, 3) == 1);
}

TEST_CASE("dp_hype over peers: a client that stops after sharing keys is recovered by Shamir") {
  auto plan = plan_for(5, 3);
  plan.stop_before[1] = 2;  // no masked input: the server finds out by its round timeout
  const Run run = vote(4, plan);
  check_sum(run, {0, 2, 3, 4});
}

TEST_CASE("dp_hype over peers: too few survivors abort and release the client ranks") {
  auto plan = plan_for(4, 2);
  plan.threshold = 3;
  plan.stop_before[0] = plan.stop_before[2] = 1;  // rank 1 (clients 0 and 2) never shares keys
  CHECK_THROWS_WITH_AS(vote(3, plan),
                       doctest::Contains("only 2 of 4 clients shared their keys (round 1)"),
                       dptune::dp_hype::secagg::SecAggAbort);
}
