#include "mobo.hpp"

#include <LBFGSB.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "dptune/errors.hpp"
#include "dptune/rng.hpp"
#include "halton.hpp"

namespace dptune::dpareto {

namespace {

Eigen::MatrixXd stack(const std::vector<Eigen::VectorXd>& rows, std::size_t cols) {
  Eigen::MatrixXd M(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(cols));
  for (std::size_t i = 0; i < rows.size(); ++i) M.row(static_cast<Eigen::Index>(i)) = rows[i];
  return M;
}

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

Eigen::VectorXd Mobo::acquisition(const Eigen::MatrixXd& X, const Hvpoi& h) const {
  const std::size_t p = objectives();
  const auto m = X.rows();
  Eigen::VectorXd alpha = Eigen::VectorXd::Zero(m);
  if (!gps_[0].has_data()) return alpha;
  AcquisitionWork& w = m > 64 ? sweep_work_ : probe_work_;
  const auto n = static_cast<Eigen::Index>(xs_.size() > 0 ? gps_[0].size() : 0);
  const auto np = static_cast<Eigen::Index>(p);
  // Buffers grow to a capacity (columns in steps of 32, as n grows by one per iteration) and are
  // used through blocks, so a sweep allocates nothing in the steady state.
  auto ensure = [](Eigen::MatrixXd& b, Eigen::Index rows, Eigen::Index cols) {
    if (b.rows() < rows || b.cols() < cols)
      b.resize(std::max(b.rows(), rows), std::max(b.cols(), (cols + 31) / 32 * 32));
  };
  w.ks.resize(p);
  ensure(w.mu, m, np);
  if (w.mean.size() < m) w.mean.resize(m);
  // One cross-covariance matrix per GP serves both the means (all rows) and the variances.
  for (std::size_t k = 0; k < p; ++k) {
    ensure(w.ks[k], m, n);
    auto ks = w.ks[k].topLeftCorner(m, n);
    gps_[k].cross_covariance(X, ks);
    gps_[k].mean_from(ks, w.mean.head(m));
    w.mu.col(static_cast<Eigen::Index>(k)).head(m) = w.mean.head(m);
  }
  // α = ΔPF(μ)·PoI is exactly zero wherever μ is dominated: only those rows need variances,
  // the expensive part (n² per candidate and GP).
  w.rows.clear();
  w.improvement.clear();
  double mrow[16];
  std::vector<double> mheap;
  double* mu_i = p <= 16 ? mrow : (mheap.resize(p), mheap.data());
  for (Eigen::Index i = 0; i < m; ++i) {
    for (std::size_t k = 0; k < p; ++k) mu_i[k] = w.mu(i, static_cast<Eigen::Index>(k));
    const double d = h.improvement(mu_i);
    if (d > 0) {
      w.rows.push_back(i);
      w.improvement.push_back(d);
    }
  }
  if (w.rows.empty()) return alpha;
  const auto r = static_cast<Eigen::Index>(w.rows.size());
  ensure(w.sd, r, np);
  ensure(w.v, r, n);
  ensure(w.selected, r, n);
  if (w.var.size() < r) w.var.resize(m);
  for (std::size_t k = 0; k < p; ++k) {
    const auto ks = w.ks[k].topLeftCorner(m, n);
    auto v = w.v.topLeftCorner(r, n);
    if (r == m) {
      gps_[k].variance_from(ks, w.var.head(r), v, options_.var_floor);
    } else {
      auto sel = w.selected.topLeftCorner(r, n);
      for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index q = 0; q < r; ++q) sel(q, j) = ks(w.rows[static_cast<std::size_t>(q)], j);
      gps_[k].variance_from(sel, w.var.head(r), v, options_.var_floor);
    }
    w.sd.col(static_cast<Eigen::Index>(k)).head(r) = w.var.head(r).array().sqrt().matrix();
  }
  double srow[16];
  std::vector<double> sheap;
  double* sd_i = p <= 16 ? srow : (sheap.resize(p), sheap.data());
  for (Eigen::Index q = 0; q < r; ++q) {
    const Eigen::Index i = w.rows[static_cast<std::size_t>(q)];
    for (std::size_t k = 0; k < p; ++k) {
      mu_i[k] = w.mu(i, static_cast<Eigen::Index>(k));
      sd_i[k] = w.sd(q, static_cast<Eigen::Index>(k));
    }
    alpha(i) = w.improvement[static_cast<std::size_t>(q)] * h.poi(mu_i, sd_i);
  }
  return alpha;
}

Hvpoi Mobo::make_hvpoi(const Eigen::MatrixXd& X) {
  // The front P of the GP means at the observed inputs (as GPflowOpt's HVPoI does).
  const std::size_t p = objectives();
  std::vector<Point> means(static_cast<std::size_t>(X.rows()), Point(p));
  for (std::size_t k = 0; k < p; ++k) {
    Eigen::VectorXd mk;
    gps_[k].predict(X, mk, nullptr);
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
  return Hvpoi(means, reference);
}

Proposal Mobo::maximise(const Hvpoi& h, const Eigen::MatrixXd& X, RandomBitGenerator& rng,
                        const std::vector<Eigen::VectorXd>& taken) const {
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
      gps_[k].predict(X, mk, nullptr);
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
  const Eigen::VectorXd a = acquisition(C, h);
  std::vector<Eigen::Index> order(static_cast<std::size_t>(C.rows()));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  std::sort(order.begin(), order.end(),
            [&](Eigen::Index i, Eigen::Index j) { return a(i) > a(j); });

  std::vector<Proposal> pool;
  for (std::size_t r = 0; r < std::min<std::size_t>(order.size(), 64); ++r)
    if (a(order[r]) > 0) pool.push_back({C.row(order[r]).transpose(), a(order[r])});

  // Box-bounded L-BFGS from the best few candidates, on central finite differences of α (all 2d
  // probes in one batched prediction).
  LBFGSpp::LBFGSBParam<double> param;
  param.max_iterations = options_.local_iterations;
  param.epsilon = 1e-6;
  param.epsilon_rel = 1e-6;
  param.past = 1;
  param.delta = 1e-6;
  param.max_linesearch = 20;
  LBFGSpp::LBFGSBSolver<double> solver(param);
  const Eigen::VectorXd lower = Eigen::VectorXd::Zero(d), upper = Eigen::VectorXd::Ones(d);
  const std::size_t starts = std::min(options_.local_starts, pool.size());
  for (std::size_t s = 0; s < starts; ++s) {
    const double scale = 1.0 / pool[s].acquisition;
    auto f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
      constexpr double kStep = 1e-4;
      Eigen::MatrixXd P(2 * d + 1, d);
      P.row(0) = x.transpose();
      for (Eigen::Index j = 0; j < d; ++j) {
        P.row(1 + 2 * j) = x.transpose();
        P.row(2 + 2 * j) = x.transpose();
        P(1 + 2 * j, j) = std::min(1.0, x(j) + kStep);
        P(2 + 2 * j, j) = std::max(0.0, x(j) - kStep);
      }
      const Eigen::VectorXd v = acquisition(P, h);
      for (Eigen::Index j = 0; j < d; ++j) {
        const double width = P(1 + 2 * j, j) - P(2 + 2 * j, j);
        g(j) = width > 0 ? -scale * (v(1 + 2 * j) - v(2 + 2 * j)) / width : 0.0;
      }
      return -scale * v(0);
    };
    Eigen::VectorXd x = pool[s].x;
    double fx = 0;
    try {
      solver.minimize(f, x, fx, lower, upper);
    } catch (const std::exception&) {
      // A failed line search leaves x at its last accepted point: still usable.
    }
    x = x.cwiseMax(0.0).cwiseMin(1.0);  // L-BFGS-B's projection may leave a rounding error outside
    if (options_.snap) options_.snap(x);
    const double ax = acquisition(x.transpose(), h)(0);
    if (ax > 0) pool.push_back({x, ax});
  }
  std::stable_sort(pool.begin(), pool.end(), [](const Proposal& u, const Proposal& v) {
    return u.acquisition > v.acquisition;
  });
  for (const auto& pr : pool)
    if (!is_taken(pr.x, taken)) return pr;

  // α vanishes at every candidate (all predicted means dominated): fall back to the candidate
  // most likely to improve the front at all (PoI alone), still avoiding repeats.
  const std::size_t p = objectives();
  Eigen::MatrixXd mu(C.rows(), static_cast<Eigen::Index>(p)),
      sd(C.rows(), static_cast<Eigen::Index>(p));
  for (std::size_t k = 0; k < p; ++k) {
    Eigen::VectorXd mk, vk;
    gps_[k].predict(C, mk, &vk, options_.var_floor);
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

std::vector<Proposal> Mobo::propose(std::size_t q, RandomBitGenerator& rng) {
  require(!xs_.empty(), "DPareto: no observations to fit the GPs to");
  require(q >= 1, "DPareto: batch size must be >= 1");
  load_data(xs_, ys_);
  if (proposals_ % static_cast<std::size_t>(options_.refit_every) == 0) {
    // One seed from the caller's generator, one stream per GP: the fits are independent.
    const std::uint64_t seed = rng.next_u64();
    const std::function<void(std::size_t)> fit_one = [&](std::size_t k) {
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
    const Hvpoi h = make_hvpoi(X);
    Proposal pr = maximise(h, X, rng, fx);
    out.push_back(pr);
    if (b + 1 == q) break;
    Eigen::VectorXd fantasy = liar;
    if (options_.batch == BatchStrategy::KrigingBeliever)
      for (std::size_t k = 0; k < objectives(); ++k) {
        double m = 0, v = 0;
        gps_[k].predict1(pr.x, m, v);
        fantasy(static_cast<Eigen::Index>(k)) = m;
      }
    fx.push_back(pr.x);
    fy.push_back(fantasy);
    load_data(fx, fy);  // same hyperparameters: the fantasy only shrinks the variance there
  }
  if (q > 1) load_data(xs_, ys_);
  return out;
}

}  // namespace dptune::dpareto
