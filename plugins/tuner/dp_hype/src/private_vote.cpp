#include "dp_hype/private_vote.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "dp_hype/chacha_rng.hpp"
#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune::dp_hype {

double vote_sensitivity(std::size_t k, std::size_t clients_changed) {
  dptune::require(clients_changed >= 1, "dp_hype: at least one client changes");
  // Each changed client's k-hot vote moves the sum by at most √(2k) (Lemma III.1); by the triangle
  // inequality g changed clients move it by at most g·√(2k), reached when they all move one vote
  // the same way.
  return static_cast<double>(clients_changed) * std::sqrt(2.0 * static_cast<double>(k));
}

dptune::DpEvent event_for_sigma(double sigma, std::size_t k, const ShareNoise& shares,
                                std::size_t clients_changed) {
  dptune::require(k >= 1, "dp_hype: k must be >= 1");
  dptune::require(sigma > 0 && std::isfinite(sigma), "dp_hype: sigma must be finite and > 0");
  // Replace-one neighbours changing `clients_changed` clients' data: the sum moves by at most
  // g·√(2k) (Liebenow et al. 2025, L2 sensitivity, with group size g), the multiplier's reference.
  const double multiplier = sigma / vote_sensitivity(k, clients_changed);
  if (!shares.discrete())
    return dptune::DpEvent::replace_one(dptune::DpEvent::gaussian(multiplier));
  return dptune::DpEvent::replace_one(dptune::DpEvent::discrete_gaussian_sum(
      multiplier, shares.min_scale, static_cast<std::int64_t>(shares.summands),
      static_cast<std::int64_t>(shares.dimension)));
}

dptune::NoiseCalibration calibrate_sigma(const dptune::Accountant& accountant, double epsilon,
                                         double delta, std::size_t k, const ShareNoise& shares,
                                         std::size_t clients_changed) {
  dptune::CalibrationOptions options;
  options.lower = 1e-3;
  options.upper = 1e7;
  options.relative_tolerance = 1e-9;
  return dptune::calibrate_noise(
      accountant,
      [k, shares, clients_changed](double sigma) {
        return event_for_sigma(sigma, k, shares, clients_changed);
      },
      epsilon, delta, options);
}

double analytic_gaussian_sigma(double epsilon, double delta, std::size_t k,
                               std::size_t clients_changed) {
  // The analytic Gaussian's multiplier is relative to the sensitivity, here g·√(2k).
  return vote_sensitivity(k, clients_changed) *
         dptune::analytic_gaussian_noise_multiplier(epsilon, delta);
}

namespace {
std::size_t floor_fraction(std::size_t clients, double fraction) {
  // The same slack as secagg_plus_parameters, so that 0.05 · 100 counts 5 clients in both places.
  return static_cast<std::size_t>(std::floor(fraction * static_cast<double>(clients) + 1e-9));
}
}  // namespace

std::size_t colluding_clients(std::size_t clients, double collusion_fraction) {
  dptune::require(collusion_fraction >= 0 && collusion_fraction < 1,
                  "dp_hype: the collusion fraction (secagg_corrupt_rate) must be in [0, 1)");
  return floor_fraction(clients, collusion_fraction);
}

std::size_t tolerated_dropouts(std::size_t clients, double xi) {
  dptune::require(xi >= 0 && xi < 1, "dp_hype: xi (tolerated dropout fraction) must be in [0, 1)");
  return floor_fraction(clients, xi);
}

std::size_t guaranteed_honest_noise_shares(std::size_t clients, double xi,
                                           double collusion_fraction) {
  const std::size_t colluders = colluding_clients(clients, collusion_fraction);
  const std::size_t dropouts = tolerated_dropouts(clients, xi);
  dptune::require(colluders + dropouts < clients,
                  "dp_hype: " + std::to_string(colluders) + " colluding clients (floor(" +
                      "secagg_corrupt_rate n)) and " + std::to_string(dropouts) +
                      " tolerated dropouts (floor(xi n)) leave no honest noise share among " +
                      std::to_string(clients) + " clients");
  return clients - colluders - dropouts;
}

ClientNoise client_noise(double sigma, std::size_t k, std::size_t clients, double xi,
                         double collusion_fraction, std::size_t clients_changed) {
  dptune::require(clients >= 1, "dp_hype: need at least one client");
  ClientNoise c;
  c.honest_shares = guaranteed_honest_noise_shares(clients, xi, collusion_fraction);
  c.sensitivity = vote_sensitivity(k, clients_changed);
  c.stddev = sigma / std::sqrt(static_cast<double>(c.honest_shares));
  c.noise_multiplier = c.stddev / c.sensitivity;
  // A share of stddev <= 2^22 votes keeps the secure gaussian mechanism's grid step <= 1 (its
  // grid_noise.hpp rule: multiplier · (Δ/g + sqrt d) <= 2^23 units), so the integer votes lie on
  // the noise's lattice and neighbouring sums differ by an integer shift in grid units, which the
  // distributed discrete Gaussian analysis needs (Kairouz, Liu & Steinke 2021).
  dptune::require(c.stddev <= 4194304.0,
                  "dp_hype: per-client noise stddev " + std::to_string(c.stddev) +
                      " beyond 2^22 votes (sigma too large for the votes to mean anything)");
  return c;
}

double honest_sigma(double per_client_stddev, std::size_t survivors, std::size_t colluders) {
  if (survivors <= colluders) return 0.0;
  return per_client_stddev * std::sqrt(static_cast<double>(survivors - colluders));
}

std::vector<double> top_k_votes(std::span<const double> scores, std::size_t k,
                                dptune::RandomBitGenerator& rng) {
  dptune::require(k >= 1 && k <= scores.size(),
                  "dp_hype: k = " + std::to_string(k) + " must be in [1, " +
                      std::to_string(scores.size()) + "] (the number of candidates)");
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  dptune::shuffle(rng, order);  // random order first: the stable sort keeps it among equal scores
  auto key = [&](std::size_t i) {
    return std::isnan(scores[i]) ? -std::numeric_limits<double>::infinity() : scores[i];
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
  std::vector<double> votes(scores.size(), 0.0);
  for (std::size_t i = 0; i < k; ++i) votes[order[i]] = 1.0;
  return votes;
}

std::size_t argmax(std::span<const double> votes) {
  dptune::require(!votes.empty(), "dp_hype: argmax of an empty vector");
  return static_cast<std::size_t>(std::max_element(votes.begin(), votes.end()) - votes.begin());
}

double success_lower_bound(std::size_t bad, double sigma, double gamma) {
  if (bad == 0) return 1.0;
  if (!(gamma > 0)) return 0.0;
  const double failure = static_cast<double>(bad) * sigma / (gamma * std::sqrt(M_PI)) *
                         std::exp(-gamma * gamma / (4 * sigma * sigma));
  return std::clamp(1.0 - failure, 0.0, 1.0);
}

double vote_gap(std::span<const double> votes, std::span<const std::size_t> good) {
  std::vector<char> is_good(votes.size(), 0);
  for (std::size_t g : good) is_good.at(g) = 1;
  double min_good = std::numeric_limits<double>::infinity(),
         max_bad = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < votes.size(); ++j)
    if (is_good[j])
      min_good = std::min(min_good, votes[j]);
    else
      max_bad = std::max(max_bad, votes[j]);
  return min_good - max_bad;
}

ClientInput client_input(std::span<const double> votes, const dptune::Mechanism& mechanism,
                         const ClientNoise& noise, std::size_t clients,
                         dptune::RandomBitGenerator& noise_rng) {
  const std::size_t p = votes.size();
  dptune::Sensitivity sensitivity;
  sensitivity.l2 = noise.sensitivity;
  sensitivity.l1 = noise.sensitivity * noise.sensitivity;  // 2k: unused by a Gaussian mechanism
  sensitivity.linf = 1;
  // Algorithm 1 line 9, computed by the client itself: ṽ_i = v_i + z_i.  The client draws z_i from
  // the mechanism (a Gaussian: the tuner refuses anything else) on a zero vector and encodes v_i
  // and z_i separately, so that the server's sum is exactly Σ v_i + Σ round(z_i · 2^f) / 2^f: the
  // fixed-point rounding touches only the noise, whatever the votes (encoding the double v_i + z_i
  // would round differently for v = 0 and v = 1 in rare cases, a data-dependent perturbation of at
  // most 2^-f).
  const std::vector<double> zeros(p, 0.0);
  const std::vector<double> z = mechanism.release(zeros, sensitivity, noise_rng);
  if (z.size() != p)
    throw dptune::PluginError("dp_hype: the mechanism released " + std::to_string(z.size()) +
                              " values for " + std::to_string(p) + " votes");
  ClientInput input;
  input.encoded.resize(p);
  input.exact_noise = true;
  // Each part gets half of the per-party range, so the client's total cannot wrap the sum.
  for (std::size_t j = 0; j < p; ++j) {
    dptune::require(votes[j] == 0.0 || votes[j] == 1.0,
                    "dp_hype: votes must be 0 or 1 (Algorithm 1)");
    input.encoded[j] = secagg::encode(votes[j], 2 * clients) + secagg::encode(z[j], 2 * clients);
    // Exact when the share is on the fixed-point grid (the secure mechanism's grid step is a power
    // of two >= 2^-32 for any sensible σ); otherwise encode rounded it (noise: fast).
    const double scaled = std::ldexp(z[j], secagg::kFractionBits);
    input.exact_noise = input.exact_noise && scaled == std::nearbyint(scaled);
  }
  return input;
}

SecureVoteResult secure_vote(const std::vector<std::vector<double>>& votes,
                             const dptune::Mechanism& mechanism, const ClientNoise& noise,
                             const SecureVoteOptions& options, dptune::RandomBitGenerator& rng,
                             const secagg::ParallelFor& parallel_for,
                             secagg::Transport* transport) {
  const std::size_t n = votes.size();
  dptune::require(n >= 2, "dp_hype: secure aggregation needs at least 2 clients");
  const std::size_t p = votes[0].size();
  std::array<std::uint8_t, 16> session{};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::uint64_t w = rng.next_u64();
    std::memcpy(session.data() + 8 * i, &w, 8);
  }
  auto config = std::make_shared<const secagg::Config>(
      secagg::make_config(static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(p),
                          options.threshold, options.degree, rng.next_u64(), session));
  // Every client gets its own keys and noise stream, keyed (sequentially, so a seeded run is
  // reproducible) from the tuner's generator.
  std::vector<secagg::Client> clients;
  std::vector<ChaChaGenerator> noise_rngs;
  clients.reserve(n);
  noise_rngs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    ChaChaGenerator keys = ChaChaGenerator::derive(rng, "client " + std::to_string(i) + " keys");
    clients.emplace_back(static_cast<secagg::PartyId>(i), config, keys.bytes32());
    noise_rngs.push_back(ChaChaGenerator::derive(rng, "client " + std::to_string(i) + " noise"));
  }
  std::vector<char> exact_share(n, 0);
  parallel_for(n, [&](std::size_t i) {
    dptune::require(votes[i].size() == p, "dp_hype: client vote vectors differ in length");
    ClientInput input = client_input(votes[i], mechanism, noise, n, noise_rngs[i]);
    exact_share[i] = input.exact_noise ? 1 : 0;
    clients[i].set_input(std::move(input.encoded));
  });
  const bool exact = std::all_of(exact_share.begin(), exact_share.end(), [](char e) { return e; });
  secagg::InMemoryTransport local;
  secagg::Transport& t = transport ? *transport : local;
  secagg::Outcome outcome = secagg::run(config, clients, options.drop_before, t, parallel_for);
  SecureVoteResult result;
  result.noisy_votes.resize(p);
  for (std::size_t j = 0; j < p; ++j) result.noisy_votes[j] = secagg::decode(outcome.sum[j]);
  result.survivors = std::move(outcome.survivors);
  result.exact_noise = exact;
  result.rounding_bound = exact ? 0.0 : secagg::rounding_bound(result.survivors.size());
  if (!transport) result.bytes = local.bytes_sent();
  return result;
}

}  // namespace dptune::dp_hype
