// Secure aggregation (Bonawitz et al. 2017): exact sums with and without dropouts, what the server
// sees, clean aborts below the threshold, fixed-point encoding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "dp_hype/chacha_rng.hpp"
#include "dp_hype/secagg.hpp"
#include "dptune/rng.hpp"
#include "support.hpp"

using namespace dptune::dp_hype::secagg;

namespace {

struct Run {
  std::shared_ptr<const Config> config;
  std::vector<Client> clients;
  std::vector<std::vector<std::uint64_t>> inputs;
};

Run setup(std::uint32_t n, std::uint32_t p, std::uint32_t t, std::uint32_t degree,
          std::uint64_t seed, bool small_inputs = false) {
  dptune::Xoshiro256 rng(seed);
  std::array<std::uint8_t, 16> session{};
  for (auto& b : session) b = static_cast<std::uint8_t>(rng.next_u64());
  Run r;
  r.config = std::make_shared<const Config>(make_config(n, p, t, degree, rng.next_u64(), session));
  for (std::uint32_t u = 0; u < n; ++u) {
    dptune::dp_hype::ChaChaGenerator keys(std::array<std::uint8_t, 32>{}, false, "test");
    std::array<std::uint8_t, 32> s{};
    for (int i = 0; i < 4; ++i) {
      const std::uint64_t w = rng.next_u64();
      std::memcpy(s.data() + 8 * i, &w, 8);
    }
    r.clients.emplace_back(u, r.config, s);
    std::vector<std::uint64_t> x(p);
    for (auto& v : x)
      v = small_inputs ? encode(static_cast<double>(rng.next_u64() % 2), n) : rng.next_u64();
    r.inputs.push_back(x);
    r.clients.back().set_input(x);
  }
  return r;
}

std::vector<std::uint64_t> plain_sum(const Run& r, const std::vector<PartyId>& who) {
  std::vector<std::uint64_t> s(r.config->length, 0);
  for (PartyId u : who)
    for (std::size_t i = 0; i < s.size(); ++i) s[i] += r.inputs[u][i];  // mod 2^64
  return s;
}

}  // namespace

TEST_CASE("secagg: the server's sum equals the plain sum mod 2^64 (no dropouts)") {
  for (std::uint32_t n : {2u, 3u, 17u}) {
    Run r = setup(n, 33, 0, 0, 100 + n);
    InMemoryTransport transport;
    const Outcome out = run(r.config, r.clients, {}, transport, dp_hype_test::two_threads);
    REQUIRE(out.survivors.size() == n);
    CHECK(out.sum == plain_sum(r, out.survivors));
  }
}

TEST_CASE("secagg: dropouts after key exchange are unmasked from the survivors' shares") {
  const std::uint32_t n = 12;
  Run r = setup(n, 40, 6, 0, 7);
  std::vector<int> drop(n, 4);
  drop[1] = 1;  // advertised keys, never shared them (U1 only)
  drop[4] = 2;  // shared keys, dropped before sending its masked input: masks recovered
  drop[7] = 2;
  drop[9] = 3;   // sent its masked input, then dropped: still in the sum, self-mask recovered
  drop[11] = 0;  // never showed up
  InMemoryTransport transport;
  const Outcome out = run(r.config, r.clients, drop, transport, dp_hype_test::two_threads);
  const std::vector<PartyId> expected{0, 2, 3, 5, 6, 8, 9, 10};
  CHECK(out.survivors == expected);
  CHECK(out.sum == plain_sum(r, expected));
}

TEST_CASE("secagg: SecAgg+ circulant graph, with and without dropouts") {
  const std::uint32_t n = 30;
  const auto g = circulant_graph(n, 8, 99);
  for (std::uint32_t u = 0; u < n; ++u) {
    CHECK(g[u].size() == 8);
    for (PartyId v : g[u]) CHECK(std::count(g[v].begin(), g[v].end(), u) == 1);  // symmetric
  }
  Run r = setup(n, 16, 0, 8, 11);
  CHECK(r.config->threshold == 5);
  std::vector<int> drop(n, 4);
  drop[3] = 2;
  drop[17] = 2;
  InMemoryTransport transport;
  const Outcome out = run(r.config, r.clients, drop, transport, dp_hype_test::two_threads);
  CHECK(out.survivors.size() == n - 2);
  CHECK(out.sum == plain_sum(r, out.survivors));
}

TEST_CASE("secagg: with a sparse graph, clients refuse to unmask a disconnected survivor graph") {
  // Degree 2 is a ring: dropping two non-adjacent clients cuts it into two arcs, whose partial sums
  // the server could otherwise learn.
  const std::uint32_t n = 12;
  Run r = setup(n, 4, 0, 2, 21);
  CHECK(r.config->threshold == 2);
  const auto& ring = r.config->neighbours;
  PartyId w = 1;
  while (w == ring[0][0] || w == ring[0][1]) ++w;
  std::vector<int> drop(n, 4);
  drop[0] = 2;
  drop[w] = 2;
  InMemoryTransport transport;
  CHECK_THROWS_WITH_AS(run(r.config, r.clients, drop, transport, dp_hype_test::two_threads),
                       doctest::Contains("disconnected"), SecAggAbort);
}

TEST_CASE("secagg: the server only ever holds masked vectors, and they look uniform") {
  const std::uint32_t n = 20, p = 100;
  Run r = setup(n, p, 0, 0, 2024, /*small_inputs=*/true);  // inputs are 0/1 votes in fixed point
  std::vector<int> drop(n, 4);
  drop[5] = 2;
  InMemoryTransport transport(/*record=*/true);
  const Outcome out = run(r.config, r.clients, drop, transport, dp_hype_test::two_threads);
  CHECK(out.sum == plain_sum(r, out.survivors));

  std::vector<std::size_t> histogram(256, 0);
  std::size_t bytes = 0, masked_messages = 0;
  std::map<PartyId, std::set<int>> share_kinds;  // per owner: kinds of shares the server got
  for (const Message& m : transport.log()) {
    if (m.to != kServer) continue;
    if (m.round == 4) {  // masked inputs
      ++masked_messages;
      REQUIRE(m.payload.size() == p * 8);
      std::vector<std::uint64_t> y(p);
      std::memcpy(y.data(), m.payload.data(), m.payload.size());
      CHECK(y != r.inputs[m.from]);
      std::size_t equal = 0;
      for (std::size_t i = 0; i < p; ++i) equal += y[i] == r.inputs[m.from][i];
      CHECK(equal == 0);
      for (auto b : m.payload) ++histogram[b], ++bytes;
    }
    // No message to the server contains a client's input vector in the clear.
    for (std::uint32_t u = 0; u < n; ++u) {
      const auto* needle = reinterpret_cast<const std::uint8_t*>(r.inputs[u].data());
      CHECK(std::search(m.payload.begin(), m.payload.end(), needle, needle + 64) ==
            m.payload.end());
    }
    if (m.round == 6) {  // unmasking shares: owner id (4 bytes), kind (1), 5 chunks
      std::size_t pos = 4;
      std::uint32_t count;
      std::memcpy(&count, m.payload.data(), 4);
      for (std::uint32_t i = 0; i < count; ++i) {
        PartyId owner;
        std::memcpy(&owner, m.payload.data() + pos, 4);
        share_kinds[owner].insert(m.payload[pos + 4]);
        pos += 4 + 1 + 40;
      }
    }
  }
  CHECK(masked_messages == n - 1);
  // Chi-square of the byte histogram of all masked vectors: 255 degrees of freedom; the 0.999
  // quantile is 330.5.  Inputs are all 0 or 2^32, so without masks 7 of 8 bytes would be 0.
  const double expected = static_cast<double>(bytes) / 256;
  double chi2 = 0;
  for (auto c : histogram) chi2 += (c - expected) * (c - expected) / expected;
  CHECK(chi2 < 330.5);
  CHECK(chi2 > 190.0);  // the 0.001 quantile: not suspiciously flat either
  // Double masking: for every client the server got shares of one secret only (b or s, not both).
  CHECK(share_kinds.size() == n);
  for (const auto& [owner, kinds] : share_kinds) {
    CHECK(kinds.size() == 1);
    CHECK(*kinds.begin() == (owner == 5 ? 1 : 0));
  }
}

TEST_CASE("secagg: fewer than t survivors abort cleanly with a clear error") {
  const std::uint32_t n = 10;
  {
    Run r = setup(n, 8, 6, 0, 5);
    std::vector<int> drop(n, 4);
    for (int u : {0, 2, 4, 6, 8}) drop[u] = 2;  // 5 survivors < t = 6
    InMemoryTransport transport;
    CHECK_THROWS_WITH_AS(run(r.config, r.clients, drop, transport, dp_hype_test::two_threads),
                         doctest::Contains("only 5 of 10 clients sent masked input (round 2), "
                                           "threshold t = 6"),
                         SecAggAbort);
  }
  {
    Run r = setup(n, 8, 6, 0, 6);
    std::vector<int> drop(n, 4);
    for (int u : {1, 3, 5, 7, 9}) drop[u] = 0;  // only 5 advertise keys
    InMemoryTransport transport;
    CHECK_THROWS_WITH_AS(run(r.config, r.clients, drop, transport, dp_hype_test::two_threads),
                         doctest::Contains("round 0"), SecAggAbort);
  }
  {
    // Enough masked inputs, but too many survivors vanish before unmasking.
    Run r = setup(n, 8, 6, 0, 8);
    std::vector<int> drop(n, 4);
    for (int u : {0, 1, 2, 3, 4}) drop[u] = 3;
    InMemoryTransport transport;
    CHECK_THROWS_WITH_AS(run(r.config, r.clients, drop, transport, dp_hype_test::two_threads),
                         doctest::Contains("round 3"), SecAggAbort);
  }
}

TEST_CASE("secagg: configuration checks") {
  std::array<std::uint8_t, 16> session{};
  CHECK_THROWS_AS(make_config(1, 4, 0, 0, 1, session), dptune::InvalidArgument);
  CHECK_THROWS_AS(make_config(10, 4, 10, 0, 1, session), dptune::InvalidArgument);  // t > n - 1
  CHECK(make_config(10, 4, 0, 0, 1, session).threshold == 5);                       // ⌊9/2⌋ + 1
  CHECK_THROWS_AS(make_config(30, 4, 0, 5, 1, session), dptune::InvalidArgument);   // odd degree
}

TEST_CASE("fixed point: exact for integers, rounding ≤ 2^-33 per value, range checked") {
  CHECK(decode(encode(1.0, 100)) == 1.0);
  CHECK(decode(encode(-3.0, 100)) == -3.0);
  dptune::Xoshiro256 rng(9);
  const std::size_t n = 1000;
  double real = 0;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = dptune::gaussian(rng, 50.0);
    CHECK(std::abs(decode(encode(x, n)) - x) <= std::ldexp(1.0, -33));
    real += x;
    sum += encode(x, n);
  }
  CHECK(std::abs(decode(sum) - real) <= rounding_bound(n) + 1e-9 * std::abs(real));
  CHECK(rounding_bound(n) == doctest::Approx(1000 * std::ldexp(1.0, -33)));
  CHECK_THROWS_AS(encode(std::ldexp(1.0, 31) / n, n), dptune::InvalidArgument);
  CHECK_THROWS_AS(encode(NAN, n), dptune::InvalidArgument);
}

namespace {

// Independent hypergeometric upper tail Pr[X ≥ a], X = marked among `draws` of `population`:
// the pmf by its ratio recurrence from x = 0 in long double (the library sums lgamma terms).
long double tail(std::uint32_t population, std::uint32_t marked, std::uint32_t draws,
                 std::uint32_t a) {
  long double p0 = 1;  // Pr[X = 0] = Π_{i<draws} (population − marked − i) / (population − i)
  for (std::uint32_t i = 0; i < draws; ++i)
    p0 *= static_cast<long double>(population - marked - i) / (population - i);
  long double pmf = p0, sum = 0;
  for (std::uint32_t x = 0; x <= std::min(marked, draws); ++x) {
    if (x >= a) sum += pmf;
    // pmf(x+1)/pmf(x) = (marked − x)(draws − x) / ((x + 1)(population − marked − draws + x + 1))
    pmf *= static_cast<long double>(marked - x) * (draws - x) /
           ((x + 1.0L) * (population - marked - draws + x + 1.0L));
  }
  return sum;
}

// Whether (d, t) meets the three conditions of GraphParameters for n, γ, δ at 40/20 bits.
bool meets(std::uint32_t n, double gamma, double delta, std::uint32_t d, std::uint32_t t) {
  const auto corrupt = static_cast<std::uint32_t>(std::floor(gamma * n + 1e-9));
  const auto dropped = static_cast<std::uint32_t>(std::floor(delta * n + 1e-9));
  const std::uint32_t bad = corrupt + dropped;
  long double disconnected = 0;
  if (d <= bad) {
    disconnected = static_cast<long double>(n) * (n - d - 1) / 2;
    for (std::uint32_t i = 0; i < d; ++i)
      disconnected *= static_cast<long double>(bad - i) / (n - i);
  }
  const long double security = std::ldexp(1.0L, -41), correctness = std::ldexp(1.0L, -20);
  return disconnected <= security && t >= 2 && t <= d &&
         n * tail(n - 1, corrupt, d, t) <= security &&
         n * tail(n - 1, dropped, d, d - t + 1) <= correctness;
}

}  // namespace

TEST_CASE("SecAgg+ parameters (Bell et al. 2020): bounds met, and the degree is the smallest") {
  for (std::uint32_t n : {100u, 250u, 1000u, 5000u})
    for (double rate : {0.02, 0.05, 0.1}) {
      CAPTURE(n);
      CAPTURE(rate);
      const GraphParameters g = secagg_plus_parameters(n, rate, rate);
      REQUIRE_FALSE(g.complete);
      CHECK(g.degree % 2 == 0);
      CHECK(meets(n, rate, rate, g.degree, g.threshold));
      // t is the smallest threshold meeting security, and no smaller even degree works.
      CHECK_FALSE(meets(n, rate, rate, g.degree, g.threshold - 1));
      for (std::uint32_t d = 2; d < g.degree; d += 2)
        for (std::uint32_t t = 2; t <= d; ++t) CHECK_FALSE(meets(n, rate, rate, d, t));
      CHECK(g.log2_disconnected <= -41);
      CHECK(g.log2_corrupt_reach_t <= -41);
      CHECK(g.log2_survivors_below_t <= -20);
    }
  // The figures the plugin documents (README) for 5% corrupt and 5% dropped.
  CHECK(secagg_plus_parameters(250, 0.05, 0.05).degree == 20);
  CHECK(secagg_plus_parameters(250, 0.05, 0.05).threshold == 12);
  CHECK(secagg_plus_parameters(1000, 0.05, 0.05).degree == 30);
  CHECK(secagg_plus_parameters(1000, 0.05, 0.05).threshold == 17);
  // Growth is logarithmic: 10x more clients, a few more neighbours.
  CHECK(secagg_plus_parameters(10000, 0.05, 0.05).degree <= 40);
}

TEST_CASE("SecAgg+ parameters: the complete graph when no sparse graph works, bad rates refused") {
  // 5 clients, 1 corrupt and 1 dropped: the only sparse degree (2) needs t = 2 against a corrupt
  // neighbour (probability 1/2) and then loses its shares to one dropout (probability 1/2).
  const GraphParameters g = secagg_plus_parameters(5, 0.2, 0.2);
  CHECK(g.complete);
  CHECK(g.degree == 4);
  CHECK(g.threshold == 3);  // max(1 + 1, ⌊4/2⌋ + 1)
  // 12 clients, 3 corrupt, 3 dropped: d = 8 > 6 bad clients cannot be cut, t = 4 > 3 corrupt, and
  // ≥ 5 neighbours always survive.
  CHECK(secagg_plus_parameters(12, 0.25, 0.25).degree == 8);
  CHECK(secagg_plus_parameters(12, 0.25, 0.25).threshold == 4);
  CHECK(g.describe().find("complete graph") != std::string::npos);
  CHECK_THROWS_AS(secagg_plus_parameters(100, 0.5, 0.5), dptune::InvalidArgument);
  CHECK_THROWS_AS(secagg_plus_parameters(100, -0.1, 0.0), dptune::InvalidArgument);
  // The graph the parameters describe aggregates exactly, also with δn dropouts.
  const GraphParameters p = secagg_plus_parameters(250, 0.05, 0.05);
  Run r = setup(250, 5, p.threshold, p.degree, 31);
  std::vector<int> drop(250, 4);
  std::vector<PartyId> alive;
  for (PartyId u = 0; u < 250; ++u) {
    if (u % 20 == 7)
      drop[u] = 2;  // 12 = ⌊0.05 · 250⌋ dropouts after key exchange
    else
      alive.push_back(u);
  }
  InMemoryTransport transport;
  const Outcome out = run(r.config, r.clients, drop, transport, dp_hype_test::two_threads);
  CHECK(out.survivors == alive);
  CHECK(out.sum == plain_sum(r, alive));
}
