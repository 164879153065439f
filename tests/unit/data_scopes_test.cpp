// DataScopes: what the evaluator trains and scores on for the whole data, a partition and a client.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "dptune/errors.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/data_scopes.hpp"
#include "dptune/host/data_source.hpp"
#include "temp_dir.hpp"

namespace {

using dptune::DataScope;
using dptune::host::DataScopes;
using dptune::host::ScoreSplit;

/// builtin:iris with row ids in feature 0 (unscaled), so a test can see which rows a scope got:
/// the splits become views of one new storage (as the host's are), holding train, validation
/// and test rows in that order.
dptune::host::DataSplits iris_with_ids(dptune::host::DataSplits s) {
  auto values = std::make_shared<std::vector<float>>();
  std::size_t id = 0;
  for (auto* d : {&s.train, &s.validation, &s.test}) {
    dptune::host::Indices rows;
    for (std::size_t i = 0; i < d->rows; ++i) {
      const float* row = d->float_rows.row(i);
      values->insert(values->end(), row, row + d->cols);
      values->at(id * d->cols) = static_cast<float>(id);
      rows.push_back(id++);
    }
    d->float_rows = dptune::FloatRows(values, d->cols).select(rows);
  }
  return s;
}

dptune::host::DataSplits iris() {
  const auto* info = dptune::host::find_data_source("builtin:iris");
  auto source = dptune::host::make_data_source("builtin:iris", info->schema.complete({}));
  dptune::Xoshiro256 rng(1);
  return iris_with_ids(source->make(rng));
}

DataScopes::MakeRng seeded(std::uint64_t seed) {
  return
      [seed](std::uint64_t stream) { return std::make_unique<dptune::Xoshiro256>(seed, stream); };
}

std::set<double> ids(const dptune::Dataset& d) {
  std::set<double> out;
  for (std::size_t i = 0; i < d.rows; ++i) out.insert(d.float_rows.row(i)[0]);
  return out;
}

}  // namespace

TEST_CASE("scopes: whole data scores on the validation or test split as the pipeline says") {
  const auto all = iris();
  DataScopes scopes(all.train, {}, seeded(3));
  const auto v = scopes.select(all, DataScope::whole(), ScoreSplit::Validation, false);
  CHECK(ids(*v.train) == ids(all.train));
  CHECK(v.train.get() == &all.train);  // the whole scope borrows the fixed split, no copy
  CHECK(ids(*v.scored) == ids(all.validation));
  const auto t = scopes.select(all, DataScope::whole(), ScoreSplit::Test, false);
  CHECK(ids(*t.scored) == ids(all.test));
  CHECK(scopes.train_rows(DataScope::whole()) == 90);
}

TEST_CASE("scopes: partitions are disjoint parts of the training split, fixed per seed") {
  const auto all = iris();
  DataScopes scopes(all.train, {}, seeded(3));
  std::set<double> seen;
  for (std::size_t i = 0; i < 7; ++i) {
    const auto part = scopes.select(all, DataScope::partition(i, 7), ScoreSplit::Validation, false);
    CHECK((part.train->rows == 12 || part.train->rows == 13));  // 90 / 7
    CHECK(scopes.train_rows(DataScope::partition(i, 7)) == part.train->rows);
    for (double id : ids(*part.train)) CHECK(seen.insert(id).second);
    CHECK(ids(*part.scored) == ids(all.validation));  // the shared held-out split
  }
  CHECK(seen == ids(all.train));
  DataScopes same(all.train, {}, seeded(3)), other(all.train, {}, seeded(4));
  CHECK(same.partitions(7) == scopes.partitions(7));
  CHECK(other.partitions(7) != scopes.partitions(7));
  CHECK_THROWS_AS(scopes.train_rows(DataScope::partition(7, 7)), dptune::InvalidArgument);
  CHECK_THROWS_AS(scopes.train_rows(DataScope::partition(0, 91)), dptune::InvalidArgument);
}

TEST_CASE("scopes: a subsample trains on m rows of the training split, drawn by the layout") {
  // DataScope::subsample(m): m rows, the first m of one shuffle of the row slots from the
  // layout's own stream: the rows the scope trains on are DataScopes::subsample(m), nested in
  // m, scored on the shared held-out split.
  const auto all = iris();
  DataScopes scopes(all.train, {}, seeded(3));
  std::set<double> smaller;
  for (std::size_t m : {1u, 27u, 31u, 90u}) {
    const auto scope = dptune::DataScope::subsample(m);
    const auto data = scopes.select(all, scope, ScoreSplit::Validation, false);
    CHECK(data.train->rows == m);
    CHECK(scopes.train_rows(scope) == m);
    std::set<double> want;
    for (std::size_t row : scopes.subsample(m)) want.insert(all.train.float_rows.row(row)[0]);
    CHECK(ids(*data.train) == want);
    CHECK(std::includes(want.begin(), want.end(), smaller.begin(), smaller.end()));
    CHECK(ids(*data.scored) == ids(all.validation));
    smaller = want;
  }
  CHECK(smaller == ids(all.train));  // m = n: every row
  DataScopes other(all.train, {}, seeded(4));
  CHECK(other.subsample(31) != scopes.subsample(31));
  CHECK_THROWS_AS(scopes.train_rows(dptune::DataScope::subsample(91)), dptune::InvalidArgument);
}

TEST_CASE(
    "scopes: a client trains on its own shard's train part and scores on its own validation") {
  const auto all = iris();
  dptune::host::ShardSettings sharding;
  sharding.options.distribution = dptune::host::ShardOptions::Distribution::Dirichlet;
  sharding.options.dirichlet_beta = 0.1;
  sharding.options.min_shard_size = 6;
  sharding.client_validation_fraction = 0.25;
  DataScopes scopes(all.train, sharding, seeded(5));
  std::set<double> seen;
  for (std::size_t j = 0; j < 10; ++j) {
    const auto c = scopes.select(all, DataScope::client(j, 10), ScoreSplit::Test, false);
    CHECK(c.train->rows + c.scored->rows >= 6);
    CHECK(c.scored->rows >= 1);
    CHECK(scopes.train_rows(DataScope::client(j, 10)) == c.train->rows);
    // Client data comes from the training split only, never from the pipeline's held-out rows.
    for (double id : ids(*c.train)) CHECK(seen.insert(id).second);
    for (double id : ids(*c.scored)) CHECK(seen.insert(id).second);
  }
  CHECK(seen == ids(all.train));
  // Too many clients for the minimum size is a configuration problem.
  CHECK_THROWS_AS(scopes.clients(16), dptune::ConfigError);
}

TEST_CASE("scopes: an empty held-out split is a clear error, not a score of nothing") {
  auto all = iris();
  all.test = dptune::Dataset{};
  DataScopes scopes(all.train, {}, seeded(3));
  CHECK_THROWS_WITH_AS(scopes.select(all, DataScope::whole(), ScoreSplit::Test, false),
                       "data scope whole: nothing to score on: the test split is empty (raise its "
                       "fraction in the data section)",
                       dptune::ConfigError);
}

TEST_CASE("scopes: a Fashion-MNIST-shaped study shares one float storage, never copied per run") {
  // 28x28 unsigned-byte images in IDX files, read by the idx source with public bounds [0, 255].
  dptune_test::TempDir dir;
  dptune::Dataset images;
  images.rows = 500;
  images.cols = std::size_t{28} * 28;
  dptune::Xoshiro256 pixels(11);
  for (std::size_t i = 0; i < images.rows; ++i) {
    images.labels.push_back(static_cast<double>(i % 10));
    for (std::size_t j = 0; j < images.cols; ++j)
      images.features.push_back(static_cast<double>(dptune::uniform_index(pixels, 256)));
  }
  const auto image_file = dir.path() / "images-idx3-ubyte",
             label_file = dir.path() / "labels-idx1-ubyte";
  dptune::host::write_idx(images, 28, 28, image_file, label_file);
  dptune::host::Preprocessing bounds{dptune::host::Preprocessing::Kind::Bounds};
  bounds.lower = {0};
  bounds.upper = {255};
  bounds.every_feature = true;
  bounds.unit_interval = true;
  const auto* info = dptune::host::find_data_source("idx");
  auto source = dptune::host::make_data_source(
      "idx",
      info->schema.complete({{"images", image_file.string()}, {"labels", label_file.string()}}),
      bounds);
  dptune::Xoshiro256 rng(1);
  const auto all = source->make(rng);
  const std::vector<float>* storage = all.train.float_rows.storage();
  REQUIRE(storage != nullptr);
  // One storage of all 500 images, preprocessed once in place: every split is a view of it.
  CHECK(storage->size() == 500 * 784);
  for (const auto* d : {&all.train, &all.validation, &all.test}) {
    CHECK(d->features.empty());
    CHECK(d->float_rows.storage() == storage);
  }
  // The public bounds mapped every pixel into [0, 1].
  const auto train = dptune::host::with_double_features(all.train);
  for (double x : train.features) CHECK((x >= 0.0 && x <= 1.0));
  // Every run's data, whatever its scope, is a view of the same storage: no copy per trial.
  DataScopes scopes(all.train, {}, seeded(3));
  for (const DataScope scope :
       {DataScope::whole(), DataScope::partition(2, 4), DataScope::client(1, 5)}) {
    CAPTURE(scope.to_string());
    for (int trial = 0; trial < 3; ++trial) {
      const auto run = scopes.select(all, scope, ScoreSplit::Validation, false);
      CHECK(run.train->features.empty());
      CHECK(run.scored->features.empty());
      CHECK(run.train->float_rows.storage() == storage);
      CHECK(run.scored->float_rows.storage() == storage);
      CHECK(run.train->float_rows.rows() == run.train->rows);
      CHECK(run.train->rows == scopes.train_rows(scope));
    }
  }
  // A partition's row i is the training split's row partitions[i], through the views.
  const auto part = scopes.select(all, DataScope::partition(2, 4), ScoreSplit::Validation, false);
  const auto& rows = scopes.partitions(4)[2];
  for (std::size_t i = 0; i < part.train->rows; ++i) {
    CHECK(part.train->float_rows.row(i) == all.train.float_rows.row(rows[i]));
    CHECK(part.train->labels[i] == all.train.labels[rows[i]]);
  }
}

TEST_CASE("scopes: keep_only holds just the kept scopes' rows, each set's rows and order intact") {
  const auto all = iris();
  dptune::host::ShardSettings sharding;
  sharding.client_validation_fraction = 0.25;
  DataScopes scopes(all.train, sharding, seeded(5));
  std::vector<dptune::host::ScopedData> chosen;
  for (const auto& scope : {DataScope::client(1, 5), DataScope::client(3, 5)})
    chosen.push_back(scopes.select(all, scope, ScoreSplit::Validation, false));
  const auto kept = dptune::host::keep_only(chosen);
  REQUIRE(kept.size() == 2);
  std::vector<const dptune::Dataset*> sets;
  std::set<double> chosen_ids;
  for (std::size_t i = 0; i < 2; ++i)
    for (const auto& [was, now] :
         {std::pair{chosen[i].train, kept[i].train}, std::pair{chosen[i].scored, kept[i].scored}}) {
      // Row for row the same values (here the row ids in feature 0) and labels, in the same order.
      REQUIRE(now->rows == was->rows);
      CHECK(now->labels == was->labels);
      for (std::size_t r = 0; r < now->rows; ++r)
        CHECK(std::equal(now->float_rows.row(r), now->float_rows.row(r) + now->cols,
                         was->float_rows.row(r)));
      CHECK(now->float_rows.storage() != all.train.float_rows.storage());
      sets.push_back(now.get());
      const auto these = ids(*was);
      chosen_ids.insert(these.begin(), these.end());
    }
  // One new storage of exactly the two clients' rows (18 each: 90 training rows over 5 clients).
  CHECK(kept[0].train->float_rows.storage() == kept[1].scored->float_rows.storage());
  CHECK(chosen_ids.size() == 36);
  CHECK(dptune::host::stored_rows(sets) == 36);
  CHECK(dptune::host::stored_rows({&all.train, &all.validation, &all.test}) == 150);
  // A partition is scored on the shared validation split: its 30 rows are kept with the part's 18.
  const auto part = dptune::host::keep_only(
      {scopes.select(all, DataScope::partition(2, 5), ScoreSplit::Validation, false)});
  CHECK(ids(*part[0].scored) == ids(all.validation));
  CHECK(dptune::host::stored_rows({part[0].train.get(), part[0].scored.get()}) == 48);
}
