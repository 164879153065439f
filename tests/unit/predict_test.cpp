// `dptune predict`: a hand-written logistic model.json applied to a CSV, checked against the
// closed form p(class 1) = 1 / (1 + exp(-(x·w + b))) after the model's preprocessing.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"

using dptune_test::fresh_dir;
using dptune_test::run_dptune;
using dptune_test::slurp;

namespace {

// Two features standardised with public statistics (mean 1, 2; scale 2, 4), then w = (0.5, -1),
// b = 0.25.
const char* kModel = R"({
  "format": "dptune-model-2", "released": true, "kind": "network",
  "description": "logistic regression 2-1", "features": 2, "num_classes": 2,
  "preprocessing": {"kind": "standardize", "mean": [1, 2], "scale": [2, 4]},
  "input_map": "none",
  "layers": [{"inputs": 2, "outputs": 1, "activation": "identity",
              "weights": [0.5, -1], "bias": [0.25]}],
  "output": "sigmoid"
})";

double p_one(double x1, double x2) {
  const double z = 0.5 * (x1 - 1) / 2 - 1 * (x2 - 2) / 4 + 0.25;
  return 1 / (1 + std::exp(-z));
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream l(line);
    std::string f;
    while (std::getline(l, f, ',')) fields.push_back(f);
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace

TEST_CASE("dptune predict: the closed form of a logistic model, labels, errors") {
  const auto dir = fresh_dir("predict");
  std::ofstream(dir / "model.json") << kModel;
  const std::vector<std::pair<double, double>> xs{{1, 2}, {5, -2}, {-3, 10}, {0.5, 0.25}};
  {
    std::ofstream data(dir / "data.csv");
    data << "a,b,y\n";
    for (const auto& [x1, x2] : xs) data << x1 << "," << x2 << "," << (p_one(x1, x2) > 0.5) << "\n";
  }
  {
    std::ofstream data(dir / "unlabelled.csv");
    data << "a,b\n";
    for (const auto& [x1, x2] : xs) data << x1 << "," << x2 << "\n";
  }
  const std::string model = "'" + (dir / "model.json").string() + "' ";
  const auto r = run_dptune("predict " + model + "'" + (dir / "unlabelled.csv").string() + "'",
                            "predict_stdout");
  REQUIRE(r.exit_code == 0);
  const auto rows = csv_rows(r.out);
  REQUIRE(rows.size() == xs.size() + 1);
  CHECK(rows[0] == std::vector<std::string>{"row", "predicted_class", "p_class_0", "p_class_1"});
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double p = p_one(xs[i].first, xs[i].second);
    INFO("row " << i);
    CHECK(std::stod(rows[i + 1][3]) == doctest::Approx(p).epsilon(1e-15));
    CHECK(std::stod(rows[i + 1][2]) == doctest::Approx(1 - p).epsilon(1e-15));
    CHECK(rows[i + 1][1] == (p > 0.5 ? "1" : "0"));
  }
  // With the label column: the same predictions to a file, and accuracy 1 (labels agree).
  const auto labelled = run_dptune("predict " + model + "'" + (dir / "data.csv").string() +
                                       "' --label y --out '" + (dir / "p.csv").string() + "'",
                                   "predict_label");
  REQUIRE(labelled.exit_code == 0);
  CHECK(slurp(dir / "p.csv") == r.out);
  CHECK(labelled.err.find("accuracy:    1 on 4 labelled rows") != std::string::npos);
  // A label column left in the features is named in the error; exit 2.
  const auto extra =
      run_dptune("predict " + model + "'" + (dir / "data.csv").string() + "'", "predict_extra");
  CHECK(extra.exit_code == 2);
  CHECK(extra.err.find("3 feature columns, but") != std::string::npos);
  CHECK(extra.err.find("name it with --label") != std::string::npos);
  const auto missing = run_dptune("predict " + model, "predict_missing");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "dptune: predict needs MODEL and DATA (see dptune predict --help)\n");
  std::ofstream(dir / "broken.json") << "{\"format\": \"dptune-model-2\"}";
  const auto broken = run_dptune(
      "predict '" + (dir / "broken.json").string() + "' '" + (dir / "data.csv").string() + "'",
      "predict_broken");
  CHECK(broken.exit_code == 2);
  CHECK(broken.err.find("broken.json") != std::string::npos);
}

TEST_CASE("dptune predict: columns are matched by the model's feature names") {
  const auto dir = fresh_dir("predict_names");
  std::string named = kModel;
  named.replace(named.find("dptune-model-2"), 14, "dptune-model-3");
  named.replace(named.find("\"features\": 2,"), 14,
                "\"features\": 2, \"feature_names\": [\"a\", \"b\"],");
  std::ofstream(dir / "model.json") << named;
  const std::vector<std::pair<double, double>> xs{{1, 2}, {5, -2}, {-3, 10}};
  const auto write = [&](const std::string& file, const std::string& header, bool swapped,
                         bool extra) {
    std::ofstream data(dir / file);
    data << header << "\n";
    for (const auto& [a, b] : xs)
      data << (swapped ? b : a) << "," << (swapped ? a : b) << (extra ? ",7" : "") << "\n";
  };
  write("in_order.csv", "a,b", false, false);
  write("swapped.csv", "b,a", true, false);
  write("renamed.csv", "a,c", false, false);
  write("extra.csv", "a,b,z", false, true);
  const std::string model = "predict '" + (dir / "model.json").string() + "' '";
  const auto in_order = run_dptune(model + (dir / "in_order.csv").string() + "'", "names_order");
  REQUIRE(in_order.exit_code == 0);
  // The columns in another order give the same predictions: the closed form of each row.
  const auto swapped = run_dptune(model + (dir / "swapped.csv").string() + "'", "names_swapped");
  REQUIRE(swapped.exit_code == 0);
  CHECK(swapped.out == in_order.out);
  const auto rows = csv_rows(swapped.out);
  REQUIRE(rows.size() == xs.size() + 1);
  for (std::size_t i = 0; i < xs.size(); ++i)
    CHECK(std::stod(rows[i + 1][3]) ==
          doctest::Approx(p_one(xs[i].first, xs[i].second)).epsilon(1e-15));
  // A renamed column and a column the model does not know are refused by name (exit 2).
  const auto renamed = run_dptune(model + (dir / "renamed.csv").string() + "'", "names_renamed");
  CHECK(renamed.exit_code == 2);
  CHECK(renamed.err.find("no column 'b', which") != std::string::npos);
  CHECK(renamed.err.find("takes as feature 1 (its features: a, b)") != std::string::npos);
  const auto extra = run_dptune(model + (dir / "extra.csv").string() + "'", "names_extra");
  CHECK(extra.exit_code == 2);
  CHECK(extra.err.find("column 'z' is not a feature of") != std::string::npos);
  // Without a header nothing can be matched: positional, and the console says so.
  std::ofstream(dir / "bare.csv") << "1,2\n5,-2\n";
  const auto bare =
      run_dptune(model + (dir / "bare.csv").string() + "' --no-header", "names_no_header");
  REQUIRE(bare.exit_code == 0);
  CHECK(bare.err.find("taken as the model's features in its order (a, b), unchecked") !=
        std::string::npos);
}
