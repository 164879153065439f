// Secure aggregation: neighbour graphs (complete, Bonawitz et al. 2017; circulant, SecAgg+ of
// Bell et al. 2020), the SecAgg+ degree and threshold analysis, and the protocol configuration.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "dp_hype/chacha_rng.hpp"
#include "dptune/rng.hpp"
#include "protocol.hpp"

namespace dptune::dp_hype::secagg {

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

}  // namespace dptune::dp_hype::secagg
