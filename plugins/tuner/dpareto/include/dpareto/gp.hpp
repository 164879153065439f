// DPareto core: exact Gaussian-process regression with a zero mean and a Matérn 5/2 ARD kernel
// (Avent et al. 2020, §3.1 and Appendix A: "GP regression ... with a Matérn 5/2 kernel"; Rasmussen
// & Williams 2006, eq. 4.17 for the kernel, eq. 2.25–2.26 for the posterior, eq. 5.8–5.9 for the
// log marginal likelihood and its gradient).
#pragma once

#include <Eigen/Dense>
#include <cstddef>

namespace dptune {
class RandomBitGenerator;
}

namespace dptune::dpareto {

/// Matérn 5/2 with one length-scale per input and a signal variance:
///   k(x, x') = s² (1 + √5 r + 5 r² / 3) exp(−√5 r),  r² = Σ_j ((x_j − x'_j) / ℓ_j)².
struct Matern52 {
  Eigen::VectorXd lengthscales;
  double signal_variance = 1;

  /// Cross-covariance between the rows of A (m × d) and of B (n × d): m × n.
  Eigen::MatrixXd cross(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const;
  /// The same into `out` (m × n already: a block of a reused buffer); `scaled_a`, `scaled_b` are
  /// workspaces for the inputs divided by the length-scales.
  void cross_into(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B,
                  Eigen::Ref<Eigen::MatrixXd> out, Eigen::MatrixXd& scaled_a,
                  Eigen::MatrixXd& scaled_b) const;
  static double of_r(double r) {
    const double s5r = 2.23606797749978969641 * r;
    return (1 + s5r + s5r * s5r / 3) * std::exp(-s5r);
  }
};

struct GpOptions {
  /// Learn the observation-noise variance (utility GP) or keep it at `noise` (privacy GP: ε is a
  /// deterministic function of the hyperparameters, only a nugget for conditioning).
  bool learn_noise = true;
  /// Initial (learned) or fixed noise variance.
  double noise = 0.01;
  /// Lower bound of a learned noise variance.
  double min_noise = 1e-6;
  /// Starts of the hyperparameter optimisation: the current values plus (starts − 1) random ones
  /// (GPflowOpt's default is 5).
  int starts = 5;
  int max_iterations = 40;
  /// L-BFGS iterations of each random restart before only the best one (when it beats the warm
  /// start) is run on to convergence; 0 runs every start to convergence.  Random starts are far
  /// from any optimum and mostly end in the same few basins: a short probe tells them apart for a
  /// fraction of the cost.
  int restart_iterations = 4;
  /// L-BFGS stops when the negative log marginal likelihood decreased by less than this fraction
  /// (of max(|value|, 1)) over one iteration: hyperparameters matter to the acquisition only to
  /// a few digits.
  double tolerance = 1e-5;
};

/// A zero-mean exact GP.  Hyperparameters θ are unconstrained logs: θ = (log ℓ_1..d, log s²,
/// [log(σ_n² − min_noise)]), kept in generous boxes so L-BFGS-B never wanders off to ±∞.
class Gp {
 public:
  Gp(std::size_t dims, GpOptions options);

  std::size_t dims() const { return dims_; }
  std::size_t size() const { return static_cast<std::size_t>(X_.rows()); }
  std::size_t n_hyper() const { return dims_ + 1 + (options_.learn_noise ? 1 : 0); }

  /// Replaces the data (rows of X are inputs in the unit cube) and refactorises with the current
  /// hyperparameters.
  void set_data(const Eigen::MatrixXd& X, const Eigen::VectorXd& y);

  const Eigen::VectorXd& theta() const { return theta_; }
  /// Sets θ and refactorises.
  void set_theta(const Eigen::VectorXd& theta);
  void theta_bounds(Eigen::VectorXd& lower, Eigen::VectorXd& upper) const;

  /// Log marginal likelihood at θ (Rasmussen & Williams eq. 5.8) and, when grad is non-null, its
  /// gradient with respect to θ (eq. 5.9: ½ tr((ααᵀ − K⁻¹) ∂K/∂θ_j)).  −inf when K is not PD even
  /// with jitter.
  double log_marginal_likelihood(const Eigen::VectorXd& theta, Eigen::VectorXd* grad) const;

  /// Maximises the log marginal likelihood from the current θ (warm start) and `starts − 1` random
  /// starts drawn from `rng`; keeps the best.  Refactorises.
  void fit(RandomBitGenerator& rng, int starts);
  void fit(RandomBitGenerator& rng) { fit(rng, options_.starts); }

  /// Posterior mean and variance of the latent function at the rows of Xs (eq. 2.25–2.26), the
  /// variance floored at `var_floor`.
  void predict(const Eigen::MatrixXd& Xs, Eigen::VectorXd& mean, Eigen::VectorXd* var,
               double var_floor = 1e-6) const;
  /// Mean and variance at one point.
  void predict1(const Eigen::VectorXd& x, double& mean, double& var, double var_floor = 1e-6) const;
  /// Mean and variance at one point with their gradients in x (analytic: ∂k/∂x_j =
  /// −(5/3) s² (1 + √5 r) e^{−√5 r} (x_j − x_ij) / ℓ_j², ∇μ = (∂k*)ᵀ α, ∇s² = −2 (∂k*)ᵀ K⁻¹ k*);
  /// a floored variance has gradient 0.
  void predict_grad(const Eigen::VectorXd& x, double& mean, double& var, Eigen::VectorXd& dmean,
                    Eigen::VectorXd& dvar, double var_floor = 1e-6) const;

  /// The three steps of `predict`, for callers that keep their buffers between calls (the
  /// acquisition over thousands of candidates): Ks = k(Xs, X) (m × n, sized by the caller),
  /// mean = Ks α, and the variances of the rows of Ks, s² − ‖L⁻¹ k*‖² floored (`work`: m × n
  /// scratch).  Only valid when the GP has data.
  void cross_covariance(const Eigen::MatrixXd& Xs, Eigen::Ref<Eigen::MatrixXd> Ks) const;
  void mean_from(const Eigen::Ref<const Eigen::MatrixXd>& Ks,
                 Eigen::Ref<Eigen::VectorXd> mean) const;
  void variance_from(const Eigen::Ref<const Eigen::MatrixXd>& Ks, Eigen::Ref<Eigen::VectorXd> var,
                     Eigen::Ref<Eigen::MatrixXd> work, double var_floor = 1e-6) const;
  bool has_data() const { return factorised_; }

  double noise_variance() const { return noise_of(theta_); }
  Matern52 kernel() const { return kernel_of(theta_); }
  /// Log-marginal-likelihood evaluations so far (the fits' unit of work; for benchmarks).
  std::size_t evaluations() const { return evaluations_; }
  /// The jitter the last factorisation needed (0 when none).
  double jitter() const { return jitter_; }

 private:
  std::size_t dims_;
  GpOptions options_;
  Eigen::MatrixXd X_;
  Eigen::VectorXd y_;
  Eigen::VectorXd theta_;
  // Factorisation at theta_: K + σ_n² I + jitter I = L Lᵀ (lower triangle of L_, upper zero),
  // alpha = K⁻¹ y.
  Eigen::MatrixXd L_;
  Eigen::VectorXd alpha_;
  // L⁻¹, so that predictive variances are one triangular-matrix product over all candidates
  // (TRMM runs several times faster than a triangular solve with as many right-hand sides).
  Eigen::MatrixXd linv_;
  double jitter_ = 0;
  bool factorised_ = false;
  // Workspace of log_marginal_likelihood and of the factorisations, reused between calls so the
  // optimiser's inner loop allocates nothing (a GP is not to be used from two threads at once).
  struct Work {
    Eigen::MatrixXd scaled, scaled_b;  // inputs divided by the length-scales
    Eigen::MatrixXd kf, g;             // lower triangles of K_f and G (then M = W ∘ G)
    Eigen::MatrixXd c, t;              // Cholesky factor → L⁻¹ → K⁻¹ → W; scratch
    Eigen::VectorXd s, e, v, m1;       // √5 r and e^{−√5 r} of a column; α; M 1
    Eigen::MatrixXd mx;                // M z
  };
  mutable Work work_;
  mutable std::size_t evaluations_ = 0;

  double noise_of(const Eigen::VectorXd& theta) const;
  Matern52 kernel_of(const Eigen::VectorXd& theta) const;
  /// Lower triangles of K_f (work_.kf) and, when `with_g`, of G = s² (5/3)(1 + √5 r) e^{−√5 r}
  /// (work_.g), the common factor of the length-scale derivatives.
  void kernel_lower(const Eigen::VectorXd& theta, bool with_g) const;
  /// Cholesky of K_f + noise I into the lower triangle of `c`, with the jitter fallback of
  /// cholesky_with_jitter; false when no jitter helps.
  bool factor_lower(double noise, Eigen::MatrixXd& c, double& jitter) const;
  void refactorise();
  /// alpha_ = K⁻¹ y from L_.
  void solve_alpha();
  /// Appends rows [old n, X.rows()) to the factorisation at unchanged θ and jitter (a block
  /// Cholesky update, O(n² k) instead of O(n³)); false when the new pivots are too small.
  bool extend_factorisation(std::size_t old_n);
};

/// In-place inverse of the lower triangle of L (recursive blocks: two half-size inverses and two
/// triangular-matrix products, n³/3 flops instead of a triangular solve's n³); `work` is scratch.
/// The strictly upper triangle is neither read nor written.
void invert_lower_triangular(Eigen::Ref<Eigen::MatrixXd> L, Eigen::MatrixXd& work);
/// In-place lower triangle of Uᵀ U for lower-triangular U (LAPACK's LAUUM, recursive): with
/// U = L⁻¹ it gives K⁻¹ = L⁻ᵀ L⁻¹ in n³/3 flops.  The strictly upper triangle is not touched.
void lower_gram_in_place(Eigen::Ref<Eigen::MatrixXd> U, Eigen::MatrixXd& work);

/// Cholesky of K with the smallest jitter from {0, 1e-10, 1e-8, ..., 1e-2}·(mean diagonal) that
/// makes it succeed; returns false when none does.  `jitter` receives the amount added.
bool cholesky_with_jitter(const Eigen::MatrixXd& K, Eigen::LLT<Eigen::MatrixXd>& llt,
                          double& jitter);

}  // namespace dptune::dpareto
