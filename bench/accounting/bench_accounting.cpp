// Accounting speed: ε of a 60-epoch DP-SGD run (n = 60000, batch 256, σ = 1.1, Poisson,
// δ = 1e-5) after start-up, and 10^6 one-step events composed.  Prints the median of repeated runs,
// in this thread's CPU time (the machine is shared: wall time counts other processes' slices).
//   build/bench/accounting/bench_accounting
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <vector>

#include "rdp/calculator.hpp"

using dptune::DpEvent;

namespace {
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

using Calculator = dptune::rdp::Calculator;

/// `body` priced on a calculator of its own each time, made before the clock starts: a calculator
/// keeps the cost of the events it priced, so a second query of the same event would time a
/// lookup.
double median_ms(int repeats, const std::function<double(const Calculator&)>& body, double& last) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const Calculator fresh({});
    const double t0 = thread_cpu_ms();
    last = body(fresh);
    ms.push_back(thread_cpu_ms() - t0);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
}  // namespace

int main() {
  const dptune::rdp::Calculator accountant({});
  double eps = 0;
  // Start-up: the first call (page faults, lgamma tables) is not what we measure.
  accountant.epsilon(DpEvent::gaussian(1.0), 1e-5);

  const auto dp_sgd = DpEvent::self_composed(
      DpEvent::poisson_sampled(256.0 / 60000, DpEvent::gaussian(1.1)), 14063);
  const double t1 = median_ms(
      51, [&](const Calculator& c) { return c.epsilon(dp_sgd, 1e-5).epsilon; }, eps);
  std::printf(
      "dp-sgd 60 epochs (n=60000, batch 256, sigma 1.1, Poisson, %zu orders): eps = %.6f in %.3f "
      "ms (target < 1 ms)\n",
      accountant.options().orders.size(), eps, t1);

  const auto wor = DpEvent::self_composed(
      DpEvent::sampled_without_replacement(60000, 256, DpEvent::gaussian(1.1)), 14063);
  const double t2 = median_ms(
      11, [&](const Calculator& c) { return c.epsilon(wor, 1e-5).epsilon; }, eps);
  std::printf(
      "dp-sgd 60 epochs, sampling without replacement:                       eps = %.6f in %.3f "
      "ms\n",
      eps, t2);

  // 10^6 one-step events, composed one by one into a Composed event: identical steps (the usual
  // DP-SGD trace) and distinct steps (a different noise multiplier every step).
  std::vector<DpEvent> same, distinct;
  same.reserve(1000000);
  distinct.reserve(1000000);
  for (int i = 0; i < 1000000; ++i) {
    same.push_back(DpEvent::poisson_sampled(256.0 / 60000, DpEvent::gaussian(1.1)));
    distinct.push_back(DpEvent::gaussian(1000.0 + 1e-3 * i));
  }
  const auto composed_same = DpEvent::composed(same);
  const auto composed_distinct = DpEvent::composed(distinct);
  const double t3 = median_ms(
      3, [&](const Calculator& c) { return c.epsilon(composed_same, 1e-5).epsilon; }, eps);
  std::printf(
      "10^6 composed Poisson-sampled Gaussian steps:                          eps = %.6f in %.1f "
      "ms (target < 100 ms)\n",
      eps, t3);
  const double t4 = median_ms(
      3, [&](const Calculator& c) { return c.epsilon(composed_distinct, 1e-5).epsilon; }, eps);
  std::printf(
      "10^6 composed Gaussian steps, each with its own sigma:                 eps = %.6f in %.1f "
      "ms (target < 1000 ms)\n",
      eps, t4);
  return 0;
}
