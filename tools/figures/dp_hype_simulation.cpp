#include "dp_hype_simulation.hpp"

#include <algorithm>
#include <numeric>

#include "dp_hype/private_vote.hpp"
#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune::dp_hype {

std::vector<SimulationCell> simulate(const SimulationSetting& s, std::uint64_t seed,
                                     const secagg::ParallelFor& parallel_for) {
  dptune::require(s.clients >= 1, "dp_hype simulation: clients must be >= 1");
  dptune::require(s.good >= 1 && s.good <= s.candidates,
                  "dp_hype simulation: good must be in [1, candidates]");
  const bool per_k = !s.sigmas_per_k.empty();
  const std::size_t columns = per_k ? s.sigmas_per_k.front().size() : s.sigmas.size();
  dptune::require(!s.ks.empty() && columns > 0, "dp_hype simulation: need ks and sigmas");
  if (per_k) {
    dptune::require(s.sigmas_per_k.size() == s.ks.size(),
                    "dp_hype simulation: sigmas_per_k needs one list per k");
    for (const auto& l : s.sigmas_per_k)
      dptune::require(l.size() == columns,
                      "dp_hype simulation: sigmas_per_k lists differ in length");
  }
  auto sigma_of = [&](std::size_t ki, std::size_t si) {
    return per_k ? s.sigmas_per_k[ki][si] : s.sigmas[si];
  };
  std::size_t kmax = 0;
  for (std::size_t k : s.ks) {
    dptune::require(k >= 1 && k <= s.candidates,
                    "dp_hype simulation: k must be in [1, candidates]");
    kmax = std::max(kmax, k);
  }
  const std::size_t p = s.candidates, cells = s.ks.size() * columns;
  constexpr std::size_t kBlock = 25;
  const std::size_t blocks = (s.repetitions + kBlock - 1) / kBlock;
  struct Tally {
    std::vector<double> success, bound, gap;
  };
  std::vector<Tally> tallies(blocks);
  std::vector<std::size_t> good(s.good);
  std::iota(good.begin(), good.end(), 0);
  parallel_for(blocks, [&](std::size_t b) {
    dptune::Xoshiro256 rng(seed, b + 1);
    Tally t{std::vector<double>(cells), std::vector<double>(cells), std::vector<double>(cells)};
    std::vector<double> loss(p);
    std::vector<std::size_t> order(p);
    std::vector<std::vector<double>> votes(s.ks.size(), std::vector<double>(p));
    std::vector<double> noisy(p);
    const std::size_t end = std::min(s.repetitions, (b + 1) * kBlock);
    for (std::size_t rep = b * kBlock; rep < end; ++rep) {
      for (auto& v : votes) std::fill(v.begin(), v.end(), 0.0);
      for (std::size_t c = 0; c < s.clients; ++c) {
        for (std::size_t j = 0; j < p; ++j)
          loss[j] = (j < s.good ? 0.0 : 1.0) + dptune::gaussian(rng, s.sigma_loss);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kmax),
                          order.end(),
                          [&](std::size_t a, std::size_t c2) { return loss[a] < loss[c2]; });
        for (std::size_t ki = 0; ki < s.ks.size(); ++ki)
          for (std::size_t r = 0; r < s.ks[ki]; ++r) votes[ki][order[r]] += 1.0;
      }
      for (std::size_t ki = 0; ki < s.ks.size(); ++ki) {
        const double gamma = vote_gap(votes[ki], good);
        for (std::size_t si = 0; si < columns; ++si) {
          const double sigma = sigma_of(ki, si);
          for (std::size_t j = 0; j < p; ++j)
            noisy[j] = votes[ki][j] + dptune::gaussian(rng, sigma);
          const std::size_t cell = ki * columns + si;
          t.success[cell] += argmax(noisy) < s.good ? 1.0 : 0.0;
          t.bound[cell] += success_lower_bound(p - s.good, sigma, gamma);
          t.gap[cell] += gamma;
        }
      }
    }
    tallies[b] = std::move(t);
  });
  std::vector<SimulationCell> out(cells);
  for (std::size_t ki = 0; ki < s.ks.size(); ++ki)
    for (std::size_t si = 0; si < columns; ++si) {
      const std::size_t cell = ki * columns + si;
      SimulationCell& c = out[cell];
      c.k = s.ks[ki];
      c.sigma = sigma_of(ki, si);
      for (const auto& t : tallies) {
        c.accuracy += t.success[cell];
        c.mean_bound += t.bound[cell];
        c.mean_gap += t.gap[cell];
      }
      const double reps = static_cast<double>(std::max<std::size_t>(s.repetitions, 1));
      c.accuracy /= reps;
      c.mean_bound /= reps;
      c.mean_gap /= reps;
    }
  return out;
}

}  // namespace dptune::dp_hype
