// DPareto's cost per Bayesian-optimisation iteration as the number of observed trials n grows
//.  Avent et al. 2020 (Algorithm 2) fit an exact GP per objective every
// iteration: a Cholesky factorisation is O(n³) and the marginal-likelihood gradient needs K⁻¹
// (O(n³) again) at every L-BFGS step of every restart, so the fit, not the acquisition, eventually
// dominates.
//
//   build/bin/bench_scale_gp [--stop-above SECONDS] [n ...]   (default: 10 30 100 300, stop 30)
//
// For each n, a fresh optimiser is given n observations of a 3-D two-objective problem shaped like
// a DP-SGD study (a deterministic privacy objective, a noisy utility objective), then proposes:
//   full: one proposal with a refit of both GPs from 5 starts (the plugin's default);
//   fast: five proposals with warm-start fits every 5th (`fast: true`), reported per proposal.
// Output: CSV on stdout, `n,mode,cpu_s_per_proposal,wall_s_per_proposal`.  CPU time of this process
// is reported beside wall time because the machine may be shared (the core is single-threaded).
// Sizes after the first whose full-mode proposal took longer than --stop-above are skipped.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "dpareto/mobo.hpp"
#include "dptune/rng.hpp"

namespace dp = dptune::dpareto;

namespace {

constexpr std::size_t kDims = 3;

// Objective 0 plays log ε (deterministic, increasing in the "noise" coordinate's complement and
// the "epochs" coordinate); objective 1 plays the error (smooth, with observation noise sd 0.02).
Eigen::VectorXd study_like(const Eigen::VectorXd& x, dptune::RandomBitGenerator& rng) {
  Eigen::VectorXd y(2);
  y(0) = 2.0 * (1.0 - x(0)) + x(2);
  y(1) = 0.3 * x(0) * x(0) + 0.2 * std::pow(x(1) - 0.6, 2) + 0.1 * std::sin(6 * x(2)) +
         0.2 * (1 - x(2)) + dptune::gaussian(rng, 0.02);
  return y;
}

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

dp::MoboOptions options(bool fast) {
  dp::MoboOptions o;
  dp::GpOptions privacy, utility;
  privacy.learn_noise = false;  // as the plugin's privacy GP: a nugget only
  privacy.noise = 1e-6;
  o.gps = {privacy, utility};
  o.starts = fast ? 1 : 5;
  o.refit_every = fast ? 5 : 1;
  o.reference = {4.0, 1.0};
  return o;
}

struct Timing {
  double cpu = 0, wall = 0;
};

// Per-proposal time of `proposals` proposals after n observations.
Timing measure(std::size_t n, bool fast, int proposals) {
  dp::Mobo mobo(kDims, options(fast));
  dptune::Xoshiro256 rng(1000 + n);
  for (std::size_t i = 0; i < n; ++i) {
    Eigen::VectorXd x(static_cast<Eigen::Index>(kDims));
    for (auto& v : x) v = dptune::uniform01(rng);
    mobo.add(x, study_like(x, rng));
  }
  const double c0 = cpu_now();
  const auto w0 = std::chrono::steady_clock::now();
  for (int p = 0; p < proposals; ++p) {
    const auto pr = mobo.propose(1, rng);
    mobo.add(pr[0].x, study_like(pr[0].x, rng));
  }
  Timing t;
  t.cpu = (cpu_now() - c0) / proposals;
  t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() / proposals;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  double stop_above = 30;
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--stop-above" && i + 1 < argc) {
      stop_above = std::atof(argv[++i]);
    } else if (a.find_first_not_of("0123456789") == std::string::npos && !a.empty()) {
      sizes.push_back(std::strtoul(a.c_str(), nullptr, 10));
    } else {
      std::fprintf(stderr, "usage: bench_scale_gp [--stop-above SECONDS] [n ...]\n");
      return 2;
    }
  }
  if (sizes.empty()) sizes = {10, 30, 100, 300};
  std::printf("n,mode,cpu_s_per_proposal,wall_s_per_proposal\n");
  for (const std::size_t n : sizes) {
    const Timing full = measure(n, false, 1);
    std::printf("%zu,full,%.6f,%.6f\n", n, full.cpu, full.wall);
    const Timing fast = measure(n, true, 5);
    std::printf("%zu,fast,%.6f,%.6f\n", n, fast.cpu, fast.wall);
    std::fflush(stdout);
    if (full.cpu > stop_above) {
      std::fprintf(stderr,
                   "bench_scale_gp: stopping after n = %zu (%.1f s per proposal > %.1f s)\n", n,
                   full.cpu, stop_above);
      break;
    }
  }
  return 0;
}
