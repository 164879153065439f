// Split, partition and shard invariants; Gamma/Dirichlet sampling; standardisation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "dptune/errors.hpp"
#include "dptune/host/data_layout.hpp"

namespace {

using dptune::host::Indices;

/// Checks that `parts` are disjoint, ascending and together exactly 0..n-1.
void check_disjoint_complete(const std::vector<Indices>& parts, std::size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& p : parts) {
    CHECK(std::is_sorted(p.begin(), p.end()));
    for (std::size_t r : p) {
      REQUIRE(r < n);
      ++seen[r];
    }
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
}

/// Labels 0..C-1 with class c holding `sizes[c]` rows, classes interleaved.
std::vector<double> labels_with(const std::vector<std::size_t>& sizes) {
  std::vector<double> labels;
  std::vector<std::size_t> left = sizes;
  bool any = true;
  while (any) {
    any = false;
    for (std::size_t c = 0; c < sizes.size(); ++c)
      if (left[c]) {
        labels.push_back(static_cast<double>(c));
        --left[c];
        any = true;
      }
  }
  return labels;
}

std::size_t count_class(const std::vector<double>& labels, const Indices& rows, double c) {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [&](std::size_t r) { return labels[r] == c; }));
}

}  // namespace

TEST_CASE("split: disjoint, complete, exact sizes, stratified by largest remainder, seeded") {
  const auto labels = labels_with({212, 357});  // breast cancer's class sizes
  dptune::Xoshiro256 rng(1);
  const auto s = dptune::host::split_indices(labels, 2, 0.2, 0.2, true, rng);
  check_disjoint_complete({s.train, s.validation, s.test}, labels.size());
  CHECK(s.validation.size() == 114);  // round(0.2 · 569) = round(113.8)
  CHECK(s.test.size() == 114);
  CHECK(s.train.size() == 341);
  // Stratified: each class's share of every split is its quota rounded one way or the other.
  for (const auto* part : {&s.validation, &s.test}) {
    CHECK(std::abs(double(count_class(labels, *part, 0)) - 0.2 * 212) < 1.0);
    CHECK(std::abs(double(count_class(labels, *part, 1)) - 0.2 * 357) < 1.0);
  }
  dptune::Xoshiro256 again(1), other(2);
  CHECK(dptune::host::split_indices(labels, 2, 0.2, 0.2, true, again).train == s.train);
  CHECK(dptune::host::split_indices(labels, 2, 0.2, 0.2, true, other).train != s.train);

  dptune::Xoshiro256 plain(1);
  const auto u = dptune::host::split_indices(labels, 0, 0.1, 0.0, false, plain);
  check_disjoint_complete({u.train, u.validation, u.test}, labels.size());
  CHECK(u.validation.size() == 57);
  CHECK(u.test.empty());
}

TEST_CASE("split: a class of one row is never over-drawn, no training rows left is an error") {
  const auto labels = labels_with({1, 1, 8});
  dptune::Xoshiro256 rng(5);
  const auto s = dptune::host::split_indices(labels, 3, 0.4, 0.4, true, rng);
  check_disjoint_complete({s.train, s.validation, s.test}, labels.size());
  CHECK(s.validation.size() == 4);
  CHECK(s.test.size() == 4);
  dptune::Xoshiro256 r2(5);
  CHECK_THROWS_AS(dptune::host::split_indices(labels_with({2, 2}), 2, 0.5, 0.4, true, r2),
                  dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::host::split_indices({0, 1, 5}, 2, 0.2, 0.2, true, r2),
                  dptune::InvalidArgument);  // 5 is not a class below 2
}

TEST_CASE("partitions: k disjoint complete parts whose sizes differ by at most 1, fixed by seed") {
  for (std::size_t k : {1u, 3u, 7u, 100u}) {
    dptune::Xoshiro256 rng(k);
    const auto parts = dptune::host::partition_indices(100, k, rng);
    REQUIRE(parts.size() == k);
    check_disjoint_complete(parts, 100);
    std::size_t lo = 100, hi = 0;
    for (const auto& p : parts) {
      lo = std::min(lo, p.size());
      hi = std::max(hi, p.size());
    }
    CHECK(hi - lo <= 1);
    dptune::Xoshiro256 again(k);
    CHECK(dptune::host::partition_indices(100, k, again) == parts);
  }
  dptune::Xoshiro256 a(1), b(2);
  CHECK(dptune::host::partition_indices(50, 5, a) != dptune::host::partition_indices(50, 5, b));
  CHECK_THROWS_AS(dptune::host::partition_indices(3, 4, a), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::host::partition_indices(3, 0, a), dptune::InvalidArgument);
}

TEST_CASE("gamma_sample: mean and variance equal the shape (Marsaglia-Tsang, with the boost)") {
  for (double shape : {0.3, 1.0, 4.5}) {
    dptune::Xoshiro256 rng(42);
    const int n = 40000;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; ++i) {
      const double x = dptune::host::gamma_sample(rng, shape);
      CHECK_FALSE(x < 0);
      sum += x;
      sq += x * x;
    }
    const double mean = sum / n, var = sq / n - mean * mean;
    // Gamma(a): mean a, variance a, fourth central moment 3a² + 6a.
    CHECK(std::abs(mean - shape) < 5 * std::sqrt(shape / n));
    CHECK(std::abs(var - shape) <
          5 * std::sqrt((3 * shape * shape + 6 * shape - shape * shape) / n));
  }
}

TEST_CASE(
    "shards: iid shards are equal-sized; Dirichlet shards are disjoint, complete, minimum kept") {
  const auto labels = labels_with({300, 300, 300, 100});
  dptune::host::ShardOptions iid;
  dptune::Xoshiro256 rng(9);
  const auto even = dptune::host::shard_indices(labels, 4, 10, iid, rng);
  check_disjoint_complete(even, labels.size());
  for (const auto& s : even) CHECK(s.size() == 100);

  dptune::host::ShardOptions dir;
  dir.distribution = dptune::host::ShardOptions::Distribution::Dirichlet;
  dir.dirichlet_beta = 0.01;  // nearly one class per client: many draws miss the minimum
  dir.min_shard_size = 30;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    dptune::Xoshiro256 r(seed);
    const auto shards = dptune::host::shard_indices(labels, 4, 25, dir, r);
    REQUIRE(shards.size() == 25);
    check_disjoint_complete(shards, labels.size());
    for (const auto& s : shards) CHECK(s.size() >= 30);
    dptune::Xoshiro256 again(seed);
    CHECK(dptune::host::shard_indices(labels, 4, 25, dir, again) == shards);
  }
  dir.min_shard_size = 41;  // 25 · 41 > 1000
  CHECK_THROWS_AS(dptune::host::shard_indices(labels, 4, 25, dir, rng), dptune::InvalidArgument);
  dir.min_shard_size = 1;
  CHECK_THROWS_AS(dptune::host::shard_indices(labels, 0, 5, dir, rng), dptune::InvalidArgument);
}

TEST_CASE("label skew: closed forms, and Dirichlet skew grows as beta falls") {
  // Two classes of 2 rows: single-class shards are 1/2 from the global (1/2, 1/2) in TV.
  const std::vector<double> labels{0, 0, 1, 1};
  CHECK(dptune::host::mean_label_skew(labels, 2, {{0, 1}, {2, 3}}) == doctest::Approx(0.5));
  CHECK(dptune::host::mean_label_skew(labels, 2, {{0, 2}, {1, 3}}) == doctest::Approx(0.0));

  const auto many = labels_with({500, 500, 500, 500, 500});
  dptune::host::ShardOptions o;
  o.distribution = dptune::host::ShardOptions::Distribution::Dirichlet;
  o.min_shard_size = 5;
  std::vector<double> skew;
  for (double beta : {1000.0, 1.0, 0.1, 0.01}) {
    o.dirichlet_beta = beta;
    double total = 0;
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      dptune::Xoshiro256 rng(seed);
      total +=
          dptune::host::mean_label_skew(many, 5, dptune::host::shard_indices(many, 5, 20, o, rng));
    }
    skew.push_back(total / 4);
  }
  CAPTURE(skew[0]);
  CAPTURE(skew[1]);
  CAPTURE(skew[2]);
  CAPTURE(skew[3]);
  CHECK(skew[0] < 0.08);  // β → ∞ is iid: only sampling noise (shards of ~125 rows)
  CHECK(skew[0] < skew[1]);
  CHECK(skew[1] < skew[2]);
  CHECK(skew[2] < skew[3]);
  CHECK(skew[3] > 0.6);  // nearly single-class shards: the maximum is 1 - 1/5 = 0.8
  dptune::host::ShardOptions iid;
  dptune::Xoshiro256 rng(0);
  CHECK(dptune::host::mean_label_skew(many, 5, dptune::host::shard_indices(many, 5, 20, iid, rng)) <
        0.08);
}

TEST_CASE(
    "client split: each shard's own train and validation parts, validation at least one row") {
  dptune::Xoshiro256 rng(4);
  const Indices shard{3, 8, 10, 11, 20, 21, 40, 41, 42, 50};
  const auto c = dptune::host::split_client(shard, 0.2, rng);
  CHECK(c.validation.size() == 2);
  CHECK(c.train.size() == 8);
  Indices both = c.train;
  both.insert(both.end(), c.validation.begin(), c.validation.end());
  std::sort(both.begin(), both.end());
  CHECK(both == shard);
  CHECK(dptune::host::split_client({1, 2}, 0.2, rng).validation.size() == 1);  // round(0.4) = 0
  CHECK(dptune::host::split_client({1, 2, 3}, 0.0, rng).validation.empty());
}

TEST_CASE("standardizer: fitted on train only, zero-variance columns are centred, not divided") {
  dptune::Dataset train;
  train.rows = 4;
  train.cols = 2;
  train.features = {1, 5, 2, 5, 3, 5, 6, 5};  // column 1 is constant
  train.labels = {0, 0, 1, 1};
  dptune::Dataset validation = train;
  validation.rows = 2;
  validation.features = {13, 7, 13, 7};
  validation.labels = {0, 1};
  const auto s = dptune::host::Standardizer::fit(train);
  CHECK(s.mean == std::vector<double>{3, 5});
  CHECK(s.scale[0] == doctest::Approx(std::sqrt(3.5)));  // population sd of 1, 2, 3, 6
  CHECK(s.scale[1] == 1.0);
  s.apply(train);
  s.apply(validation);
  double mean = 0, sq = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    mean += train.features[2 * i] / 4;
    sq += train.features[2 * i] * train.features[2 * i] / 4;
    CHECK(train.features[2 * i + 1] == 0.0);
  }
  CHECK(mean == doctest::Approx(0.0));
  CHECK(sq == doctest::Approx(1.0));
  // Validation is transformed with the training statistics: its mean is NOT forced to 0.
  CHECK(validation.features[0] == doctest::Approx(10 / std::sqrt(3.5)));
  CHECK(validation.features[1] == 2.0);
}
