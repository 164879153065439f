#include "dpareto/mobo.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "dpareto/box_minimizer.hpp"
#include "dpareto/halton.hpp"
#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune::dpareto {

namespace {

/// Central-difference probes of x in the unit cube: row 0 is x, rows 1 + 2j and 2 + 2j step
/// dimension j up and down by 1e-4 (clamped to [0, 1]).
Eigen::MatrixXd central_difference_probes(const Eigen::VectorXd& x) {
  constexpr double kStep = 1e-4;
  const Eigen::Index d = x.size();
  Eigen::MatrixXd P(2 * d + 1, d);
  P.row(0) = x.transpose();
  for (Eigen::Index j = 0; j < d; ++j) {
    P.row(1 + 2 * j) = x.transpose();
    P.row(2 + 2 * j) = x.transpose();
    P(1 + 2 * j, j) = std::min(1.0, x(j) + kStep);
    P(2 + 2 * j, j) = std::max(0.0, x(j) - kStep);
  }
  return P;
}

/// The gradient from values v at central_difference_probes(x) = P (0 where a clamp left no width).
Eigen::VectorXd central_difference_gradient(const Eigen::MatrixXd& P, const Eigen::VectorXd& v) {
  const Eigen::Index d = P.cols();
  Eigen::VectorXd g(d);
  for (Eigen::Index j = 0; j < d; ++j) {
    const double width = P(1 + 2 * j, j) - P(2 + 2 * j, j);
    g(j) = width > 0 ? (v(1 + 2 * j) - v(2 + 2 * j)) / width : 0.0;
  }
  return g;
}

Eigen::MatrixXd stack(const std::vector<Eigen::VectorXd>& rows, std::size_t cols) {
  Eigen::MatrixXd M(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(cols));
  for (std::size_t i = 0; i < rows.size(); ++i) M.row(static_cast<Eigen::Index>(i)) = rows[i];
  return M;
}

// The sweep's candidates kept for the local refinement and the repeat check: only these need exact
// α, so the sweep asks for its kPool best (the others may be reported as 0).
constexpr std::size_t kPool = 64;

bool is_taken(const Eigen::VectorXd& x, const std::vector<Eigen::VectorXd>& taken) {
  for (const auto& t : taken)
    if ((t - x).squaredNorm() < 1e-18) return true;
  return false;
}

}  // namespace

Mobo::Mobo(std::size_t dims, MoboOptions options) : dims_(dims), options_(std::move(options)) {
  require(options_.gps.size() >= 2, "DPareto: at least two objectives");
  require(options_.reference_mode != ReferenceMode::Fixed ||
              options_.reference.size() == options_.gps.size(),
          "DPareto: the fixed reference point needs one coordinate per objective");
  require(options_.candidates >= 1, "DPareto: at least one acquisition candidate");
  require(options_.refit_every >= 1, "DPareto: refit_every must be >= 1");
  gps_.reserve(options_.gps.size());
  for (const auto& o : options_.gps) gps_.emplace_back(dims_, o);
}

void Mobo::add(const Eigen::VectorXd& x, const Eigen::VectorXd& y) {
  require(x.size() == static_cast<Eigen::Index>(dims_), "DPareto: input of the wrong dimension");
  require(y.size() == static_cast<Eigen::Index>(objectives()),
          "DPareto: observation of the wrong dimension");
  require(y.allFinite(), "DPareto: non-finite objective value");
  xs_.push_back(x);
  ys_.push_back(y);
}

void Mobo::load_data(const std::vector<Eigen::VectorXd>& xs,
                     const std::vector<Eigen::VectorXd>& ys) {
  const Eigen::MatrixXd X = stack(xs, dims_);
  const Eigen::MatrixXd Y = stack(ys, objectives());
  for (std::size_t k = 0; k < objectives(); ++k)
    gps_[k].set_data(X, Y.col(static_cast<Eigen::Index>(k)));
}

namespace {
/// Buffers grow to a capacity (columns in steps of 32, as n grows by one per iteration) and are
/// used through blocks, so a sweep allocates nothing in the steady state.
void ensure_capacity(Eigen::MatrixXd& b, Eigen::Index rows, Eigen::Index cols) {
  if (b.rows() < rows || b.cols() < cols)
    b.resize(std::max(b.rows(), rows), std::max(b.cols(), (cols + 31) / 32 * 32));
}
}  // namespace

/// The posterior means of every objective at the rows of X into w.mu (and each GP's
/// cross-covariance into w.ks, which the variances reuse).
void Mobo::posterior_means(const Eigen::MatrixXd& X, bool use_known, AcquisitionWork& w) const {
  const auto m = X.rows();
  const auto n = static_cast<Eigen::Index>(xs_.size() > 0 ? gps_[0].size() : 0);
  w.ks.resize(objectives());
  ensure_capacity(w.mu, m, static_cast<Eigen::Index>(objectives()));
  if (w.mean.size() < m) w.mean.resize(m);
  // One cross-covariance matrix per GP serves both the means (all rows) and the variances.
  for (std::size_t k = 0; k < objectives(); ++k) {
    if ((use_known && is_known(k))) {
      options_.known[k](X, w.exact);
      w.mu.col(static_cast<Eigen::Index>(k)).head(m) = w.exact.head(m);
      continue;
    }
    ensure_capacity(w.ks[k], m, n);
    auto ks = w.ks[k].topLeftCorner(m, n);
    gps_[k].cross_covariance(X, ks);
    gps_[k].mean_from(ks, w.mean.head(m));
    w.mu.col(static_cast<Eigen::Index>(k)).head(m) = w.mean.head(m);
  }
}

/// The rows of X (into w.rows, with their ΔPF bound in w.improvement) where α can be positive.
void Mobo::promising_rows(Eigen::Index m, const Hvpoi& h, bool use_known,
                          AcquisitionWork& w) const {
  const std::size_t p = objectives();
  auto known = [&](std::size_t k) { return use_known && is_known(k); };
  auto noise_of = [&](std::size_t k) {
    return options_.observation_noise ? gps_[k].noise_variance() : 0.0;
  };
  // α = ΔPF(μ − κs)·PoI is exactly zero wherever μ − κ s_prior is dominated (s ≤ s_prior, the
  // prior standard deviation): only the other rows need variances, the expensive part (n² per
  // candidate and GP).  ΔPF(μ − κ s_prior) ≥ α bounds α for the bounded sweep.
  const double kappa = options_.optimism;
  double prow[16];
  std::vector<double> pheap;
  double* prior_sd = p <= 16 ? prow : (pheap.resize(p), pheap.data());
  for (std::size_t k = 0; k < p; ++k)
    prior_sd[k] = known(k) ? std::sqrt(options_.var_floor)
                           : std::sqrt(std::max(gps_[k].kernel().signal_variance + noise_of(k),
                                                options_.var_floor));
  w.rows.clear();
  w.improvement.clear();
  double mrow[16];
  std::vector<double> mheap;
  double* mu_i = p <= 16 ? mrow : (mheap.resize(p), mheap.data());
  for (Eigen::Index i = 0; i < m; ++i) {
    for (std::size_t k = 0; k < p; ++k)
      mu_i[k] = w.mu(i, static_cast<Eigen::Index>(k)) - kappa * prior_sd[k];
    const double d = h.improvement(mu_i);
    if (d > 0) {
      w.rows.push_back(i);
      w.improvement.push_back(d);
    }
  }
}

Eigen::VectorXd Mobo::acquisition(const Eigen::MatrixXd& X, const Hvpoi& h, bool use_known,
                                  std::size_t top) const {
  auto known = [&](std::size_t k) { return use_known && is_known(k); };
  // The spread of a new observation adds the GP's noise to the latent variance (an option).
  auto noise_of = [&](std::size_t k) {
    return options_.observation_noise ? gps_[k].noise_variance() : 0.0;
  };
  const std::size_t p = objectives();
  const auto m = X.rows();
  Eigen::VectorXd alpha = Eigen::VectorXd::Zero(m);
  if (!gps_[0].has_data()) return alpha;
  AcquisitionWork& w = m > 64 ? sweep_work_ : probe_work_;
  const auto n = static_cast<Eigen::Index>(xs_.size() > 0 ? gps_[0].size() : 0);
  const auto np = static_cast<Eigen::Index>(p);
  posterior_means(X, use_known, w);
  promising_rows(m, h, use_known, w);
  if (w.rows.empty()) return alpha;
  const auto r_all = static_cast<Eigen::Index>(w.rows.size());
  // Which rows get variances, in blocks: all of them at once, or (top > 0) by decreasing ΔPF until
  // the next ΔPF cannot beat the top-th best α so far (α = ΔPF · PoI ≤ ΔPF, PoI ≤ 1).
  const bool bounded = top > 0 && static_cast<std::size_t>(r_all) > top;
  w.order.resize(static_cast<std::size_t>(r_all));
  std::iota(w.order.begin(), w.order.end(), std::size_t{0});
  if (bounded)
    std::stable_sort(w.order.begin(), w.order.end(), [&](std::size_t u, std::size_t v) {
      return w.improvement[u] > w.improvement[v];
    });
  const Eigen::Index block =
      bounded ? std::max<Eigen::Index>(2 * static_cast<Eigen::Index>(top), 128) : r_all;
  const Eigen::Index cap = std::min(block, r_all);
  ensure_capacity(w.sd, cap, np);
  ensure_capacity(w.v, cap, n);
  ensure_capacity(w.selected, cap, n);
  if (w.var.size() < cap) w.var.resize(cap);
  const double kappa = options_.optimism;
  double mrow[16], srow[16];
  std::vector<double> mheap;
  double* mu_i = p <= 16 ? mrow : (mheap.resize(p), mheap.data());
  std::vector<double> sheap;
  double* sd_i = p <= 16 ? srow : (sheap.resize(p), sheap.data());
  w.best.clear();
  for (Eigen::Index b0 = 0; b0 < r_all; b0 += block) {
    if (bounded && w.best.size() >= top) {
      // The top-th largest α so far (w.best holds every computed α > 0).
      std::nth_element(w.best.begin(), w.best.begin() + static_cast<std::ptrdiff_t>(top - 1),
                       w.best.end(), std::greater<>());
      if (w.improvement[w.order[static_cast<std::size_t>(b0)]] <= w.best[top - 1]) break;
    }
    const Eigen::Index r = std::min(block, r_all - b0);
    auto row_of = [&](Eigen::Index q) { return w.rows[w.order[static_cast<std::size_t>(b0 + q)]]; };
    for (std::size_t k = 0; k < p; ++k) {
      if (known(k)) {
        w.sd.col(static_cast<Eigen::Index>(k)).head(r).setConstant(std::sqrt(options_.var_floor));
        continue;
      }
      const auto ks = w.ks[k].topLeftCorner(m, n);
      auto v = w.v.topLeftCorner(r, n);
      if (r == m) {
        gps_[k].variance_from(ks, w.var.head(r), v, options_.var_floor);
      } else {
        auto sel = w.selected.topLeftCorner(r, n);
        for (Eigen::Index j = 0; j < n; ++j)
          for (Eigen::Index q = 0; q < r; ++q) sel(q, j) = ks(row_of(q), j);
        gps_[k].variance_from(sel, w.var.head(r), v, options_.var_floor);
      }
      w.sd.col(static_cast<Eigen::Index>(k)).head(r) =
          (w.var.head(r).array() + noise_of(k)).sqrt().matrix();
    }
    for (Eigen::Index q = 0; q < r; ++q) {
      const Eigen::Index i = row_of(q);
      for (std::size_t k = 0; k < p; ++k) {
        mu_i[k] = w.mu(i, static_cast<Eigen::Index>(k));
        sd_i[k] = w.sd(q, static_cast<Eigen::Index>(k));
      }
      double d = w.improvement[w.order[static_cast<std::size_t>(b0 + q)]];
      if (kappa > 0) {
        double lcb[16];
        std::vector<double> lheap;
        double* l = p <= 16 ? lcb : (lheap.resize(p), lheap.data());
        for (std::size_t k = 0; k < p; ++k) l[k] = mu_i[k] - kappa * sd_i[k];
        d = h.improvement(l);
      }
      alpha(i) = d > 0 ? d * h.poi(mu_i, sd_i) : 0.0;
      if (bounded && alpha(i) > 0) w.best.push_back(alpha(i));
    }
  }
  return alpha;
}

double Mobo::acquisition_grad(const Eigen::VectorXd& x, const Hvpoi& h,
                              Eigen::VectorXd& grad) const {
  require(objectives() == 2, "DPareto: the analytic acquisition gradient is for two objectives");
  const auto d = static_cast<Eigen::Index>(dims_);
  grad = Eigen::VectorXd::Zero(d);
  if (!gps_[0].has_data()) return 0;
  double mu[2], sd[2], lcb[2];
  Eigen::VectorXd dmu[2], dsd[2];
  for (std::size_t k = 0; k < 2; ++k) {
    dmu[k] = Eigen::VectorXd::Zero(d);
    dsd[k] = Eigen::VectorXd::Zero(d);
    if (is_known(k)) {
      const Eigen::MatrixXd P = central_difference_probes(x);
      Eigen::VectorXd v;
      options_.known[k](P, v);
      mu[k] = v(0);
      dmu[k] = central_difference_gradient(P, v);
      sd[k] = std::sqrt(options_.var_floor);
    } else {
      double var = 0;
      Eigen::VectorXd dvar;
      gps_[k].predict_grad(x, mu[k], var, dmu[k], dvar, options_.var_floor);
      const double noise = options_.observation_noise ? gps_[k].noise_variance() : 0.0;
      sd[k] = std::sqrt(var + noise);
      dsd[k] = dvar / (2 * sd[k]);
    }
    lcb[k] = mu[k] - options_.optimism * sd[k];
  }
  double g_lcb[2];
  const double delta = h.improvement_grad(lcb, g_lcb);
  if (!(delta > 0)) return 0;
  double g_mu[2], g_sd[2];
  const double poi = h.poi_grad(mu, sd, g_mu, g_sd);
  for (std::size_t k = 0; k < 2; ++k)
    grad += g_lcb[k] * poi * (dmu[k] - options_.optimism * dsd[k]) +
            delta * (g_mu[k] * dmu[k] + g_sd[k] * dsd[k]);
  return delta * poi;
}

void Mobo::mean_of(std::size_t k, const Eigen::MatrixXd& X, Eigen::VectorXd& out) const {
  if (is_known(k))
    options_.known[k](X, out);
  else
    gps_[k].predict(X, out, nullptr);
}

Hvpoi Mobo::make_hvpoi(const Eigen::MatrixXd& X, const std::vector<Eigen::VectorXd>& ys) {
  // The front P of the GP means at the observed inputs (as GPflowOpt's HVPoI does), or of the
  // observations themselves.
  const std::size_t p = objectives();
  std::vector<Point> means(static_cast<std::size_t>(X.rows()), Point(p));
  for (std::size_t k = 0; k < p; ++k) {
    Eigen::VectorXd mk;
    if (options_.observed_front) {
      mk.resize(X.rows());
      for (std::size_t i = 0; i < ys.size(); ++i)
        mk(static_cast<Eigen::Index>(i)) = ys[i](static_cast<Eigen::Index>(k));
    } else {
      mean_of(k, X, mk);
    }
    for (std::size_t i = 0; i < means.size(); ++i) means[i][k] = mk(static_cast<Eigen::Index>(i));
  }
  Point reference = options_.reference;
  if (options_.reference_mode == ReferenceMode::Adaptive) {
    std::vector<Point> front;
    for (std::size_t i : pareto_indices(means)) front.push_back(means[i]);
    reference.assign(p, 0);
    for (std::size_t k = 0; k < p; ++k) {
      double lo = front[0][k], hi = front[0][k];
      for (const auto& q : front) {
        lo = std::min(lo, q[k]);
        hi = std::max(hi, q[k]);
      }
      // GPflowOpt: max(P) + 2 (max(P) − min(P)) / |P|.  Guard a front that is one point (or flat
      // in an objective), where that reference would leave no room to improve.
      double margin = 2 * (hi - lo) / static_cast<double>(front.size());
      if (!(margin > 0)) margin = 1e-3 * (1 + std::abs(hi));
      reference[k] = hi + margin;
    }
  }
  last_reference_ = reference;
  return Hvpoi(means, reference, options_.improvement_maps);
}

Eigen::MatrixXd Mobo::sweep_candidates(const Eigen::MatrixXd& X, RandomBitGenerator& rng) const {
  const auto d = static_cast<Eigen::Index>(dims_);
  // Candidates: scrambled Halton plus Gaussian perturbations of the inputs on the means' front.
  const auto n_local = static_cast<std::size_t>(
      std::round(options_.local_share * static_cast<double>(options_.candidates)));
  const std::size_t n_global = options_.candidates - std::min(n_local, options_.candidates);
  Eigen::MatrixXd C(static_cast<Eigen::Index>(options_.candidates), d);
  if (n_global > 0)
    C.topRows(static_cast<Eigen::Index>(n_global)) = scrambled_halton(n_global, dims_, rng);
  std::vector<Eigen::Index> front_rows;
  {
    std::vector<Point> means(static_cast<std::size_t>(X.rows()), Point(objectives()));
    for (std::size_t k = 0; k < objectives(); ++k) {
      Eigen::VectorXd mk;
      mean_of(k, X, mk);
      for (std::size_t i = 0; i < means.size(); ++i) means[i][k] = mk(static_cast<Eigen::Index>(i));
    }
    for (std::size_t i : pareto_indices(means)) front_rows.push_back(static_cast<Eigen::Index>(i));
  }
  for (std::size_t i = n_global; i < options_.candidates; ++i) {
    const Eigen::Index base = front_rows[uniform_index(rng, front_rows.size())];
    for (Eigen::Index j = 0; j < d; ++j)
      C(static_cast<Eigen::Index>(i), j) = std::clamp(X(base, j) + gaussian(rng, 0.05), 0.0, 1.0);
  }
  if (options_.snap)
    for (Eigen::Index i = 0; i < C.rows(); ++i) {
      Eigen::VectorXd row = C.row(i).transpose();
      options_.snap(row);
      C.row(i) = row.transpose();
    }
  return C;
}

Eigen::VectorXd Mobo::sweep_acquisition(const Eigen::MatrixXd& C, const Hvpoi& h) const {
  const auto d = static_cast<Eigen::Index>(dims_);
  bool any_known = false;
  for (std::size_t k = 0; k < objectives(); ++k) any_known = any_known || is_known(k);
  if (!any_known || options_.known_screen == 0 ||
      static_cast<std::size_t>(C.rows()) <= options_.known_screen)
    return acquisition(C, h, true, kPool);
  // Screen by the all-GP acquisition, price only its best known_screen rows, re-rank exactly.
  const Eigen::VectorXd screen = acquisition(C, h, false, options_.known_screen);
  std::vector<Eigen::Index> rank(static_cast<std::size_t>(C.rows()));
  std::iota(rank.begin(), rank.end(), Eigen::Index{0});
  const auto keep = static_cast<std::ptrdiff_t>(options_.known_screen);
  std::partial_sort(rank.begin(), rank.begin() + keep, rank.end(),
                    [&](Eigen::Index i, Eigen::Index j) {
                      return screen(i) > screen(j) || (screen(i) == screen(j) && i < j);
                    });
  rank.resize(static_cast<std::size_t>(keep));
  while (!rank.empty() && !(screen(rank.back()) > 0)) rank.pop_back();
  Eigen::VectorXd a = Eigen::VectorXd::Zero(C.rows());
  if (!rank.empty()) {
    std::sort(rank.begin(), rank.end());
    Eigen::MatrixXd S(static_cast<Eigen::Index>(rank.size()), d);
    for (std::size_t q = 0; q < rank.size(); ++q)
      S.row(static_cast<Eigen::Index>(q)) = C.row(rank[q]);
    const Eigen::VectorXd exact = acquisition(S, h, true, kPool);
    for (std::size_t q = 0; q < rank.size(); ++q) a(rank[q]) = exact(static_cast<Eigen::Index>(q));
  }
  return a;
}

void Mobo::refine_best(const Hvpoi& h, std::vector<Proposal>& pool) const {
  const auto d = static_cast<Eigen::Index>(dims_);
  // Box-bounded L-BFGS from the best few candidates, on central finite differences of α (all 2d
  // probes in one batched prediction).
  BoxMinimizerOptions param;
  param.max_iterations = options_.local_iterations;
  param.epsilon = 1e-6;
  param.epsilon_rel = 1e-6;
  param.past = 1;
  param.delta = 1e-6;
  param.max_linesearch = 20;
  BoxMinimizer solver(param);
  const Eigen::VectorXd lower = Eigen::VectorXd::Zero(d), upper = Eigen::VectorXd::Ones(d);
  const std::size_t starts = std::min(options_.local_starts, pool.size());
  for (std::size_t s = 0; s < starts; ++s) {
    const double scale = 1.0 / pool[s].acquisition;
    auto f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
      if (options_.analytic_gradient && objectives() == 2) {
        Eigen::VectorXd grad;
        const double alpha = acquisition_grad(x, h, grad);
        g = -scale * grad;
        return -scale * alpha;
      }
      const Eigen::MatrixXd P = central_difference_probes(x);
      const Eigen::VectorXd v = acquisition(P, h);
      g = -scale * central_difference_gradient(P, v);
      return -scale * v(0);
    };
    Eigen::VectorXd x = pool[s].x;
    try {
      solver.minimize(f, x, lower, upper);
    } catch (const std::exception&) {
      // A failed line search leaves x at its last accepted point: still usable.
    }
    x = x.cwiseMax(0.0).cwiseMin(1.0);  // L-BFGS-B's projection may leave a rounding error outside
    if (options_.snap) options_.snap(x);
    const double ax = acquisition(x.transpose(), h)(0);
    if (ax > 0) pool.push_back({x, ax});
  }
}

Proposal Mobo::most_probable_improvement(const Eigen::MatrixXd& C, const Hvpoi& h,
                                         const std::vector<Eigen::VectorXd>& taken) const {
  const std::size_t p = objectives();
  Eigen::MatrixXd mu(C.rows(), static_cast<Eigen::Index>(p)),
      sd(C.rows(), static_cast<Eigen::Index>(p));
  for (std::size_t k = 0; k < p; ++k) {
    Eigen::VectorXd mk, vk;
    if (is_known(k)) {
      options_.known[k](C, mk);
      vk = Eigen::VectorXd::Constant(C.rows(), options_.var_floor);
    } else {
      gps_[k].predict(C, mk, &vk, options_.var_floor);
    }
    mu.col(static_cast<Eigen::Index>(k)) = mk;
    sd.col(static_cast<Eigen::Index>(k)) = vk.array().sqrt().matrix();
  }
  Proposal best{C.row(0).transpose(), -1};
  for (Eigen::Index i = 0; i < C.rows(); ++i) {
    const Eigen::RowVectorXd mr = mu.row(i), sr = sd.row(i);
    const double poi = h.poi(mr.data(), sr.data());
    Eigen::VectorXd x = C.row(i).transpose();
    if (poi > best.acquisition && !is_taken(x, taken)) best = {x, poi};
  }
  best.acquisition = 0;
  return best;
}

Proposal Mobo::maximise(const Hvpoi& h, const Eigen::MatrixXd& X, RandomBitGenerator& rng,
                        const std::vector<Eigen::VectorXd>& taken) const {
  const Eigen::MatrixXd C = sweep_candidates(X, rng);
  const Eigen::VectorXd a = sweep_acquisition(C, h);
  std::vector<Eigen::Index> order(static_cast<std::size_t>(C.rows()));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  std::sort(order.begin(), order.end(),
            [&](Eigen::Index i, Eigen::Index j) { return a(i) > a(j); });

  std::vector<Proposal> pool;
  for (std::size_t r = 0; r < std::min<std::size_t>(order.size(), kPool); ++r)
    if (a(order[r]) > 0) pool.push_back({C.row(order[r]).transpose(), a(order[r])});

  refine_best(h, pool);
  std::stable_sort(pool.begin(), pool.end(), [](const Proposal& u, const Proposal& v) {
    return u.acquisition > v.acquisition;
  });
  for (const auto& pr : pool)
    if (!is_taken(pr.x, taken)) return pr;

  // α vanishes at every candidate (all predicted means dominated): fall back to the candidate
  // most likely to improve the front at all (PoI alone), still avoiding repeats.
  return most_probable_improvement(C, h, taken);
}

std::vector<Proposal> Mobo::propose(std::size_t q, RandomBitGenerator& rng) {
  require(!xs_.empty(), "DPareto: no observations to fit the GPs to");
  require(q >= 1, "DPareto: batch size must be >= 1");
  load_data(xs_, ys_);
  if (proposals_ % static_cast<std::size_t>(options_.refit_every) == 0) {
    // One seed from the caller's generator, one stream per GP: the fits are independent.
    const std::uint64_t seed = rng.next_u64();
    const std::function<void(std::size_t)> fit_one = [&](std::size_t k) {
      if (is_known(k) && options_.known_screen == 0) return;  // its GP is never asked
      Xoshiro256 stream(seed, k);
      gps_[k].fit(stream, options_.starts);
    };
    if (options_.parallel_for)
      options_.parallel_for(gps_.size(), fit_one);
    else
      for (std::size_t k = 0; k < gps_.size(); ++k) fit_one(k);
  }
  ++proposals_;

  std::vector<Eigen::VectorXd> fx = xs_, fy = ys_;
  Eigen::VectorXd liar = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(objectives()));
  for (const auto& y : ys_) liar += y;
  liar /= static_cast<double>(ys_.size());
  std::vector<Proposal> out;
  for (std::size_t b = 0; b < q; ++b) {
    const Eigen::MatrixXd X = stack(fx, dims_);
    const Hvpoi h = make_hvpoi(X, fy);
    Proposal pr = maximise(h, X, rng, fx);
    out.push_back(pr);
    if (b + 1 == q) break;
    Eigen::VectorXd fantasy = liar;
    // A known objective is no lie: its exact value is fantasised under either strategy.
    for (std::size_t k = 0; k < objectives(); ++k)
      if (options_.batch == BatchStrategy::KrigingBeliever || is_known(k)) {
        Eigen::VectorXd m;
        mean_of(k, pr.x.transpose(), m);
        fantasy(static_cast<Eigen::Index>(k)) = m(0);
      }
    fx.push_back(pr.x);
    fy.push_back(fantasy);
    load_data(fx, fy);  // same hyperparameters: the fantasy only shrinks the variance there
  }
  if (q > 1) load_data(xs_, ys_);
  return out;
}

}  // namespace dptune::dpareto
