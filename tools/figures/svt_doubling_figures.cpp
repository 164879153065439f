#include "svt_doubling_figures.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "dptune/host/format.hpp"

namespace dptune::figures {
namespace {

using dptune::host::significant;

// The c of Figure 4 (T ≈ c log n, "sandwiched between 1 and 5, approximately equal to 3"); Ding
// et al. state no constant in Theorems 2-3 and no base, so the reference curves are nominal only.
// Base 2: Lemma 1's doubling is binary.
constexpr double kReferenceMultipliers[] = {1, 3, 5};

// The runs of one kϵ whose n falls in [2^j, 2^(j+1)).
struct Bin {
  double n = 0, t = 0, t2 = 0, ln = 0, l2 = 0, fid = 0;
  std::size_t runs = 0, none = 0, over = 0;
};

std::map<int, Bin> bins_of(const svt_doubling::SimulationResult& sim, double k_epsilon) {
  std::map<int, Bin> bins;
  for (const auto& r : sim.runs) {
    if (r.k_epsilon != k_epsilon) continue;
    const int j = r.n >= 1 ? static_cast<int>(std::floor(std::log2(r.n))) : 0;
    Bin& b = bins[j];
    const double t = static_cast<double>(r.iterations);
    b.n += r.n;
    b.t += t;
    b.t2 += t * t;
    if (r.n > 1) {
      b.ln += t / std::log(r.n);
      b.l2 += t / std::log2(r.n);
    }
    b.fid += r.fidelity;
    b.runs++;
    b.none += r.selected ? 0 : 1;
    b.over += r.iterations > r.default_cap ? 1 : 0;
  }
  return bins;
}

// Figure 4's and Figure 3's curves for one kϵ, and its rows of the table.
void add_k_epsilon(Figure& figure, const svt_doubling::SimulationResult& sim, std::size_t e,
                   double ke, std::size_t candidates) {
  const std::string tag = significant(ke);
  dptune::Series iters{
      "svt_iterations.keps_" + tag, "n = (u* - u0) / g", "mean iterations T", {}, {}};
  dptune::Series fid{
      "svt_fidelity.keps_" + tag, "n = (u* - u0) / g", "mean final fidelity u_s* / u*", {}, {}};
  for (const auto& [j, b] : bins_of(sim, ke)) {
    const double runs = static_cast<double>(b.runs);
    const double mean_t = b.t / runs;
    const double sd = std::sqrt(std::max(0.0, b.t2 / runs - mean_t * mean_t));
    iters.x.push_back(b.n / runs);
    iters.y.push_back(mean_t);
    fid.x.push_back(b.n / runs);
    fid.y.push_back(b.fid / runs);
    figure.table.push_back(tag + "," + std::to_string(1 << j) + "," + std::to_string(2 << j) + "," +
                           std::to_string(b.runs) + "," + significant(b.n / runs, 4) + "," +
                           significant(mean_t, 4) + "," + significant(sd, 3) + "," +
                           significant(b.ln / runs, 3) + "," + significant(b.l2 / runs, 3) + "," +
                           significant(b.fid / runs, 4) + "," + std::to_string(b.none) + "," +
                           std::to_string(b.over));
  }
  dptune::Series trace{"svt_fidelity_by_iteration.keps_" + tag,
                       "iteration t",
                       "mean fidelity alpha_t (u0 = 0)",
                       {},
                       {}};
  const auto& curve = sim.fidelity_by_iteration[e];
  for (std::size_t t = 0; t < curve.size(); ++t) {
    trace.x.push_back(static_cast<double>(t + 1));
    trace.y.push_back(curve[t]);
  }
  if (!curve.empty())
    figure.notes.push_back(
        "fidelity: k epsilon = " + tag +
        ": final alpha_T (u0 = 0) = " + significant(curve.back(), 4) +
        "; exponential-mechanism limit (1/(1 - e^(-1/b)) - b) / E[u*] with b = 4/(k epsilon) = " +
        significant(svt_doubling::exponential_mechanism_fidelity(ke, candidates), 4));
  figure.series.push_back(std::move(iters));
  figure.series.push_back(std::move(fid));
  figure.series.push_back(std::move(trace));
}

// Figure 4's reference curves T = c log2 n on n = 2 · 1.25^i up to 1/g (a geometric grid, counted
// by an integer).
dptune::Series reference_curve(double c, double g) {
  dptune::Series ref{"svt_iterations.reference_" + significant(c) + "_log2_n",
                     "n = (u* - u0) / g",
                     significant(c) + " log2 n",
                     {},
                     {}};
  for (int i = 0; 2 * std::pow(1.25, i) <= 1 / g; ++i) {
    const double n = 2 * std::pow(1.25, i);
    ref.x.push_back(n);
    ref.y.push_back(c * std::log2(n));
  }
  return ref;
}

}  // namespace

Figure svt_doubling_figures(const svt_doubling::SimulationOptions& o,
                            dptune::RandomBitGenerator& rng) {
  const svt_doubling::SimulationResult sim = svt_doubling::simulate(o, rng);
  Figure figure;
  figure.notes.push_back(
      "simulation of Ding et al. §4.2 (no data): |S| = " + std::to_string(o.candidates) +
      " utilities uniform on (0, 1) per run, g = " + significant(o.g) +
      ", Laplace scales 2/(k epsilon) and 4/(k epsilon); n = (u* - u0) / g varied through u0 = u* "
      "- n g with n log-uniform on [1, u*/g], " +
      std::to_string(o.repetitions) +
      " runs per k epsilon, no iteration cap (the loop runs to its natural end)");
  figure.notes.push_back("generator: " + rng.description());
  figure.table_name = "svt_doubling_bins";
  figure.table.push_back(
      "k_epsilon,n_from,n_to,runs,mean_n,mean_t,sd_t,mean_t_over_ln_n,mean_t_over_log2_n,"
      "mean_fidelity,runs_without_selection,runs_over_default_cap");
  for (std::size_t e = 0; e < o.k_epsilons.size(); ++e)
    add_k_epsilon(figure, sim, e, o.k_epsilons[e], o.candidates);
  for (double c : kReferenceMultipliers) figure.series.push_back(reference_curve(c, o.g));
  figure.notes.push_back(
      "series: svt_iterations.keps_* (Figure 4), svt_fidelity.keps_* and "
      "svt_fidelity_by_iteration.keps_* (Figure 3), svt_iterations.reference_*_log2_n");
  return figure;
}

}  // namespace dptune::figures
