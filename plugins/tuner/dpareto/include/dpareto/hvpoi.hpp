// DPareto core: the hypervolume-based probability of improvement (HVPoI) of Couckuyt, Deschrijver
// and Dhaene 2014, as used by DPareto (Avent et al. 2020, §3.1, eq. (1)–(3)):
//   α(λ) = ΔPF(m(λ)) · PoI(λ),
// ΔPF(v) = HV(PF(V ∪ {v})) − HV(PF(V)) (exact), PoI = Σ_cells Π_j [Φ((ub_j − μ_j)/s_j) −
// Φ((lb_j − μ_j)/s_j)] over a tiling of the region below the reference that P does not dominate.
// All objectives are minimised.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "dptune/helpers/pareto.hpp"

namespace dptune::dpareto {

/// An axis-aligned box; lower bounds may be −∞.
struct Cell {
  std::vector<double> lower, upper;
};

/// Exact tiling of {v < ref} minus the region dominated by `points` (any p ≥ 2; dominated points
/// and points not strictly below `ref` are ignored).  For p = 2 it is the classic tiling: sort the
/// front by the first objective; cell i spans [x_i, x_{i+1}] × (−∞, t_i] with x_0 = −∞, x_i =
/// p_i,1, x_{n+1} = r_1, t_0 = r_2, t_i = p_i,2.  For p ≥ 3 the grid of the front's coordinates in
/// the first p − 1 objectives, each column closed by the lowest front value that dominates its
/// lower corner in those objectives (exact: a column's non-dominated part is an interval from −∞).
std::vector<Cell> nondominated_cells(const std::vector<Point>& points, const Point& reference);

/// Exact ΔPF(v) = HV(P ∪ {v}) − HV(P) w.r.t. `reference`, computed as the volume of [v, r] minus
/// the hypervolume of the front clipped at v (max(p, v) componentwise).
double hypervolume_improvement(const Point& v, const std::vector<Point>& front,
                               const Point& reference);

/// Indices (ascending) of the non-dominated points, duplicates once (the first), as
/// dptune::pareto_front; two objectives by one sort and a sweep (O(n log n), no allocation per
/// comparison), more by dptune::pareto_front.
std::vector<std::size_t> pareto_indices(const std::vector<Point>& points);

/// Standard normal CDF.
double normal_cdf(double z);

/// A strictly increasing map from one objective's modelling units to the units in which the
/// hypervolume improvement is measured (e.g. p = log ε / s back to ε = exp(s p), u = logit(error)
/// back to error).  PoI is invariant under such maps (the cells map onto cells), ΔPF is not: it
/// weighs improvements by the volume they add in the target units.
struct ObjectiveMap {
  enum class Kind { Identity, Exp, Logistic };
  Kind kind = Kind::Identity;
  double scale = 1;  // Exp: exp(scale · v); Logistic: 1 / (1 + exp(−scale · v))
  double operator()(double v) const;
  double derivative(double v) const;
};

/// HVPoI for one front of GP means and one reference point, evaluated at many (μ, s) pairs.
class Hvpoi {
 public:
  Hvpoi(const std::vector<Point>& points, Point reference);
  /// ΔPF measured after mapping every objective by `maps` (one per objective; empty: the
  /// modelling units, Avent et al. 2020's choice); PoI stays in the modelling units.
  Hvpoi(const std::vector<Point>& points, Point reference, std::vector<ObjectiveMap> maps);

  std::size_t objectives() const { return reference_.size(); }
  const std::vector<Point>& front() const { return front_; }
  const std::vector<Cell>& cells() const { return cells_; }
  const Point& reference() const { return reference_; }

  /// ΔPF(μ): O(log |P|) in 2-D (sum over the tiling's cells), the clipped-hypervolume formula
  /// otherwise.
  double improvement(const double* mu) const;
  /// PoI(μ, s) (s: standard deviations, already floored).
  double poi(const double* mu, const double* sd) const;
  /// ΔPF(μ) and its gradient in μ (2-D only: piecewise linear over the tiling; in mapped units by
  /// the chain rule through the maps).
  double improvement_grad(const double* mu, double* grad) const;
  /// PoI(μ, s) and its gradients in μ and s (any number of objectives, over every cell:
  /// ∂[Φ(z_u) − Φ(z_l)]/∂μ = (φ(z_l) − φ(z_u))/s, ∂/∂s = (φ(z_l) z_l − φ(z_u) z_u)/s).
  double poi_grad(const double* mu, const double* sd, double* dmu, double* dsd) const;
  double operator()(const double* mu, const double* sd) const {
    const double d = improvement(mu);
    return d > 0 ? d * poi(mu, sd) : 0.0;
  }

 private:
  /// 2-D tiling: [a, b) are the cells that meet [v1, r1] (from a, the cell holding v1) and lie
  /// above v2 (before b; t_i decreases).  Empty when a >= b.
  std::pair<std::size_t, std::size_t> cells_meeting(double v1, double v2) const;
  Point reference_;
  std::vector<Point> front_;  // strictly below the reference; 2-D: sorted by the first objective
  std::vector<Cell> cells_;
  // 2-D: prefix sums over the finite cells 1..N of w_i = x_{i+1} − x_i and w_i t_i, so that ΔPF
  // is two binary searches and a difference (O(log |P|) per candidate).
  std::vector<double> width_sum_, weighted_sum_;
  // ΔPF in mapped units: the same structure over the mapped front and reference.
  std::vector<ObjectiveMap> maps_;
  std::shared_ptr<const Hvpoi> mapped_;
};

}  // namespace dptune::dpareto
