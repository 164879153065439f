#include "dp_hype_figure2.hpp"

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "dp_hype/private_vote.hpp"
#include "dp_hype_simulation.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/format.hpp"

namespace dptune::figures {
namespace {

using dptune::host::significant;

// accuracy[(|H|, |H_good|, σ_loss, k, ε index)].
using AccuracyTable =
    std::map<std::tuple<std::size_t, std::size_t, double, std::size_t, std::size_t>, double>;

void require_positive(const std::vector<double>& values, const char* what, bool zero_ok) {
  if (values.empty())
    throw dptune::InvalidArgument(std::string(what) + ": give at least one value");
  for (double v : values)
    if (!std::isfinite(v) || v < 0 || (!zero_ok && v == 0))
      throw dptune::InvalidArgument(std::string(what) + ": expected finite values " +
                                    (zero_ok ? ">= 0" : "> 0") + ", got " + significant(v));
}

void require_counts(const std::vector<std::size_t>& values, const char* what) {
  if (values.empty())
    throw dptune::InvalidArgument(std::string(what) + ": give at least one value");
  for (std::size_t v : values)
    if (v == 0)
      throw dptune::InvalidArgument(std::string(what) + ": expected integers >= 1, got 0");
}

// Liebenow et al. 2025 Figure 2 as line series: for every parameter the options sweep (more than
// one value), one curve over it for each combination of the other parameters' values and each ε.
// Panels (a)-(c) sweep σ_loss, |H_good| and |H| with one curve per (k, ε); sweeping only k gives
// accuracy against k, one curve per ε.  Values are raw: the host's plots draw |H_good| and |H|
// (geometric grids, as in the paper) on log axes.
std::vector<dptune::Series> figure2_series(const AccuracyTable& accuracy, const Figure2Options& o) {
  enum Axis { kSize, kGood, kLoss, kK };
  const std::size_t counts[4] = {o.sizes.size(), o.goods.size(), o.sigma_losses.size(),
                                 o.ks.size()};
  const char* names[4] = {"H", "good", "sigma_loss", "k"};
  const char* labels[4] = {"|H| (number of candidates)", "|H_good| (good candidates)",
                           "sigma_loss (spread of local losses)", "k (votes per client)"};
  auto value = [&](int axis, std::size_t i) -> double {
    switch (axis) {
      case kSize:
        return static_cast<double>(o.sizes[i]);
      case kGood:
        return static_cast<double>(o.goods[i]);
      case kLoss:
        return o.sigma_losses[i];
      default:
        return static_cast<double>(o.ks[i]);
    }
  };
  // k is a curve parameter whenever another parameter is swept (as in the paper's panels).
  const bool other_swept = counts[kSize] > 1 || counts[kGood] > 1 || counts[kLoss] > 1;
  std::vector<dptune::Series> out;
  for (int axis = 0; axis < 4; ++axis) {
    if (counts[axis] < 2 || (axis == kK && other_swept)) continue;
    // Every combination of the other three parameters, and every ε.
    std::size_t idx[4] = {0, 0, 0, 0};
    for (;;) {
      for (std::size_t e = 0; e < o.epsilons.size(); ++e) {
        dptune::Series series;
        // GROUP.MEMBER: every curve of one panel is also drawn on one plot, GROUP.svg.
        std::string member;
        for (int other = 0; other < 4; ++other)
          if (other != axis && (other == kK || counts[other] > 1))
            member += names[other] + significant(value(other, idx[other])) + "_";
        member += "eps" + significant(o.epsilons[e]);
        series.name = std::string("figure2_accuracy_vs_") + names[axis] + "." + member;
        series.x_label = labels[axis];
        series.y_label = "accuracy (Pr[a good candidate wins])";
        for (std::size_t i = 0; i < counts[axis]; ++i) {
          std::size_t at[4] = {idx[0], idx[1], idx[2], idx[3]};
          at[axis] = i;
          const auto it = accuracy.find(
              {o.sizes[at[kSize]], o.goods[at[kGood]], o.sigma_losses[at[kLoss]], o.ks[at[kK]], e});
          if (it == accuracy.end()) continue;  // k > |H| or |H_good| > |H|: no such setting
          series.x.push_back(value(axis, i));
          series.y.push_back(it->second);
        }
        if (series.x.size() >= 2) out.push_back(std::move(series));
      }
      int other = 0;
      for (; other < 4; ++other) {
        if (other == axis) continue;
        if (++idx[other] < counts[other]) break;
        idx[other] = 0;
      }
      if (other == 4) break;
    }
  }
  return out;
}

// σ per (k, ε), calibrated as a federated run calibrates it (the accountant's smallest σ for
// Gaussian(σ / √(2k)), Liebenow et al. 2025 Theorem III.1, or the analytic Gaussian), and the
// accountant's ε for it.
struct Calibrated {
  std::map<std::pair<std::size_t, double>, double> sigma;
  std::map<std::pair<std::size_t, double>, double> epsilon;
};

Calibrated calibrate(const Figure2Options& o, const dptune::Accountant& accountant, double delta) {
  Calibrated c;
  for (std::size_t k : o.ks)
    for (double eps : o.epsilons) {
      const double sigma = o.analytic_gaussian
                               ? dp_hype::analytic_gaussian_sigma(eps, delta, k)
                               : dp_hype::calibrate_sigma(accountant, eps, delta, k).noise;
      c.sigma[{k, eps}] = sigma;
      c.epsilon[{k, eps}] = accountant.epsilon(dp_hype::event_for_sigma(sigma, k), delta).epsilon;
    }
  return c;
}

std::vector<std::string> header_notes(const Figure2Options& o) {
  return {"simulation of Liebenow et al. 2025 Figure 2 (no training, no private data): " +
              std::to_string(o.clients) + " clients, " + std::to_string(o.repetitions) +
              " repetitions per setting; the table holds one row per setting with accuracy = "
              "the fraction of runs that picked a good candidate",
          "the aggregate gets N(0, sigma^2), the honest noise a deployment guarantees; a "
          "federated run adds N(0, sigma^2 / h) per client (h = n - floor(gamma n) - floor(xi n) "
          "honest survivors), so its sum carries a little more noise than simulated",
          std::string("sigma: ") +
              (o.analytic_gaussian ? "analytic Gaussian (Balle & Wang 2018)"
                                   : "calibrated with the accountant on Gaussian(sigma / "
                                     "sqrt(2k))") +
              "; accountant_epsilon: the accountant's epsilon for that sigma"};
}

}  // namespace

void check(const Figure2Options& o) {
  if (o.clients == 0) throw dptune::InvalidArgument("clients: expected an integer >= 1, got 0");
  if (o.repetitions == 0)
    throw dptune::InvalidArgument("repetitions: expected an integer >= 1, got 0");
  require_positive(o.epsilons, "epsilons", false);
  require_positive(o.sigma_losses, "sigma-loss", true);
  require_counts(o.ks, "k");
  require_counts(o.goods, "good");
  require_counts(o.sizes, "candidates");
}

Figure dp_hype_figure2(const Figure2Options& o, const dptune::Accountant& accountant, double delta,
                       dptune::RandomBitGenerator& rng,
                       const dp_hype::secagg::ParallelFor& parallel_for) {
  check(o);
  if (!(delta > 0 && delta < 1))
    throw dptune::InvalidArgument("delta must be in (0, 1), got " + significant(delta));
  const Calibrated cal = calibrate(o, accountant, delta);
  Figure figure;
  figure.notes = header_notes(o);
  figure.table_name = "figure2_settings";
  figure.table.push_back(
      "candidates,good,sigma_loss,k,epsilon,sigma,accuracy,theorem_iv1_mean_bound,mean_gap,"
      "accountant_epsilon");
  AccuracyTable accuracy;
  for (std::size_t p : o.sizes)
    for (std::size_t good : o.goods)
      for (double sl : o.sigma_losses) {
        dp_hype::SimulationSetting s;
        s.clients = o.clients;
        s.candidates = p;
        s.good = good;
        s.sigma_loss = sl;
        s.repetitions = o.repetitions;
        s.ks.clear();
        for (std::size_t k : o.ks)
          if (k <= p) s.ks.push_back(k);
        if (good > p || s.ks.empty()) continue;
        // All k share each repetition's losses (common random numbers); σ per (k, ε).
        for (std::size_t k : s.ks) {
          std::vector<double> row;
          for (double eps : o.epsilons) row.push_back(cal.sigma.at({k, eps}));
          s.sigmas_per_k.push_back(std::move(row));
        }
        const auto cells = dp_hype::simulate(s, rng.next_u64(), parallel_for);
        for (std::size_t ki = 0; ki < s.ks.size(); ++ki)
          for (std::size_t e = 0; e < o.epsilons.size(); ++e) {
            const auto& c = cells[ki * o.epsilons.size() + e];
            const std::size_t k = s.ks[ki];
            accuracy[{p, good, sl, k, e}] = c.accuracy;
            figure.table.push_back(
                std::to_string(p) + "," + std::to_string(good) + "," + significant(sl) + "," +
                std::to_string(k) + "," + significant(o.epsilons[e]) + "," + significant(c.sigma) +
                "," + significant(c.accuracy, 4) + "," + significant(c.mean_bound, 4) + "," +
                significant(c.mean_gap, 5) + "," + significant(cal.epsilon.at({k, o.epsilons[e]})));
          }
      }
  figure.series = figure2_series(accuracy, o);
  const double reps = static_cast<double>(o.repetitions);
  figure.notes.push_back(
      "series (Liebenow et al. 2025 Figure 2): one accuracy curve per swept parameter (k, "
      "sigma_loss, |H_good| and |H| on log axes) for each value of the others and each epsilon; "
      "Monte Carlo standard error <= 0.5 / sqrt(" +
      significant(reps) + ") = " + significant(0.5 / std::sqrt(reps), 3) + " per point");
  figure.notes.push_back(
      "theorem_iv1_mean_bound: the mean Theorem IV.1 lower bound at the realised vote gap; it "
      "never exceeds the simulated accuracy");
  return figure;
}

}  // namespace dptune::figures
