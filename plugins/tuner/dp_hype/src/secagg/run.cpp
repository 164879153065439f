// Secure aggregation: the four rounds in one process, clients as objects on a thread pool.
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "protocol.hpp"

namespace dptune::dp_hype::secagg {

// ---- one-process driver -------------------------------------------------------------------------
Outcome run(const std::shared_ptr<const Config>& config, std::vector<Client>& clients,
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
