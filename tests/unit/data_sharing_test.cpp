// One data source read once per process: `dptune run` checks the pipeline on the data and then runs
// the study on the same rows (DataSource::make_fixed).  A file's rows are read once whatever the
// layout stream; generated rows are reused for the same seed only; the splits are the ones a
// fresh source makes from the same stream.
#include <doctest/doctest.h>

#include <string>

#include "dptune/host/data_readers.hpp"
#include "dptune/host/data_source.hpp"
#include "temp_dir.hpp"

namespace {

std::unique_ptr<dptune::host::DataSource> source(
    const std::string& name, const dptune::Params& given = {},
    std::optional<dptune::host::Preprocessing> pre = std::nullopt) {
  const auto* info = dptune::host::find_data_source(name);
  REQUIRE(info != nullptr);
  return dptune::host::make_data_source(name, info->schema.complete(given), pre);
}

dptune::host::DataSplits fixed(const dptune::host::DataSource& s, std::uint64_t stream_seed,
                               std::optional<std::uint64_t> seed) {
  dptune::Xoshiro256 rng(stream_seed, 1);
  return s.make_fixed(rng, seed);
}

const std::vector<float>* storage(const dptune::host::DataSplits& s) {
  return s.train.float_rows.storage();
}

std::vector<double> doubles(const dptune::Dataset& d) {
  return dptune::host::with_double_features(d).features;
}

/// The same rows and labels in every split.
void check_same_splits(const dptune::host::DataSplits& a, const dptune::host::DataSplits& b) {
  CHECK(doubles(a.train) == doubles(b.train));
  CHECK(a.train.labels == b.train.labels);
  CHECK(doubles(a.validation) == doubles(b.validation));
  CHECK(a.validation.labels == b.validation.labels);
  CHECK(doubles(a.test) == doubles(b.test));
  CHECK(a.test.labels == b.test.labels);
}

}  // namespace

TEST_CASE("data sharing: a file's rows are read once, each stream still draws its own split") {
  const auto shared = source("builtin:digits");
  const auto checks = fixed(*shared, 0, std::nullopt);  // the checks' fixed seed
  const auto run = fixed(*shared, 99, std::nullopt);    // the run's (secure) stream
  REQUIRE(storage(checks) != nullptr);
  CHECK(storage(run) == storage(checks));          // one storage: the file was not read again
  CHECK(run.train.labels != checks.train.labels);  // but the run's own split
  // Exactly what a source that never read the file makes from the run's stream.
  check_same_splits(run, fixed(*source("builtin:digits"), 99, std::nullopt));
  CHECK(run.train.rows == 1079);
  CHECK(run.preprocessing.kind == dptune::host::Preprocessing::Kind::Standardize);
}

TEST_CASE("data sharing: generated rows are reused for the same seed only") {
  const dptune::Params blobs{{"samples", std::int64_t{400}}, {"features", std::int64_t{5}}};
  const auto shared = source("blobs", blobs);
  const auto first = fixed(*shared, 3, 3);
  const auto again = fixed(*shared, 3, 3);
  CHECK(storage(again) == storage(first));  // not generated again
  check_same_splits(again, first);
  check_same_splits(again, fixed(*source("blobs", blobs), 3, 3));
  // Another seed, or secure randomness (never the same stream twice): generated anew, and the
  // same as a fresh source's.
  const auto other = fixed(*shared, 4, 4);
  CHECK(storage(other) != storage(first));
  check_same_splits(other, fixed(*source("blobs", blobs), 4, 4));
  CHECK(doubles(other.train) != doubles(first.train));
  const auto secure = fixed(*shared, 4, std::nullopt);
  CHECK(storage(secure) != storage(other));
  check_same_splits(secure, other);  // the same stream's words, drawn again
  CHECK(storage(fixed(*shared, 4, std::nullopt)) != storage(secure));
}

TEST_CASE("data sharing: split_seed fixes the rows and the split, whatever the stream") {
  const dptune::Params blobs{{"samples", std::int64_t{300}}, {"split_seed", std::int64_t{11}}};
  const auto shared = source("blobs", blobs);
  const auto first = fixed(*shared, 1, std::nullopt);
  const auto again = fixed(*shared, 2, std::nullopt);
  CHECK(storage(again) == storage(first));
  check_same_splits(again, first);
  check_same_splits(again, fixed(*source("blobs", blobs), 5, 5));
}

TEST_CASE("data sharing: fitted_standardize fits on each split, so a file is read per split") {
  dptune::host::Preprocessing fitted{dptune::host::Preprocessing::Kind::FittedStandardize};
  const auto shared = source("builtin:wine", {}, fitted);
  const auto checks = fixed(*shared, 0, std::nullopt);
  const auto run = fixed(*shared, 8, std::nullopt);
  CHECK(storage(run) != storage(checks));  // rows scaled by another split's statistics
  CHECK(run.preprocessing.mean != checks.preprocessing.mean);
  check_same_splits(run, fixed(*source("builtin:wine", {}, fitted), 8, std::nullopt));
  CHECK(run.preprocessing.mean ==
        fixed(*source("builtin:wine", {}, fitted), 8, std::nullopt).preprocessing.mean);
  // Under a seed the whole result is reused.
  CHECK(storage(fixed(*shared, 8, 8)) == storage(fixed(*shared, 8, 8)));
}
