// DPareto optimiser overhead: 16 initial + 256 iterations in 5-D on an analytic
// two-objective problem (ZDT1, whose oracles cost nothing, so all time is the optimiser's), with
// five hyperparameter starts per fit every iteration, and in fast mode (warm starts, refit every
// 5); then one HVPoI evaluation over 5000 candidates at n = 272.
//   build/bin/bench_dpareto [iterations=256] [dims=5] [all|full|fast]
// For experiments, DPARETO_BENCH_PROBE (L-BFGS iterations of a random restart's probe, 0 = run
// every start to convergence) and DPARETO_BENCH_TOL (relative tolerance) override the GP options;
// DPARETO_BENCH_FD=1 refines the acquisition on central differences instead of its analytic
// gradient.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "dpareto/halton.hpp"
#include "dpareto/mobo.hpp"
#include "dptune/rng.hpp"

namespace dp = dptune::dpareto;

namespace {

Eigen::VectorXd zdt1(const Eigen::VectorXd& x) {
  const double g = 1 + 9 * x.tail(x.size() - 1).sum() / static_cast<double>(x.size() - 1);
  Eigen::VectorXd y(2);
  y << x(0), g * (1 - std::sqrt(x(0) / g));
  return y;
}

// CPU time of this process: the machine is shared, so wall-clock time measures the neighbours too.
// The core is single-threaded (Eigen without OpenMP), so CPU time is the time on an idle core.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

dp::Mobo run(bool fast, std::size_t dims, std::size_t iterations, double& seconds, double& hv) {
  dp::MoboOptions o;
  dp::GpOptions a, b;
  a.learn_noise = false;
  a.noise = 1e-6;
  o.gps = {a, b};
  if (const char* e = std::getenv("DPARETO_BENCH_PROBE"))
    a.restart_iterations = b.restart_iterations = std::atoi(e);
  if (const char* e = std::getenv("DPARETO_BENCH_TOL")) a.tolerance = b.tolerance = std::atof(e);
  o.gps = {a, b};
  if (std::getenv("DPARETO_BENCH_FD")) o.analytic_gradient = false;  // refinement by differences
  o.starts = fast ? 1 : 5;
  o.refit_every = fast ? 5 : 1;
  o.reference = {1.1, 11};
  dp::Mobo mobo(dims, o);
  dptune::Xoshiro256 rng(7);
  std::vector<dptune::Point> ys;
  for (int i = 0; i < 16; ++i) {
    Eigen::VectorXd x(static_cast<Eigen::Index>(dims));
    for (auto& v : x) v = dptune::uniform01(rng);
    const auto y = zdt1(x);
    mobo.add(x, y);
    ys.push_back({y(0), y(1)});
  }
  const double t0 = cpu_now();
  for (std::size_t it = 0; it < iterations; ++it) {
    const auto pr = mobo.propose(1, rng);
    const auto y = zdt1(pr[0].x);
    mobo.add(pr[0].x, y);
    ys.push_back({y(0), y(1)});
  }
  seconds = (cpu_now() - t0);
  std::printf("  (%zu + %zu marginal-likelihood evaluations in the fits)\n",
              mobo.gp(0).evaluations(), mobo.gp(1).evaluations());
  hv = dptune::hypervolume(ys, {1, 1});
  return mobo;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t iterations = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  const std::size_t dims = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 5;
  const std::string mode = argc > 3 ? argv[3] : "all";
  double full_s = 0, full_hv = 0, fast_s = 0, fast_hv = 0;
  // The acquisition benchmark below uses the full-mode state when there is one.
  std::optional<dp::Mobo> last, full;
  if (mode != "fast") {
    full.emplace(run(false, dims, iterations, full_s, full_hv));
    std::printf(
        "full mode (5 starts per fit, refit every iteration): 16 + %zu iterations, %zu-D: "
        "%.2f s optimiser CPU time, ZDT1 hypervolume %.4f (true front 0.6667)\n",
        iterations, dims, full_s, full_hv);
  }
  if (mode != "full") {
    last.emplace(run(true, dims, iterations, fast_s, fast_hv));
    std::printf("fast mode (warm starts, refit every 5): %.2f s, ZDT1 hypervolume %.4f\n", fast_s,
                fast_hv);
  }
  const dp::Mobo& mobo = full ? *full : *last;

  // One acquisition over 5000 candidates at n = 16 + iterations.
  const std::size_t n = mobo.size();
  Eigen::MatrixXd X(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(dims));
  dptune::Xoshiro256 rng(11);
  // Candidates as Mobo::maximise draws them: 80% scrambled Halton, 20% Gaussian perturbations
  // (sd 0.05) of observed inputs on the front (here: of the last 64 inputs, which for ZDT1 lie on
  // it), so that a realistic share of candidates has a non-dominated mean and needs variances.
  Eigen::MatrixXd C(5000, static_cast<Eigen::Index>(dims));
  C.topRows(4000) = dp::scrambled_halton(4000, dims, rng);
  for (Eigen::Index i = 4000; i < 5000; ++i) {
    const auto& base =
        mobo.inputs()[n - 1 - dptune::uniform_index(rng, std::min<std::size_t>(64, n))];
    for (Eigen::Index j = 0; j < C.cols(); ++j)
      C(i, j) = std::clamp(base(j) + dptune::gaussian(rng, 0.05), 0.0, 1.0);
  }
  // The front of the GP means at the observed inputs, as Mobo builds it.
  std::vector<dptune::Point> means;
  for (std::size_t i = 0; i < n; ++i) X.row(static_cast<Eigen::Index>(i)) = mobo.inputs()[i];
  {
    Eigen::VectorXd m0, m1;
    mobo.gp(0).predict(X, m0, nullptr);
    mobo.gp(1).predict(X, m1, nullptr);
    for (Eigen::Index i = 0; i < X.rows(); ++i) means.push_back({m0(i), m1(i)});
  }
  const dp::Hvpoi h(means, {1.1, 11});
  const int reps = 20;
  Eigen::VectorXd a;
  const double t0 = cpu_now();
  for (int r = 0; r < reps; ++r) a = mobo.acquisition(C, h);
  const double per = (cpu_now() - t0) / reps;
  Eigen::Index nonzero = 0;
  for (double v : a) nonzero += v > 0;
  std::printf(
      "one HVPoI over 5000 candidates at n = %zu: %.2f ms (%ld candidates with "
      "non-dominated mean; front of %zu means)\n",
      n, per * 1e3, static_cast<long>(nonzero), h.front().size());
  {
    // A heavier case: the front of the 16 initial means only (as early in a run), so that many
    // more candidates have a non-dominated mean and need variances.
    const dp::Hvpoi early(std::vector<dptune::Point>(means.begin(), means.begin() + 16), {1.1, 11});
    const double te = cpu_now();
    for (int r = 0; r < reps; ++r) a = mobo.acquisition(C, early);
    Eigen::Index rows = 0;
    for (double v : a) rows += v > 0;
    std::printf(
        "  against the front of the 16 initial means: %.2f ms (%ld candidates with "
        "non-dominated mean)\n",
        (cpu_now() - te) / reps * 1e3, static_cast<long>(rows));
    // The sweep as Mobo::maximise runs it: exact α for the 64 best (the refinement pool), the
    // variances of candidates whose ΔPF cannot reach the 64th best α skipped (branch and bound).
    Eigen::VectorXd b;
    const double tb = cpu_now();
    for (int r = 0; r < reps; ++r) b = mobo.acquisition(C, early, true, 64);
    Eigen::Index computed = 0;
    for (double v : b) computed += v > 0;
    std::printf(
        "  the same sweep as maximise runs it (exact top 64, bound on the rest): %.2f ms "
        "(variances for %ld candidates)\n",
        (cpu_now() - tb) / reps * 1e3, static_cast<long>(computed));
    const double tc = cpu_now();
    for (int r = 0; r < reps; ++r) b = mobo.acquisition(C, h, true, 64);
    std::printf("  and against the final front, exact top 64: %.2f ms\n",
                (cpu_now() - tc) / reps * 1e3);
  }
  {
    // Breakdown: the cross-covariances of both GPs alone.
    Eigen::MatrixXd Ks(C.rows(), static_cast<Eigen::Index>(mobo.gp(0).size()));
    const double tk = cpu_now();
    for (int r = 0; r < reps; ++r) {
      mobo.gp(0).cross_covariance(C, Ks);
      mobo.gp(1).cross_covariance(C, Ks);
    }
    std::printf("  of which cross-covariances of both GPs at all 5000 candidates: %.2f ms\n",
                (cpu_now() - tk) / reps * 1e3);
  }
  // Worst case: every candidate needs its variances (the buffered path of the acquisition).
  {
    const auto nd = static_cast<Eigen::Index>(mobo.gp(0).size());
    Eigen::MatrixXd Ks(C.rows(), nd), V(C.rows(), nd);
    Eigen::VectorXd m(C.rows()), v(C.rows());
    const double t1 = cpu_now();
    for (int r = 0; r < reps; ++r)
      for (std::size_t k = 0; k < 2; ++k) {
        mobo.gp(k).cross_covariance(C, Ks);
        mobo.gp(k).mean_from(Ks, m);
        mobo.gp(k).variance_from(Ks, v, V);
      }
    std::printf("means and variances of both GPs at all 5000 candidates (worst case): %.2f ms\n",
                (cpu_now() - t1) / reps * 1e3);
  }
  return 0;
}
