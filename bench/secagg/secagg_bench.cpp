// Secure aggregation of DP-Hype's noisy votes (Bonawitz et al. 2017 masking, see
// plugins/tuner/dp_hype/include/dp_hype/secagg.hpp) in one process on two threads: key generation,
// key agreement, Shamir sharing, encryption, masking, routing and unmasking of n clients × p = 100.
//
//   build/bin/dptune_bench_secagg [--complete-up-to N] [n ...]   (default: 50 250 1000, N = 250)
//
// Each n runs with the SecAgg+ random Harary graph whose degree and threshold come from Bell et al.
// 2020's analysis (secagg_plus_parameters: 5% corrupt, 5% dropouts, 2^-40 security, 2^-20
// correctness; the plugin's default) and, for n ≤ N, with the complete graph (every pair, Bonawitz
// et al. 2017), each without and with 5% dropouts after key exchange.  X25519 dominates: 2 per
// client and neighbour (crypto_box_beforenm on the encryption keys, the mask-seed agreement), plus
// d per dropped client on the server.  The machine is shared, so besides wall-clock seconds the
// bench prints the process CPU seconds (user + system; CPU / 2 is what two idle cores would take),
// the load average before each row, and the cost of one X25519 right now.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include <sodium.h>

#include "dp_hype/secagg.hpp"
#include "dptune/rng.hpp"

namespace {

struct Figures {
  double seconds = 0, cpu_seconds = 0;
  std::size_t bytes = 0;
  bool exact = false;
};

double cpu_now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  double one = 0;
  f >> one;
  char b[16];
  std::snprintf(b, sizeof b, "%.1f", one);
  return b;
}

Figures once(std::uint32_t n, std::uint32_t p, std::uint32_t degree, std::uint32_t threshold,
             double drop_fraction, std::uint64_t seed) {
  using namespace dptune::dp_hype::secagg;
  dptune::Xoshiro256 rng(seed);
  // Inputs and client seeds are drawn before the clock starts (they are the clients' own data).
  std::vector<std::array<std::uint8_t, 32>> seeds(n);
  std::vector<std::vector<std::uint64_t>> inputs(n, std::vector<std::uint64_t>(p));
  std::vector<std::uint64_t> expected(p, 0);
  std::vector<int> drop(n, 4);
  const auto dropped = static_cast<std::uint32_t>(drop_fraction * n);
  for (std::uint32_t i = 0; i < dropped; ++i) drop[(i * 7919u) % n] = 2;
  for (std::uint32_t u = 0; u < n; ++u) {
    for (int i = 0; i < 4; ++i) {
      const std::uint64_t w = rng.next_u64();
      std::memcpy(seeds[u].data() + 8 * i, &w, 8);
    }
    for (auto& v : inputs[u]) v = encode(dptune::gaussian(rng, 2.0), n);
    if (drop[u] == 4)
      for (std::uint32_t i = 0; i < p; ++i) expected[i] += inputs[u][i];
  }
  std::array<std::uint8_t, 16> session{};
  for (auto& b : session) b = static_cast<std::uint8_t>(rng.next_u64());
  const std::uint64_t graph_seed = rng.next_u64();

  const auto started = std::chrono::steady_clock::now();
  const double cpu_started = cpu_now();
  auto config =
      std::make_shared<const Config>(make_config(n, p, threshold, degree, graph_seed, session));
  // Key generation is per-client work too: on both threads.
  std::vector<std::unique_ptr<Client>> made(n);
  two_threads(n, [&](std::size_t u) {
    made[u] = std::make_unique<Client>(static_cast<PartyId>(u), config, seeds[u]);
    made[u]->set_input(inputs[u]);
  });
  std::vector<Client> clients;
  clients.reserve(n);
  for (auto& c : made) clients.push_back(std::move(*c));
  InMemoryTransport transport;
  const Outcome out = run(config, clients, drop, transport, two_threads);
  Figures f;
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  f.cpu_seconds = cpu_now() - cpu_started;
  f.bytes = transport.bytes_sent();
  f.exact = out.sum == expected;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> sizes;
  std::uint32_t complete_up_to = 250;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--complete-up-to" && i + 1 < argc)
      complete_up_to = static_cast<std::uint32_t>(std::atoi(argv[++i]));
    else
      sizes.push_back(static_cast<std::uint32_t>(std::atoi(argv[i])));
  }
  if (sizes.empty()) sizes = {50, 250, 1000};
  const std::uint32_t p = 100;
  if (sodium_init() < 0) return 1;
  {
    // The unit cost that dominates: one X25519 scalar multiplication.
    unsigned char sk[32], pk[32], q[32];
    randombytes_buf(sk, 32);
    crypto_scalarmult_base(pk, sk);
    const int reps = 2000;
    const double c0 = cpu_now();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      if (crypto_scalarmult(q, sk, pk) != 0) return 1;
      sk[0] ^= q[0];
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps * 1e6;
    const double cpu = (cpu_now() - c0) / reps * 1e6;
    std::printf("X25519 (libsodium crypto_scalarmult) now: %.1f us wall, %.1f us CPU (load %s)\n",
                wall, cpu, loadavg().c_str());
  }
  std::printf(
      "secure aggregation, p = %u, 2 threads, one process; seconds include key generation, key\n"
      "agreement, Shamir sharing, encryption, masking, routing and unmasking.  cpu/2 = CPU "
      "seconds\n"
      "/ 2, the wall time on two idle cores.  X25519 = operations (client pairs + server).\n\n",
      p);
  std::printf("%6s  %-34s %5s %4s  %9s %9s %8s %9s %6s  %s\n", "n", "graph", "t", "drop", "wall s",
              "cpu/2 s", "X25519", "MB sent", "load", "exact");
  for (std::uint32_t n : sizes) {
    const auto g = dptune::dp_hype::secagg::secagg_plus_parameters(n, 0.05, 0.05);
    struct Variant {
      std::uint32_t degree, threshold;
      std::string name;
    };
    std::vector<Variant> variants;
    variants.push_back({g.complete ? 0 : g.degree, g.threshold,
                        g.complete ? std::string("SecAgg+ -> complete (small n)")
                                   : "SecAgg+ Harary d=" + std::to_string(g.degree)});
    if (n <= complete_up_to) variants.push_back({0, 0, "complete (Bonawitz)"});
    for (const auto& v : variants)
      for (double drop : {0.0, 0.05}) {
        const std::string load = loadavg();
        const Figures f = once(n, p, v.degree, v.threshold, drop, 1000 + n);
        const std::uint64_t d = v.degree ? v.degree : n - 1;
        const auto dropped = static_cast<std::uint64_t>(drop * n);
        const std::uint64_t x25519 = 2 * std::uint64_t{n} * d + dropped * d;
        const std::uint32_t t = v.threshold ? v.threshold : (n - 1) / 2 + 1;
        std::printf("%6u  %-34s %5u %3.0f%%  %9.3f %9.3f %8llu %9.2f %6s  %s\n", n, v.name.c_str(),
                    t, drop * 100, f.seconds, f.cpu_seconds / 2,
                    static_cast<unsigned long long>(x25519), static_cast<double>(f.bytes) / 1e6,
                    load.c_str(), f.exact ? "yes" : "NO");
        std::fflush(stdout);
      }
    if (n > complete_up_to)
      std::printf("%6u  complete (Bonawitz): skipped (n > --complete-up-to %u; ~%llu X25519)\n", n,
                  complete_up_to, static_cast<unsigned long long>(2ull * n * (n - 1)));
  }
  return 0;
}
