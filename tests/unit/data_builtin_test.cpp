// Data sources: bundled sets load with the right shapes, splits and scaling; the `data:` section of
// a pipeline resolves file paths against the pipeline's folder and rejects inconsistent params.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "build_paths.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/data_source.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using dptune::host::ComponentKind;

namespace {

dptune::Params complete(const std::string& source, const dptune::Params& given = {}) {
  const auto* info = dptune::host::find_data_source(source);
  REQUIRE(info != nullptr);
  return info->schema.complete(given);
}

dptune::host::DataSplits make(const std::string& source, const dptune::Params& given = {},
                              std::uint64_t seed = 7) {
  auto s = dptune::host::make_data_source(source, complete(source, given));
  dptune::Xoshiro256 rng(seed);
  return s->make(rng);
}

/// A split's features as doubles (the host keeps float rows, views of one storage).
std::vector<double> doubles(const dptune::Dataset& d) {
  return dptune::host::with_double_features(d).features;
}

std::vector<std::size_t> class_counts(const dptune::Dataset& d) {
  std::vector<std::size_t> c(d.num_classes, 0);
  for (double l : d.labels) ++c.at(static_cast<std::size_t>(l));
  return c;
}

/// Data sources as the host has them; every other kind has one permissive component.
class DataCatalog : public dptune::host::Catalog {
 public:
  DataCatalog() { other_.add_float("x", "anything").default_to(1.0); }
  std::vector<std::string> names(ComponentKind kind) const override {
    if (kind != ComponentKind::Data) return {"c"};
    std::vector<std::string> out;
    for (const auto& d : dptune::host::data_sources()) out.push_back(d.name);
    return out;
  }
  const dptune::ParamSchema* schema(ComponentKind kind, const std::string& name) const override {
    if (kind == ComponentKind::Data) {
      const auto* info = dptune::host::find_data_source(name);
      return info ? &info->schema : nullptr;
    }
    return name == "c" ? &other_ : nullptr;
  }

 private:
  dptune::ParamSchema other_;
};

std::string builtin_pipeline(const std::string& data, const std::string& utility_extra = "") {
  return "data:\n" + data +
         "algorithm: {use: c}\naccountant: {use: c, delta: 0}\nutility: {use: c" + utility_extra +
         "}\nsearch_space:\n  x: {float: [0, 1]}\ntuner: {use: c}\n";
}

std::string builtin_load_error(const dptune_test::TempDir& dir, const std::string& text) {
  const auto file = dir.write("p/pipeline.yaml", text);
  try {
    dptune::host::load_pipeline(file, {}, DataCatalog{});
  } catch (const dptune::host::ConfigDiagnostic& e) {
    return std::string(e.what()).substr(file.string().size() + 1);  // drop "file:"
  }
  FAIL("expected a ConfigDiagnostic");
  return {};
}

}  // namespace

TEST_CASE("builtin sets: shapes and class counts, train + validation + test = all rows") {
  struct Expected {
    const char* name;
    std::size_t rows, cols, classes;
  };
  for (const auto& e :
       {Expected{"builtin:breast_cancer", 569, 30, 2}, Expected{"builtin:digits", 1797, 64, 10},
        Expected{"builtin:heart_scale", 270, 13, 2}, Expected{"builtin:iris", 150, 4, 3},
        Expected{"builtin:wine", 178, 13, 3}, Expected{"builtin:two_gaussians", 40, 2, 2}}) {
    CAPTURE(e.name);
    const auto s = make(e.name);
    CHECK(s.train.rows + s.validation.rows + s.test.rows == e.rows);
    CHECK(s.validation.rows == static_cast<std::size_t>(std::llround(0.2 * e.rows)));
    CHECK(s.test.rows == static_cast<std::size_t>(std::llround(0.2 * e.rows)));
    for (const auto* d : {&s.train, &s.validation, &s.test}) {
      CHECK(d->cols == e.cols);
      CHECK(d->num_classes == e.classes);
      CHECK(d->features.empty());  // float rows only, views of one storage
      CHECK(d->float_rows.rows() == d->rows);
      CHECK(d->float_rows.storage() == s.train.float_rows.storage());
    }
  }
  // Class counts of the whole sets (no held-out rows, no scaling).
  const dptune::Params all{{"validation_fraction", 0.0}, {"test_fraction", 0.0}};
  CHECK(class_counts(make("builtin:breast_cancer", all).train) ==
        std::vector<std::size_t>{212, 357});
  CHECK(class_counts(make("builtin:heart_scale", all).train) == std::vector<std::size_t>{150, 120});
  CHECK(class_counts(make("builtin:iris", all).train) == std::vector<std::size_t>{50, 50, 50});
  CHECK(class_counts(make("builtin:wine", all).train) == std::vector<std::size_t>{59, 71, 48});
  CHECK(class_counts(make("builtin:digits", all).train) ==
        std::vector<std::size_t>{178, 182, 177, 183, 181, 182, 181, 179, 174, 180});
}

TEST_CASE("two_gaussians regenerates: the shipped CSV is the documented draw, bit for bit") {
  dptune::Xoshiro256 rng(4);
  const auto drawn =
      dptune::host::gaussian_mixture({{7.857, -3.360}, {6.425, -9.166}}, 20, 1.0, rng);
  const auto shipped = dptune::host::read_csv(dptune::host::bundled_data_file("two_gaussians.csv"),
                                              dptune::host::CsvOptions{});
  CHECK(shipped.features == drawn.features);
  CHECK(shipped.labels == drawn.labels);
}

TEST_CASE("preprocessing: a builtin's default uses frozen public statistics, not the split's") {
  // the default scaling must not depend on the private training split.
  const auto frozen = dptune::host::default_preprocessing("builtin:wine");
  REQUIRE(frozen.kind == dptune::host::Preprocessing::Kind::Standardize);
  CHECK(frozen.assumed_public().find("data/public_stats/wine.yaml") != std::string::npos);
  // Two different splits (layout seeds) share the very same statistics.
  const auto a = make("builtin:wine", {}, 1), b = make("builtin:wine", {}, 2);
  CHECK(a.preprocessing.mean == frozen.mean);
  CHECK(b.preprocessing.mean == frozen.mean);
  CHECK(a.preprocessing.scale == b.preprocessing.scale);
  CHECK(doubles(a.train) != doubles(b.train));
  // Proline (column 12) of the first training row, mapped with the frozen constants.
  auto raw_source = dptune::host::make_data_source(
      "builtin:wine", complete("builtin:wine"),
      dptune::host::Preprocessing{dptune::host::Preprocessing::Kind::None});
  dptune::Xoshiro256 rng(1);
  const auto raw = raw_source->make(rng);
  const auto raw_train = doubles(raw.train), a_train = doubles(a.train);
  CHECK(raw_train[12] > 200);  // proline, unscaled
  CHECK(a_train[12] == doctest::Approx((raw_train[12] - frozen.mean[12]) / frozen.scale[12]));
  // The description (in the report) says what was loaded once make() ran.
  auto source = dptune::host::make_data_source("builtin:wine", complete("builtin:wine"));
  dptune::Xoshiro256 rng2(1);
  source->make(rng2);
  CHECK(source->describe().find("178 rows x 13 features, 3 classes; train 106, validation 36, "
                                "test 36") != std::string::npos);
}

TEST_CASE("preprocessing: fitted_standardize (explicit opt-in) fits on the training split only") {
  auto source = dptune::host::make_data_source(
      "builtin:wine", complete("builtin:wine"),
      dptune::host::Preprocessing{dptune::host::Preprocessing::Kind::FittedStandardize});
  dptune::Xoshiro256 rng(1);
  const auto s = source->make(rng);
  CHECK(s.preprocessing.fitted());
  const std::size_t n = s.train.rows, m = s.validation.rows;
  const auto train = dptune::host::with_double_features(s.train),
             validation = dptune::host::with_double_features(s.validation);
  double largest_validation_mean = 0;
  for (std::size_t j = 0; j < s.train.cols; ++j) {
    double mean = 0, sq = 0, vmean = 0;
    for (std::size_t i = 0; i < n; ++i) {
      mean += train.row(i)[j] / static_cast<double>(n);
      sq += train.row(i)[j] * train.row(i)[j] / static_cast<double>(n);
    }
    for (std::size_t i = 0; i < m; ++i) vmean += validation.row(i)[j] / static_cast<double>(m);
    CHECK(std::abs(mean) < 1e-6);  // the rows are stored as float: rounded to 2^-24 relative
    CHECK(sq == doctest::Approx(1.0));
    largest_validation_mean = std::max(largest_validation_mean, std::abs(vmean));
  }
  CHECK(largest_validation_mean > 0.05);
}

TEST_CASE("preprocessing: float rows preprocessed on several threads are the same bits") {
  // 1001 rows of 7 values (the slices of 2, 3 and 8 threads end at different rows); each row
  // normalised in double and rounded once: r_j / max / sqrt(sum (r_k / max)^2), row by row.
  using P = dptune::host::Preprocessing;
  const std::size_t rows = 1001, cols = 7;
  std::vector<float> values(rows * cols);
  for (std::size_t k = 0; k < values.size(); ++k)
    values[k] = static_cast<float>(std::sin(0.37 * double(k)) * double(1 + k % 5));
  std::vector<float> expected = values;
  for (std::size_t i = 0; i < rows; ++i) {
    float* row = expected.data() + i * cols;
    double largest = 0, sum = 0;
    for (std::size_t j = 0; j < cols; ++j) largest = std::max(largest, std::abs(double{row[j]}));
    for (std::size_t j = 0; j < cols; ++j) sum += (row[j] / largest) * (row[j] / largest);
    for (std::size_t j = 0; j < cols; ++j)
      row[j] = static_cast<float>(row[j] / largest / std::sqrt(sum));
  }
  for (const std::size_t threads : {1U, 2U, 3U, 8U}) {
    CAPTURE(threads);
    std::vector<float> done = values;
    P{P::Kind::NormalizeRows}.apply(done, cols, threads);
    CHECK(done == expected);
  }
}

TEST_CASE("preprocessing: record-local maps and public bounds, row by row") {
  using P = dptune::host::Preprocessing;
  double row[3] = {3, 0, 4};
  P{P::Kind::NormalizeRows}.apply_row(row, 3);
  CHECK(row[0] == doctest::Approx(0.6));
  CHECK(row[2] == doctest::Approx(0.8));
  double clipped[3] = {3, 0, 4}, inside[2] = {0.3, 0.4}, huge[2] = {3e300, 4e300};
  P clip{P::Kind::ClipRows};
  clip.bound = 2;
  clip.apply_row(clipped, 3);
  CHECK(clipped[0] == doctest::Approx(1.2));
  CHECK(clipped[2] == doctest::Approx(1.6));
  clip.apply_row(inside, 2);
  CHECK(inside[0] == 0.3);                       // within the bound: unchanged
  P{P::Kind::NormalizeRows}.apply_row(huge, 2);  // no overflow in the norm
  CHECK(huge[0] == doctest::Approx(0.6));
  P bounds{P::Kind::Bounds};
  bounds.lower = {0, 10};
  bounds.upper = {4, 20};
  dptune::Dataset d;
  d.rows = 1;
  d.cols = 2;
  d.features = {5, 12};  // 5 is above its bound: clamped to 4 -> 1
  const P ready = bounds.prepared(d);
  ready.apply(d);
  CHECK(d.features[0] == doctest::Approx(1.0));
  CHECK(d.features[1] == doctest::Approx(-0.6));
  P wrong{P::Kind::Standardize};
  wrong.mean = {0};
  wrong.scale = {1};
  wrong.where = "p.yaml:3:4: data.preprocessing.mean";
  CHECK_THROWS_WITH_AS(wrong.prepared(d),
                       "p.yaml:3:4: data.preprocessing.mean: mean has 1 values, the data has 2 "
                       "features",
                       dptune::ConfigError);
}

TEST_CASE("splits are drawn once from the layout stream, or from split_seed when given") {
  const auto a = make("builtin:iris", {}, 1), b = make("builtin:iris", {}, 1),
             c = make("builtin:iris", {}, 2);
  CHECK(doubles(a.train) == doubles(b.train));
  CHECK(doubles(a.train) != doubles(c.train));
  const dptune::Params fixed{{"split_seed", std::int64_t{5}}};
  CHECK(doubles(make("builtin:iris", fixed, 1).train) ==
        doubles(make("builtin:iris", fixed, 2).train));
  // Not stratified by default (a stratified split depends on every label); on request iris's 30
  // validation rows hold 10 of each class.
  CHECK(a.validation.rows == 30);
  const auto stratified = make("builtin:iris", {{"stratify", true}}, 1);
  CHECK(class_counts(stratified.validation) == std::vector<std::size_t>{10, 10, 10});
}

TEST_CASE("blobs source: generated from split_seed, split and standardised like the others") {
  const dptune::Params p{{"samples", std::int64_t{100}},
                         {"features", std::int64_t{3}},
                         {"classes", std::int64_t{4}},
                         {"split_seed", std::int64_t{3}}};
  const auto s = make("blobs", p, 1);
  CHECK(s.train.rows == 60);
  CHECK(s.train.cols == 3);
  CHECK(s.train.num_classes == 4);
  CHECK(doubles(make("blobs", p, 2).train) == doubles(s.train));
}

TEST_CASE("data section: file params resolve against the pipeline's folder") {
  dptune_test::TempDir dir;
  dir.write("p/sets/tiny.csv", "a,b,y\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n9,10,0\n");
  const auto file =
      dir.write("p/pipeline.yaml",
                builtin_pipeline(
                    "  use: csv\n  params: {path: sets/tiny.csv, label_column: y, classes: [0, 1], "
                    "validation_fraction: 0.2, test_fraction: 0}\n",
                    ", split: validation"));
  const auto config = dptune::host::load_pipeline(file, {}, DataCatalog{});
  CHECK(config.data.params.get_string("path") == (dir.path() / "p" / "sets" / "tiny.csv").string());
  CHECK(config.score_split == dptune::host::ScoreSplit::Validation);
  CHECK(dptune::host::to_yaml(config).find("split: validation") != std::string::npos);
  const auto s = dptune::host::make_data_source(config.data.use, config.data.params);
  dptune::Xoshiro256 rng(1);
  const auto splits = s->make(rng);
  CHECK(splits.train.rows == 4);
  CHECK(splits.validation.rows == 1);
  CHECK(splits.test.rows == 0);
}

TEST_CASE("data section: inconsistent params are config errors at the offending key") {
  dptune_test::TempDir dir;
  CHECK(builtin_load_error(
            dir, builtin_pipeline("  use: builtin:iris\n  params: {validation_fraction: 0.5, "
                                  "test_fraction: 0.5}\n")) ==
        "3:53: data.params.test_fraction: validation_fraction + test_fraction must be below 1 "
        "(training rows are what is left), got 0.5 + 0.5");
  CHECK(builtin_load_error(dir, builtin_pipeline("  use: csv\n  params: {path: nowhere.csv}\n")) ==
        "3:18: data.params.path: no such file 'nowhere.csv' (relative to the pipeline's folder)");
  CHECK(builtin_load_error(dir, builtin_pipeline("  use: csv\n")) ==
        "1:1: data: missing required parameter 'path' of csv (the CSV file (relative to the "
        "pipeline file)): give it in data.params");
  dir.write("p/t.csv", "a,y\n1,2\n");
  CHECK(builtin_load_error(
            dir, builtin_pipeline("  use: csv\n  params: {path: t.csv, classification: false, "
                                  "clients_distribution: dirichlet}\n")) ==
        "3:70: data.params.clients_distribution: dirichlet shards are drawn by label and need "
        "classification: true");
  CHECK(builtin_load_error(dir,
                           builtin_pipeline("  use: builtin:iris\n  params: {test_fraction: 0}\n",
                                            ", split: test")) ==
        "6:26: utility.split: the utility scores on the test split, "
        "but data.params.test_fraction is 0");
  CHECK(builtin_load_error(dir, builtin_pipeline("  use: builtin:iris\n", ", split: train")) ==
        "5:26: utility.split: expected string one of {validation, test}, got 'train'");
}

TEST_CASE(
    "bundled files: DPTUNE_DATA_DIR first, then <exe>/../share/dptune/data, then the source") {
  dptune_test::TempDir dir;
  dir.write("iris.csv", "a,label\n1,0\n2,1\n");
  ::setenv("DPTUNE_DATA_DIR", dir.path().c_str(), 1);
  CHECK(dptune::host::bundled_data_file("iris.csv") == dir.path() / "iris.csv");
  // Not in the override folder: the next places are tried.
  CHECK(dptune::host::bundled_data_file("wine.csv") ==
        fs::path(dptune_test::build_paths::source_dir) / "data" / "wine.csv");
  const fs::path installed =
      (fs::read_symlink("/proc/self/exe").parent_path() / ".." / "share" / "dptune" / "data")
          .lexically_normal();
  CHECK_THROWS_WITH_AS(
      dptune::host::bundled_data_file("no_such.csv"),
      ("bundled data file 'no_such.csv' not found; looked in " + dir.path().string() + ", " +
       installed.string() + ", " + dptune_test::build_paths::source_dir +
       "/data; set DPTUNE_DATA_DIR to the folder holding dptune's data/")
          .c_str(),
      dptune::ConfigError);
  ::unsetenv("DPTUNE_DATA_DIR");
}
