// One data source read once per process: `dptune run` checks the pipeline on the data and then runs
// the study on the same rows (DataSource::make_fixed).  A file's rows are read once whatever the
// layout stream; generated rows are reused for the same seed only; the splits are the ones a
// fresh source makes from the same stream.
#include <doctest/doctest.h>

#include <array>
#include <string>

#include "dptune/host/data_readers.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/random.hpp"
#include "temp_dir.hpp"

namespace {

std::unique_ptr<dptune::host::DataSource> source(
    const std::string& name, const dptune::Params& given = {},
    const std::optional<dptune::host::Preprocessing>& pre = std::nullopt) {
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

std::vector<double> double_features(const dptune::Dataset& d) {
  return dptune::host::with_double_features(d).features;
}

/// The same rows and labels in every split.
void check_same_splits(const dptune::host::DataSplits& a, const dptune::host::DataSplits& b) {
  CHECK(double_features(a.train) == double_features(b.train));
  CHECK(a.train.labels == b.train.labels);
  CHECK(double_features(a.validation) == double_features(b.validation));
  CHECK(a.validation.labels == b.validation.labels);
  CHECK(double_features(a.test) == double_features(b.test));
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
  CHECK(double_features(other.train) != double_features(first.train));
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

namespace {

/// A secure stream as a study sees it: every word is kept (`words`), and a replay hands the kept
/// words back before drawing fresh ones (framework/src/study/study.cpp's RecordingRandom).
class Recorded final : public dptune::RandomBitGenerator {
 public:
  std::vector<std::uint64_t> words;

  explicit Recorded(std::uint64_t stream, std::vector<std::uint64_t> replay = {})
      : words(std::move(replay)), fresh_(key(), stream) {}
  std::uint64_t next_u64() override {
    if (next_ < words.size()) return words[next_++];
    ++next_;
    return words.emplace_back(fresh_.next_u64());
  }
  bool cryptographically_secure() const override { return true; }
  std::string description() const override { return "recorded"; }

 private:
  static std::array<unsigned char, 32> key() { return {7, 1, 2, 3}; }
  dptune::host::KeyedRandom fresh_;
  std::size_t next_ = 0;
};

}  // namespace

TEST_CASE(
    "data sharing: unseeded generated rows cost a study four words, and a replay regenerates "
    "them") {
  const dptune::Params small{{"samples", std::int64_t{400}}, {"features", std::int64_t{5}}};
  const dptune::Params wide{{"samples", std::int64_t{400}}, {"features", std::int64_t{60}}};
  Recorded first(3);
  const auto made = source("blobs", small)->make_fixed(first, std::nullopt);
  // The rows (2000 values) are not drawn from the recorded stream: only the generation key (4
  // words) and the split's draws are, so 12 times the values cost the same words.
  Recorded other(3);
  const auto made_wide = source("blobs", wide)->make_fixed(other, std::nullopt);
  CHECK(first.words.size() == other.words.size());
  CHECK(first.words.size() < 2000);  // each value cost at least one word before
  CHECK(made_wide.train.cols == 60);
  // A resumed study replays the kept words: the same rows and the same split.
  Recorded replay(99, first.words);
  check_same_splits(source("blobs", small)->make_fixed(replay, std::nullopt), made);
  CHECK(replay.words.size() == first.words.size());
  // Another stream's key: other rows.
  Recorded fresh(4);
  CHECK(double_features(source("blobs", small)->make_fixed(fresh, std::nullopt).train) !=
        double_features(made.train));
}
