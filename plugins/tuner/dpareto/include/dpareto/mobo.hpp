// DPareto core: the multi-objective Bayesian-optimisation loop of Avent et al. 2020, Algorithm 2
// (fit one GP per objective, maximise HVPoI, evaluate, augment), independent of dptune's plugin
// interfaces so that tests and benchmarks drive it with analytic oracles.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <functional>
#include <vector>

#include "dpareto/gp.hpp"
#include "dpareto/hvpoi.hpp"

namespace dptune {
class RandomBitGenerator;
}

namespace dptune::dpareto {

enum class ReferenceMode {
  /// A fixed anti-ideal point (Avent et al. 2020, §4.1: v† = (10, 1), in transformed units).
  Fixed,
  /// GPflowOpt's per-iteration estimate max(P) + 2 (max(P) − min(P)) / |P|.
  Adaptive
};
enum class BatchStrategy {
  /// Fantasise each chosen point's GP means as observations (Ginsbourger et al. 2010).
  KrigingBeliever,
  /// Fantasise the mean of the observations of each objective (constant liar, CL-mean).
  ConstantLiar
};

struct MoboOptions {
  std::vector<GpOptions> gps;  // one per objective
  /// Hyperparameter-optimisation starts per fit (warm start + random restarts).
  int starts = 5;
  /// Re-optimise hyperparameters every `refit_every` proposals (1: every iteration); in between the
  /// GPs keep their hyperparameters and only take the new data.
  int refit_every = 1;
  ReferenceMode reference_mode = ReferenceMode::Fixed;
  std::vector<double> reference;  // Fixed mode
  std::size_t candidates = 3000;
  /// Share of the candidates drawn around the inputs of the current front (Gaussian, sd 0.05).
  double local_share = 0.2;
  std::size_t local_starts = 2;
  int local_iterations = 15;
  /// The refinement's gradient: analytic (two objectives; acquisition_grad) or central
  /// differences of α (2d + 1 probes per step).
  bool analytic_gradient = true;
  double var_floor = 1e-6;
  /// κ ≥ 0: ΔPF is taken at the optimistic μ − κ s instead of μ (the lower confidence bound of
  /// SMS-EGO, Ponweiser et al. 2008), α = ΔPF(μ − κ s) · PoI(μ, s).  κ = 0 is HVPoI as published
  /// (Avent et al. 2020 eq. (3)), where α is 0 wherever μ is dominated, so a region whose mean
  /// reverts to the (pessimistic) prior mean is never explored.
  double optimism = 0;
  /// PoI (and the optimism) with the predictive spread of a new *observation* (latent variance
  /// plus the GP's learned noise) instead of the latent function's: the reported front is made
  /// of noisy observed means, and a new observation can land below it even where the latent mean
  /// cannot.  false: as published.
  bool observation_noise = false;
  /// The front P of HVPoI from the observed values (the front that is reported) instead of the
  /// GP means at the observed inputs (GPflowOpt's choice, the default).
  bool observed_front = false;
  BatchStrategy batch = BatchStrategy::KrigingBeliever;
  /// Measure ΔPF after mapping each objective (one map per objective; empty: in the modelling
  /// units, as Avent et al. 2020).  E.g. the plugin's `improvement_units: raw` measures it in (ε,
  /// error), the units of the hypervolume it reports.
  std::vector<ObjectiveMap> improvement_maps;
  /// Objectives whose value at an input is known exactly and cheaply (empty function or missing
  /// entry: modelled by its GP).  known[k](X, out) sets out(i) to objective k at row i of X (a
  /// unit-cube point; snap it first when needed).  The acquisition then takes this value as the
  /// mean with the floored variance, and objective k's GP is not fitted.  The plugin's
  /// `privacy_model: accountant` prices ε this way (it is deterministic: Avent et al. 2020 §3.2).
  std::vector<std::function<void(const Eigen::MatrixXd&, Eigen::VectorXd&)>> known;
  /// With known objectives whose pricing is costly: 0 prices every candidate of the sweep; K > 0
  /// also fits their GPs, ranks the sweep by the all-GP acquisition and prices only its best K
  /// (those with α > 0), which are then re-ranked exactly (the local refinement is always exact).
  std::size_t known_screen = 0;
  /// Maps a unit-cube point to the one that will really be evaluated (integers rounded).
  std::function<void(Eigen::VectorXd&)> snap;
  /// Runs body(0..n−1), possibly in parallel (the plugin passes the executor's parallel_for); the
  /// GPs of the objectives are fitted through it, each from its own random stream, so the result
  /// does not depend on the threads.  Unset: one after the other.
  std::function<void(std::size_t, const std::function<void(std::size_t)>&)> parallel_for;
};

struct Proposal {
  Eigen::VectorXd x;
  double acquisition = 0;
};

class Mobo {
 public:
  Mobo(std::size_t dims, MoboOptions options);

  std::size_t dims() const { return dims_; }
  std::size_t objectives() const { return options_.gps.size(); }
  std::size_t size() const { return xs_.size(); }

  void add(const Eigen::VectorXd& x, const Eigen::VectorXd& y);

  /// Fits the GPs (as the options say) and returns q points maximising HVPoI (q > 1: a batch by the
  /// batch strategy).
  std::vector<Proposal> propose(std::size_t q, RandomBitGenerator& rng);

  const Gp& gp(std::size_t k) const { return gps_[k]; }
  const std::vector<Eigen::VectorXd>& inputs() const { return xs_; }
  /// The reference point used by the last proposal.
  const Point& last_reference() const { return last_reference_; }

  /// HVPoI at the rows of X for the current GPs and a given front/reference.
  /// `use_known` false: every objective from its GP (the screen of `known_screen`).  `top` > 0:
  /// only the `top` largest values are guaranteed exact; rows that cannot be among them (their
  /// ΔPF, an upper bound of α, is at most the top-th largest α computed) are reported as 0
  /// without computing their variances (branch and bound, by decreasing ΔPF, in blocks).
  Eigen::VectorXd acquisition(const Eigen::MatrixXd& X, const Hvpoi& h, bool use_known = true,
                              std::size_t top = 0) const;
  /// α at one point and its gradient in x, for two objectives (the L-BFGS refinement): analytic
  /// through the GPs' mean and variance gradients, ΔPF's piecewise-linear gradient and PoI's;
  /// a known objective's gradient by central differences of its pricing (step 1e-4).
  double acquisition_grad(const Eigen::VectorXd& x, const Hvpoi& h, Eigen::VectorXd& grad) const;

 private:
  std::size_t dims_;
  MoboOptions options_;
  std::vector<Gp> gps_;
  std::vector<Eigen::VectorXd> xs_, ys_;
  std::size_t proposals_ = 0;
  Point last_reference_;

  // Buffers of `acquisition`, reused between calls (thousands of candidates × n cross-covariances
  // would otherwise be fresh pages every time): one set for the candidate sweep, one for the few
  // probes of the local refinement, so neither is resized back and forth.
  struct AcquisitionWork {
    std::vector<Eigen::MatrixXd> ks;  // per objective: k(X, data), m × n
    Eigen::MatrixXd selected, v, mu, sd;
    Eigen::VectorXd mean, var;
    std::vector<Eigen::Index> rows;
    std::vector<double> improvement;
    Eigen::VectorXd exact;
    std::vector<std::size_t> order;  // positions into rows, in the order variances are computed
    std::vector<double> best;        // bounded sweeps: the α > 0 computed so far
  };
  mutable AcquisitionWork sweep_work_, probe_work_;
  // The steps of `acquisition` before the variances.
  void posterior_means(const Eigen::MatrixXd& X, bool use_known, AcquisitionWork& w) const;
  void promising_rows(Eigen::Index m, const Hvpoi& h, bool use_known, AcquisitionWork& w) const;

  bool is_known(std::size_t k) const {
    return k < options_.known.size() && static_cast<bool>(options_.known[k]);
  }
  /// Objective k's mean at the rows of X: the known value, or the GP mean.
  void mean_of(std::size_t k, const Eigen::MatrixXd& X, Eigen::VectorXd& out) const;
  void load_data(const std::vector<Eigen::VectorXd>& xs, const std::vector<Eigen::VectorXd>& ys);
  Hvpoi make_hvpoi(const Eigen::MatrixXd& X, const std::vector<Eigen::VectorXd>& ys);
  Proposal maximise(const Hvpoi& h, const Eigen::MatrixXd& X, RandomBitGenerator& rng,
                    const std::vector<Eigen::VectorXd>& taken) const;
  // The steps of maximise: the candidate sweep, its acquisition, the L-BFGS refinement of the
  // best, and the fallback when α vanishes everywhere.
  Eigen::MatrixXd sweep_candidates(const Eigen::MatrixXd& X, RandomBitGenerator& rng) const;
  Eigen::VectorXd sweep_acquisition(const Eigen::MatrixXd& C, const Hvpoi& h) const;
  void refine_best(const Hvpoi& h, std::vector<Proposal>& pool) const;
  Proposal most_probable_improvement(const Eigen::MatrixXd& C, const Hvpoi& h,
                                     const std::vector<Eigen::VectorXd>& taken) const;
};

}  // namespace dptune::dpareto
