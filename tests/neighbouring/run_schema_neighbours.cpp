// The neighbouring-release test of the public schema (docs/data.md, "A public schema"): runs
// `dptune run PIPELINE --seed S` on two datasets of the same size n + 1 that differ in one added
// record, which in the second carries something the first never holds:
//   * new_label: the added record's label is a value no other record has (2, where the declared
//     classes are [0, 1]);
//   * new_index (libsvm pipelines): the added row has a feature index above every other row's
//     (and above the declared num_features).
// With a declared schema the record is masked (or its extra value dropped): the two runs must
// publish the same class count, class list and dimension, and their outputs the same shape.  So
// the test fails on any public field that differs without being a declared DP output (as
// run_neighbours.cpp), and on any field, declared or not, present in one run only: a wider model
// or one more class adds fields to model.json and to the release.
//
// Usage: dptune_neighbouring_schema_run DPTUNE PIPELINE.yaml WORK_DIR
// The pipeline reads `data.csv` (columns x0, x1, x2, label) or, when it names data.libsvm,
// `data.libsvm` (indices 1..3, labels 0 and 1), next to itself, and writes to `out`.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "checker.hpp"

namespace fs = std::filesystem;
using namespace dptune::neighbouring;

namespace {

constexpr std::uint64_t kSeed = 5;
constexpr std::size_t kRows = 120;

struct Row {
  std::vector<double> x;  // x[j] is feature j + 1 of a libsvm row
  int label = 0;
};

/// Two Gaussian classes in 3 dimensions from a fixed splitmix64 stream (the same on every machine).
std::vector<Row> base_data() {
  dptune::neighbouring::FixedNormals normal(20261128);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < kRows; ++i) {
    const int y = static_cast<int>(i % 2);
    rows.push_back({{normal() + 1.5 * y, normal() - 1.0 * y, normal()}, y});
  }
  return rows;
}

void write_csv(const fs::path& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  f << "x0,x1,x2,label\n";
  char cell[64];
  for (const auto& r : rows) {
    for (double v : r.x) {
      std::snprintf(cell, sizeof cell, "%.6f,", v);
      f << cell;
    }
    f << r.label << "\n";
  }
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

void write_libsvm(const fs::path& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  char cell[64];
  for (const auto& r : rows) {
    f << r.label;
    for (std::size_t j = 0; j < r.x.size(); ++j) {
      std::snprintf(cell, sizeof cell, " %zu:%.6f", j + 1, r.x[j]);
      f << cell;
    }
    f << "\n";
  }
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

/// One run (run_pipeline) on `rows`, as CSV or LIBSVM.
Fields run_once(const fs::path& dptune, const fs::path& pipeline, const fs::path& work,
                const std::string& label, const std::vector<Row>& rows, bool libsvm) {
  const fs::path kept = run_pipeline(dptune, work, label, kSeed, [&](const fs::path& dir) {
    fs::copy_file(pipeline, dir / "pipeline.yaml");
    if (libsvm)
      write_libsvm(dir / "data.libsvm", rows);
    else
      write_csv(dir / "data.csv", rows);
  });
  return normalise_seed(collect_run(kept, "out"));
}

/// Fields present in one run only: the outputs' shapes differ (a wider model, one more class).
std::vector<Violation> shape_differences(const Fields& a, const Fields& b,
                                         const std::string& pair) {
  std::vector<Violation> out;
  for (const auto& [key, value] : a)
    if (!b.count(key)) out.push_back({key, pair, value, "<absent>"});
  for (const auto& [key, value] : b)
    if (!a.count(key)) out.push_back({key, pair, "<absent>", value});
  return out;
}

struct Neighbours {
  std::string kind;
  std::vector<Row> with_ordinary, with_new;
};

/// The two datasets of each kind: D plus an ordinary record, and D plus the same record carrying
/// the new label or the new largest index.
std::vector<Neighbours> neighbour_kinds(bool libsvm) {
  const std::vector<Row> d = base_data();
  const Row added{{0.25, -0.5, 0.75}, 1};
  std::vector<Neighbours> kinds;
  {
    Neighbours n{"new_label", d, d};
    n.with_ordinary.push_back(added);
    Row relabelled = added;
    relabelled.label = 2;  // a value no record of D has, outside the declared [0, 1]
    n.with_new.push_back(relabelled);
    kinds.push_back(std::move(n));
  }
  if (libsvm) {
    Neighbours n{"new_index", d, d};
    n.with_ordinary.push_back(added);
    Row wider = added;
    wider.x.insert(wider.x.end(), {0.0, 0.0, 0.0, 5.0});  // index 7 = 5.0 (4..6 are 0)
    n.with_new.push_back(wider);
    kinds.push_back(std::move(n));
  }
  return kinds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: dptune_neighbouring_schema_run DPTUNE PIPELINE.yaml WORK_DIR\n";
    return 2;
  }
  const fs::path dptune = fs::absolute(argv[1]), pipeline = fs::absolute(argv[2]);
  const fs::path work = fs::absolute(argv[3]);
  const std::string name = pipeline.stem().string();
  try {
    fs::create_directories(work);
    std::ifstream in(pipeline);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    const bool libsvm = text.find("data.libsvm") != std::string::npos;
    std::size_t failures = 0;
    for (const Neighbours& n : neighbour_kinds(libsvm)) {
      const Fields ordinary =
          run_once(dptune, pipeline, work, n.kind + "_ordinary", n.with_ordinary, libsvm);
      const Fields with_new = run_once(dptune, pipeline, work, n.kind + "_new", n.with_new, libsvm);
      const std::string pair = "(D+x, D+x') with x' " +
                               std::string(n.kind == "new_label" ? "of a new label value"
                                                                 : "having a new largest index");
      std::vector<Violation> found = undeclared_differences(ordinary, with_new, pair);
      for (auto& v : shape_differences(ordinary, with_new, pair)) found.push_back(std::move(v));
      for (const auto& v : found) std::cout << "FAIL " << name << ": " << v.describe() << "\n";
      failures += found.size();
      std::cout << name << " " << n.kind << ": " << ordinary.size() << " public fields, "
                << found.size() << " undeclared or shape differences\n";
    }
    if (failures) return 1;
    std::cout << name
              << ": the same published schema and output shapes; every differing field is a "
                 "declared DP output\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 1;
  }
}
