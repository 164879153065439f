// `dptune audit trainer`: the statistics of Steinke, Nasr & Jagielski's one-run audit (NeurIPS
// 2023), as their published code and jax_privacy's auditing module compute them
// (dptune/host/trainer_audit.hpp; docs/audit.md, "Auditing a trainer").
#include <algorithm>
#include <cmath>
#include <numeric>

#include "dptune/errors.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/audit_one_run.hpp"
#include "dptune/rng.hpp"

namespace dptune::host {

namespace {

constexpr double kRoundUp = 1.0 + 1e-9;
constexpr double kEpsilonCap = 100.0;

/// log P[Binomial(r, q) = j], from lgamma (exact to a few ulps of the log for r ≤ 10^7).
double log_binomial_pmf(std::size_t r, std::size_t j, double log_q, double log_1mq) {
  const auto rd = static_cast<double>(r), jd = static_cast<double>(j);
  return std::lgamma(rd + 1) - std::lgamma(jd + 1) - std::lgamma(rd - jd + 1) + jd * log_q +
         (rd - jd) * log_1mq;
}

/// SNJ's α: max over i = 1..v of P[v − i ≤ Binomial(r, q) < v] / i, the partial sums accumulated
/// once from j = v − 1 downwards (O(v)).
double snj_alpha(std::size_t r, std::size_t v, double epsilon) {
  // log q = −log(1 + e^−ε), log(1 − q) = −ε − log(1 + e^−ε): accurate for every ε ≥ 0.
  const double log_q = -std::log1p(std::exp(-epsilon));
  const double log_1mq = -epsilon + log_q;
  double partial = 0, best = 0;
  for (std::size_t i = 1; i <= v; ++i) {
    partial += std::exp(log_binomial_pmf(r, v - i, log_q, log_1mq));
    best = std::max(best, partial / static_cast<double>(i));
  }
  return best;
}

}  // namespace

double one_run_p_value(std::size_t m, std::size_t r, std::size_t v, double epsilon, double delta) {
  dptune::require(v <= r && r <= m && epsilon >= 0 && delta >= 0 && delta <= 1,
                  "one_run_p_value: needs v <= r <= m, epsilon >= 0, delta in [0, 1]");
  if (r == 0 || v == 0) return 1.0;
  const double q = 1.0 / (1.0 + std::exp(-epsilon));
  // P[Binomial(r, q) ≥ v] = I_q(v, r − v + 1) (the Beta–binomial identity).
  const double beta = regularized_beta(static_cast<double>(v), static_cast<double>(r - v + 1), q);
  const double alpha = delta > 0 ? snj_alpha(r, v, epsilon) : 0.0;
  return std::min(1.0, (beta + 2.0 * static_cast<double>(m) * delta * alpha) * kRoundUp);
}

double one_run_epsilon_lower_bound(std::size_t m, std::size_t r, std::size_t v, double delta,
                                   double level) {
  dptune::require(level > 0 && level < 1, "one_run_epsilon_lower_bound: level must be in (0, 1)");
  const auto rejected = [&](double e) { return one_run_p_value(m, r, v, e, delta) <= level; };
  if (!rejected(0.0)) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (hi < kEpsilonCap && rejected(hi)) {
    lo = hi;
    hi = std::min(kEpsilonCap, 2 * hi);
  }
  if (rejected(hi)) return hi;
  // p is increasing in ε: keep rejected(lo) and !rejected(hi).
  for (int i = 0; i < 100 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (rejected(mid) ? lo : hi) = mid;
  }
  return lo;
}

std::vector<std::size_t> guess_ladder(std::size_t m) {
  std::vector<std::size_t> ks;
  for (std::size_t k = m / 2; k >= 4; k /= 2) ks.push_back(k);
  if (ks.empty() && m > 0) ks.push_back(m);
  return ks;
}

std::vector<std::size_t> rank_canaries(const std::vector<double>& scores,
                                       dptune::RandomBitGenerator& rng) {
  // A uniformly random order first, then a stable sort by score: tied scores end up in random
  // order, independent of which canaries are in.
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  dptune::shuffle(rng, order);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  return order;
}

namespace {

std::size_t correct_in_top(const std::vector<std::size_t>& ranking,
                           const std::vector<bool>& included, std::size_t k) {
  dptune::require(k >= 1 && k <= ranking.size(), "one-run audit: every k must be in [1, m]");
  std::size_t correct = 0;
  for (std::size_t i = 0; i < k; ++i) correct += included[ranking[i]] ? 1 : 0;
  return correct;
}

/// The best bound `bound(k, correct, level)` over the k of `ks`, each at level / |ks|.
template <class Bound>
OneRunBound best_over(const std::vector<std::size_t>& ranking, const std::vector<bool>& included,
                      const std::vector<std::size_t>& ks, double level, Bound bound) {
  dptune::require(included.size() == ranking.size() && !ks.empty() && level > 0 && level < 1,
                  "one-run audit: needs one inclusion per canary, at least one k, a level in "
                  "(0, 1)");
  OneRunBound best;
  best.m = ranking.size();
  best.tests = ks.size();
  best.level = level / static_cast<double>(ks.size());
  best.epsilon_lower = -1;
  for (const std::size_t k : ks) {
    const std::size_t correct = correct_in_top(ranking, included, k);
    const double eps = bound(k, correct, best.level);
    if (eps > best.epsilon_lower) {
      best.epsilon_lower = eps;
      best.guesses = k;
      best.correct = correct;
    }
  }
  return best;
}

}  // namespace

OneRunBound one_run_bound(const std::vector<double>& scores, const std::vector<bool>& included,
                          const std::vector<std::size_t>& ks, double delta, double confidence,
                          dptune::RandomBitGenerator& rng) {
  const std::size_t m = scores.size();
  return best_over(rank_canaries(scores, rng), included, ks, 1.0 - confidence,
                   [&](std::size_t k, std::size_t correct, double level) {
                     return one_run_epsilon_lower_bound(m, k, correct, delta, level);
                   });
}

// ---- MMC's f-DP test
// ------------------------------------------------------------------------------

namespace {

/// f̄⁻¹(y) for f̄(x) = min(1, min_j e^{ε_j} x + δ_j): f̄(x) ≥ y iff every line is, so the inverse is
/// max_j (y − δ_j)⁺ e^{−ε_j}, at most 1.
double profile_inverse(const std::vector<ProfilePoint>& hypothesis, double y) {
  double x = 0;
  for (const auto& p : hypothesis)
    x = std::max(x, std::max(0.0, y - p.delta) * std::exp(-p.epsilon));
  return std::min(1.0, x);
}

}  // namespace

bool fdp_one_run_rejects(const std::vector<ProfilePoint>& hypothesis, std::size_t m,
                         std::size_t guesses, std::size_t correct, double level) {
  dptune::require(correct <= guesses && guesses <= m && m > 0 && !hypothesis.empty(),
                  "fdp_one_run_rejects: needs correct <= guesses <= m and a hypothesis");
  if (correct == 0) return false;
  const auto md = static_cast<double>(m);
  // MMC Algorithm 3 (k = 2): r[c] = τ c / m, h[c] = τ (c′ − c) / m, then for i = c − 1 .. 0
  // h[i] = f̄⁻¹(r[i+1]) and r[i] = r[i+1] + i / (c′ − i) · (h[i] − h[i+1]); reject iff
  // r[0] + h[0] ≥ c′ / m.  With jax_privacy's guards: h = max(h, f̄⁻¹(r)), r ≤ 1, and once h stops
  // growing neither changes again.
  double r = level * static_cast<double>(correct) / md;
  double h = level * static_cast<double>(guesses - correct) / md;
  for (std::size_t i = correct; i-- > 0;) {
    const double h_new = std::max(h, profile_inverse(hypothesis, r));
    if (h_new == h) break;
    r = std::min(1.0, r + static_cast<double>(i) / static_cast<double>(guesses - i) * (h_new - h));
    h = h_new;
  }
  // Rounding: a rejection needs a margin of 1e-12 (relative), so it never rests on the last bits.
  return r + h >= static_cast<double>(guesses) / md * (1 + 1e-12);
}

double fdp_one_run_epsilon_lower_bound(std::size_t m, std::size_t guesses, std::size_t correct,
                                       double delta, double level) {
  dptune::require(level > 0 && level < 1, "fdp_one_run_epsilon_lower_bound: level in (0, 1)");
  const auto rejected = [&](double e) {
    return fdp_one_run_rejects({{e, delta}}, m, guesses, correct, level);
  };
  if (!rejected(0.0)) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (hi < kEpsilonCap && rejected(hi)) {
    lo = hi;
    hi = std::min(kEpsilonCap, 2 * hi);
  }
  if (rejected(hi)) return hi;
  for (int i = 0; i < 100 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (rejected(mid) ? lo : hi) = mid;
  }
  return lo;
}

OneRunAnalysis analyse_one_run(const std::vector<std::size_t>& ranking,
                               const std::vector<bool>& included,
                               const std::vector<std::size_t>& ks, double delta, double confidence,
                               const std::vector<ProfilePoint>& claim) {
  const std::size_t m = ranking.size();
  const double half = (1.0 - confidence) / 2;
  OneRunAnalysis a;
  a.snj = best_over(ranking, included, ks, half, [&](std::size_t k, std::size_t c, double level) {
    return one_run_epsilon_lower_bound(m, k, c, delta, level);
  });
  a.fdp = best_over(ranking, included, ks, half, [&](std::size_t k, std::size_t c, double level) {
    return fdp_one_run_epsilon_lower_bound(m, k, c, delta, level);
  });
  if (!claim.empty())
    for (const std::size_t k : ks) {
      const std::size_t c = correct_in_top(ranking, included, k);
      if (fdp_one_run_rejects(claim, m, k, c, a.fdp.level)) {
        a.fdp_rejects_claim = true;
        a.rejecting_guesses = k;
        a.rejecting_correct = c;
        break;
      }
    }
  return a;
}

OneRunAnalysis analyse_one_run_split(const std::vector<double>& scores,
                                     const std::vector<bool>& included, double delta,
                                     double confidence, const std::vector<ProfilePoint>& claim,
                                     dptune::RandomBitGenerator& rng) {
  const std::size_t m = scores.size();
  dptune::require(included.size() == m && m >= 16, "analyse_one_run_split: at least 16 canaries");
  std::vector<std::size_t> halves(m);
  std::iota(halves.begin(), halves.end(), std::size_t{0});
  dptune::shuffle(rng, halves);
  std::vector<bool> in_choice(m, false);
  for (std::size_t i = 0; i < m / 2; ++i) in_choice[halves[i]] = true;
  // One ranking of all canaries, then each half in that order (its own ranking).
  const std::vector<std::size_t> ranking = rank_canaries(scores, rng);
  std::vector<std::size_t> choose_rank, test_rank;
  std::vector<bool> choose_in, test_in;
  for (const std::size_t i : ranking) {
    auto& rank = in_choice[i] ? choose_rank : test_rank;
    auto& in = in_choice[i] ? choose_in : test_in;
    rank.push_back(rank.size());
    in.push_back(included[i]);
  }
  const OneRunBound chosen =
      best_over(choose_rank, choose_in, guess_ladder(choose_rank.size()), 1.0 - confidence,
                [&](std::size_t k, std::size_t c, double level) {
                  return one_run_epsilon_lower_bound(choose_rank.size(), k, c, delta, level);
                });
  const double fraction =
      static_cast<double>(chosen.guesses) / static_cast<double>(choose_rank.size());
  const std::size_t k = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::llround(fraction * static_cast<double>(test_rank.size()))), 1,
      test_rank.size());
  return analyse_one_run(test_rank, test_in, {k}, delta, confidence, claim);
}

}  // namespace dptune::host
