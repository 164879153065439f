// bench_adversarial [instances per setting, default 200] [seed, default 1]
//
// The adversarial-instance search of tests/adversarial at a larger size: for every setting (base,
// η, E[T], density ratio C/c, δ) it prints the accountant's ε, the largest exact ε found over the
// instances (a lower bound on that instance's exact ε), their ratio, and LOSES when an exact ε
// exceeds the printed one (exit code 1).  Prices by the rdp accountant, and by the pld accountant
// for repeat_and_select of Gaussians (its profile route).  Bases: post-processings of one
// Gaussian mechanism (gaussian(σ)), randomized response (one_of pure_dp); sampling rules: band
// vertices picked from the current best and the dataset (C/c > 1), the prior (C/c = 1, the
// repetition tuner).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/helpers/repetition.hpp"
#include "exact_selection.hpp"
#include "pld/calculator.hpp"
#include "rdp/calculator.hpp"

using dptune::DpEvent;
namespace adv = adversarial;

namespace {

struct Row {
  const char* base;
  double eta, mean, ratio, delta, printed, worst;
};

DpEvent selection(const DpEvent& base, double eta, double mean, double ratio) {
  return ratio == 1 ? DpEvent::repeat_and_select(base, mean, eta)
                    : DpEvent::adaptive_repeat_and_select(base, mean, eta, ratio);
}

template <class Make>
double search(std::mt19937_64& rng, double eta, double mean, double ratio, double delta,
              int instances, Make make) {
  const double gamma = dptune::RepetitionDistribution::from_mean(mean, eta).gamma();
  const adv::Dist stopping = adv::stopping_law(eta, gamma);
  double worst = 0;
  for (int i = 0; i < instances; ++i) {
    adv::Instance inst = make(rng);
    inst.prior = adv::random_prior(rng, inst.candidates(), i % 2 == 0);
    const double share = std::uniform_real_distribution<double>(0, 1)(rng);
    const double lower = std::pow(ratio, -share), upper = lower * ratio;
    const adv::Policy policy = ratio == 1
                                   ? adv::prior_policy(inst)
                                   : adv::adversarial_policy(rng, inst, lower, upper, i % 3 != 2);
    worst = std::max(worst, adv::ExactPair(inst, policy, stopping).epsilon_lower(delta));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const int instances = argc > 1 ? std::atoi(argv[1]) : 200;
  std::mt19937_64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1);
  const dptune::rdp::Calculator rdp{dptune::rdp::Options{}};
  const auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  for (double sigma : {0.5, 1.0, 2.0})
    for (double eta : {0.0, 0.5, 1.0})
      for (double mean : {3.0, 10.0, 30.0})
        for (double ratio : {1.0, 1.5, 2.6667, 4.0})
          for (double delta : {1e-3, 1e-5}) {
            const double printed =
                rdp.epsilon(selection(DpEvent::gaussian(sigma), eta, mean, ratio), delta).epsilon;
            const double worst =
                search(rng, eta, mean, ratio, delta, instances, [&](std::mt19937_64& r) {
                  return adv::gaussian_partitions(r, 1 + r() % 4, sigma, 5);
                });
            rows.push_back({sigma == 0.5 ? "gaussian(0.5)"
                            : sigma == 1 ? "gaussian(1)"
                                         : "gaussian(2)",
                            eta, mean, ratio, delta, printed, worst});
          }
  // The pld accountant's profile route (density ratio 1 only: it refuses adaptive selection).
  const dptune::pld::Calculator pld{dptune::pld::Options{}};
  for (double sigma : {1.0, 2.0})
    for (double eta : {0.0, 1.0})
      for (double delta : {1e-3, 1e-5}) {
        const double printed =
            pld.epsilon(selection(DpEvent::gaussian(sigma), eta, 10, 1), delta).epsilon;
        const double worst = search(rng, eta, 10, 1, delta, instances, [&](std::mt19937_64& r) {
          return adv::gaussian_partitions(r, 1 + r() % 4, sigma, 5);
        });
        rows.push_back(
            {sigma == 1 ? "pld:gauss(1)" : "pld:gauss(2)", eta, 10, 1, delta, printed, worst});
      }
  for (double eta : {0.0, 1.0, 3.0})
    for (double mean : {2.0, 10.0})
      for (double ratio : {1.0, 2.0, 4.0})
        for (double delta : {0.0, 1e-5}) {
          const DpEvent base = DpEvent::one_of({DpEvent::pure_dp(0.3), DpEvent::pure_dp(1.0)});
          const double printed = rdp.epsilon(selection(base, eta, mean, ratio), delta).epsilon;
          const double worst =
              search(rng, eta, mean, ratio, delta, instances, [](std::mt19937_64& r) {
                std::vector<double> eps{1.0};
                for (std::size_t l = 0; l < 1 + r() % 3; ++l) eps.push_back(r() % 2 ? 0.3 : 1.0);
                return adv::randomized_response(r, eps);
              });
          rows.push_back({"rr(0.3|1)", eta, mean, ratio, delta, printed, worst});
        }
  int losses = 0;
  double closest = 0;
  std::printf("%-14s %5s %5s %7s %8s %10s %10s %7s\n", "base", "eta", "E[T]", "C/c", "delta",
              "printed", "exact>=", "ratio");
  for (const Row& r : rows) {
    const bool lost = r.worst > r.printed * (1 + 1e-9);
    losses += lost;
    closest = std::max(closest, r.worst / r.printed);
    std::printf("%-14s %5.2g %5.3g %7.4g %8.1e %10.5f %10.5f %7.4f%s\n", r.base, r.eta, r.mean,
                r.ratio, r.delta, r.printed, r.worst, r.worst / r.printed, lost ? "  LOST" : "");
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu settings x %d instances, %.1f s; closest exact/printed %.4f; %d lost\n",
              rows.size(), instances, seconds, closest, losses);
  return losses == 0 ? 0 : 1;
}
