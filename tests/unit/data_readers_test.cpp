// Readers (CSV, LIBSVM, IDX) on good and malformed fixtures, and the Gaussian generators.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <zlib.h>

#include "build_paths.hpp"
#include "dptune/host/data_layout.hpp"
#include "dptune/host/data_readers.hpp"
#include "temp_dir.hpp"

namespace {

using dptune::host::CsvOptions;
using dptune::host::DataFileError;

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(dptune_test::build_paths::source_dir) / "tests" / "data_fixtures" /
         name;
}

/// The message of the DataFileError `f` throws (fails the test if it throws nothing).
template <class F>
std::string read_error(F&& f) {
  try {
    f();
  } catch (const DataFileError& e) {
    return e.what();
  }
  FAIL("expected a DataFileError");
  return {};
}

std::string at(const std::string& name, int line, const std::string& message) {
  return fixture(name).string() + ":" + std::to_string(line) + ": " + message;
}

}  // namespace

TEST_CASE("csv: header, label chosen by name, comments and blank lines skipped, fields trimmed") {
  CsvOptions o;
  o.label_column = "y";
  const auto d = dptune::host::read_csv(fixture("good.csv"), o);
  CHECK(d.rows == 3);
  CHECK(d.cols == 3);
  CHECK(d.feature_names == std::vector<std::string>{"a", "b", "c"});
  CHECK(d.features == std::vector<double>{1, 2, 3, 4.5, -0.5, 6, 7, 8, 9});
  CHECK(d.labels == std::vector<double>{0, 1, 1});
  CHECK(d.num_classes == 2);
}

TEST_CASE("csv: label chosen by index, or the last column by default") {
  CsvOptions o;
  o.label_column = "0";
  const auto by_index = dptune::host::read_csv(fixture("good.csv"), o);
  CHECK(by_index.feature_names == std::vector<std::string>{"b", "y", "c"});
  // Labels 1, 4.5, 7 are three classes in numeric order.
  CHECK(by_index.labels == std::vector<double>{0, 1, 2});
  CHECK(by_index.num_classes == 3);

  const auto last = dptune::host::read_csv(fixture("good.csv"), CsvOptions{});
  CHECK(last.labels == std::vector<double>{0, 1, 2});  // 3, 6, 9
  CHECK(last.cols == 3);

  CsvOptions regression;
  regression.classification = false;
  const auto r = dptune::host::read_csv(fixture("good.csv"), regression);
  CHECK(r.labels == std::vector<double>{3, 6, 9});
  CHECK(r.num_classes == 0);
}

TEST_CASE("csv: a UTF-8 byte order mark does not become part of the first column's name") {
  CsvOptions o;
  o.label_column = "a";
  const auto d = dptune::host::read_csv(fixture("bom.csv"), o);
  CHECK(d.labels == std::vector<double>{0, 1});
  CHECK(d.feature_names == std::vector<std::string>{"b", "y"});
}

TEST_CASE("csv: no header, other delimiter, text labels become classes in text order") {
  CsvOptions o;
  o.header = false;
  o.delimiter = ';';
  const auto d = dptune::host::read_csv(fixture("no_header.csv"), o);
  CHECK(d.rows == 3);
  CHECK(d.cols == 2);
  CHECK(d.labels == std::vector<double>{0, 1, 0});  // cat, dog, cat
  CHECK(d.num_classes == 2);
  CHECK(d.feature_names == std::vector<std::string>{"x0", "x1"});
}

TEST_CASE("csv: malformed files give file:line and what is wrong") {
  CsvOptions o;
  CHECK(read_error([&] { dptune::host::read_csv(fixture("wrong_field_count.csv"), o); }) ==
        at("wrong_field_count.csv", 4, "expected 3 fields (as on line 1), got 2"));
  CHECK(read_error([&] { dptune::host::read_csv(fixture("non_numeric.csv"), o); }) ==
        at("non_numeric.csv", 3,
           "column 1 ('b'): expected a finite number, got 'x7' (a column of categories? declare "
           "them, public: data.params.categorical: {b: [x7, ...]})"));
  CHECK(read_error([&] { dptune::host::read_csv(fixture("empty_field.csv"), o); }) ==
        at("empty_field.csv", 2, "column 1 ('b'): expected a finite number, got an empty field"));
  CHECK(read_error([&] { dptune::host::read_csv(fixture("empty.csv"), o); }) ==
        fixture("empty.csv").string() + ": the file is empty: no header and no data rows");
  CHECK(read_error([&] { dptune::host::read_csv(fixture("header_only.csv"), o); }) ==
        at("header_only.csv", 1, "no data rows (only the header line)"));
  CHECK(read_error([&] { dptune::host::read_csv(fixture("missing.csv"), o); }) ==
        fixture("missing.csv").string() + ": no such file");
  o.label_column = "label";
  CHECK(read_error([&] { dptune::host::read_csv(fixture("good.csv"), o); }) ==
        at("good.csv", 1, "label column 'label' not found; columns: a, b, y, c"));
  o.label_column = "4";
  CHECK(read_error([&] { dptune::host::read_csv(fixture("good.csv"), o); }) ==
        at("good.csv", 1, "label column index 4 out of range: the file has 4 columns (0..3)"));
  CsvOptions no_header;
  no_header.header = false;
  no_header.label_column = "y";
  CHECK(read_error([&] { dptune::host::read_csv(fixture("good.csv"), no_header); }) ==
        fixture("good.csv").string() +
            ": label column 'y' must be a 0-based column index: the file has no header (header: "
            "false)");
  CsvOptions regression;
  regression.header = false;
  regression.delimiter = ';';
  regression.classification = false;
  CHECK(read_error([&] { dptune::host::read_csv(fixture("no_header.csv"), regression); }) ==
        at("no_header.csv", 1, "column 2 (label 'x2'): expected a number, got 'cat'"));
}

TEST_CASE("csv: categorical columns are one-hot encoded in place, in the declared order") {
  dptune_test::TempDir dir;
  const auto file = dir.path() / "c.csv";
  std::ofstream(file) << "age,sex,ward,label\n30,M,2,1\n40,F,9,0\n";
  CsvOptions o;
  o.label_column = "label";
  o.categorical = {{"sex", {"F", "M"}}, {"ward", {"1", "2", "3"}}};
  const dptune::Dataset d = dptune::host::read_csv(file, o);
  CHECK(d.feature_names ==
        std::vector<std::string>{"age", "sex=F", "sex=M", "ward=1", "ward=2", "ward=3"});
  REQUIRE(d.cols == 6);
  // Row 2's ward 9 is not declared: all its ward features are 0 (the record keeps its slot).
  CHECK(d.features == std::vector<double>{30, 0, 1, 0, 1, 0, 40, 1, 0, 0, 0, 0});
  o.refuse_unknown_categories = true;
  CHECK(read_error([&] { dptune::host::read_csv(file, o); }) ==
        file.string() + ":3: column 'ward': category '9' is not among the declared ones (1, 2, 3)");
  o.categorical = {{"sex", {"F", "M"}}, {"label", {"0", "1"}}};
  CHECK(read_error([&] { dptune::host::read_csv(file, o); }) ==
        file.string() +
            ":1: column 'label' is the label: declare its values with classes, not categorical");
  o.categorical = {{"gender", {"F", "M"}}};
  CHECK(read_error([&] {
          dptune::host::read_csv(file, o);
        }).starts_with(file.string() + ":1: categorical column 'gender' not found; columns: "));
}

TEST_CASE("csv: RFC 4180 quoting: delimiters, doubled quotes and line breaks inside quotes") {
  CsvOptions o;
  o.label_column = "species";
  const auto d = dptune::host::read_csv(fixture("quoted.csv"), o);
  REQUIRE(d.rows == 3);
  REQUIRE(d.cols == 2);
  CHECK(d.feature_names == std::vector<std::string>{"width", "height, cm"});
  CHECK(d.features == std::vector<double>{1.5, 2.0, 3, 4, 5, 6});
  // Classes in text order: 'Iris "setosa"' < 'multi\nline, label'; rows 1 and 3 share a class.
  CHECK(d.num_classes == 2);
  CHECK(d.labels == std::vector<double>{0, 1, 0});
  // Errors name the line the record starts on.
  CHECK(read_error([&] { dptune::host::read_csv(fixture("unclosed_quote.csv"), CsvOptions{}); }) ==
        at("unclosed_quote.csv", 2, "a quoted field is never closed (missing '\"')"));
  CHECK(read_error([&] {
          dptune::host::read_csv(fixture("text_after_quote.csv"), CsvOptions{});
        }) == at("text_after_quote.csv", 3,
                 "column 1: unexpected text after a closing quote (write \"\" for a quote inside a "
                 "quoted field)"));
  CHECK(read_error([&] { dptune::host::read_csv(fixture("stray_quote.csv"), CsvOptions{}); }) ==
        at("stray_quote.csv", 3,
           "column 1: a quote inside an unquoted field (quote the whole field and write \"\" for "
           "the quote)"));
}

TEST_CASE("libsvm: 1-based sparse rows, zeros filled in, labels -1/+1 become classes 0/1") {
  const auto d = dptune::host::read_libsvm(fixture("good.libsvm"));
  CHECK(d.rows == 3);
  CHECK(d.cols == 3);
  CHECK(d.features == std::vector<double>{0.5, 0, -1, 0, 2, 0, 1, 1, 1});
  CHECK(d.labels == std::vector<double>{1, 0, 1});
  CHECK(d.num_classes == 2);
  const auto wide = dptune::host::read_libsvm(fixture("good.libsvm"), 5);
  CHECK(wide.cols == 5);
  CHECK(wide.features[4] == 0.0);
  CHECK(wide.features[5 + 1] == 2.0);
}

TEST_CASE("libsvm: malformed files give file:line and what is wrong") {
  using dptune::host::read_libsvm;
  CHECK(read_error([] { read_libsvm(fixture("descending.libsvm")); }) ==
        at("descending.libsvm", 2, "feature indices must be strictly ascending: 2 after 3"));
  CHECK(read_error([] { read_libsvm(fixture("zero_index.libsvm")); }) ==
        at("zero_index.libsvm", 1, "feature index 0: indices are 1-based"));
  CHECK(read_error([] { read_libsvm(fixture("bad_pair.libsvm")); }) ==
        at("bad_pair.libsvm", 2, "expected index:value, got '2=3'"));
  CHECK(read_error([] { read_libsvm(fixture("bad_label.libsvm")); }) ==
        at("bad_label.libsvm", 1, "label: expected a number, got 'yes'"));
  CHECK(read_error([] { read_libsvm(fixture("bad_value.libsvm")); }) ==
        at("bad_value.libsvm", 2, "feature 2: expected a finite number, got 'abc'"));
  CHECK(read_error([] { read_libsvm(fixture("empty.libsvm")); }) ==
        fixture("empty.libsvm").string() + ": the file is empty: no examples");
  CHECK(read_error([] { read_libsvm(fixture("good.libsvm"), 2); }) ==
        at("good.libsvm", 1,
           "feature index 3 exceeds num_features 2 (unknown_features "
           "is refuse)"));
}

TEST_CASE("idx: gzip files (as MNIST is distributed) are read as they are, corrupt ones refused") {
  dptune_test::TempDir dir;
  dptune::Dataset d;
  d.rows = 4;
  d.cols = 4;  // 2 x 2 images
  for (int i = 0; i < 16; ++i) d.features.push_back((i * 53) % 256);
  d.labels = {1, 2, 3, 1};
  const auto images = dir.path() / "images-idx3-ubyte", labels = dir.path() / "labels-idx1-ubyte";
  dptune::host::write_idx(d, 2, 2, images, labels);
  const auto bytes = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const auto gzip = [&](const std::filesystem::path& from, const std::filesystem::path& to) {
    const std::string raw = bytes(from);
    gzFile out = gzopen(to.c_str(), "wb");
    REQUIRE(out != nullptr);
    REQUIRE(gzwrite(out, raw.data(), static_cast<unsigned>(raw.size())) ==
            static_cast<int>(raw.size()));
    REQUIRE(gzclose(out) == Z_OK);
  };
  const auto gz_images = dir.path() / "images-idx3-ubyte.gz";
  const auto gz_labels = dir.path() / "labels-idx1-ubyte.gz";
  gzip(images, gz_images);
  gzip(labels, gz_labels);
  CHECK(bytes(gz_images).substr(0, 2) == "\x1f\x8b");
  const auto back = dptune::host::read_idx(gz_images, gz_labels);
  CHECK(back.rows == 4);
  CHECK(dptune::host::with_double_features(back).features == d.features);
  CHECK(back.labels == d.labels);
  // Mixed: a compressed image file with a plain label file.
  CHECK(dptune::host::with_double_features(dptune::host::read_idx(gz_images, labels)).features ==
        d.features);
  // A truncated gzip stream.
  const std::string whole = bytes(gz_images);
  const auto cut = dir.write("cut.gz", whole.substr(0, whole.size() - 12));
  CHECK(read_error([&] {
          dptune::host::read_idx(cut, labels);
        }).rfind(cut.string() + ": corrupt gzip data: ", 0) == 0);
}

TEST_CASE("idx: write then read round-trips, header checks name the file") {
  dptune_test::TempDir dir;
  dptune::Dataset d;
  d.rows = 3;
  d.cols = 6;  // 2 x 3 images
  for (int i = 0; i < 18; ++i) d.features.push_back((i * 37) % 256);
  d.labels = {7, 0, 9};
  const auto images = dir.path() / "images-idx3-ubyte", labels = dir.path() / "labels-idx1-ubyte";
  dptune::host::write_idx(d, 2, 3, images, labels);
  CHECK(std::filesystem::file_size(images) == 16 + 18);
  CHECK(std::filesystem::file_size(labels) == 8 + 3);
  const auto back = dptune::host::read_idx(images, labels);
  CHECK(back.rows == 3);
  CHECK(back.cols == 6);
  CHECK(back.features.empty());  // float rows (exact: bytes)
  CHECK(dptune::host::with_double_features(back).features == d.features);
  // Or into the caller's vector, which it may still preprocess before sharing it.
  std::vector<float> pixels;
  const auto bare = dptune::host::read_idx(images, labels, &pixels);
  CHECK(bare.float_rows.empty());
  CHECK(std::vector<double>(pixels.begin(), pixels.end()) == d.features);
  CHECK(back.labels == d.labels);
  CHECK(back.num_classes == 10);
  CHECK(back.feature_names[5] == "pixel_1_2");

  // Swapped files: each magic names what it looks like.
  CHECK(read_error([&] { dptune::host::read_idx(labels, images); }) ==
        labels.string() +
            ": bad IDX magic 0x00000801, expected 0x00000803 (unsigned-byte images, 3 "
            "dimensions); this looks like a label file");
  // A truncated image file.
  const auto text = [&](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const auto short_images = dir.write("short-images", text(images).substr(0, 16 + 17));
  CHECK(read_error([&] { dptune::host::read_idx(short_images, labels); }) ==
        short_images.string() +
            ": size mismatch: the header promises 3 images of 2x3 (18 bytes after the header), "
            "the file has 17");
  std::string two_labels = text(labels).substr(0, 8 + 2);
  two_labels[7] = 2;  // header says 2 labels
  const auto fewer = dir.write("fewer-labels", two_labels);
  CHECK(read_error([&] { dptune::host::read_idx(images, fewer); }) ==
        fewer.string() + ": 2 labels for 3 images in " + images.string());
  const auto tiny = dir.write("tiny", "abc");
  CHECK(read_error([&] { dptune::host::read_idx(tiny, labels); }) ==
        tiny.string() + ": too short for an IDX image header (16 bytes), got 3 bytes");
}

TEST_CASE("idx: images of more than one read chunk stream into the floats, plain or gzip") {
  // 1 100 images of 32 x 32 = 1.07 MiB of pixels: the reader's 1 MiB chunks split an image.
  dptune_test::TempDir dir;
  dptune::Dataset d;
  d.rows = 1100;
  d.cols = std::size_t{32} * 32;
  for (std::size_t i = 0; i < d.rows * d.cols; ++i) d.features.push_back((i * 7919) % 256);
  for (std::size_t i = 0; i < d.rows; ++i) d.labels.push_back(static_cast<double>(i % 10));
  const auto images = dir.path() / "images", labels = dir.path() / "labels";
  dptune::host::write_idx(d, 32, 32, images, labels);
  std::ifstream in(images, std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto gz_images = dir.path() / "images.gz";
  gzFile out = gzopen(gz_images.c_str(), "wb");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, raw.data(), static_cast<unsigned>(raw.size())) ==
          static_cast<int>(raw.size()));
  REQUIRE(gzclose(out) == Z_OK);
  for (const auto& file : {images, gz_images}) {
    std::vector<float> pixels;
    const auto back = dptune::host::read_idx(file, labels, &pixels);
    CHECK(back.rows == 1100);
    CHECK(back.labels == d.labels);
    CHECK(pixels.size() == d.features.size());
    CHECK(std::vector<double>(pixels.begin(), pixels.end()) == d.features);
    CHECK(pixels.capacity() == pixels.size());  // reserved once: no growth, no slack
  }
  // A compressed file whose data is one byte short, or one image too long, of what its header
  // promises: known only once it is read, and said the same way as for a plain file.
  for (const std::size_t size : {raw.size() - 1, raw.size() + 1024}) {
    std::string changed = raw;
    changed.resize(size, '\x05');
    const auto gz = dir.path() / ("changed-" + std::to_string(size) + ".gz");
    gzFile w = gzopen(gz.c_str(), "wb");
    REQUIRE(w != nullptr);
    REQUIRE(gzwrite(w, changed.data(), static_cast<unsigned>(changed.size())) ==
            static_cast<int>(changed.size()));
    REQUIRE(gzclose(w) == Z_OK);
    CHECK(read_error([&] { dptune::host::read_idx(gz, labels); }) ==
          gz.string() + ": size mismatch: the header promises 1100 images of 32x32 (1126400 " +
              "bytes after the header), the file has " + std::to_string(size - 16));
  }
}

TEST_CASE("gaussian_mixture: per-class sample means and variances match the centres and spread") {
  dptune::Xoshiro256 rng(11);
  const std::size_t per_class = 4000;
  const double spread = 2.0;
  const auto d = dptune::host::gaussian_mixture({{1.0, -2.0}, {-3.0, 0.5}}, per_class, spread, rng);
  REQUIRE(d.rows == 2 * per_class);
  const std::vector<std::vector<double>> centres{{1.0, -2.0}, {-3.0, 0.5}};
  for (std::size_t k = 0; k < 2; ++k) {
    for (std::size_t j = 0; j < 2; ++j) {
      double sum = 0, sq = 0;
      for (std::size_t i = k * per_class; i < (k + 1) * per_class; ++i) {
        CHECK(d.labels[i] == static_cast<double>(k));
        sum += d.row(i)[j];
      }
      const double mean = sum / per_class;
      for (std::size_t i = k * per_class; i < (k + 1) * per_class; ++i)
        sq += (d.row(i)[j] - mean) * (d.row(i)[j] - mean);
      // 5 standard errors: sd(mean) = 2/√4000 ≈ 0.032; sd(variance) ≈ 4·√(2/4000) ≈ 0.089.
      CHECK(std::abs(mean - centres[k][j]) < 5 * spread / std::sqrt(double(per_class)));
      CHECK(std::abs(sq / (per_class - 1) - spread * spread) <
            5 * spread * spread * std::sqrt(2.0 / per_class));
    }
  }
}

TEST_CASE("gaussian_blobs: shape, balanced classes, centres at the given distance, seeded") {
  dptune::host::BlobOptions o;
  o.samples = 3001;
  o.features = 5;
  o.classes = 3;
  o.separation = 6.0;
  o.spread = 1.0;
  dptune::Xoshiro256 a(3), b(3);
  const auto d = dptune::host::gaussian_blobs(o, a);
  CHECK(d.rows == 3001);
  CHECK(d.cols == 5);
  CHECK(d.num_classes == 3);
  CHECK(dptune::host::gaussian_blobs(o, b).features == d.features);
  std::vector<std::size_t> count(3, 0);
  std::vector<std::vector<double>> mean(3, std::vector<double>(5, 0.0));
  for (std::size_t i = 0; i < d.rows; ++i) {
    const auto k = static_cast<std::size_t>(d.labels[i]);
    ++count[k];
    for (std::size_t j = 0; j < 5; ++j) mean[k][j] += d.row(i)[j];
  }
  CHECK(count == std::vector<std::size_t>{1001, 1000, 1000});
  for (std::size_t k = 0; k < 3; ++k) {
    double norm = 0;
    for (double& m : mean[k]) {
      m /= static_cast<double>(count[k]);
      norm += m * m;
    }
    // The class mean estimates the centre (norm = separation) with sd 1/√1000 per coordinate.
    CHECK(std::abs(std::sqrt(norm) - 6.0) < 0.25);
  }
  // Classes interleave after the shuffle: the first 30 rows are not all one class.
  std::size_t first_class = 0;
  for (std::size_t i = 0; i < 30; ++i) first_class += d.labels[i] == d.labels[0];
  CHECK(first_class < 30);
}

namespace {
/// Xoshiro256 that keeps every word it hands out.
class RecordingRandom final : public dptune::RandomBitGenerator {
 public:
  explicit RecordingRandom(std::uint64_t seed) : inner_(seed) {}
  std::uint64_t next_u64() override { return words.emplace_back(inner_.next_u64()); }
  bool cryptographically_secure() const override { return false; }
  std::string description() const override { return "recording"; }
  std::vector<std::uint64_t> words;

 private:
  dptune::Xoshiro256 inner_;
};
}  // namespace

TEST_CASE("gaussian_blobs: the rows are the same bits for every thread count") {
  dptune::host::BlobOptions o;
  o.samples = 1300;  // crosses the 512-row blocks of words
  o.features = 7;    // odd: the last pair's second output is dropped, its words still drawn
  o.classes = 3;
  o.separation = 6.0;
  dptune::Xoshiro256 serial_rng(21);
  const auto serial = dptune::host::gaussian_blobs(o, serial_rng);
  const std::uint64_t serial_next = serial_rng.next_u64();
  for (const std::size_t threads : {2U, 3U, 7U}) {
    CAPTURE(threads);
    o.threads = threads;
    dptune::Xoshiro256 rng(21);
    std::vector<float> values;
    const auto doubles = dptune::host::gaussian_blobs(o, rng);
    dptune::Xoshiro256 again(21);
    const auto floats = dptune::host::gaussian_blobs(o, again, &values);
    CHECK(doubles.features == serial.features);
    CHECK(doubles.labels == serial.labels);
    REQUIRE(values.size() == serial.features.size());
    std::size_t float_mismatches = 0;
    for (std::size_t k = 0; k < values.size(); ++k)
      float_mismatches += values[k] != static_cast<float>(serial.features[k]);
    CHECK(float_mismatches == 0);
    CHECK(rng.next_u64() == serial_next);  // the stream is left where the serial draw left it
  }
}

TEST_CASE("gaussian_blobs: each value is Box-Muller of the stream's next two words, row by row") {
  // Centred blobs (separation 0: every centre is the origin), so each value is r·cos(θ) or
  // r·sin(θ) of the words the stream gave, computed here from the recorded words: the rows take
  // the stream's last samples × 2⌈features/2⌉ words, in row order, whatever the thread count.
  dptune::host::BlobOptions o;
  o.samples = 700;
  o.features = 5;
  o.classes = 2;
  o.separation = 0.0;
  o.spread = 1.5;
  o.threads = 2;
  RecordingRandom rng(8);
  const auto d = dptune::host::gaussian_blobs(o, rng);
  const std::size_t per_row = 6;
  REQUIRE(rng.words.size() >= o.samples * per_row);
  const std::uint64_t* w = rng.words.data() + (rng.words.size() - o.samples * per_row);
  const auto open01 = [](std::uint64_t x) {
    return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;  // (k + 1/2) / 2^53
  };
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < o.samples; ++i)
    for (std::size_t j = 0; j < o.features; j += 2, w += 2) {
      const double r = 1.5 * std::sqrt(-2.0 * std::log(open01(w[0])));
      const double angle = 6.283185307179586 * open01(w[1]);
      mismatches += d.row(i)[j] != r * std::cos(angle);
      if (j + 1 < o.features) mismatches += d.row(i)[j + 1] != r * std::sin(angle);
    }
  CHECK(mismatches == 0);
}
