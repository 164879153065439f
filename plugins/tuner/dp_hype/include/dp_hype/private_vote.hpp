// DP-Hype's private vote (Liebenow, Peinemann, Mohammadi, Liebenow et al. 2025): federated
// hyperparameter search by private top-k voting.  Its privacy (the event, σ's calibration, the
// threat model's noise shares), the votes, and the secure sum of the noisy votes: the pieces a
// tuner, a test or a benchmark needs, independent of the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dp_hype/secagg.hpp"
#include "dptune/dp_event.hpp"
#include "dptune/helpers/calibration.hpp"
#include "dptune/plugin.hpp"

namespace dptune::dp_hype {

// ---- privacy ------------------------------------------------------------------------------------
/// Lemma III.1: the L2 sensitivity of the aggregated vote vector under replacement of one client is
/// √(2k) (k ones flip to zeros and k zeros to ones).  When one record can change the data of
/// `clients_changed` = g clients (Dirichlet shards by label: a record may leave one client for
/// another, g = 2), the sum moves by at most g·√(2k) (triangle inequality; tight: both clients
/// move one vote from the same candidate to the same other one).
double vote_sensitivity(std::size_t k, std::size_t clients_changed = 1);

/// The clients' noise shares, as the vote's event states them.
struct ShareNoise {
  /// Exact discrete Gaussian shares (the `gaussian` mechanism's noise: secure), each N_Z(0, s²)
  /// per entry with s >= min_scale lattice units; 0: continuous Gaussian shares.
  double min_scale = 0;
  /// Shares in the sum, at most: the clients.  Kairouz, Liu & Steinke 2021's τ grows with the
  /// count, so this one count covers every set of honest survivors, and the calibrated event, the
  /// reserved worst case and the final guarantee all state it.
  std::size_t summands = 1;
  /// Entries of the vote vector: the candidates.
  std::size_t dimension = 1;
  bool discrete() const { return min_scale > 0; }
};

/// The event of one DP-Hype run whose aggregated noise has standard deviation `sigma`: the Gaussian
/// mechanism (Definition I.3) with noise multiplier σ / √(2k), whose RDP is α·(2k)/(2σ²) = αk/σ²
/// (Theorem III.1).  Exact discrete shares (`shares.discrete()`) sum to a distributed discrete
/// Gaussian, which is not a discrete Gaussian: stated as discrete_gaussian_sum with the shares'
/// scale, count and dimension, priced by Kairouz, Liu & Steinke 2021, Proposition 14
/// (docs/noise.md).  `clients_changed` = g: the multiplier is σ / (g·√(2k)) (vote_sensitivity).
dptune::DpEvent event_for_sigma(double sigma, std::size_t k, const ShareNoise& shares = {},
                                std::size_t clients_changed = 1);

/// σ from (ε, δ, k) as Liebenow et al. 2025 does it (Algorithm 1 line 1): the smallest σ whose
/// event the accountant proves (ε, δ)-DP (with the rdp accountant: Theorem III.1 converted by
/// Theorem I.1), found by dptune::calibrate_noise over σ.
dptune::NoiseCalibration calibrate_sigma(const dptune::Accountant& accountant, double epsilon,
                                         double delta, std::size_t k, const ShareNoise& shares = {},
                                         std::size_t clients_changed = 1);

/// Tighter alternative, labelled as such: the analytic Gaussian mechanism (Balle & Wang, ICML 2018,
/// Theorem 8): the smallest σ with Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ, Δ = g·√(2k).
/// dptune::analytic_gaussian_noise_multiplier (the helper library, which the rdp accountant's
/// analytic Gaussian uses too) times Δ.
double analytic_gaussian_sigma(double epsilon, double delta, std::size_t k,
                               std::size_t clients_changed = 1);

/// Threat model of the noise (Liebenow et al. 2025 §II and Appendix A-A; Bonawitz et al. 2017): the
/// server is honest-but-curious and may collude with up to c = ⌊γn⌋ clients (γ:
/// `secagg_corrupt_rate`); up to d = ⌊ξn⌋ clients may drop out.  A colluding client knows its own
/// noise share and can subtract it from the sum, so only the shares of honest clients that survive
/// protect a target client; in the worst case every colluder survives and every dropout is
/// honest, leaving
///   h = n − ⌊γn⌋ − ⌊ξn⌋
/// honest noise shares.  Counts are floors with the same 1e-9 slack as the SecAgg+ analysis.
std::size_t colluding_clients(std::size_t clients, double collusion_fraction);
std::size_t tolerated_dropouts(std::size_t clients, double xi);
/// h above; throws dptune::InvalidArgument when h < 1 (no honest noise would be guaranteed).
std::size_t guaranteed_honest_noise_shares(std::size_t clients, double xi,
                                           double collusion_fraction);

/// Per-client noise calibrated so that the honest survivors' shares alone reach the target σ
/// (Appendix A-A's dropout compensation, extended to collusion as the paper suggests for clients
/// that do not add noise): each client adds N(0, σ²/h) per entry, so any h honest shares sum to
/// variance σ².  With γ = 0 this is the paper's N(0, σ²/((1−ξ)n)) with (1−ξ)n rounded up to the
/// integer n − ⌊ξn⌋ (dropouts come in whole clients).  Returned as the arguments of the pipeline's
/// Gaussian mechanism: sensitivity g·√(2k) and noise_multiplier σ / (g·√(2k)·√h), i.e. per-entry
/// standard deviation noise_multiplier · sensitivity = σ / √h.
struct ClientNoise {
  double sensitivity = 0;         // L2, g·√(2k) (vote_sensitivity)
  double noise_multiplier = 0;    // per client
  double stddev = 0;              // per client and entry
  std::size_t honest_shares = 0;  // h, the shares the calibration counts on
};
ClientNoise client_noise(double sigma, std::size_t k, std::size_t clients, double xi,
                         double collusion_fraction, std::size_t clients_changed = 1);

/// Standard deviation of the aggregated noise the adversary cannot subtract when `survivors`
/// clients' shares of standard deviation `per_client_stddev` reached the sum and up to
/// `colluders` of them collude with the server: per_client_stddev · √(survivors − colluders)
/// (0 when no honest share is left).
double honest_sigma(double per_client_stddev, std::size_t survivors, std::size_t colluders);

// ---- voting -------------------------------------------------------------------------------------
/// Algorithm 1 lines 5-8: a 0/1 vector with ones at the k best candidates (highest `scores`; pass
/// negated losses for losses).  Ties are broken by a uniformly random order drawn from `rng`, never
/// by index.  Requires 1 ≤ k ≤ scores.size(); NaN scores rank last.
std::vector<double> top_k_votes(std::span<const double> scores, std::size_t k,
                                dptune::RandomBitGenerator& rng);

/// argmax of the aggregated noisy votes (Algorithm 1 line 12); the first maximum on exact ties.
std::size_t argmax(std::span<const double> votes);

/// Theorem IV.1: Pr[good] ≥ 1 − |H_bad| σ / (γ √π) · exp(−γ² / (4σ²)), clamped to [0, 1]
/// (0 for γ ≤ 0, where the theorem says nothing).
double success_lower_bound(std::size_t bad, double sigma, double gamma);

/// γ of Equation 3: min over good of votes − max over bad of votes (noiseless aggregate).
double vote_gap(std::span<const double> votes, std::span<const std::size_t> good);

// ---- federated run ------------------------------------------------------------------------------
/// One client of Algorithm 1 after local evaluation: its vote vector, the noise it adds through the
/// mechanism, and its secure-aggregation party.  Everything it sends leaves through the transport.
struct SecureVoteOptions {
  std::uint32_t threshold = 0;   // 0: ⌊d/2⌋ + 1
  std::uint32_t degree = 0;      // 0: complete graph (Bonawitz); else circulant degree (SecAgg+)
  std::vector<int> drop_before;  // per client, first protocol round it misses (simulated dropouts)
};
struct SecureVoteResult {
  std::vector<double> noisy_votes;  // Σ over survivors of (v_i + z_i), decoded from fixed point
  std::vector<secagg::PartyId> survivors;
  double rounding_bound = 0;  // |noisy_votes − real sum| ≤ this, per entry
  /// Every client's noise share was a multiple of 2^-kFractionBits (the grid release of the
  /// `gaussian` mechanism with noise: secure), so the fixed-point sum is exact: Σ v_i + Σ z_i.
  bool exact_noise = false;
  std::size_t bytes = 0;  // bytes through the transport
};
/// One client's input to secure aggregation (Algorithm 1 line 9): its 0/1 `votes` and noise z
/// drawn from `mechanism` (sensitivity noise.sensitivity) on `noise_rng`, encoded in fixed point
/// separately (votes exactly) and added mod 2^64, for a sum over `clients` parties.
struct ClientInput {
  std::vector<std::uint64_t> encoded;
  bool exact_noise = false;  // every z_j on the fixed-point grid: the encoding is exact
};
ClientInput client_input(std::span<const double> votes, const dptune::Mechanism& mechanism,
                         const ClientNoise& noise, std::size_t clients,
                         dptune::RandomBitGenerator& noise_rng);

/// Clients 0..n−1 each add noise to votes[i] with `mechanism` (sensitivity `noise.sensitivity`,
/// their own ChaCha20 generator keyed from `rng`), encode in fixed point and take part in secure
/// aggregation; the server returns the sum.
SecureVoteResult secure_vote(const std::vector<std::vector<double>>& votes,
                             const dptune::Mechanism& mechanism, const ClientNoise& noise,
                             const SecureVoteOptions& options, dptune::RandomBitGenerator& rng,
                             const secagg::ParallelFor& parallel_for,
                             secagg::Transport* transport = nullptr);

}  // namespace dptune::dp_hype
