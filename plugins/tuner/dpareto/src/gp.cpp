#include "dpareto/gp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "dpareto/box_minimizer.hpp"
#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune::dpareto {

namespace {

constexpr double kSqrt5 = 2.23606797749978969641;
// Boxes for the log-hyperparameters: length-scales of inputs in the unit cube, and the variances of
// outputs that the plugin keeps of order one (log ε normalised, logit error).
constexpr double kLogLengthLow = -6.9, kLogLengthHigh = 6.9;    // 1e-3 .. 1e3
constexpr double kLogSignalLow = -13.8, kLogSignalHigh = 13.8;  // 1e-6 .. 1e6
constexpr double kLogNoiseLow = -18.4, kLogNoiseHigh = 4.6;     // 1e-8 .. 1e2 (above the floor)

// Below this size the recursive triangular routines switch to column loops.
constexpr Eigen::Index kBlock = 32;

// Relative jitters of the fallback, after none: 1e-10, 1e-8, ..., 1e-2 of the mean diagonal.
constexpr double kJitterFirst = 1e-10, kJitterLast = 1.01e-2, kJitterStep = 100;

// Eigen's LLT only fails on a non-positive pivot; an exactly singular K (repeated inputs and no
// noise) usually passes with a pivot at rounding level, whose inverse is garbage.  Count a pivot
// below 1e-13 of the mean diagonal as a failure too.
bool pivots_ok(const Eigen::MatrixXd& L, Eigen::Index n, double scale) {
  return n == 0 || L.diagonal().head(n).array().square().minCoeff() > 1e-13 * scale;
}

}  // namespace

void invert_lower_triangular(Eigen::Ref<Eigen::MatrixXd> L, Eigen::MatrixXd& work) {
  const Eigen::Index n = L.rows();
  if (n <= kBlock) {
    // LAPACK's TRTI2, lower: right to left, column j becomes −L⁻¹(j+1:, j+1:) L(j+1:, j) / L(j, j)
    // from the already inverted trailing block.
    if (work.rows() < n || work.cols() < 1) work.resize(std::max(work.rows(), n), 1);
    for (Eigen::Index j = n - 1; j >= 0; --j) {
      L(j, j) = 1.0 / L(j, j);
      const Eigen::Index m = n - 1 - j;
      if (m == 0) continue;
      auto tmp = work.col(0).head(m);
      tmp.noalias() = L.bottomRightCorner(m, m).triangularView<Eigen::Lower>() * L.col(j).tail(m);
      L.col(j).tail(m) = -L(j, j) * tmp;
    }
    return;
  }
  // [A 0; B C]⁻¹ = [A⁻¹ 0; −C⁻¹ B A⁻¹ C⁻¹].
  const Eigen::Index h = n / 2, m = n - h;
  invert_lower_triangular(L.topLeftCorner(h, h), work);
  invert_lower_triangular(L.bottomRightCorner(m, m), work);
  if (work.rows() < m || work.cols() < h)
    work.resize(std::max(work.rows(), m), std::max(work.cols(), h));
  auto B = L.bottomLeftCorner(m, h);
  auto T = work.topLeftCorner(m, h);
  T.noalias() = L.bottomRightCorner(m, m).triangularView<Eigen::Lower>() * B;
  B.noalias() = -T * L.topLeftCorner(h, h).triangularView<Eigen::Lower>();
}

void lower_gram_in_place(Eigen::Ref<Eigen::MatrixXd> U, Eigen::MatrixXd& work) {
  const Eigen::Index n = U.rows();
  if (n <= kBlock) {
    // (UᵀU)_ij = Σ_{k ≥ i} U_ki U_kj for i ≥ j: columns left to right, rows top to bottom, so
    // every entry read is still U's.
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = j; i < n; ++i) U(i, j) = U.col(i).tail(n - i).dot(U.col(j).tail(n - i));
    return;
  }
  // U = [A 0; B C]: UᵀU = [AᵀA + BᵀB, ·; CᵀB, CᵀC].
  const Eigen::Index h = n / 2, m = n - h;
  auto A = U.topLeftCorner(h, h);
  auto B = U.bottomLeftCorner(m, h);
  lower_gram_in_place(A, work);
  A.selfadjointView<Eigen::Lower>().rankUpdate(B.transpose(), 1.0);
  if (work.rows() < m || work.cols() < h)
    work.resize(std::max(work.rows(), m), std::max(work.cols(), h));
  auto T = work.topLeftCorner(m, h);
  T.noalias() = U.bottomRightCorner(m, m).triangularView<Eigen::Lower>().transpose() * B;
  B = T;
  lower_gram_in_place(U.bottomRightCorner(m, m), work);
}

void Matern52::cross_into(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B,
                          Eigen::Ref<Eigen::MatrixXd> out, Eigen::MatrixXd& scaled_a,
                          Eigen::MatrixXd& scaled_b) const {
  const Eigen::RowVectorXd inv = lengthscales.cwiseInverse().transpose();
  scaled_a = A.array().rowwise() * inv.array();
  scaled_b = B.array().rowwise() * inv.array();
  require(out.rows() == A.rows() && out.cols() == B.rows(), "Matern52: output of the wrong shape");
  // Blocks of kChunk rows of A against every row of B: the block's scaled inputs stay in L1 and
  // each kernel value is computed in registers in one pass (squared distance accumulated one
  // input dimension at a time, free of a matrix product's cancellation), vectorised over the
  // rows: k = s²(1 + √5 r + 5r²/3) e^{−√5 r}.
  constexpr Eigen::Index kChunk = 32;
  using Chunk = Eigen::Array<double, kChunk, 1>;
  const Eigen::Index d = scaled_a.cols(), m = out.rows();
  const double s2 = signal_variance;
  auto kernel = [s2](auto& acc) {
    acc = acc.sqrt() * kSqrt5;
    return s2 * (1.0 + acc + acc.square() * (1.0 / 3.0)) * (-acc).exp();
  };
  Eigen::Index i0 = 0;
  for (; i0 + kChunk <= m; i0 += kChunk)
    for (Eigen::Index j = 0; j < out.cols(); ++j) {
      Chunk acc = (scaled_a.col(0).segment<kChunk>(i0).array() - scaled_b(j, 0)).square();
      for (Eigen::Index t = 1; t < d; ++t)
        acc += (scaled_a.col(t).segment<kChunk>(i0).array() - scaled_b(j, t)).square();
      out.col(j).segment<kChunk>(i0) = kernel(acc).matrix();
    }
  if (i0 < m) {
    const Eigen::Index rest = m - i0;
    Eigen::ArrayXd acc(rest);
    for (Eigen::Index j = 0; j < out.cols(); ++j) {
      acc = (scaled_a.col(0).segment(i0, rest).array() - scaled_b(j, 0)).square();
      for (Eigen::Index t = 1; t < d; ++t)
        acc += (scaled_a.col(t).segment(i0, rest).array() - scaled_b(j, t)).square();
      out.col(j).segment(i0, rest) = kernel(acc).matrix();
    }
  }
}

Eigen::MatrixXd Matern52::cross(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const {
  Eigen::MatrixXd K(A.rows(), B.rows()), sa, sb;
  cross_into(A, B, K, sa, sb);
  return K;
}

bool cholesky_with_jitter(const Eigen::MatrixXd& K, Eigen::LLT<Eigen::MatrixXd>& llt,
                          double& jitter) {
  const Eigen::Index n = K.rows();
  const double scale = n > 0 ? std::max(K.diagonal().mean(), 1e-300) : 1.0;
  auto ok = [&] { return llt.info() == Eigen::Success && pivots_ok(llt.matrixLLT(), n, scale); };
  jitter = 0;
  llt.compute(K);
  if (ok()) return true;
  // Jitter fallback: the privacy GP has a near-zero nugget and integer dimensions may repeat
  // inputs, so K can be numerically singular.
  // A while loop: a floating-point for-loop counter is what clang-tidy (CERT FLP30-C) refuses.
  double rel = kJitterFirst;
  while (rel <= kJitterLast) {
    jitter = rel * scale;
    Eigen::MatrixXd Kj = K;
    Kj.diagonal().array() += jitter;
    llt.compute(Kj);
    if (ok()) return true;
    rel *= kJitterStep;
  }
  return false;
}

Gp::Gp(std::size_t dims, GpOptions options) : dims_(dims), options_(options) {
  require(dims >= 1, "GP: at least one input dimension");
  theta_ = Eigen::VectorXd(n_hyper());
  theta_.head(dims_).setConstant(std::log(0.3));
  theta_(dims_) = 0.0;
  if (options_.learn_noise)
    theta_(dims_ + 1) = std::log(std::max(options_.noise - options_.min_noise, 1e-8));
  X_.resize(0, static_cast<Eigen::Index>(dims_));
}

double Gp::noise_of(const Eigen::VectorXd& theta) const {
  return options_.learn_noise ? options_.min_noise + std::exp(theta(dims_ + 1)) : options_.noise;
}

Matern52 Gp::kernel_of(const Eigen::VectorXd& theta) const {
  Matern52 k;
  k.lengthscales = theta.head(dims_).array().exp();
  k.signal_variance = std::exp(theta(dims_));
  return k;
}

void Gp::theta_bounds(Eigen::VectorXd& lower, Eigen::VectorXd& upper) const {
  lower.resize(n_hyper());
  upper.resize(n_hyper());
  lower.head(dims_).setConstant(kLogLengthLow);
  upper.head(dims_).setConstant(kLogLengthHigh);
  lower(dims_) = kLogSignalLow;
  upper(dims_) = kLogSignalHigh;
  if (options_.learn_noise) {
    lower(dims_ + 1) = kLogNoiseLow;
    upper(dims_ + 1) = kLogNoiseHigh;
  }
}

void Gp::set_data(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  require(X.cols() == static_cast<Eigen::Index>(dims_) && X.rows() == y.size(),
          "GP: data of the wrong shape");
  const bool first = X_.rows() == 0;
  const Eigen::Index old_n = X_.rows(), n = X.rows();
  // Same hyperparameters and the old inputs a prefix of the new ones (one point added, or a
  // batch's fantasies appended or dropped): update the factorisation instead of redoing it.
  const Eigen::Index common = std::min(old_n, n);
  const bool prefix = factorised_ && common > 0 && X.topRows(common) == X_.topRows(common);
  X_ = X;
  y_ = y;
  if (first && y.size() > 0) {
    // Zero-mean GP: start the signal variance at the second moment of the outputs.
    theta_(dims_) = std::log(std::max(y.squaredNorm() / static_cast<double>(y.size()), 1e-6));
  }
  if (prefix && n <= old_n) {
    // The Cholesky factor of a leading principal block is the leading block of the factor (and
    // so is its inverse).
    L_.conservativeResize(n, n);
    linv_.conservativeResize(n, n);
    solve_alpha();
    return;
  }
  if (prefix && extend_factorisation(static_cast<std::size_t>(old_n))) return;
  refactorise();
}

void Gp::set_theta(const Eigen::VectorXd& theta) {
  require(theta.size() == static_cast<Eigen::Index>(n_hyper()),
          "GP: wrong number of hyperparameters");
  theta_ = theta;
  refactorise();
}

void Gp::kernel_lower(const Eigen::VectorXd& theta, bool with_g) const {
  const Eigen::Index n = X_.rows(), d = static_cast<Eigen::Index>(dims_);
  Work& w = work_;
  if (w.kf.rows() != n) {
    w.kf.resize(n, n);
    w.g.resize(n, n);
    w.s.resize(n);
    w.e.resize(n);
  }
  w.scaled = X_.array().rowwise() * (-theta.head(d)).array().exp().transpose();
  const double s2 = std::exp(theta(d));
  for (Eigen::Index j = 0; j < n; ++j) {
    const Eigen::Index m = n - j;
    auto s = w.s.head(m).array();
    auto e = w.e.head(m).array();
    // √5 r over the lower part of column j, one input dimension at a time (vectorised).
    s = (w.scaled.col(0).tail(m).array() - w.scaled(j, 0)).square();
    for (Eigen::Index t = 1; t < d; ++t)
      s += (w.scaled.col(t).tail(m).array() - w.scaled(j, t)).square();
    s = s.sqrt() * kSqrt5;
    e = (-s).exp();
    w.kf.col(j).tail(m) = (s2 * (1.0 + s + s.square() / 3.0) * e).matrix();
    if (with_g) w.g.col(j).tail(m) = ((s2 * 5.0 / 3.0) * (1.0 + s) * e).matrix();
  }
}

bool Gp::factor_lower(double noise, Eigen::MatrixXd& c, double& jitter) const {
  const Eigen::Index n = X_.rows();
  if (c.rows() != n || c.cols() != n) c.resize(n, n);
  const double scale = std::max(work_.kf.diagonal().mean() + noise, 1e-300);
  jitter = 0;
  for (double rel = 0;; rel = rel == 0 ? kJitterFirst : rel * kJitterStep) {
    if (rel > kJitterLast) return false;
    jitter = rel * scale;
    c.triangularView<Eigen::Lower>() = work_.kf;
    c.diagonal().array() += noise + jitter;
    // In place on the lower triangle (Eigen reads and writes only that half).
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(c);
    if (llt.info() == Eigen::Success && pivots_ok(c, n, scale)) return true;
  }
}

void Gp::solve_alpha() {
  alpha_ = y_;
  L_.triangularView<Eigen::Lower>().solveInPlace(alpha_);
  L_.triangularView<Eigen::Lower>().transpose().solveInPlace(alpha_);
}

void Gp::refactorise() {
  factorised_ = false;
  if (X_.rows() == 0) return;
  kernel_lower(theta_, false);
  if (!factor_lower(noise_of(theta_), L_, jitter_))
    throw Error("GP: covariance matrix not positive definite even with jitter");
  L_.triangularView<Eigen::StrictlyUpper>().setZero();
  solve_alpha();
  linv_ = L_;
  invert_lower_triangular(linv_, work_.t);
  factorised_ = true;
}

bool Gp::extend_factorisation(std::size_t old_n_size) {
  const auto old_n = static_cast<Eigen::Index>(old_n_size), n = X_.rows(), k = n - old_n;
  const Matern52 kern = kernel_of(theta_);
  const double diag = noise_of(theta_) + jitter_;
  const Eigen::MatrixXd Xnew = X_.bottomRows(k), Xold = X_.topRows(old_n);
  // [K11 K12; K21 K22] = [L11 0; L21 L22][L11ᵀ L21ᵀ; 0 L22ᵀ]: L21 = K21 L11⁻ᵀ, L22 L22ᵀ = K22 −
  // L21 L21ᵀ (block Cholesky; L11 and its inverse are kept).
  Eigen::MatrixXd K21 = kern.cross(Xnew, Xold);
  Eigen::MatrixXd L21 = K21 * linv_.triangularView<Eigen::Lower>().transpose();
  Eigen::MatrixXd S = kern.cross(Xnew, Xnew);
  S.diagonal().array() += diag;
  S.noalias() -= L21 * L21.transpose();
  Eigen::LLT<Eigen::MatrixXd> llt(S);
  const double scale = kern.signal_variance + diag;
  if (llt.info() != Eigen::Success || !pivots_ok(llt.matrixLLT(), k, scale)) return false;
  Eigen::MatrixXd L22 = llt.matrixL();
  L_.conservativeResize(n, n);
  L_.topRightCorner(old_n, k).setZero();
  L_.bottomLeftCorner(k, old_n) = L21;
  L_.bottomRightCorner(k, k) = L22;
  // [L11 0; L21 L22]⁻¹ = [L11⁻¹ 0; −L22⁻¹ L21 L11⁻¹, L22⁻¹].
  Eigen::MatrixXd L22inv = L22;
  invert_lower_triangular(L22inv, work_.t);
  linv_.conservativeResize(n, n);
  linv_.topRightCorner(old_n, k).setZero();
  linv_.bottomRightCorner(k, k) = L22inv;
  const Eigen::MatrixXd T = L22inv.triangularView<Eigen::Lower>() * L21;
  linv_.bottomLeftCorner(k, old_n).noalias() =
      -T * linv_.topLeftCorner(old_n, old_n).triangularView<Eigen::Lower>();
  solve_alpha();
  return true;
}

double Gp::log_marginal_likelihood(const Eigen::VectorXd& theta, Eigen::VectorXd* grad) const {
  const Eigen::Index n = X_.rows(), d = static_cast<Eigen::Index>(dims_);
  const double noise = noise_of(theta);
  Work& w = work_;
  ++evaluations_;
  kernel_lower(theta, grad != nullptr);
  double jitter = 0;
  if (!factor_lower(noise, w.c, jitter)) {
    if (grad) grad->setZero(theta.size());
    return -std::numeric_limits<double>::infinity();
  }
  // yᵀK⁻¹y = ‖L⁻¹y‖², log det K = 2 Σ log L_ii.
  w.v = y_;
  w.c.triangularView<Eigen::Lower>().solveInPlace(w.v);
  const double log_det_half = w.c.diagonal().array().log().sum();
  const double lml = -0.5 * w.v.squaredNorm() - log_det_half -
                     0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi);
  if (!grad) return lml;
  w.c.triangularView<Eigen::Lower>().transpose().solveInPlace(w.v);  // α = K⁻¹ y

  // K⁻¹ = L⁻ᵀ L⁻¹ in the lower triangle (triangular inverse, then LAUUM), then W = ααᵀ − K⁻¹
  // there, and the sums of eq. 5.9 over the symmetric W from its lower half.
  invert_lower_triangular(w.c, w.t);
  lower_gram_in_place(w.c, w.t);
  double sum_wk = 0, trace_w = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const Eigen::Index m = n - j;
    auto wc = w.c.col(j).tail(m);
    wc = w.v.tail(m) * w.v(j) - wc;
    trace_w += wc(0);
    // ∂K/∂log s² = K_f: ½ Σ_ab W_ab K_f,ab.
    sum_wk += 2 * wc.dot(w.kf.col(j).tail(m)) - wc(0) * w.kf(j, j);
    // M = W ∘ G, whose diagonal meets zero distances and drops out.
    w.g.col(j).tail(m).array() *= wc.array();
    w.g(j, j) = 0;
  }
  grad->resize(theta.size());
  // ∂K_ab/∂log ℓ_j = G_ab (x_aj − x_bj)² / ℓ_j² (no division by r: right at r = 0 too), so with the
  // scaled inputs z = x / ℓ: ½ Σ_ab M_ab (z_aj − z_bj)² = Σ_a z_aj² (M1)_a − z_jᵀ M z_j.
  w.e.setOnes();
  w.m1.noalias() = w.g.selfadjointView<Eigen::Lower>() * w.e;
  w.mx.noalias() = w.g.selfadjointView<Eigen::Lower>() * w.scaled;
  for (Eigen::Index j = 0; j < d; ++j)
    (*grad)(j) =
        w.scaled.col(j).array().square().matrix().dot(w.m1) - w.scaled.col(j).dot(w.mx.col(j));
  (*grad)(d) = 0.5 * sum_wk;
  // ∂K/∂θ_noise = e^{θ_noise} I.
  if (options_.learn_noise) (*grad)(d + 1) = 0.5 * std::exp(theta(d + 1)) * trace_w;
  return lml;
}

void Gp::fit(RandomBitGenerator& rng, int starts) {
  if (X_.rows() == 0) return;
  Eigen::VectorXd lower, upper;
  theta_bounds(lower, upper);
  BoxMinimizerOptions param;
  param.max_iterations = options_.max_iterations;
  param.epsilon = 1e-5;
  param.epsilon_rel = 1e-5;
  param.past = 1;
  param.delta = options_.tolerance;
  param.max_linesearch = 30;
  BoxMinimizer solver(param);
  // Minimise −lml; −inf/NaN (not PD) becomes a large value so the line search backs off.
  auto objective = [this](const Eigen::VectorXd& t, Eigen::VectorXd& g) {
    const double v = log_marginal_likelihood(t, &g);
    if (!std::isfinite(v)) {
      g.setZero();
      return 1e300;
    }
    g = -g;
    return -v;
  };
  BoxMinimizerOptions probe_param = param;
  const bool staged = options_.restart_iterations > 0;
  if (staged)
    probe_param.max_iterations = std::min(options_.restart_iterations, param.max_iterations);
  BoxMinimizer probe(probe_param);
  // Runs a solver from t (in place); the value reached, +inf when it is not finite.
  auto run = [&](BoxMinimizer& with, Eigen::VectorXd& t) {
    t = t.cwiseMax(lower).cwiseMin(upper);
    double value = 0;
    try {
      value = with.minimize(objective, t, lower, upper);
    } catch (const std::exception&) {
      // Line-search failures near the optimum: keep where the solver got to.
      value = -log_marginal_likelihood(t, nullptr);
    }
    return std::isfinite(value) ? value : std::numeric_limits<double>::infinity();
  };
  const double y2 = std::max(y_.squaredNorm() / static_cast<double>(y_.size()), 1e-6);
  Eigen::VectorXd best = theta_;
  double best_value = -log_marginal_likelihood(theta_, nullptr);
  if (!std::isfinite(best_value)) best_value = std::numeric_limits<double>::infinity();
  // The warm start (the current θ: the previous fit, one point ago) runs to convergence.
  {
    Eigen::VectorXd t = theta_;
    const double value = run(solver, t);
    if (value < best_value) {
      best_value = value;
      best = t;
    }
  }
  Eigen::VectorXd best_probe;
  double best_probe_value = std::numeric_limits<double>::infinity();
  for (int s = 1; s < std::max(starts, 1); ++s) {
    // Random restart: length-scales log-uniform in [0.05, 3], signal variance within a factor
    // e of the outputs' second moment, noise log-uniform in [1e-4, 1e-1] of it.
    Eigen::VectorXd t = theta_;
    for (std::size_t j = 0; j < dims_; ++j)
      t(static_cast<Eigen::Index>(j)) =
          std::log(0.05) + uniform01(rng) * (std::log(3.0) - std::log(0.05));
    t(static_cast<Eigen::Index>(dims_)) = std::log(y2) + (2 * uniform01(rng) - 1);
    if (options_.learn_noise)
      t(static_cast<Eigen::Index>(dims_) + 1) =
          std::log(y2) + std::log(1e-4) + uniform01(rng) * (std::log(1e-1) - std::log(1e-4));
    const double value = run(staged ? probe : solver, t);
    if (value < best_probe_value) {
      best_probe_value = value;
      best_probe = t;
    }
  }
  // Successive halving down to one: only the most promising restart is run on to convergence,
  // and only when it is within 1 nat of the warm start's optimum (a probe further behind after a
  // few iterations rarely overtakes it).
  if (best_probe.size() > 0 && staged && best_probe_value < best_value + 1.0)
    best_probe_value = run(solver, best_probe);
  if (best_probe_value < best_value) best = best_probe;
  theta_ = best;
  refactorise();
}

// Eigen::Ref is a writable view, passed by value as Eigen documents it.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void Gp::cross_covariance(const Eigen::MatrixXd& Xs, Eigen::Ref<Eigen::MatrixXd> Ks) const {
  kernel_of(theta_).cross_into(Xs, X_, Ks, work_.scaled, work_.scaled_b);
}

void Gp::mean_from(const Eigen::Ref<const Eigen::MatrixXd>& Ks,
                   Eigen::Ref<Eigen::VectorXd> mean) const {
  mean.noalias() = Ks * alpha_;
}

void Gp::variance_from(const Eigen::Ref<const Eigen::MatrixXd>& Ks, Eigen::Ref<Eigen::VectorXd> var,
                       Eigen::Ref<Eigen::MatrixXd> work, double var_floor) const {
  // var = s² − ‖L⁻¹ k*‖² for every row: V = Ks L⁻ᵀ (one triangular-matrix product).
  require(work.rows() == Ks.rows() && work.cols() == Ks.cols() && var.size() == Ks.rows(),
          "GP: variance buffers of the wrong shape");
  work.noalias() = Ks * linv_.triangularView<Eigen::Lower>().transpose();
  const double s2 = std::exp(theta_(static_cast<Eigen::Index>(dims_)));
  var = (s2 - work.rowwise().squaredNorm().array()).cwiseMax(var_floor).matrix();
}

void Gp::predict(const Eigen::MatrixXd& Xs, Eigen::VectorXd& mean, Eigen::VectorXd* var,
                 double var_floor) const {
  if (!factorised_) {
    mean = Eigen::VectorXd::Zero(Xs.rows());
    if (var) *var = Eigen::VectorXd::Constant(Xs.rows(), kernel_of(theta_).signal_variance);
    return;
  }
  Eigen::MatrixXd Ks(Xs.rows(), X_.rows());
  cross_covariance(Xs, Ks);
  mean.resize(Xs.rows());
  mean_from(Ks, mean);
  if (!var) return;
  Eigen::MatrixXd V(Ks.rows(), Ks.cols());
  var->resize(Ks.rows());
  variance_from(Ks, *var, V, var_floor);
}

void Gp::predict_grad(const Eigen::VectorXd& x, double& mean, double& var, Eigen::VectorXd& dmean,
                      Eigen::VectorXd& dvar, double var_floor) const {
  const auto d = static_cast<Eigen::Index>(dims_);
  dmean = Eigen::VectorXd::Zero(d);
  dvar = Eigen::VectorXd::Zero(d);
  const Matern52 k = kernel_of(theta_);
  if (!factorised_) {
    mean = 0;
    var = std::max(k.signal_variance, var_floor);
    return;
  }
  const Eigen::Index n = X_.rows();
  const Eigen::ArrayXd inv2 = k.lengthscales.array().square().inverse();
  Eigen::VectorXd ks(n);
  Eigen::MatrixXd dk(n, d);
  const double s2 = k.signal_variance, root5 = std::sqrt(5.0);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::ArrayXd diff = x.array() - X_.row(i).transpose().array();
    const double r2 = (diff.square() * inv2).sum(), r = std::sqrt(r2), e = std::exp(-root5 * r);
    ks(i) = s2 * (1 + root5 * r + 5.0 * r2 / 3.0) * e;
    const double coef = -(5.0 / 3.0) * s2 * (1 + root5 * r) * e;
    dk.row(i) = (coef * diff * inv2).matrix().transpose();
  }
  mean = ks.dot(alpha_);
  dmean.noalias() = dk.transpose() * alpha_;
  const Eigen::VectorXd v = linv_.triangularView<Eigen::Lower>() * ks;  // L⁻¹ k*
  var = std::exp(theta_(d)) - v.squaredNorm();
  if (var < var_floor) {
    var = var_floor;
    return;
  }
  const Eigen::VectorXd w = linv_.triangularView<Eigen::Lower>().transpose() * v;  // K⁻¹ k*
  dvar.noalias() = -2.0 * (dk.transpose() * w);
}

void Gp::predict1(const Eigen::VectorXd& x, double& mean, double& var, double var_floor) const {
  Eigen::VectorXd m, v;
  predict(x.transpose(), m, &v, var_floor);
  mean = m(0);
  var = v(0);
}

}  // namespace dptune::dpareto
