// DPareto core: box-bounded quasi-Newton minimisation, L-BFGS-B (Byrd, Lu, Nocedal & Zhu 1995) as
// LBFGSpp implements it, for the GP's hyperparameter fit and the acquisition's local refinement.
// Behind a type-erased objective so that the solver's template code is compiled once, in
// box_minimizer.cpp: it was most of the compile time of each of its two users.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>

namespace dptune::dpareto {

/// The solver's stopping rules (LBFGSpp's LBFGSBParam of the same names).
struct BoxMinimizerOptions {
  int max_iterations = 0;  ///< 0: until a rule below stops it
  double epsilon = 1e-5;   ///< stop when ‖projected gradient‖∞ ≤ max(ε, ε_rel ‖x‖)
  double epsilon_rel = 1e-5;
  int past = 1;             ///< the value's relative decrease measured over this many iterations
  double delta = 1e-10;     ///< stop when that decrease is below δ
  int max_linesearch = 20;  ///< line-search trials per iteration
};

/// f(x, grad): the objective at x, its gradient written into grad (sized as x).
using BoxObjective = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd& grad)>;

class BoxMinimizer {
 public:
  explicit BoxMinimizer(const BoxMinimizerOptions& options);
  ~BoxMinimizer();
  BoxMinimizer(const BoxMinimizer&) = delete;
  BoxMinimizer& operator=(const BoxMinimizer&) = delete;

  /// Minimises f from x, in place, within [lower, upper]; returns the value reached.  A failed
  /// line search throws (std::runtime_error or std::logic_error), x left at its last iterate.
  double minimize(const BoxObjective& f, Eigen::VectorXd& x, const Eigen::VectorXd& lower,
                  const Eigen::VectorXd& upper);

 private:
  struct Solver;
  std::unique_ptr<Solver> solver_;
};

}  // namespace dptune::dpareto
