// `dptune audit`: sampling, the search for a distinguishing output event on one set of samples, and
// the test of each pair's best event on fresh samples (StatDP's split: Ding et al., CCS 2018, §4).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "dptune/errors.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/random.hpp"

namespace dptune::host {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Outputs = std::vector<std::vector<double>>;

Outputs draw(const dptune::Mechanism& mechanism, const std::vector<double>& input,
             const dptune::Sensitivity& sensitivity, dptune::RandomBitGenerator& rng,
             std::size_t n) {
  Outputs out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(mechanism.release(input, sensitivity, rng));
  return out;
}

/// Φ⁻¹(1 − a) by bisection on erfc.
double normal_upper_quantile(double a) {
  double lo = 0.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > a ? lo : hi) = mid;
  }
  return hi;
}

/// Ranks candidate events on the search samples.  Wilson score bounds (cheap, closed form) stand in
/// for the exact bounds of the fresh test: the ranking only has to prefer events the fresh test can
/// certify, it certifies nothing itself.
struct Ranker {
  const Claim& claim;
  double n, z;
  struct Score {
    double margin = -kInf, gap = -kInf;
    bool operator<(const Score& o) const {
      return margin < o.margin || (margin == o.margin && gap < o.gap);
    }
  };
  double wilson(double k, double sign) const {
    const double z2 = z * z, centre = (k + z2 / 2) / (n + z2);
    const double half = z / (n + z2) * std::sqrt(k * (n - k) / n + z2 / 4);
    return std::clamp(centre + sign * half, 0.0, 1.0);
  }
  Score score(std::uint64_t first, std::uint64_t second) const {
    const double lo = wilson(static_cast<double>(first), -1),
                 hi = wilson(static_cast<double>(second), +1);
    Score s;
    s.gap = lo - hi;
    for (const auto& p : claim.curve)
      if (lo > p.delta) s.margin = std::max(s.margin, std::log((lo - p.delta) / hi) - p.epsilon);
    return s;
  }
};

struct Best {
  OutputEvent event;
  bool swapped = false;
  Ranker::Score score;
  bool found = false;
};

void consider(const Ranker& ranker, Best& best, const OutputEvent& event, std::uint64_t cx,
              std::uint64_t cy) {
  for (const bool swapped : {false, true}) {
    const auto s = swapped ? ranker.score(cy, cx) : ranker.score(cx, cy);
    if (!best.found || best.score < s) best = {event, swapped, s, true};
  }
}

/// Events on one scalar statistic: every value when there are few (≤ 64), else thresholds at ~400
/// pooled quantiles plus the extreme order statistics (where pure-DP violations show first).
void search_statistic(const Ranker& ranker, Best& best, OutputEvent::Statistic statistic,
                      std::size_t index, const Outputs& x, const Outputs& y) {
  std::vector<double> xs, ys, pooled;
  for (const auto& o : x) xs.push_back(statistic_of(statistic, index, o));
  for (const auto& o : y) ys.push_back(statistic_of(statistic, index, o));
  std::sort(xs.begin(), xs.end());
  std::sort(ys.begin(), ys.end());
  std::merge(xs.begin(), xs.end(), ys.begin(), ys.end(), std::back_inserter(pooled));
  std::vector<double> values;
  std::unique_copy(pooled.begin(), pooled.end(), std::back_inserter(values));
  const auto above = [](const std::vector<double>& v, double t) {
    return static_cast<std::uint64_t>(v.end() - std::upper_bound(v.begin(), v.end(), t));
  };
  const auto at_most = [](const std::vector<double>& v, double t) {
    return static_cast<std::uint64_t>(std::upper_bound(v.begin(), v.end(), t) - v.begin());
  };
  OutputEvent e;
  e.statistic = statistic;
  e.index = index;
  const bool few = values.size() <= 64;
  std::vector<double> thresholds;
  if (few) {
    thresholds = values;
  } else {
    const std::size_t m = pooled.size();
    for (std::size_t j = 1; j < 400; ++j) thresholds.push_back(pooled[j * m / 400]);
    for (std::size_t k = 1; k < m / 2; k *= 2) {
      thresholds.push_back(pooled[k - 1]);
      thresholds.push_back(pooled[m - k - 1]);
    }
  }
  for (const double t : thresholds) {
    e.value = t;
    e.op = OutputEvent::Op::Greater;
    consider(ranker, best, e, above(xs, t), above(ys, t));
    e.op = OutputEvent::Op::AtMost;
    consider(ranker, best, e, at_most(xs, t), at_most(ys, t));
    if (few) {
      e.op = OutputEvent::Op::Equal;
      const auto eq = [t](const std::vector<double>& v) {
        const auto r = std::equal_range(v.begin(), v.end(), t);
        return static_cast<std::uint64_t>(r.second - r.first);
      };
      consider(ranker, best, e, eq(xs), eq(ys));
    }
  }
}

/// Exact output-equality events when the outputs take few values (indicator vectors).
void search_vectors(const Ranker& ranker, Best& best, const Outputs& x, const Outputs& y) {
  std::map<std::vector<double>, std::pair<std::uint64_t, std::uint64_t>> counts;
  for (int side = 0; side < 2; ++side)
    for (const auto& o : side == 0 ? x : y) {
      auto& c = counts[o];
      (side == 0 ? c.first : c.second) += 1;
      if (counts.size() > 4096) return;  // continuous outputs: every sample is its own value
    }
  for (const auto& [v, c] : counts) {
    OutputEvent e;
    e.statistic = OutputEvent::Statistic::Vector;
    e.vector = v;
    consider(ranker, best, e, c.first, c.second);
  }
}

Best search(const Ranker& ranker, const Outputs& x, const Outputs& y) {
  Best best;
  std::size_t dims = 0;
  for (const auto* side : {&x, &y})
    for (const auto& o : *side) dims = std::max(dims, o.size());
  using S = OutputEvent::Statistic;
  for (std::size_t i = 0; i < std::min<std::size_t>(dims, 10); ++i)
    search_statistic(ranker, best, S::Coordinate, i, x, y);
  if (dims > 1)
    for (const auto s : {S::Sum, S::Max, S::NonZero}) search_statistic(ranker, best, s, 0, x, y);
  search_vectors(ranker, best, x, y);
  return best;
}

std::uint64_t count_in(const OutputEvent& e, const Outputs& outputs) {
  return static_cast<std::uint64_t>(
      std::count_if(outputs.begin(), outputs.end(),
                    [&e](const std::vector<double>& o) { return e.contains(o); }));
}

/// The fresh test of one pair's event: exact one-sided bounds at level `level` each.  With
/// probability >= 1 − 2·level both hold, and then p_lower <= p <= e^ε p' + δ <= e^ε p_upper + δ
/// for every true point (ε, δ) of the claim: an alarm needs p_lower − δ > e^ε p_upper.
void fresh_test(PairOutcome& out, const Claim& claim, double level, const Outputs& x,
                const Outputs& y) {
  const std::uint64_t cx = count_in(out.event, x), cy = count_in(out.event, y);
  out.n = x.size();
  out.count_first = out.swapped ? cy : cx;
  out.count_second = out.swapped ? cx : cy;
  out.p_lower = clopper_pearson_lower(out.count_first, out.n, level);
  out.p_upper = clopper_pearson_upper(out.count_second, out.n, level);
  out.margin = -kInf;
  for (const auto& p : claim.curve) {
    const double lb =
        out.p_lower > p.delta ? std::log((out.p_lower - p.delta) / out.p_upper) : -kInf;
    out.epsilon_lower.push_back(lb);
    out.margin = std::max(out.margin, lb - p.epsilon);
    if (lb > p.epsilon) out.violation = true;
  }
}

/// body(0..n-1) on up to hardware_concurrency() threads (each pair has its own random streams, so
/// the result does not depend on the thread count); the first exception is rethrown.
void parallel_pairs(std::size_t n, const std::function<void(std::size_t)>& body) {
  const std::size_t threads =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::max<std::size_t>(n, 1));
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        body(i);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

/// Phase 1 for one pair: the first samples and the best event on them; a pair whose input the
/// mechanism refuses is skipped (e.g. non-integer values for an integer mechanism).
PairOutcome search_pair(const dptune::Mechanism& mechanism, const NeighbourPair& pair,
                        const RandomSource& random, std::size_t i, const Ranker& ranker,
                        std::size_t samples) {
  PairOutcome out;
  out.pair = pair;
  auto rng_d = random.make(4 * i), rng_p = random.make(4 * i + 1);
  try {
    (void)mechanism.release(pair.d, pair.sensitivity, *rng_d);
    (void)mechanism.release(pair.d_prime, pair.sensitivity, *rng_p);
  } catch (const std::exception& e) {
    out.skipped = e.what();
    return out;
  }
  const auto x = draw(mechanism, pair.d, pair.sensitivity, *rng_d, samples);
  const auto y = draw(mechanism, pair.d_prime, pair.sensitivity, *rng_p, samples);
  const Best best = search(ranker, x, y);
  out.event = best.event;
  out.swapped = best.swapped;
  return out;
}

}  // namespace

AuditResult run_audit(const dptune::Mechanism& mechanism, const Claim& claim,
                      const AuditOptions& options) {
  dptune::require(options.samples >= 100, "audit: --samples must be at least 100");
  dptune::require(options.alpha > 0 && options.alpha < 1, "audit: --alpha must be in (0, 1)");
  const auto started = std::chrono::steady_clock::now();
  const RandomSource random(options.seed);
  AuditResult result;
  result.claim = claim;
  result.options = options;
  result.randomness = random.description();
  const auto pairs = neighbour_pairs();
  const double search_level = options.alpha / (2.0 * static_cast<double>(pairs.size()));
  const Ranker ranker{claim, static_cast<double>(options.samples),
                      normal_upper_quantile(search_level)};
  result.pairs.resize(pairs.size());
  parallel_pairs(pairs.size(), [&](std::size_t i) {
    result.pairs[i] = search_pair(mechanism, pairs[i], random, i, ranker, options.samples);
  });
  for (const auto& p : result.pairs) result.tests += p.skipped.empty() ? 1 : 0;
  if (result.tests == 0) throw dptune::ConfigError("audit: the mechanism refused every input pair");
  // Phase 2: fresh samples, Bonferroni over the pairs tested (2 bounds each).
  const double level = options.alpha / (2.0 * static_cast<double>(result.tests));
  parallel_pairs(result.pairs.size(), [&](std::size_t i) {
    auto& out = result.pairs[i];
    if (!out.skipped.empty()) return;
    auto rng_d = random.make(4 * i + 2), rng_p = random.make(4 * i + 3);
    const auto x = draw(mechanism, out.pair.d, out.pair.sensitivity, *rng_d, options.samples);
    const auto y = draw(mechanism, out.pair.d_prime, out.pair.sensitivity, *rng_p, options.samples);
    fresh_test(out, claim, level, x, y);
  });
  result.epsilon_lower.assign(claim.curve.size(), -kInf);
  for (std::size_t i = 0; i < result.pairs.size(); ++i) {
    const auto& out = result.pairs[i];
    if (!out.skipped.empty()) continue;
    result.violation = result.violation || out.violation;
    for (std::size_t j = 0; j < claim.curve.size(); ++j)
      result.epsilon_lower[j] = std::max(result.epsilon_lower[j], out.epsilon_lower[j]);
    if (!result.best || result.pairs[*result.best].margin < out.margin) result.best = i;
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace dptune::host
