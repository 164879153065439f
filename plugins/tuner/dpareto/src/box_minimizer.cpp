#include "dpareto/box_minimizer.hpp"

#include <LBFGSB.h>

namespace dptune::dpareto {

// LBFGSpp's solver keeps a reference to its parameters, not a copy: they live beside it.
struct BoxMinimizer::Solver {
  explicit Solver(const LBFGSpp::LBFGSBParam<double>& given) : param(given), lbfgsb(param) {}
  LBFGSpp::LBFGSBParam<double> param;
  LBFGSpp::LBFGSBSolver<double> lbfgsb;
};

namespace {

LBFGSpp::LBFGSBParam<double> solver_param(const BoxMinimizerOptions& options) {
  LBFGSpp::LBFGSBParam<double> param;
  param.max_iterations = options.max_iterations;
  param.epsilon = options.epsilon;
  param.epsilon_rel = options.epsilon_rel;
  param.past = options.past;
  param.delta = options.delta;
  param.max_linesearch = options.max_linesearch;
  return param;
}

}  // namespace

BoxMinimizer::BoxMinimizer(const BoxMinimizerOptions& options)
    : solver_(std::make_unique<Solver>(solver_param(options))) {}

BoxMinimizer::~BoxMinimizer() = default;

double BoxMinimizer::minimize(const BoxObjective& f, Eigen::VectorXd& x,
                              const Eigen::VectorXd& lower, const Eigen::VectorXd& upper) {
  double value = 0;
  solver_->lbfgsb.minimize(f, x, value, lower, upper);
  return value;
}

}  // namespace dptune::dpareto
