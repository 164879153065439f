// Pareto fronts and hypervolume (objectives minimised).
#include <doctest/doctest.h>

#include "dptune/helpers/pareto.hpp"

using dptune::hypervolume;
using dptune::pareto_front;
using dptune::Point;

TEST_CASE("pareto: front and hypervolume of the issue's example") {
  std::vector<Point> front = {{1, 5}, {2, 3}, {4, 2}, {5, 1}};
  // Slabs (6-1)(6-5) + (6-2)(5-3) + (6-4)(3-2) + (6-5)(2-1) = 5 + 8 + 2 + 1.
  CHECK(hypervolume(front, {6, 6}) == 16.0);
  CHECK(pareto_front(front) == std::vector<std::size_t>{0, 1, 2, 3});

  auto with_extra = front;
  with_extra.push_back({3, 4});    // dominated by (2, 3)
  with_extra.push_back({2, 3});    // duplicate
  with_extra.push_back({5.5, 5});  // dominated
  with_extra.push_back({7, 0});    // outside the reference box: contributes nothing
  CHECK(hypervolume(with_extra, {6, 6}) == 16.0);
  CHECK(pareto_front(with_extra) == std::vector<std::size_t>{0, 1, 2, 3, 7});
  // Order does not matter.
  std::vector<Point> shuffled = {{4, 2}, {1, 5}, {5, 1}, {2, 3}};
  CHECK(hypervolume(shuffled, {6, 6}) == 16.0);
}

TEST_CASE("pareto: degenerate cases") {
  CHECK(hypervolume({}, {1, 1}) == 0.0);
  CHECK(hypervolume({{1, 1}}, {1, 1}) == 0.0);  // on the reference: nothing strictly below it
  CHECK(hypervolume({{0, 0}}, {2, 3}) == 6.0);
  CHECK(dptune::dominates({1, 1}, {1, 2}));
  CHECK(!dptune::dominates({1, 1}, {1, 1}));
  CHECK(!dptune::dominates({0, 2}, {1, 1}));
}

TEST_CASE("pareto: three objectives against inclusion-exclusion") {
  // Two boxes [a, r]: volumes 1*2*3 = 6 and 2*1*1 = 2, intersection [max(a,b), r] = 1*1*1 = 1.
  std::vector<Point> points = {{0, 0, 0}, {-1, 1, 2}};
  CHECK(hypervolume(points, {1, 2, 3}) == doctest::Approx(6 + 2 - 1));
  CHECK(hypervolume({{0, 0, 0}}, {1, 2, 3}) == 6.0);
  // A dominated point changes nothing.
  points.push_back({0.5, 0.5, 0.5});
  CHECK(hypervolume(points, {1, 2, 3}) == doctest::Approx(7.0));
}
