// The public schema (docs/data.md, "A public schema"): declared label sets and feature counts in
// the readers, masking of labels outside the set, dropping of libsvm values above the declared
// dimension, the layouts on masked rows, and the config loader's refusal of a private tuner whose
// schema would be counted from the private rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"
#include "dptune/host/data_layout.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/masked_label.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using dptune::kMaskedLabel;
using dptune::host::CsvOptions;
using dptune::host::DataFileError;
using dptune::host::LibsvmOptions;
using dptune_test::TempDir;

namespace {

const std::string kCsv =
    "a,b,y\n"
    "1,2,benign\n"
    "3,4,malignant\n"
    "5,6,unknown\n"
    "7,8,benign\n";

}  // namespace

TEST_CASE("schema: csv classes are the declared list, in its order, and another label is masked") {
  TempDir dir;
  const fs::path file = dir.write("d.csv", kCsv);
  CsvOptions o;
  o.classes.names = {"malignant", "benign"};  // not the sorted order: the declared one
  const auto d = dptune::host::read_csv(file, o);
  CHECK(d.num_classes == 2);
  CHECK(d.rows == 4);
  CHECK(d.labels == std::vector<double>{1, 0, kMaskedLabel, 1});
  CHECK(d.features ==
        std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});  // the masked row keeps its slot

  // Without a declared set the classes are counted from the rows (the maps' exploration).
  const auto inferred = dptune::host::read_csv(file, CsvOptions{});
  CHECK(inferred.num_classes == 3);

  // The opt-in refusal names the file and the line of the first unknown label.
  o.classes.refuse_unknown = true;
  try {
    dptune::host::read_csv(file, o);
    FAIL("expected a DataFileError");
  } catch (const DataFileError& e) {
    CHECK(std::string(e.what()) ==
          file.string() +
              ":4: label 'unknown' is not one of the declared classes (data.params.classes) and "
              "unknown_labels is refuse");
  }
}

TEST_CASE("schema: numeric declared labels match by value (1, 1.0 and +1 are one label)") {
  TempDir dir;
  const fs::path file = dir.write("d.csv", "x,y\n0.5,1.0\n0.25,+1\n0.75,-1\n1,2\n");
  CsvOptions o;
  o.classes.names = {"-1", "1"};
  const auto d = dptune::host::read_csv(file, o);
  CHECK(d.labels == std::vector<double>{1, 1, 0, kMaskedLabel});
  CHECK(d.num_classes == 2);
}

TEST_CASE("schema: libsvm values above the declared num_features are dropped, the row kept") {
  TempDir dir;
  const fs::path file = dir.write("d.libsvm",
                                  "+1 1:0.5 3:1.5\n"
                                  "-1 2:2 7:9\n"
                                  "3 1:1\n");
  LibsvmOptions o;
  o.num_features = 3;
  o.classes.names = {"-1", "1"};
  const auto d = dptune::host::read_libsvm(file, o);
  CHECK(d.cols == 3);
  CHECK(d.rows == 3);
  CHECK(d.features == std::vector<double>{0.5, 0, 1.5, 0, 2, 0, 1, 0, 0});
  CHECK(d.labels == std::vector<double>{1, 0, kMaskedLabel});
  CHECK(d.num_classes == 2);

  // Inferred: the largest index widens the data to 7 features and label 3 is a third class.
  const auto inferred = dptune::host::read_libsvm(file);
  CHECK(inferred.cols == 7);
  CHECK(inferred.num_classes == 3);

  // The opt-in refusal of extra features: an error at the line, as before the schema.
  o.refuse_extra_features = true;
  try {
    dptune::host::read_libsvm(file, o);
    FAIL("expected a DataFileError");
  } catch (const DataFileError& e) {
    CHECK(std::string(e.what()) == file.string() +
                                       ":2: feature index 7 exceeds num_features 3 "
                                       "(unknown_features is refuse)");
  }
}

TEST_CASE("schema: idx labels at or above the declared class count are masked") {
  TempDir dir;
  dptune::Dataset images;
  images.rows = 4;
  images.cols = 4;
  images.features = std::vector<double>(16, 7.0);
  images.labels = {0, 9, 3, 1};
  const fs::path img = dir.path() / "img", lab = dir.path() / "lab";
  dptune::host::write_idx(images, 2, 2, img, lab);
  dptune::host::DeclaredClasses classes;
  classes.names = {"zero", "one", "two"};
  const auto d = dptune::host::read_idx(img, lab, nullptr, classes);
  CHECK(d.num_classes == 3);
  CHECK(d.labels == std::vector<double>{0, kMaskedLabel, kMaskedLabel, 1});
  CHECK(dptune::host::read_idx(img, lab).num_classes == 10);  // inferred: largest label + 1
}

TEST_CASE("schema: layouts keep masked rows in their slots and never throw on them") {
  std::vector<double> labels;
  for (std::size_t i = 0; i < 60; ++i) labels.push_back(static_cast<double>(i % 3));
  labels[4] = labels[31] = labels[50] = kMaskedLabel;
  dptune::Xoshiro256 rng(8);
  // A stratified split (the maps' opt-in) puts every row, masked or not, in exactly one split.
  const auto split = dptune::host::split_indices(labels, 3, 0.2, 0.2, true, rng);
  std::vector<std::size_t> all = split.train;
  all.insert(all.end(), split.validation.begin(), split.validation.end());
  all.insert(all.end(), split.test.begin(), split.test.end());
  std::sort(all.begin(), all.end());
  CHECK(all.size() == 60);
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  // Dirichlet shards cover every row once, masked rows included.
  dptune::host::ShardOptions o;
  o.distribution = dptune::host::ShardOptions::Distribution::Dirichlet;
  const auto shards = dptune::host::shard_indices(labels, 3, 4, o, rng);
  std::vector<std::size_t> rows;
  for (const auto& s : shards) rows.insert(rows.end(), s.begin(), s.end());
  std::sort(rows.begin(), rows.end());
  CHECK(rows.size() == 60);
  CHECK(std::adjacent_find(rows.begin(), rows.end()) == rows.end());
  CHECK(dptune::host::mean_label_skew(labels, 3, shards) >= 0.0);
}

TEST_CASE("schema: the data line states the declared or inferred schema") {
  TempDir dir;
  const fs::path file = dir.write("d.csv", kCsv);
  const auto* info = dptune::host::find_data_source("csv");
  REQUIRE(info != nullptr);
  auto source = [&](dptune::Params given) {
    given.set("path", file.string());
    given.set("label_column", std::string("y"));
    auto s = dptune::host::make_data_source("csv", info->schema.complete(given));
    dptune::Xoshiro256 rng(1);
    const auto splits = s->make(rng);
    return std::pair{s->describe(), splits.train.num_classes};
  };
  const auto [declared, declared_classes] =
      source({{"classes", std::string("[benign, malignant]")}});
  CHECK(declared.find("; classes [benign, malignant] (declared; a label outside them is masked)") !=
        std::string::npos);
  CHECK(declared.find("4 rows x 2 features, 2 classes") != std::string::npos);
  CHECK(declared_classes == 2);
  const auto [inferred, inferred_classes] = source({});
  CHECK(inferred.find("; classes inferred from the rows (not covered by any epsilon)") !=
        std::string::npos);
  CHECK(inferred_classes == 3);
}

TEST_CASE("schema: declared class lists are checked") {
  const auto* csv = dptune::host::find_data_source("csv");
  const auto* libsvm = dptune::host::find_data_source("libsvm");
  const auto* idx = dptune::host::find_data_source("idx");
  auto names = [](const dptune::host::DataSourceInfo* info, const std::string& text) {
    dptune::Params p{{"classes", text}};
    p.set(info->path_params.front(), std::string("unused"));
    if (info->path_params.size() > 1) p.set(info->path_params.back(), std::string("unused"));
    return dptune::host::declared_class_names(info->name, info->schema.complete(p));
  };
  CHECK(names(csv, "[b, a]") == std::vector<std::string>{"b", "a"});
  CHECK(names(idx, "3") == std::vector<std::string>{"0", "1", "2"});
  CHECK(names(csv, "").empty());
  auto error = [&](const dptune::host::DataSourceInfo* info, const std::string& text) {
    try {
      names(info, text);
    } catch (const dptune::host::DataParamError& e) {
      CHECK(e.key() == "classes");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error(csv, "[0, 1, 1.0]") == "class '1.0' is declared twice (classes 1 and 2)");
  CHECK(error(csv, "[a, a]") == "class 'a' is declared twice (classes 0 and 1)");
  CHECK(error(libsvm, "[yes, no]") == "libsvm labels are numbers, got 'yes'");
  CHECK(error(csv, "2") == "expected a list of the labels in class order, e.g. [0, 1], got '2'");
  CHECK(error(idx, "0").find("expected a class count in 1..256") == 0);
}

namespace {

/// The data sources, a map (grid, declaring itself one) and a private tuner (repetition,
/// declaring nothing: private by default).
class SchemaCatalog : public dptune::host::Catalog {
 public:
  using Kind = dptune::host::ComponentKind;
  std::vector<std::string> names(Kind kind) const override {
    std::vector<std::string> out;
    if (kind == Kind::Data)
      for (const auto& s : dptune::host::data_sources()) out.push_back(s.name);
    if (kind == Kind::Trainer) out = {"dp_sgd"};
    if (kind == Kind::Accountant) out = {"rdp"};
    if (kind == Kind::Utility) out = {"accuracy"};
    if (kind == Kind::Tuner) out = {"grid", "repetition"};
    return out;
  }
  dptune::PluginTraits traits(Kind kind, const std::string& name,
                              const dptune::Params&) const override {
    dptune::PluginTraits out;
    if (kind == Kind::Tuner && name == "grid")
      out.tuner = dptune::TunerTraits{.outputs = dptune::TunerOutputs::Map};
    return out;
  }
  const dptune::ParamSchema* schema(Kind kind, const std::string& name) const override {
    if (kind == Kind::Data) {
      const auto* info = dptune::host::find_data_source(name);
      return info ? &info->schema : nullptr;
    }
    if (kind == Kind::Trainer && name == "dp_sgd") return &trainer_;
    const auto n = names(kind);
    return std::find(n.begin(), n.end(), name) != n.end() ? &empty_ : nullptr;
  }

 private:
  dptune::ParamSchema empty_;
  dptune::ParamSchema trainer_ = dptune::ParamSchema{}.add_float("learning_rate", "step");
};

std::string schema_pipeline(const std::string& data, const std::string& tuner) {
  return data +
         "algorithm: {use: dp_sgd}\n"
         "accountant: {use: rdp, delta: 1.0e-5}\n"
         "utility: {use: accuracy}\n"
         "search_space:\n"
         "  learning_rate: {float: [0.01, 0.1]}\n"
         "tuner: {use: " +
         tuner + "}\n";
}

/// what() of loading `yaml`, or "no error".
std::string schema_load_error(const TempDir& dir, const std::string& yaml) {
  const fs::path file = dir.write("p.yaml", yaml);
  try {
    dptune::host::load_pipeline(file, {}, SchemaCatalog{});
  } catch (const dptune::host::ConfigDiagnostic& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("schema: a private tuner needs the label set and libsvm's feature count declared") {
  TempDir dir;
  dir.write("d.csv", kCsv);
  dir.write("d.libsvm", "1 1:1\n-1 2:1\n");
  const std::string p = (dir.path() / "p.yaml").string();
  const std::string csv =
      "data:\n"
      "  use: csv\n"
      "  params: {path: d.csv, label_column: y}\n";
  // The refusal points at the params map and says what to add.
  const std::string refused = schema_load_error(dir, schema_pipeline(csv, "repetition"));
  CHECK(refused.rfind(p + ":3:11: data.params.classes: the private tuner 'repetition' needs a "
                          "public schema: the label set must be declared, not counted from the "
                          "private rows",
                      0) == 0);
  CHECK(refused.find("add classes: [0, 1] to data.params") != std::string::npos);
  // A map may infer (its report says so), and a declared list satisfies the private tuner.
  CHECK(schema_load_error(dir, schema_pipeline(csv, "grid")) == "no error");
  const std::string declared =
      "data:\n"
      "  use: csv\n"
      "  params:\n"
      "    path: d.csv\n"
      "    label_column: y\n"
      "    classes: [benign, malignant]\n";
  CHECK(schema_load_error(dir, schema_pipeline(declared, "repetition")) == "no error");
  // libsvm: the feature count too, pointed at where num_features: 0 is written.
  const std::string libsvm =
      "data:\n"
      "  use: libsvm\n"
      "  params:\n"
      "    path: d.libsvm\n"
      "    classes: [-1, 1]\n"
      "    num_features: 0\n";
  CHECK(schema_load_error(dir, schema_pipeline(libsvm, "repetition"))
            .rfind(p + ":6:19: data.params.num_features: the private tuner 'repetition' needs a "
                       "public schema: the number of features must be declared",
                   0) == 0);
  std::string with_dimension = libsvm;
  with_dimension.replace(with_dimension.find("num_features: 0"), 15, "num_features: 2");
  CHECK(schema_load_error(dir, schema_pipeline(with_dimension, "repetition")) == "no error");
  // Bundled data and blobs have public schemas.
  CHECK(schema_load_error(dir, schema_pipeline("data: {use: 'builtin:heart_scale'}\n",
                                               "repetition")) == "no error");
  // A list item that is not a label is refused at the item.
  CHECK(schema_load_error(
            dir,
            schema_pipeline("data:\n  use: csv\n  params: {path: d.csv, classes: [[0]]}\n", "grid"))
            .rfind(p + ":3:35: data.params.classes[0]: expected a label", 0) == 0);
}

TEST_CASE("schema: a declared class list survives the resolved config's round trip") {
  TempDir dir;
  dir.write("d.csv", kCsv);
  const auto a = dptune::host::load_pipeline(
      dir.write("p.yaml",
                schema_pipeline("data:\n  use: csv\n  params: {path: d.csv, label_column: y, "
                                "classes: [benign, 'a, b', malignant]}\n",
                                "repetition")),
      {}, SchemaCatalog{});
  const std::string text = a.data.params.get_string("classes");
  CHECK(dptune::host::declared_class_names("csv", a.data.params) ==
        std::vector<std::string>{"benign", "a, b", "malignant"});
  TempDir other;
  const auto b = dptune::host::load_pipeline(other.write("r.yaml", dptune::host::to_yaml(a)), {},
                                             SchemaCatalog{});
  CHECK(b.data.params.get_string("classes") == text);
}
