#include "dptune/helpers/pareto.hpp"

#include <algorithm>
#include <numeric>

#include "dptune/errors.hpp"

namespace dptune {

bool dominates(const Point& a, const Point& b) {
  require(a.size() == b.size(), "dominates: points of different dimension");
  bool strictly = false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k] > b[k]) return false;
    if (a[k] < b[k]) strictly = true;
  }
  return strictly;
}

std::vector<std::size_t> pareto_front(const std::vector<Point>& points) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool keep = true;
    for (std::size_t j = 0; j < points.size() && keep; ++j) {
      if (j == i) continue;
      if (dominates(points[j], points[i]))
        keep = false;
      else if (j < i && points[j] == points[i])
        keep = false;  // duplicate: keep the first
    }
    if (keep) front.push_back(i);
  }
  return front;
}

namespace {

// Hypervolume of points (all strictly below `ref`) by slicing along the last objective
// (Hypervolume by Slicing Objectives, While et al. 2006); 2-D is the base case sweep.
double hv_recursive(std::vector<Point> pts, const Point& ref) {
  const std::size_t d = ref.size();
  if (pts.empty()) return 0;
  if (d == 1) {
    double best = ref[0];
    for (const auto& p : pts) best = std::min(best, p[0]);
    return ref[0] - best;
  }
  if (d == 2) {
    std::sort(pts.begin(), pts.end());
    double volume = 0, ceiling = ref[1];
    for (const auto& p : pts) {
      if (p[1] < ceiling) {
        volume += (ref[0] - p[0]) * (ceiling - p[1]);
        ceiling = p[1];
      }
    }
    return volume;
  }
  std::sort(pts.begin(), pts.end(),
            [d](const Point& a, const Point& b) { return a[d - 1] < b[d - 1]; });
  double volume = 0;
  Point sub_ref(ref.begin(), ref.end() - 1);
  std::vector<Point> slice;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    slice.emplace_back(pts[i].begin(), pts[i].end() - 1);
    const double next = i + 1 < pts.size() ? pts[i + 1][d - 1] : ref[d - 1];
    const double depth = next - pts[i][d - 1];
    if (depth > 0) volume += depth * hv_recursive(slice, sub_ref);
  }
  return volume;
}

}  // namespace

double hypervolume(const std::vector<Point>& points, const Point& reference) {
  std::vector<Point> inside;
  for (const auto& p : points) {
    require(p.size() == reference.size(),
            "hypervolume: point and reference of different dimension");
    bool below = true;
    for (std::size_t k = 0; k < p.size(); ++k) below = below && p[k] < reference[k];
    if (below) inside.push_back(p);
  }
  std::vector<Point> front;
  for (std::size_t i : pareto_front(inside)) front.push_back(inside[i]);
  return hv_recursive(std::move(front), reference);
}

}  // namespace dptune
