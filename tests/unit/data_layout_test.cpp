// Split, partition and shard invariants; Gamma/Dirichlet sampling; standardisation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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
  dir.dirichlet_beta = 0.01;  // nearly one class per client: most clients get only their base rows
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
  // A validation row and a training row per client need two base rows each.
  CHECK_THROWS_WITH_AS(dptune::host::client_layout(labels, 4, 5, dir, 0.2, rng),
                       doctest::Contains("min_shard_size >= 2"), dptune::InvalidArgument);
  CHECK(dptune::host::client_layout(labels, 4, 5, dir, 0.0, rng).size() == 5);
}

namespace {

/// Every row's (client, part) in a client layout: client * 2 + (1 if validation).
std::vector<std::size_t> placement(const std::vector<dptune::host::ClientSplit>& clients,
                                   std::size_t n) {
  std::vector<std::size_t> where(n, SIZE_MAX);
  for (std::size_t j = 0; j < clients.size(); ++j) {
    for (std::size_t r : clients[j].train) where.at(r) = 2 * j;
    for (std::size_t r : clients[j].validation) where.at(r) = 2 * j + 1;
  }
  return where;
}

std::vector<dptune::host::ClientSplit> dirichlet_clients(const std::vector<double>& labels,
                                                         std::size_t classes, std::size_t clients,
                                                         double beta, std::uint64_t seed,
                                                         std::size_t min_shard_size = 2,
                                                         double validation_fraction = 0.2) {
  dptune::host::ShardOptions o;
  o.distribution = dptune::host::ShardOptions::Distribution::Dirichlet;
  o.dirichlet_beta = beta;
  o.min_shard_size = min_shard_size;
  dptune::Xoshiro256 rng(seed);
  return dptune::host::client_layout(labels, classes, clients, o, validation_fraction, rng);
}

/// Labels in 0..classes-1 from a seeded stream.
std::vector<double> random_labels(std::size_t n, std::size_t classes, std::uint64_t seed) {
  dptune::Xoshiro256 rng(seed);
  std::vector<double> out(n);
  for (auto& l : out) l = static_cast<double>(dptune::uniform_index(rng, classes));
  return out;
}

}  // namespace

TEST_CASE("shards: a Dirichlet row's client and part are a function of (seed, slot, its label)") {
  // Two unrelated label vectors of the same length, the same seed: every slot whose label agrees is
  // placed identically (same client, same part), whatever the other slots hold.  The old layout
  // (shuffle each class's list, cut at the proportions) failed this at every beta.
  for (double beta : {0.01, 0.1, 0.5, 5.0, 1000.0})
    for (std::uint64_t seed = 0; seed < 12; ++seed) {
      CAPTURE(beta);
      CAPTURE(seed);
      const auto a = random_labels(400, 5, 100 + seed), b = random_labels(400, 5, 200 + seed);
      const auto pa = placement(dirichlet_clients(a, 5, 12, beta, seed), a.size());
      const auto pb = placement(dirichlet_clients(b, 5, 12, beta, seed), b.size());
      std::size_t agreeing = 0, mismatched = 0;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] == b[i]) {
          ++agreeing;
          if (pa[i] != pb[i]) ++mismatched;
        }
      CHECK(agreeing > 40);
      CHECK(mismatched == 0);
    }
}

TEST_CASE(
    "shards: changing one record's label moves that record alone, at most two clients change") {
  for (double beta : {0.01, 0.1, 0.5, 5.0, 1000.0})
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      CAPTURE(beta);
      CAPTURE(seed);
      const auto labels = random_labels(300, 4, 7 + seed);
      const auto before = dirichlet_clients(labels, 4, 10, beta, seed);
      const auto where = placement(before, labels.size());
      std::size_t moved_records = 0;
      for (std::size_t slot : {0UL, 17UL, 150UL, 299UL}) {
        for (double other = 0; other < 4; ++other) {
          if (other == labels[slot]) continue;
          auto changed = labels;
          changed[slot] = other;
          const auto after = dirichlet_clients(changed, 4, 10, beta, seed);
          const auto where2 = placement(after, labels.size());
          for (std::size_t i = 0; i < labels.size(); ++i)
            if (i != slot) CHECK(where2[i] == where[i]);
          if (where2[slot] != where[slot]) ++moved_records;
          std::size_t clients_changed = 0;
          for (std::size_t j = 0; j < 10; ++j)
            if (before[j].train != after[j].train || before[j].validation != after[j].validation)
              ++clients_changed;
          CHECK(clients_changed <= 2);
        }
      }
      // Skewed proportions differ between classes: a label change does move its record (at
      // beta = 1000 the classes' proportions are nearly equal, so it may stay).
      if (beta <= 0.5) CHECK(moved_records > 0);
    }
}

TEST_CASE("shards: Dirichlet clients keep the minimum and a validation and a training row each") {
  // Labels sorted by class (a file sorted by label): the base rows are still a seeded choice of
  // slots, not the first ones.
  std::vector<double> sorted(500);
  for (std::size_t i = 0; i < sorted.size(); ++i) sorted[i] = static_cast<double>(i / 100);
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const auto clients = dirichlet_clients(sorted, 5, 20, 0.05, seed, 6, 0.25);
    REQUIRE(clients.size() == 20);
    std::vector<Indices> parts;
    std::size_t validation = 0;
    for (const auto& c : clients) {
      CHECK(c.train.size() + c.validation.size() >= 6);
      CHECK(c.validation.size() >= 1);
      CHECK(c.train.size() >= 1);
      parts.push_back(c.train);
      parts.push_back(c.validation);
      validation += c.validation.size();
    }
    check_disjoint_complete(parts, sorted.size());
    // Each row outside the base is validation with probability 0.25; the 20 base rows at position
    // 0 always are, the 20 at position 1 never: mean 20 + 0.25 · 460 = 135, sd sqrt(460·0.1875).
    CHECK(std::abs(static_cast<double>(validation) - 135.0) < 5 * std::sqrt(460 * 0.1875));
    // The same generator gives the same membership through shard_indices.
    dptune::host::ShardOptions o;
    o.distribution = dptune::host::ShardOptions::Distribution::Dirichlet;
    o.dirichlet_beta = 0.05;
    o.min_shard_size = 6;
    dptune::Xoshiro256 rng(seed);
    const auto shards = dptune::host::shard_indices(sorted, 5, 20, o, rng);
    for (std::size_t j = 0; j < 20; ++j) {
      Indices both = clients[j].train;
      both.insert(both.end(), clients[j].validation.begin(), clients[j].validation.end());
      std::sort(both.begin(), both.end());
      CHECK(both == shards[j]);
    }
  }
}

TEST_CASE("shards: iid client layout is the seeded partition, each shard split by split_client") {
  const auto labels = random_labels(103, 3, 5);
  dptune::host::ShardOptions iid;
  dptune::Xoshiro256 rng(21), reference(21);
  const auto clients = dptune::host::client_layout(labels, 3, 7, iid, 0.2, rng);
  const auto parts = dptune::host::partition_indices(labels.size(), 7, reference);
  REQUIRE(clients.size() == 7);
  for (std::size_t j = 0; j < 7; ++j) {
    const auto split = dptune::host::split_client(parts[j], 0.2, reference);
    CHECK(clients[j].train == split.train);
    CHECK(clients[j].validation == split.validation);
  }
  // The labels play no part: any other labels give the same layout.
  dptune::Xoshiro256 again(21);
  const auto other = dptune::host::client_layout(random_labels(103, 3, 6), 3, 7, iid, 0.2, again);
  CHECK(placement(other, 103) == placement(clients, 103));
}

TEST_CASE("label skew: closed forms, and Dirichlet skew grows as beta falls") {
  // Two classes of 2 rows: single-class shards are 1/2 from the global (1/2, 1/2) in TV.
  const std::vector<double> labels{0, 0, 1, 1};
  CHECK(dptune::host::mean_label_skew(labels, 2, {{0, 1}, {2, 3}}) == doctest::Approx(0.5));
  CHECK(dptune::host::mean_label_skew(labels, 2, {{0, 2}, {1, 3}}) == doctest::Approx(0.0));

  const auto many = labels_with({500, 500, 500, 500, 500});
  dptune::host::ShardOptions o;
  o.distribution = dptune::host::ShardOptions::Distribution::Dirichlet;
  // One base row per client: the base is label-independent (iid), so a larger one dilutes the
  // skew of the clients that get little else (at beta = 0.01 most get only their base rows).
  o.min_shard_size = 1;
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
