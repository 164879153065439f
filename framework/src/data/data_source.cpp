#include "dptune/host/data_source.hpp"
#include "dptune/host/suggest.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <numeric>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "base/build_paths.hpp"
#include "base/yaml_load.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/random.hpp"

namespace dptune::host {

namespace fs = std::filesystem;

namespace {

// ---- binary_queries -----------------------------------------------------------------------------

// The workload of Avent et al. 2020, §2.2 (sparse vector example): m binary queries of which
// exactly `positives` answer 1, in a fresh random order on every run.  Neighbouring datasets may
// change every answer by at most 1 (sensitivity Δ = 1 per query, as in Algorithm 1), hence l1 = m
// and l2 = √m.
class BinaryQueries final : public DataSource {
 public:
  explicit BinaryQueries(const dptune::Params& p)
      : queries_(static_cast<std::size_t>(p.get_int("queries"))),
        positives_(static_cast<std::size_t>(p.get_int("positives"))) {
    check_data_params("binary_queries", p);
  }
  bool varies_per_run() const override { return true; }
  DataSplits make(dptune::RandomBitGenerator& rng) const override {
    std::vector<std::size_t> order(queries_);
    std::iota(order.begin(), order.end(), 0);
    dptune::shuffle(rng, order);
    dptune::Dataset d;
    d.name = "binary_queries";
    d.rows = queries_;
    d.cols = 0;
    d.labels.assign(queries_, 0.0);
    for (std::size_t i = 0; i < positives_; ++i) d.labels[order[i]] = 1.0;
    d.num_classes = 2;
    DataSplits s;
    s.validation = d;  // the utility compares the release with these true answers
    s.test = d;        // a workload has no held-out part: its truth is its own answers
    s.train = std::move(d);
    const auto m = static_cast<double>(queries_);
    s.sensitivity = {1.0, m, std::sqrt(m)};
    return s;
  }
  std::string describe() const override {
    return std::to_string(queries_) + " binary queries, " + std::to_string(positives_) +
           " true, shuffled per run";
  }

 private:
  std::size_t queries_, positives_;
};

// ---- labelled datasets --------------------------------------------------------------------------

/// What every labelled source shares: the split, scaling and sharding settings.
struct LayoutParams {
  double validation_fraction, test_fraction;
  bool stratify;
  std::int64_t split_seed;  // -1: the pipeline's data-layout stream
  ShardSettings sharding;

  explicit LayoutParams(const dptune::Params& p)
      : validation_fraction(p.get_double("validation_fraction")),
        test_fraction(p.get_double("test_fraction")),
        stratify(p.get_bool("stratify")),
        split_seed(p.get_int("split_seed")) {
    sharding.options.distribution = p.get_string("clients_distribution") == "dirichlet"
                                        ? ShardOptions::Distribution::Dirichlet
                                        : ShardOptions::Distribution::Iid;
    sharding.options.dirichlet_beta = p.get_double("dirichlet_beta");
    sharding.options.min_shard_size = static_cast<std::size_t>(p.get_int("min_shard_size"));
    sharding.client_validation_fraction = p.get_double("client_validation_fraction");
  }
};

/// Loads (or generates) a Dataset; the generator gets the layout rng for sources that draw data.
/// A loader either fills the dataset's double `features` or writes its features as floats into
/// the given vector (rows x cols), leaving `features` empty: large sources never hold doubles.
struct Loader {
  std::function<dptune::Dataset(dptune::RandomBitGenerator&, std::vector<float>&)> read;
  /// Generated data: the rows depend on the stream (a file gives the same rows whatever it is).
  bool draws = false;
};

/// Under secure randomness, generated data are drawn from a ChaCha20 stream keyed by four secret
/// words of the layout stream, not from the layout stream itself: a study records only the words
/// of the streams below 2^32 (docs/studies.md), so the key (256 bits) is what it stores, and a
/// resume regenerates the same rows from it, instead of storing one word per generated value
/// (about 43 M words for 70 000 x 784 blobs).  The rows stay as unpredictable as before (the
/// keystream is cryptographically secure); the split then draws from the layout stream as before.
/// Seeded runs keep drawing the rows from their seeded stream, so their data do not change.
KeyedRandom generation_stream(dptune::RandomBitGenerator& rng) {
  std::array<unsigned char, 32> key{};
  for (std::size_t i = 0; i < key.size(); i += 8) {
    const std::uint64_t word = rng.next_u64();
    for (std::size_t b = 0; b < 8; ++b) key[i + b] = static_cast<unsigned char>(word >> (8 * b));
  }
  return KeyedRandom(key, 0);
}

/// The float rows of the whole dataset, read-only from here on.  The splits (and later the
/// partitions and client shards) are views of this one storage: nothing is copied per split,
/// scope, trial or thread.
dptune::FloatRows share(std::vector<float>& values, std::size_t cols) {
  return {std::make_shared<const std::vector<float>>(std::move(values)), cols};
}

/// A read-only view of `values` that does not own them (they must outlive it).
dptune::FloatRows borrow(const std::vector<float>& values, std::size_t cols) {
  return {std::shared_ptr<const std::vector<float>>(std::shared_ptr<void>{}, &values), cols};
}

/// The whole dataset, its rows preprocessed (in place, once) and shared read-only.
struct SharedRows {
  dptune::Dataset all;
  Preprocessing preprocessing;  // prepared, and already applied to `all`'s rows
};

class LabelledSource final : public DataSource {
 public:
  /// `threads`: how many threads may preprocess the rows (the run's executor threads).
  LabelledSource(std::string description, Loader load, const dptune::Params& params,
                 Preprocessing preprocessing, std::size_t threads)
      : description_(std::move(description)),
        load_(std::move(load)),
        layout_(params),
        preprocessing_(std::move(preprocessing)),
        threads_(threads) {}

  bool varies_per_run() const override { return false; }
  ShardSettings sharding() const override { return layout_.sharding; }

  DataSplits make(dptune::RandomBitGenerator& pipeline_rng) const override {
    return make_fixed(pipeline_rng, std::nullopt);
  }

  /// Keeps what it made for the next call: the splits of a reproducible layout stream (its own
  /// split_seed, or the pipeline's seed), and a file's preprocessed rows for every stream.  Only
  /// fitted_standardize and generated data under secure randomness are read again.
  DataSplits make_fixed(dptune::RandomBitGenerator& pipeline_rng,
                        std::optional<std::uint64_t> seed) const override {
    std::lock_guard lock(make_mutex_);
    // split_seed is fixed for this source, so any one key stands for its stream.
    const std::optional<std::uint64_t> key =
        layout_.split_seed >= 0 ? std::optional<std::uint64_t>(0) : seed;
    if (key && memo_ && memo_key_ == key) return *memo_;
    memo_.reset();  // another layout: the old splits' rows go before new ones are generated
    DataSplits s = split(pipeline_rng);
    if (key) {
      memo_ = s;
      memo_key_ = key;
    }
    return s;
  }

  void forget() const override {
    std::lock_guard lock(make_mutex_);
    memo_.reset();
    memo_key_.reset();
    rows_.reset();
  }

  std::string describe() const override {
    std::ostringstream text;
    text << description_;
    {
      std::lock_guard lock(mutex_);
      if (!shape_.empty()) text << "; " << shape_;
    }
    text << "; split train/validation/test "
         << 1 - layout_.validation_fraction - layout_.test_fraction << "/"
         << layout_.validation_fraction << "/" << layout_.test_fraction
         << (layout_.stratify ? " stratified (depends on every label: not covered by epsilon)" : "")
         << "; preprocessing " << preprocessing_.name();
    return text.str();
  }

 private:
  /// The loader's dataset with its features as floats in `values` (the doubles freed).
  dptune::Dataset read(dptune::RandomBitGenerator& rng, std::vector<float>& values) const {
    dptune::Dataset all = load_.read(rng, values);
    if (values.empty() && all.cols > 0) {
      values.assign(all.features.begin(), all.features.end());
      std::vector<double>().swap(all.features);  // the doubles go now, before the splits exist
    }
    return all;
  }

  SplitIndices draw_split(const dptune::Dataset& all, dptune::RandomBitGenerator& rng) const {
    try {
      return split_indices(all.labels, all.num_classes, layout_.validation_fraction,
                           layout_.test_fraction, layout_.stratify && all.num_classes > 0, rng);
    } catch (const dptune::InvalidArgument& e) {
      throw dptune::ConfigError("data (" + description_ + "): " + e.what());
    }
  }

  /// Record-local or public maps need nothing from the split: the rows are preprocessed once,
  /// in place, and (unless generated from the stream) kept for every later split.
  std::shared_ptr<const SharedRows> preprocessed_rows(dptune::RandomBitGenerator& rng) const {
    if (rows_) return rows_;
    std::vector<float> values;
    auto made = std::make_shared<SharedRows>();
    made->all = read(rng, values);
    made->preprocessing = preprocessing_.prepared(made->all);  // checks the public vectors' length
    made->preprocessing.apply(values, made->all.cols, threads_);
    made->all.float_rows = share(values, made->all.cols);
    if (!load_.draws) rows_ = made;
    return made;
  }

  /// fitted_standardize (explicit opt-in) takes the training split's statistics (read through a
  /// borrowed view) and applies them to every row before the rows are shared.
  std::shared_ptr<const SharedRows> fitted_rows(dptune::RandomBitGenerator& rng,
                                                SplitIndices& split) const {
    std::vector<float> values;
    auto made = std::make_shared<SharedRows>();
    made->all = read(rng, values);
    split = draw_split(made->all, rng);
    made->all.float_rows = borrow(values, made->all.cols);
    made->preprocessing = preprocessing_.prepared(subset(made->all, split.train));
    made->preprocessing.apply(values, made->all.cols, threads_);
    made->all.float_rows = share(values, made->all.cols);
    return made;
  }

  DataSplits split(dptune::RandomBitGenerator& pipeline_rng) const {
    std::unique_ptr<dptune::RandomBitGenerator> own;
    if (layout_.split_seed >= 0)
      own = std::make_unique<dptune::Xoshiro256>(static_cast<std::uint64_t>(layout_.split_seed));
    dptune::RandomBitGenerator& rng = own ? *own : pipeline_rng;
    SplitIndices split;
    std::shared_ptr<const SharedRows> rows;
    if (preprocessing_.fitted()) {
      rows = fitted_rows(rng, split);
    } else {
      rows = preprocessed_rows(rng);
      split = draw_split(rows->all, rng);
    }
    const dptune::Dataset& all = rows->all;
    DataSplits s;
    s.preprocessing = rows->preprocessing;
    s.train = subset(all, split.train);
    s.validation = subset(all, split.validation);
    s.test = subset(all, split.test);
    // One example changes one row: the trainers' own analyses (clipping) bound its effect.
    s.sensitivity = {1.0, 1.0, 1.0};
    {
      std::lock_guard lock(mutex_);
      shape_ = std::to_string(all.rows) + " rows x " + std::to_string(all.cols) + " features" +
               (all.num_classes ? ", " + std::to_string(all.num_classes) + " classes" : "") +
               "; train " + std::to_string(s.train.rows) + ", validation " +
               std::to_string(s.validation.rows) + ", test " + std::to_string(s.test.rows);
    }
    return s;
  }

  std::string description_;
  Loader load_;
  LayoutParams layout_;
  Preprocessing preprocessing_;
  std::size_t threads_;
  mutable std::mutex mutex_;
  mutable std::string shape_;  // what make() found, for the report
  mutable std::mutex make_mutex_;
  mutable std::shared_ptr<const SharedRows> rows_;  // a file's rows, once read
  mutable std::optional<DataSplits> memo_;          // the last reproducible layout's splits
  mutable std::optional<std::uint64_t> memo_key_;
};

// ---- the catalogue ------------------------------------------------------------------------------

struct Builtin {
  const char* name;
  const char* file;
  const char* description;
  bool libsvm;
  /// The label set from the dataset's public description (class k is labels[k]): never counted
  /// from the rows, so a bundled file treated as private data gets a public schema too.
  std::vector<std::string> labels;
  std::size_t features;  // libsvm: the dimension of the public description
};

// The datasets in data/ (credited in data/NOTICE).
const std::vector<Builtin>& builtins() {
  static const std::vector<Builtin> all{
      {"breast_cancer",
       "breast_cancer.csv",
       "Breast Cancer Wisconsin (Diagnostic), UCI: 569 x 30, 2 classes (0 malignant, 1 benign)",
       false,
       {"0", "1"},
       30},
      {"digits",
       "digits.csv",
       "Optical Recognition of Handwritten Digits 8x8, UCI: 1797 x 64, 10 classes",
       false,
       {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
       64},
      {"heart_scale",
       "heart_scale",
       "Statlog (Heart), scaled to [-1, 1] by LIBSVM (heart_scale): 270 x 13, 2 classes",
       true,
       {"-1", "1"},
       13},
      {"iris", "iris.csv", "Iris, UCI: 150 x 4, 3 classes", false, {"0", "1", "2"}, 4},
      {"wine", "wine.csv", "Wine, UCI: 178 x 13, 3 classes", false, {"0", "1", "2"}, 13},
      {"two_gaussians",
       "two_gaussians.csv",
       "Papernot & Steinke 2022's 2-D example (Figure 1): 40 points, 20 per class, unit-variance "
       "Gaussians at (7.857, -3.360) and (6.425, -9.166)",
       false,
       {"0", "1"},
       2},
  };
  return all;
}

dptune::ParamSchema& add_layout_params(dptune::ParamSchema& s) {
  s.add_float("validation_fraction", "share of the rows held out for validation (tuning scores)")
      .min(0)
      .max_exclusive(1)
      .default_to(0.2);
  s.add_float("test_fraction", "share of the rows held out for the final test score")
      .min(0)
      .max_exclusive(1)
      .default_to(0.2);
  s.add_bool("standardize",
             "retired: true fitted the scaling on the private training split; use the data "
             "section's preprocessing (docs/data.md)")
      .default_to(false);
  s.add_bool("stratify",
             "keep class proportions in every split (classification only); the split then "
             "depends on every record's label, which no epsilon covers: private tuners refuse it")
      .default_to(false);
  s.add_int("split_seed",
            "seed of the split (and of generated data); -1: the pipeline's data-layout stream")
      .min(-1)
      .default_to(std::int64_t{-1});
  s.add_string("clients_distribution", "how client shards are drawn: iid, or dirichlet by label")
      .one_of({"iid", "dirichlet"})
      .default_to(std::string("iid"));
  s.add_float("dirichlet_beta", "Dirichlet concentration of the label skew (small: more skewed)")
      .min_exclusive(0)
      .default_to(0.5);
  s.add_int("min_shard_size", "rows every client shard has at least")
      .min(1)
      .default_to(std::int64_t{2});
  s.add_float("client_validation_fraction",
              "share of each client's shard held out as the client's own validation data")
      .min(0)
      .max_exclusive(1)
      .default_to(0.2);
  return s;
}

/// The declared label set and what happens to a label outside it (docs/data.md, "A public
/// schema").  `classes` is the list's YAML flow text (the config loader writes a list there).
dptune::ParamSchema& add_class_params(dptune::ParamSchema& s, const char* what) {
  s.add_string("classes", what).default_to(std::string(""));
  s.add_string("unknown_labels",
               "a label outside classes: mask (the record keeps its slot and contributes "
               "nothing) or refuse (an error, itself not covered by any epsilon)")
      .one_of({"mask", "refuse"})
      .default_to(std::string("mask"));
  return s;
}

std::vector<DataSourceInfo> build_catalogue() {
  std::vector<DataSourceInfo> all;
  all.push_back({"binary_queries",
                 "m binary queries, exactly k of them true, in a fresh random order per run (Avent "
                 "et al. 2020 §2.2, sparse vector example)",
                 dptune::ParamSchema{}
                     .add_int("queries", "number of binary queries m")
                     .min(1)
                     .default_to(std::int64_t{100})
                     .add_int("positives", "queries whose true answer is 1")
                     .min(0)
                     .default_to(std::int64_t{10}),
                 {}});
  {
    dptune::ParamSchema s;
    s.add_string("path", "the CSV file (relative to the pipeline file)");
    s.add_string("label_column",
                 "the label column: a header name, a 0-based index, or '' for the last column")
        .default_to(std::string(""));
    s.add_bool("header", "the first line names the columns").default_to(true);
    s.add_string("delimiter", "field separator (one character)").default_to(std::string(","));
    s.add_bool("classification", "labels are classes (mapped to 0..C-1); false: numeric targets")
        .default_to(true);
    add_class_params(s,
                     "the labels in class order, e.g. [0, 1] or [benign, malignant] (a public "
                     "schema; private tuners need it); empty: inferred from the rows");
    s.add_string("categorical",
                 "columns of text categories and their PUBLIC category lists, e.g. {sex: [F, M], "
                 "ward: [1, 2, 3]}: each is one-hot encoded (features sex=F, sex=M)")
        .default_to(std::string(""));
    s.add_string("unknown_categories",
                 "a value outside its column's categories: zero (all its one-hot features 0, "
                 "record-local) or refuse")
        .one_of({"zero", "refuse"})
        .default_to(std::string("zero"));
    all.push_back({"csv",
                   "a delimited text file of numbers with a label column",
                   add_layout_params(s),
                   {"path"}});
  }
  {
    dptune::ParamSchema s;
    s.add_string("path", "the LIBSVM file (relative to the pipeline file)");
    s.add_int("num_features",
              "number of features (a public schema; private tuners need it); 0: the largest "
              "index in the file")
        .min(0)
        .default_to(std::int64_t{0});
    s.add_string("unknown_features",
                 "a value at an index above num_features: drop it (record-local) or refuse (an "
                 "error, itself not covered by any epsilon)")
        .one_of({"drop", "refuse"})
        .default_to(std::string("drop"));
    add_class_params(s,
                     "the labels in class order, e.g. [-1, 1] (a public schema; private tuners "
                     "need it); empty: inferred from the rows");
    all.push_back({"libsvm",
                   "LIBSVM sparse format (label index:value ...), e.g. UCI Adult as a9a",
                   add_layout_params(s),
                   {"path"}});
  }
  {
    dptune::ParamSchema s;
    s.add_string("images", "IDX image file, e.g. train-images-idx3-ubyte (uncompressed)");
    s.add_string("labels", "IDX label file, e.g. train-labels-idx1-ubyte (uncompressed)");
    add_class_params(s,
                     "the class count C (labels 0..C-1), e.g. 10, or the classes' names in label "
                     "order (a public schema; private tuners need it); empty: largest label + 1");
    all.push_back({"idx",
                   "MNIST / Fashion-MNIST IDX image and label files",
                   add_layout_params(s),
                   {"images", "labels"}});
  }
  {
    dptune::ParamSchema s;
    s.add_int("samples", "number of points").min(2).default_to(std::int64_t{300});
    s.add_int("features", "dimension").min(1).default_to(std::int64_t{2});
    s.add_int("classes", "number of blobs (one class each)").min(1).default_to(std::int64_t{2});
    s.add_float("separation", "distance of every blob centre from the origin")
        .min(0)
        .default_to(3.0);
    s.add_float("spread", "standard deviation of each coordinate around its centre")
        .min_exclusive(0)
        .default_to(1.0);
    all.push_back({"blobs",
                   "Gaussian blobs: one class per blob, centres uniform on a sphere (generated "
                   "with split_seed or the pipeline's data-layout stream)",
                   add_layout_params(s),
                   {}});
  }
  for (const auto& b : builtins()) {
    dptune::ParamSchema s;
    all.push_back({std::string("builtin:") + b.name,
                   std::string("bundled: ") + b.description + " (data/NOTICE)",
                   add_layout_params(s),
                   {}});
  }
  return all;
}

const Builtin* find_builtin(const std::string& name) {
  const std::string prefix = "builtin:";
  if (name.rfind(prefix, 0) != 0) return nullptr;
  for (const auto& b : builtins())
    if (name.substr(prefix.size()) == b.name) return &b;
  return nullptr;
}

void check_file(const dptune::Params& p, const std::string& key) {
  const fs::path file = p.get_string(key);
  std::error_code ec;
  if (file.empty()) throw DataParamError(key, "expected a file name, got ''");
  if (!fs::exists(file, ec)) throw DataParamError(key, "no such file: " + file.string());
  if (fs::is_directory(file, ec))
    throw DataParamError(key, "expected a file, got the folder " + file.string());
}

}  // namespace

const std::vector<DataSourceInfo>& data_sources() {
  static const std::vector<DataSourceInfo> catalogue = build_catalogue();
  return catalogue;
}

/// The columns of a `categorical` text (YAML flow text of a map, as the config loader writes it).
std::vector<CategoricalColumn> parse_categorical(const std::string& text) {
  if (text.empty()) return {};
  YAML::Node node;
  try {
    node = load_yaml_document(text);
  } catch (const YAML::Exception& e) {
    throw DataParamError("categorical",
                         "not a map of columns to categories: " + std::string(e.what()));
  }
  if (!node.IsMap())
    throw DataParamError("categorical",
                         "expected a map of columns to their category lists, e.g. {sex: [F, M]}");
  std::vector<CategoricalColumn> columns;
  for (const auto& entry : node) {
    CategoricalColumn column{entry.first.as<std::string>(), {}};
    const YAML::Node& list = entry.second;
    if (!list.IsSequence() || list.size() == 0)
      throw DataParamError("categorical", "column '" + column.name +
                                              "': expected a non-empty list of its categories");
    for (const auto& item : list) {
      const std::string category = item.IsScalar() ? item.Scalar() : std::string();
      if (category.empty())
        throw DataParamError("categorical", "column '" + column.name +
                                                "': every category must be a non-empty value");
      if (std::find(column.categories.begin(), column.categories.end(), category) !=
          column.categories.end())
        throw DataParamError("categorical", "column '" + column.name + "': category '" + category +
                                                "' is listed twice");
      column.categories.push_back(category);
    }
    columns.push_back(std::move(column));
  }
  return columns;
}

std::vector<CategoricalColumn> declared_categorical(const std::string& name,
                                                    const dptune::Params& p) {
  if (name != "csv" || !p.contains("categorical")) return {};
  return parse_categorical(p.get_string("categorical"));
}

const DataSourceInfo* find_data_source(const std::string& name) {
  for (const auto& info : data_sources())
    if (info.name == name) return &info;
  return nullptr;
}

namespace {

/// The names in a `classes` text: a YAML list (flow text, as the config loader writes it) or, for
/// idx, a count C standing for 0..C-1.
std::vector<std::string> parse_class_list(const std::string& source, const std::string& text) {
  YAML::Node node;
  try {
    node = load_yaml_document(text);
  } catch (const YAML::Exception& e) {
    throw DataParamError("classes", "not a list of labels: " + std::string(e.what()));
  }
  std::vector<std::string> names;
  if (node.IsScalar() && source == "idx") {
    std::size_t count = 0;
    const std::string& t = node.Scalar();
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), count);
    if (ec != std::errc{} || end != t.data() + t.size() || count == 0 || count > 256)
      throw DataParamError("classes",
                           "expected a class count in 1..256 (labels 0..C-1) or a "
                           "list of class names, got '" +
                               t + "'");
    for (std::size_t k = 0; k < count; ++k) names.push_back(std::to_string(k));
    return names;
  }
  if (!node.IsSequence())
    throw DataParamError("classes", "expected a list of the labels in class order, e.g. " +
                                        std::string(source == "libsvm" ? "[-1, 1]" : "[0, 1]") +
                                        ", got '" + text + "'");
  for (const auto& item : node) {
    if (!item.IsScalar() || item.Scalar().empty())
      throw DataParamError("classes", "every class must be a non-empty label, got '" + text + "'");
    names.push_back(item.Scalar());
  }
  if (names.empty()) throw DataParamError("classes", "expected at least one class, got []");
  if (source == "idx" && names.size() > 256)
    throw DataParamError("classes", "IDX labels are bytes: at most 256 classes");
  return names;
}

/// Two declared labels the reader could not tell apart (equal texts, or equal numbers when every
/// label is a number), and libsvm labels that are not numbers.
void check_class_names(const std::string& source, const std::vector<std::string>& names) {
  std::vector<double> numbers;
  for (const auto& name : names) {
    double v = 0;
    const char* begin = name.data() + (name.front() == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(begin, name.data() + name.size(), v);
    if (ec == std::errc{} && end == name.data() + name.size() && std::isfinite(v))
      numbers.push_back(v);
    else if (source == "libsvm")
      throw DataParamError("classes", "libsvm labels are numbers, got '" + name + "'");
  }
  const bool numeric = numbers.size() == names.size() && source != "idx";
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (numeric ? numbers[i] == numbers[j] : names[i] == names[j])
        throw DataParamError("classes", "class '" + names[i] + "' is declared twice (classes " +
                                            std::to_string(j) + " and " + std::to_string(i) + ")");
}

/// A csv label column named in `params` must be in the file's header (or be a column index):
/// only the header line is read, which holds no record.
void check_label_column(const dptune::Params& p) {
  const std::string want = p.get_string("label_column");
  if (want.empty() || !p.get_bool("header")) return;  // the last column, or an index (read_csv)
  const fs::path file = p.get_string("path");
  const CsvHeader header = read_csv_header(file, p.get_string("delimiter").front());
  const auto& names = header.names;
  if (names.empty() || std::find(names.begin(), names.end(), want) != names.end()) return;
  if (std::all_of(want.begin(), want.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
    return;  // a 0-based index: read_csv checks its range
  const auto best = did_you_mean(want, names);
  std::string columns;
  for (std::size_t i = 0; i < names.size() && i < 8; ++i) columns += (i ? ", " : "") + names[i];
  if (names.size() > 8) columns += ", ... (" + std::to_string(names.size()) + " columns)";
  throw DataParamError(
      "label_column", "label column '" + want + "' is not in the header of " +
                          file.filename().string() + " (line " + std::to_string(header.line) + ")" +
                          (best ? " (did you mean '" + *best + "'?)" : std::string()) +
                          "; columns: " + columns);
}

}  // namespace

std::vector<std::string> declared_class_names(const std::string& name, const dptune::Params& p) {
  if (const Builtin* b = find_builtin(name)) return b->labels;
  if (name == "blobs") {
    std::vector<std::string> names;
    for (std::int64_t k = 0; k < p.get_int("classes"); ++k) names.push_back(std::to_string(k));
    return names;
  }
  if (name != "csv" && name != "libsvm" && name != "idx") return {};
  if (name == "csv" && !p.get_bool("classification")) return {};
  const std::string text = p.contains("classes") ? p.get_string("classes") : std::string();
  if (text.empty()) return {};
  std::vector<std::string> names = parse_class_list(name, text);
  check_class_names(name, names);
  return names;
}

std::optional<MissingSchema> missing_public_schema(const std::string& name,
                                                   const dptune::Params& p) {
  if (name != "csv" && name != "libsvm" && name != "idx") return std::nullopt;
  if (name == "csv" && !p.get_bool("classification")) return std::nullopt;
  if (declared_class_names(name, p).empty()) {
    const std::string example = name == "idx"      ? "classes: 10"
                                : name == "libsvm" ? "classes: [-1, 1]"
                                                   : "classes: [0, 1]";
    return MissingSchema{
        "classes",
        "the label set must be declared, not counted from the private rows (one record with a "
        "new label would change the model's shape and the published class count): add " +
            example + " to data.params, " +
            (name == "idx" ? std::string("the number of classes (labels 0..C-1) or their names")
                           : std::string("every label value in class order")) +
            ", from the data's public description; a record with another label is masked"};
  }
  if (name == "libsvm" && p.get_int("num_features") == 0)
    return MissingSchema{
        "num_features",
        "the number of features must be declared, not taken from the largest index in the "
        "private rows (one row with a larger index would widen the model): add num_features: N "
        "to data.params, from the data's public description; a value at a larger index is "
        "dropped"};
  return std::nullopt;
}

void check_data_params(const std::string& name, const dptune::Params& p) {
  if (name == "binary_queries") {
    if (p.get_int("positives") > p.get_int("queries"))
      throw DataParamError("positives", "expected at most queries (" +
                                            std::to_string(p.get_int("queries")) + "), got " +
                                            std::to_string(p.get_int("positives")));
    return;
  }
  const DataSourceInfo* info = find_data_source(name);
  if (!info) throw dptune::ConfigError("unknown data source '" + name + "'");
  const double v = p.get_double("validation_fraction"), t = p.get_double("test_fraction");
  if (!(v + t < 1))
    throw DataParamError("test_fraction",
                         "validation_fraction + test_fraction must be below 1 "
                         "(training rows are what is left), got " +
                             dptune::to_string(dptune::Value{v}) + " + " +
                             dptune::to_string(dptune::Value{t}));
  if (p.get_bool("standardize"))
    throw DataParamError(
        "standardize",
        "standardize: true fitted mean and scale on the private training split, which no "
        "privacy guarantee covers; write the data section's preprocessing instead: "
        "normalize_rows (the default), clip_rows, none, {use: standardize, mean, scale} or "
        "{use: bounds, min, max} with public statistics, or the explicit opt-in "
        "fitted_standardize (docs/data.md)");
  const bool classification = name != "csv" || p.get_bool("classification");
  if (!classification && p.get_string("clients_distribution") == "dirichlet")
    throw DataParamError("clients_distribution",
                         "dirichlet shards are drawn by label and need classification: true");
  if (p.get_string("clients_distribution") == "dirichlet" &&
      p.get_double("client_validation_fraction") > 0 && p.get_int("min_shard_size") < 2)
    throw DataParamError("min_shard_size",
                         "dirichlet clients with a validation part need min_shard_size >= 2 (one "
                         "validation and one training row each, whatever the labels)");
  for (const auto& key : info->path_params) check_file(p, key);
  if (name == "csv" && p.get_string("delimiter").size() != 1)
    throw DataParamError("delimiter",
                         "expected one character, got '" + p.get_string("delimiter") + "'");
  if (name == "csv") check_label_column(p);
  if (name == "csv") parse_categorical(p.get_string("categorical"));  // well formed
  declared_class_names(name, p);  // a declared list must be well formed
  if (name == "blobs" && p.get_int("classes") > p.get_int("samples"))
    throw DataParamError("classes", "expected at most samples (" +
                                        std::to_string(p.get_int("samples")) + ") blobs, got " +
                                        std::to_string(p.get_int("classes")));
  if (const Builtin* b = find_builtin(name)) {
    try {
      bundled_data_file(b->file);
    } catch (const dptune::ConfigError& e) {
      throw DataParamError("", e.what());
    }
  }
}

fs::path bundled_data_file(const std::string& file_name) {
  std::vector<fs::path> tried;
  if (const char* env = std::getenv("DPTUNE_DATA_DIR"); env && *env) tried.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    tried.push_back((exe.parent_path() / ".." / "share" / "dptune" / "data").lexically_normal());
  if (*dptune::build_paths::source_data_dir != '\0')
    tried.emplace_back(dptune::build_paths::source_data_dir);
  for (const auto& dir : tried)
    if (fs::is_regular_file(dir / file_name, ec)) return dir / file_name;
  std::string where;
  for (const auto& dir : tried) where += (where.empty() ? "" : ", ") + dir.string();
  throw dptune::ConfigError("bundled data file '" + file_name + "' not found; looked in " +
                            (where.empty() ? std::string("(nowhere)") : where) +
                            "; set DPTUNE_DATA_DIR to the folder holding dptune's data/");
}

Preprocessing default_preprocessing(const std::string& name) {
  const Builtin* b = find_builtin(name);
  if (!b) return Preprocessing{Preprocessing::Kind::NormalizeRows};
  const std::string stats_name = std::string("public_stats/") + b->name + ".yaml";
  const fs::path file = bundled_data_file(stats_name);
  Preprocessing p{Preprocessing::Kind::Standardize};
  try {
    const YAML::Node root = load_yaml_file(file);
    p.mean = root["mean"].as<std::vector<double>>();
    p.scale = root["scale"].as<std::vector<double>>();
  } catch (const YAML::Exception& e) {
    throw dptune::Error(file.string() + ": not a readable bounds file: " + e.what());
  }
  p.source = "bundled with dptune, data/" + stats_name + ": frozen constants of the repository";
  p.where = file.string();
  return p;
}

namespace {

DeclaredClasses declared_classes(const std::string& name, const dptune::Params& params) {
  DeclaredClasses out;
  out.names = declared_class_names(name, params);
  out.refuse_unknown =
      params.contains("unknown_labels") && params.get_string("unknown_labels") == "refuse";
  return out;
}

/// What the data line says of the schema: the declared classes (and libsvm dimension), or that
/// they were inferred from the rows, which no epsilon covers (the maps' exploration; private
/// tuners refuse it, config.cpp).
std::string schema_statement(const std::string& name, const dptune::Params& params) {
  if (name == "csv" && !params.get_bool("classification")) return "";
  const std::vector<std::string> names = declared_class_names(name, params);
  std::string text;
  if (names.empty()) {
    text = "; classes inferred from the rows (not covered by any epsilon)";
  } else {
    constexpr std::size_t kShown = 12;
    text = "; classes [";
    for (std::size_t k = 0; k < names.size() && k < kShown; ++k) text += (k ? ", " : "") + names[k];
    if (names.size() > kShown) text += ", ... (" + std::to_string(names.size()) + ")";
    text += "] ";
    text += find_builtin(name) || name == "blobs"
                ? "(public: the source's description)"
                : "(declared; a label outside them is " + params.get_string("unknown_labels") +
                      (params.get_string("unknown_labels") == "mask" ? "ed)" : "d)");
  }
  if (name == "libsvm")
    text += params.get_int("num_features") == 0
                ? "; feature count inferred from the largest index (not covered by any epsilon)"
                : "; " + std::to_string(params.get_int("num_features")) +
                      " features declared (a larger index is " +
                      (params.get_string("unknown_features") == "drop" ? "dropped)" : "refused)");
  return text;
}

}  // namespace

std::unique_ptr<DataSource> make_data_source(const std::string& name, const dptune::Params& params,
                                             const std::optional<Preprocessing>& preprocessing,
                                             std::size_t threads) {
  if (name == "binary_queries") return std::make_unique<BinaryQueries>(params);
  if (!find_data_source(name)) throw dptune::ConfigError("unknown data source '" + name + "'");
  try {
    check_data_params(name, params);
  } catch (const DataParamError& e) {
    throw dptune::ConfigError(
        "data." + (e.key().empty() ? std::string() : "params." + e.key() + ": ") + e.what());
  }
  Loader load;
  std::string description;
  if (name == "csv") {
    CsvOptions o;
    o.header = params.get_bool("header");
    o.label_column = params.get_string("label_column");
    o.delimiter = params.get_string("delimiter").front();
    o.classification = params.get_bool("classification");
    o.classes = declared_classes(name, params);
    o.categorical = parse_categorical(params.get_string("categorical"));
    o.refuse_unknown_categories = params.get_string("unknown_categories") == "refuse";
    const fs::path path = params.get_string("path");
    load.read = [path, o](dptune::RandomBitGenerator&, std::vector<float>&) {
      return read_csv(path, o);
    };
    description = "csv " + path.string();
  } else if (name == "libsvm") {
    const fs::path path = params.get_string("path");
    LibsvmOptions o;
    o.num_features = static_cast<std::size_t>(params.get_int("num_features"));
    o.refuse_extra_features = params.get_string("unknown_features") == "refuse";
    o.classes = declared_classes(name, params);
    load.read = [path, o](dptune::RandomBitGenerator&, std::vector<float>&) {
      return read_libsvm(path, o);
    };
    description = "libsvm " + path.string();
  } else if (name == "idx") {
    const fs::path images = params.get_string("images"), labels = params.get_string("labels");
    const DeclaredClasses classes = declared_classes(name, params);
    load.read = [images, labels, classes](dptune::RandomBitGenerator&, std::vector<float>& values) {
      return read_idx(images, labels, &values, classes);
    };
    description = "idx " + images.string() + " + " + labels.string();
  } else if (name == "blobs") {
    BlobOptions o;
    o.samples = static_cast<std::size_t>(params.get_int("samples"));
    o.features = static_cast<std::size_t>(params.get_int("features"));
    o.classes = static_cast<std::size_t>(params.get_int("classes"));
    o.separation = params.get_double("separation");
    o.spread = params.get_double("spread");
    o.threads = threads;
    load.read = [o](dptune::RandomBitGenerator& rng, std::vector<float>& values) {
      if (!rng.cryptographically_secure()) return gaussian_blobs(o, rng, &values);
      KeyedRandom stream = generation_stream(rng);
      return gaussian_blobs(o, stream, &values);
    };
    load.draws = true;
    description = "blobs: " + std::to_string(o.samples) + " points in " +
                  std::to_string(o.features) + " dimensions, " + std::to_string(o.classes) +
                  " classes";
  } else if (const Builtin* b = find_builtin(name)) {
    const fs::path path = bundled_data_file(b->file);
    const std::string short_name = b->name;
    // The bundled files' label sets and dimensions are public: declared, never counted.
    CsvOptions csv;
    csv.classes.names = b->labels;
    LibsvmOptions libsvm;
    libsvm.classes.names = b->labels;
    libsvm.num_features = b->features;
    const bool is_libsvm = b->libsvm;
    load.read = [path, is_libsvm, csv, libsvm, short_name](dptune::RandomBitGenerator&,
                                                           std::vector<float>&) {
      dptune::Dataset d = is_libsvm ? read_libsvm(path, libsvm) : read_csv(path, csv);
      d.name = short_name;
      return d;
    };
    description = name + " (" + b->description + ")";
  } else {
    throw dptune::ConfigError("unknown data source '" + name + "'");
  }
  description += schema_statement(name, params);
  return std::make_unique<LabelledSource>(
      std::move(description), std::move(load), params,
      preprocessing ? *preprocessing : default_preprocessing(name), threads);
}

}  // namespace dptune::host
