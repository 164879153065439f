// dptune helpers: Pareto fronts and hypervolume (all objectives minimised).
#pragma once

#include <cstddef>
#include <vector>

namespace dptune {

using Point = std::vector<double>;

/// True when a is at least as good as b in every objective and strictly better in one.
bool dominates(const Point& a, const Point& b);

/// Indices of the non-dominated points.  Among duplicates, the first index is kept.  Ascending
/// order.
std::vector<std::size_t> pareto_front(const std::vector<Point>& points);

/// Exact hypervolume dominated by `points` and bounded above by `reference` (2-D: sweep; any
/// dimension: inclusion–exclusion-free slicing).  Points not strictly below the reference in every
/// objective contribute nothing.
double hypervolume(const std::vector<Point>& points, const Point& reference);

}  // namespace dptune
