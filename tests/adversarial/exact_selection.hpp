// Exact privacy profiles of private selection on instances small enough to enumerate, for attacking
// the bounds the accountants print (Papernot & Steinke 2022's repeat-and-select, the project's own
// privacy-profile route in plugins/accountant/selection, and Wang et al. 2023's adaptive DP-HyPO).
//
// An instance: candidates λ = 0..m−1, each a base mechanism M_λ whose output is one of n globally
// ranked outcomes (outcome index = quality rank, larger is better; each outcome belongs to one
// candidate, so the output names λ), with its law on two neighbouring datasets D and D'.  The runs
// draw λ from a sampling distribution that an adversarial policy picks from the current best output
// and the dataset (the paper allows both: Wang et al. 2023, Framework 1 and App. A), inside the
// density-ratio band [c·p_λ, C·p_λ] of the prior p.  The law of the best of T runs is exact by
// dynamic programming over the current best (T ~ truncated negative binomial, summed until the
// remaining mass is below 1e-12, which is then subtracted where a lower bound on δ is needed; the
// sums' own rounding would keep a smaller threshold from ever being met).
//
// Everything here is independent of the SDK and the accountants except the γ of the number of
// runs, which is taken from RepetitionDistribution::from_mean so that the law is that of the runs
// the accountant prices.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

namespace adversarial {

using Dist = std::vector<double>;

/// The base mechanisms: law[λ][o] on D and law2[λ][o] on D', over the n ranked outcomes.
struct Instance {
  std::vector<Dist> law, law2;
  Dist prior;  // p_λ, summing to 1
  std::size_t outcomes() const { return law.front().size(); }
  std::size_t candidates() const { return law.size(); }
};

/// An adaptive sampling rule: for each dataset (0: D, 1: D') and each current best (−1 for none,
/// stored at index 0), the sampling distribution over the candidates.
struct Policy {
  std::vector<Dist> rule[2];
};

/// P[T = k] of the truncated negative binomial D_{η,γ} (Papernot & Steinke 2022, Definition 1),
/// computed here from its definition: P[T = k] ∝ (1−γ)^k Π_{ℓ<k} (ℓ+η)/(ℓ+1) for η ≠ 0, and
/// (1−γ)^k / k for η = 0; k ≥ 1.
inline Dist stopping_law(double eta, double gamma, double tail = 1e-12) {
  Dist p{0.0};
  double term = 1;  // Π_{ℓ<k}(ℓ+η)/(ℓ+1) (1−γ)^k, or (1−γ)^k / k
  const double norm = eta == 0 ? std::log(1 / gamma) : (std::pow(gamma, -eta) - 1) / 1.0;
  double cumulative = 0;
  for (std::int64_t k = 1; k < 1000000; ++k) {
    double value;
    if (eta == 0) {
      term = k == 1 ? (1 - gamma) : term * (1 - gamma);
      value = term / static_cast<double>(k) / norm;
    } else {
      term *= (static_cast<double>(k - 1) + eta) / static_cast<double>(k) * (1 - gamma);
      value = term / norm;
    }
    p.push_back(value);
    cumulative += value;
    if (1 - cumulative < tail && k > 2) break;
  }
  return p;
}

/// The law of the best output over the n outcomes after T runs, on dataset `side`, and the mass of
/// T beyond the enumeration (returned in `dropped`).
inline Dist best_law(const Instance& inst, const Policy& policy, int side, const Dist& stopping,
                     double& dropped) {
  const std::size_t n = inst.outcomes();
  const auto& law = side == 0 ? inst.law : inst.law2;
  // One run's outcome law given the current best b (index b+1): Σ_λ π_b(λ) M_λ.
  std::vector<Dist> run(n + 1, Dist(n, 0.0));
  for (std::size_t b = 0; b <= n; ++b)
    for (std::size_t l = 0; l < inst.candidates(); ++l)
      for (std::size_t o = 0; o < n; ++o) run[b][o] += policy.rule[side][b][l] * law[l][o];
  Dist state(n + 1, 0.0), out(n, 0.0);
  state[0] = 1;  // no run yet
  double kept = 0;
  for (std::size_t k = 1; k < stopping.size(); ++k) {
    Dist next(n + 1, 0.0);
    for (std::size_t b = 0; b <= n; ++b) {
      if (state[b] == 0) continue;
      for (std::size_t o = 0; o < n; ++o) {
        const std::size_t best = std::max(b, o + 1);
        next[best] += state[b] * run[b][o];
      }
    }
    state = std::move(next);
    for (std::size_t o = 0; o < n; ++o) out[o] += stopping[k] * state[o + 1];
    kept += stopping[k];
  }
  dropped = std::max(0.0, 1 - kept);
  return out;
}

/// Σ_o (P(o) − e^ε Q(o))₊.
inline double hockey_stick(const Dist& p, const Dist& q, double eps) {
  double h = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    h += q[i] == 0 ? p[i] : std::max(0.0, p[i] - std::exp(eps) * q[i]);
  return h;
}

/// The exact laws of the best output on D and D' under one policy, enumerated once.
struct ExactPair {
  Dist on_d, on_d2;
  double dropped = 0;  // the most mass of T either side's enumeration left out

  /// Laws filled in by the caller (e.g. a selection followed by more releases).
  ExactPair() = default;
  ExactPair(const Instance& inst, const Policy& policy, const Dist& stopping) {
    double a = 0, b = 0;
    on_d = best_law(inst, policy, 0, stopping, a);
    on_d2 = best_law(inst, policy, 1, stopping, b);
    dropped = std::max(a, b);
  }
  /// A lower bound on the exact δ(ε) of the selection, the worse of both orders: each enumerated
  /// law misses at most `dropped` mass, which can lower a hockey-stick sum by at most
  /// e^ε·dropped; 1e-12 more covers the rounding of the sums (of at most a few thousand terms).
  double delta_lower(double eps) const {
    const double slack = std::exp(eps) * dropped + 1e-12;
    return std::max(hockey_stick(on_d, on_d2, eps), hockey_stick(on_d2, on_d, eps)) - slack;
  }
  /// The smallest ε (to 1e-10) at which delta_lower ≤ δ: a lower bound on the exact ε(δ).
  double epsilon_lower(double delta) const {
    if (delta_lower(0) <= delta) return 0;
    double lo = 0, hi = 1;
    while (delta_lower(hi) > delta && hi < 400) hi *= 2;
    while (hi - lo > 1e-10) {
      const double mid = 0.5 * (lo + hi);
      (delta_lower(mid) <= delta ? hi : lo) = mid;
    }
    return lo;
  }
};

inline double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

/// Candidate bases that post-process one Gaussian mechanism N(0, σ²) on D, N(1, σ²) on D'
/// (sensitivity 1, i.e. gaussian(σ)): each candidate cuts the real line at `cuts` random points
/// into intervals, and every interval of every candidate gets a random global quality rank.
inline Instance gaussian_partitions(std::mt19937_64& rng, std::size_t candidates, double sigma,
                                    std::size_t max_cuts) {
  std::uniform_real_distribution<double> where(-2.5 * sigma, 1 + 2.5 * sigma);
  std::uniform_int_distribution<std::size_t> how_many(1, max_cuts);
  std::vector<Dist> pieces, pieces2;  // per candidate, per interval
  for (std::size_t l = 0; l < candidates; ++l) {
    std::vector<double> cuts(how_many(rng));
    for (auto& c : cuts) c = where(rng);
    std::sort(cuts.begin(), cuts.end());
    Dist a, b;
    double prev = 0, prev2 = 0;
    for (double c : cuts) {
      const double f = normal_cdf(c / sigma), f2 = normal_cdf((c - 1) / sigma);
      a.push_back(f - prev);
      b.push_back(f2 - prev2);
      prev = f;
      prev2 = f2;
    }
    a.push_back(1 - prev);
    b.push_back(1 - prev2);
    pieces.push_back(a);
    pieces2.push_back(b);
  }
  std::size_t n = 0;
  for (const auto& p : pieces) n += p.size();
  std::vector<std::size_t> rank(n);
  for (std::size_t i = 0; i < n; ++i) rank[i] = i;
  std::shuffle(rank.begin(), rank.end(), rng);
  Instance inst;
  std::size_t at = 0;
  for (std::size_t l = 0; l < candidates; ++l) {
    Dist a(n, 0.0), b(n, 0.0);
    for (std::size_t j = 0; j < pieces[l].size(); ++j, ++at) {
      a[rank[at]] = pieces[l][j];
      b[rank[at]] = pieces2[l][j];
    }
    inst.law.push_back(a);
    inst.law2.push_back(b);
  }
  return inst;
}

/// Candidate bases that are randomized response on one bit with ε_λ (the pair that dominates every
/// ε_λ-DP pair): outputs "yes"/"no" on D with probabilities e^ε/(1+e^ε), 1/(1+e^ε), reversed on D'.
/// The 2m outcomes get random global ranks.
inline Instance randomized_response(std::mt19937_64& rng, const std::vector<double>& epsilons) {
  const std::size_t m = epsilons.size(), n = 2 * m;
  std::vector<std::size_t> rank(n);
  for (std::size_t i = 0; i < n; ++i) rank[i] = i;
  std::shuffle(rank.begin(), rank.end(), rng);
  Instance inst;
  for (std::size_t l = 0; l < m; ++l) {
    const double hi = std::exp(epsilons[l]) / (1 + std::exp(epsilons[l])), lo = 1 - hi;
    Dist a(n, 0.0), b(n, 0.0);
    a[rank[2 * l]] = hi;
    a[rank[2 * l + 1]] = lo;
    b[rank[2 * l]] = lo;
    b[rank[2 * l + 1]] = hi;
    inst.law.push_back(a);
    inst.law2.push_back(b);
  }
  return inst;
}

/// A prior over m candidates: uniform, or random with every mass at least 0.05.
inline Dist random_prior(std::mt19937_64& rng, std::size_t m, bool uniform) {
  Dist p(m, 1.0 / static_cast<double>(m));
  if (uniform) return p;
  std::uniform_real_distribution<double> u(0.05, 1.0);
  double sum = 0;
  for (auto& x : p) sum += (x = u(rng));
  for (auto& x : p) x /= sum;
  return p;
}

/// A vertex of the band {π : c·p ≤ π ≤ C·p, Σπ = 1}: every candidate starts at c·p_λ, then the
/// candidates in `order` are raised to C·p_λ in turn until the mass reaches 1 (the last one
/// partly).  Needs c ≤ 1 ≤ C.
inline Dist band_vertex(const Dist& prior, double lower, double upper,
                        const std::vector<std::size_t>& order) {
  Dist pi(prior.size());
  double mass = 0;
  for (std::size_t l = 0; l < prior.size(); ++l) mass += (pi[l] = lower * prior[l]);
  for (std::size_t l : order) {
    const double room = (upper - lower) * prior[l];
    const double add = std::min(room, std::max(0.0, 1 - mass));
    pi[l] += add;
    mass += add;
  }
  return pi;
}

/// An adversarial policy: for each dataset and current best, a band vertex raising the candidates
/// in an order of the adversary's choice.  `greedy` ranks the candidates by how much more likely
/// their good outcomes are on that dataset than on the other (the "find the leaking candidate"
/// strategy); otherwise the order is random, drawn apart for each state and dataset.
inline Policy adversarial_policy(std::mt19937_64& rng, const Instance& inst, double lower,
                                 double upper, bool greedy) {
  const std::size_t n = inst.outcomes(), m = inst.candidates();
  Policy policy;
  for (int side = 0; side < 2; ++side) {
    const auto& mine = side == 0 ? inst.law : inst.law2;
    const auto& other = side == 0 ? inst.law2 : inst.law;
    for (std::size_t b = 0; b <= n; ++b) {
      std::vector<std::size_t> order(m);
      for (std::size_t l = 0; l < m; ++l) order[l] = l;
      if (greedy) {
        // The mass each candidate puts above the current best, on this side minus the other.
        std::vector<double> gain(m, 0.0);
        for (std::size_t l = 0; l < m; ++l)
          for (std::size_t o = b; o < n; ++o) gain[l] += mine[l][o] - other[l][o];
        std::sort(order.begin(), order.end(),
                  [&](std::size_t x, std::size_t y) { return gain[x] > gain[y]; });
      } else {
        std::shuffle(order.begin(), order.end(), rng);
      }
      policy.rule[side].push_back(band_vertex(inst.prior, lower, upper, order));
    }
  }
  return policy;
}

/// The non-adaptive rule: every run draws from the prior.
inline Policy prior_policy(const Instance& inst) {
  Policy policy;
  for (int side = 0; side < 2; ++side) policy.rule[side].assign(inst.outcomes() + 1, inst.prior);
  return policy;
}

}  // namespace adversarial
