#include "dpareto/hvpoi.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "dptune/errors.hpp"

namespace dptune::dpareto {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Non-dominated points strictly below the reference (duplicates once).
std::vector<Point> front_below(const std::vector<Point>& points, const Point& reference) {
  std::vector<Point> inside;
  for (const auto& p : points) {
    require(p.size() == reference.size(), "HVPoI: point and reference of different dimension");
    bool below = true;
    for (std::size_t j = 0; j < p.size(); ++j) below = below && p[j] < reference[j];
    if (below) inside.push_back(p);
  }
  std::vector<Point> front;
  for (std::size_t i : pareto_indices(inside)) front.push_back(inside[i]);
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace

std::vector<std::size_t> pareto_indices(const std::vector<Point>& points) {
  if (points.empty() || points[0].size() != 2) return pareto_front(points);
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a][0] != points[b][0]) return points[a][0] < points[b][0];
    if (points[a][1] != points[b][1]) return points[a][1] < points[b][1];
    return a < b;
  });
  // In (f1, f2, index) order a point is non-dominated iff its f2 is below every f2 before it
  // (an equal earlier point is a duplicate or weakly dominates it).
  std::vector<std::size_t> front;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i : order)
    if (points[i][1] < best) {
      best = points[i][1];
      front.push_back(i);
    }
  std::sort(front.begin(), front.end());
  return front;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z * 0.70710678118654752440); }

std::vector<Cell> nondominated_cells(const std::vector<Point>& points, const Point& reference) {
  const std::size_t p = reference.size();
  require(p >= 2, "HVPoI: at least two objectives");
  const std::vector<Point> front = front_below(points, reference);
  // Grid coordinates of the first p − 1 objectives: −∞, the front's distinct values, r_j.
  std::vector<std::vector<double>> coords(p - 1);
  for (std::size_t j = 0; j + 1 < p; ++j) {
    coords[j].push_back(-kInf);
    for (const auto& q : front) coords[j].push_back(q[j]);
    std::sort(coords[j].begin() + 1, coords[j].end());
    coords[j].erase(std::unique(coords[j].begin(), coords[j].end()), coords[j].end());
    coords[j].push_back(reference[j]);
  }
  std::vector<Cell> cells;
  std::vector<std::size_t> index(p - 1, 0);
  for (;;) {
    Cell c;
    c.lower.resize(p);
    c.upper.resize(p);
    for (std::size_t j = 0; j + 1 < p; ++j) {
      c.lower[j] = coords[j][index[j]];
      c.upper[j] = coords[j][index[j] + 1];
    }
    // The column over this (p−1)-box is non-dominated up to the lowest last objective among the
    // front points that weakly dominate the box's lower corner in the first p − 1 objectives.
    double top = reference[p - 1];
    for (const auto& q : front) {
      bool below = true;
      for (std::size_t j = 0; j + 1 < p && below; ++j) below = q[j] <= c.lower[j];
      if (below) top = std::min(top, q[p - 1]);
    }
    c.lower[p - 1] = -kInf;
    c.upper[p - 1] = top;
    cells.push_back(std::move(c));
    std::size_t j = 0;
    for (; j + 1 < p; ++j) {
      if (++index[j] + 1 < coords[j].size()) break;
      index[j] = 0;
    }
    if (j + 1 == p) break;
  }
  return cells;
}

double hypervolume_improvement(const Point& v, const std::vector<Point>& front,
                               const Point& reference) {
  double box = 1;
  for (std::size_t j = 0; j < v.size(); ++j) {
    if (!(v[j] < reference[j])) return 0;
    box *= reference[j] - v[j];
  }
  std::vector<Point> clipped;
  clipped.reserve(front.size());
  for (const auto& q : front) {
    Point c(q.size());
    for (std::size_t j = 0; j < q.size(); ++j) c[j] = std::max(q[j], v[j]);
    clipped.push_back(std::move(c));
  }
  return std::max(0.0, box - hypervolume(clipped, reference));
}

Hvpoi::Hvpoi(const std::vector<Point>& points, Point reference)
    : reference_(std::move(reference)),
      front_(front_below(points, reference_)),
      cells_(nondominated_cells(front_, reference_)) {
  if (reference_.size() == 2) {
    width_sum_.assign(cells_.size() + 1, 0.0);
    weighted_sum_.assign(cells_.size() + 1, 0.0);
    for (std::size_t i = 0; i < cells_.size(); ++i) {
      const Cell& c = cells_[i];
      const double w = i == 0 ? 0.0 : c.upper[0] - c.lower[0];  // cell 0 is unbounded
      width_sum_[i + 1] = width_sum_[i] + w;
      weighted_sum_[i + 1] = weighted_sum_[i] + w * c.upper[1];
    }
  }
}

double ObjectiveMap::operator()(double v) const {
  switch (kind) {
    case Kind::Identity:
      return v;
    case Kind::Exp:
      return std::exp(scale * v);
    case Kind::Logistic:
      return 1.0 / (1.0 + std::exp(-scale * v));
  }
  return v;
}

double ObjectiveMap::derivative(double v) const {
  switch (kind) {
    case Kind::Identity:
      return 1;
    case Kind::Exp:
      return scale * std::exp(scale * v);
    case Kind::Logistic: {
      const double l = 1.0 / (1.0 + std::exp(-scale * v));
      return scale * l * (1 - l);
    }
  }
  return 1;
}

Hvpoi::Hvpoi(const std::vector<Point>& points, Point reference, std::vector<ObjectiveMap> maps)
    : Hvpoi(points, std::move(reference)) {
  if (maps.empty()) return;
  require(maps.size() == reference_.size(), "HVPoI: one objective map per objective");
  auto map = [&](const Point& q) {
    Point out(q.size());
    for (std::size_t j = 0; j < q.size(); ++j) out[j] = maps[j](q[j]);
    return out;
  };
  std::vector<Point> mapped;
  for (const auto& q : front_) mapped.push_back(map(q));
  mapped_ = std::make_shared<const Hvpoi>(mapped, map(reference_));
  maps_ = std::move(maps);
}

double Hvpoi::improvement(const double* mu) const {
  const std::size_t p = reference_.size();
  if (mapped_) {
    // Zeroed although every slot read is written first: the analyser cannot see that the mapped
    // front has this one's dimension p.
    double local[16] = {};
    std::vector<double> heap;
    double* m = p <= 16 ? local : (heap.resize(p), heap.data());
    for (std::size_t j = 0; j < p; ++j) m[j] = maps_[j](mu[j]);
    return mapped_->improvement(m);
  }
  if (p != 2) return hypervolume_improvement(Point(mu, mu + p), front_, reference_);
  const double v1 = mu[0], v2 = mu[1];
  if (!(v1 < reference_[0]) || !(v2 < reference_[1])) return 0;
  // ΔPF(v) = Σ_i |[x_i, x_{i+1}] ∩ [v1, r1]| · (t_i − v2)⁺ over the 2-D tiling (its cells are
  // exactly the part of the box below r that the front leaves undominated).  Cells meeting
  // [v1, r1]: from a, the cell holding v1; cells above v2: before b (t_i decreases).
  const auto [a, b] = cells_meeting(v1, v2);
  if (a >= b) return 0;
  // The first cell is cut at v1; the others are whole: Σ w_i t_i − v2 Σ w_i from the prefix sums.
  double total = (cells_[a].upper[0] - v1) * (cells_[a].upper[1] - v2);
  total += (weighted_sum_[b] - weighted_sum_[a + 1]) - v2 * (width_sum_[b] - width_sum_[a + 1]);
  return std::max(0.0, total);
}

std::pair<std::size_t, std::size_t> Hvpoi::cells_meeting(double v1, double v2) const {
  const auto a = static_cast<std::size_t>(
      std::partition_point(cells_.begin(), cells_.end(),
                           [&](const Cell& c) { return c.upper[0] <= v1; }) -
      cells_.begin());
  const auto b = static_cast<std::size_t>(
      std::partition_point(cells_.begin(), cells_.end(),
                           [&](const Cell& c) { return c.upper[1] > v2; }) -
      cells_.begin());
  return {a, b};
}

double Hvpoi::improvement_grad(const double* mu, double* grad) const {
  const std::size_t p = reference_.size();
  require(p == 2, "HVPoI: the ΔPF gradient is 2-D only");
  grad[0] = grad[1] = 0;
  if (mapped_) {
    const double m[2] = {maps_[0](mu[0]), maps_[1](mu[1])};
    double g[2];
    const double d = mapped_->improvement_grad(m, g);
    grad[0] = g[0] * maps_[0].derivative(mu[0]);
    grad[1] = g[1] * maps_[1].derivative(mu[1]);
    return d;
  }
  const double v1 = mu[0], v2 = mu[1];
  if (!(v1 < reference_[0]) || !(v2 < reference_[1])) return 0;
  const auto [a, b] = cells_meeting(v1, v2);
  if (a >= b) return 0;
  // total = (x_{a+1} − v1)(t_a − v2) + Σ_{a<i<b} w_i (t_i − v2): linear in v1 and in v2.
  const double head = cells_[a].upper[0] - v1, widths = width_sum_[b] - width_sum_[a + 1];
  const double total =
      head * (cells_[a].upper[1] - v2) + (weighted_sum_[b] - weighted_sum_[a + 1]) - v2 * widths;
  if (!(total > 0)) return 0;
  grad[0] = -(cells_[a].upper[1] - v2);
  grad[1] = -(head + widths);
  return total;
}

double Hvpoi::poi_grad(const double* mu, const double* sd, double* dmu, double* dsd) const {
  const std::size_t p = reference_.size();
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  auto pdf = [](double z) { return kInvSqrt2Pi * std::exp(-0.5 * z * z); };
  std::vector<double> D(p), dDm(p), dDs(p);
  for (std::size_t j = 0; j < p; ++j) dmu[j] = dsd[j] = 0;
  double total = 0;
  for (const auto& c : cells_) {
    for (std::size_t j = 0; j < p; ++j) {
      const double zu = (c.upper[j] - mu[j]) / sd[j];
      const bool open = std::isinf(c.lower[j]);
      const double zl = open ? 0.0 : (c.lower[j] - mu[j]) / sd[j];
      const double pu = pdf(zu), pl = open ? 0.0 : pdf(zl);
      D[j] = std::max(0.0, normal_cdf(zu) - (open ? 0.0 : normal_cdf(zl)));
      dDm[j] = (pl - pu) / sd[j];
      dDs[j] = ((open ? 0.0 : pl * zl) - pu * zu) / sd[j];
    }
    double prod = 1;
    for (std::size_t j = 0; j < p; ++j) prod *= D[j];
    total += prod;
    for (std::size_t j = 0; j < p; ++j) {
      double others = 1;
      for (std::size_t i = 0; i < p; ++i)
        if (i != j) others *= D[i];
      dmu[j] += others * dDm[j];
      dsd[j] += others * dDs[j];
    }
  }
  if (total > 1) {  // clamped as poi() is
    for (std::size_t j = 0; j < p; ++j) dmu[j] = dsd[j] = 0;
    return 1;
  }
  return total;
}

double Hvpoi::poi(const double* mu, const double* sd) const {
  const std::size_t p = reference_.size();
  double total = 0;
  if (p == 2) {
    // 2-D tiling: consecutive cells share their first-objective boundary, so Φ is evaluated once
    // per boundary; past the point where Φ = 1 no cell adds anything.
    // Cells whose first-objective interval ends more than 9 sd below μ₁ hold a probability below
    // Φ(−9) ≈ 1e-19 in all: start at the first cell that reaches above (binary search; the cells
    // are sorted), and stop past a boundary where Φ is 1 in double precision.
    const double from = mu[0] - 9 * sd[0];
    const auto first = std::partition_point(cells_.begin(), cells_.end(),
                                            [&](const Cell& c) { return c.upper[0] <= from; });
    double previous = first == cells_.begin() || first == cells_.end()
                          ? 0.0
                          : normal_cdf((first->lower[0] - mu[0]) / sd[0]);
    for (auto c = first; c != cells_.end(); ++c) {
      const double z = (c->upper[0] - mu[0]) / sd[0];
      const double hi = normal_cdf(z);
      const double width = hi - previous;
      previous = hi;
      if (width > 0) total += width * normal_cdf((c->upper[1] - mu[1]) / sd[1]);
      if (z > 9) break;
    }
    return std::min(1.0, total);
  }
  for (const auto& c : cells_) {
    double prod = 1;
    for (std::size_t j = 0; j < p && prod > 0; ++j) {
      const double hi = normal_cdf((c.upper[j] - mu[j]) / sd[j]);
      const double lo = std::isinf(c.lower[j]) ? 0.0 : normal_cdf((c.lower[j] - mu[j]) / sd[j]);
      prod *= std::max(0.0, hi - lo);
    }
    total += prod;
  }
  return std::min(1.0, total);
}

}  // namespace dptune::dpareto
