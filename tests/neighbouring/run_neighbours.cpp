// The neighbouring-release test of one pipeline: runs `dptune run PIPELINE --seed S` on
//   (D, s), (D, s'), (D, s''), (D', s) with one record replaced by an outlier, (D-i, s) and (D-j,
//   s) with one record removed,
// each in the same folder path (so paths in the artifacts agree), and fails naming every public
// field that differs without being a declared DP output (see checker.hpp).
//
// Usage: dptune_neighbouring_run DPTUNE PIPELINE.yaml WORK_DIR
// The pipeline reads `data.csv` (columns x0, x1, x2, label) next to itself and writes to `out`;
// the files of a folder named like the pipeline (pipelines/<stem>/) are copied beside it.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "checker.hpp"

namespace fs = std::filesystem;
using namespace dptune::neighbouring;

namespace {

constexpr std::uint64_t kSeed = 3, kOtherSeed = 11, kThirdSeed = 29;
constexpr std::size_t kRows = 160;
// Removed records: one of each class (rows alternate labels), far from the ends.
constexpr std::size_t kRemovedI = 17, kRemovedJ = 42;

/// Two Gaussian classes from a fixed splitmix64 stream: the data is the same on every machine.
std::vector<Row> base_data() {
  dptune::neighbouring::FixedNormals normal(20261123);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < kRows; ++i) {
    const int y = static_cast<int>(i % 2);
    rows.push_back({normal() + 1.5 * y, normal() - 1.0 * y, normal(), y});
  }
  return rows;
}

struct Run {
  std::string label;
  std::vector<Row> rows;
  std::uint64_t seed;
};

/// One run (run_pipeline); the pipeline's companion files (a command trainer's program) are in a
/// folder named like it, copied beside it (links as the files they name).
Fields run_once(const fs::path& dptune, const fs::path& pipeline, const fs::path& work,
                const Run& run) {
  const fs::path kept = run_pipeline(dptune, work, run.label, run.seed, [&](const fs::path& dir) {
    fs::copy_file(pipeline, dir / "pipeline.yaml");
    if (const fs::path companions = pipeline.parent_path() / pipeline.stem();
        fs::is_directory(companions))
      for (const auto& entry : fs::directory_iterator(companions))
        fs::copy_file(entry.path(), dir / entry.path().filename());
    write_csv(dir / "data.csv", run.rows);
  });
  return normalise_seed(collect_run(kept, "out"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: dptune_neighbouring_run DPTUNE PIPELINE.yaml WORK_DIR\n";
    return 2;
  }
  const fs::path dptune = fs::absolute(argv[1]), pipeline = fs::absolute(argv[2]);
  const fs::path work = fs::absolute(argv[3]);
  const std::string name = pipeline.stem().string();
  try {
    fs::create_directories(work);
    const std::vector<Row> d = base_data();
    std::vector<Row> outlier = d, minus_i = d, minus_j = d;
    // One record replaced by an outlier: far out in every feature, with the other class's label.
    outlier[0] = {40.0, -40.0, 40.0, 1 - d[0].label};
    minus_i.erase(minus_i.begin() + kRemovedI);
    minus_j.erase(minus_j.begin() + kRemovedJ);

    const Fields base = run_once(dptune, pipeline, work, {"D_s", d, kSeed});
    const Fields other_seed = run_once(dptune, pipeline, work, {"D_s2", d, kOtherSeed});
    const Fields third_seed = run_once(dptune, pipeline, work, {"D_s3", d, kThirdSeed});
    const Fields replaced = run_once(dptune, pipeline, work, {"Dprime_s", outlier, kSeed});
    const Fields removed_i = run_once(dptune, pipeline, work, {"Dminus_i_s", minus_i, kSeed});
    const Fields removed_j = run_once(dptune, pipeline, work, {"Dminus_j_s", minus_j, kSeed});

    std::vector<Violation> found = undeclared_differences(base, other_seed, "(D,s) and (D,s')");
    for (auto& v : undeclared_differences(base, third_seed, "(D,s) and (D,s'')"))
      found.push_back(std::move(v));
    for (auto& v : undeclared_differences(base, replaced, "(D,s) and (D',s) (one record replaced)"))
      found.push_back(std::move(v));
    for (auto& v : undeclared_removal_differences(base, removed_i, removed_j))
      found.push_back(std::move(v));

    std::cout << "pipeline " << name << ": " << base.size() << " public fields of (D,s) in "
              << work.string() << "/{D_s,D_s2,D_s3,Dprime_s,Dminus_i_s,Dminus_j_s}\n";
    // The seed must reach the run, or the seed pair tests nothing.
    bool seed_matters = false;
    for (const auto& [key, value] : base) {
      const auto it = other_seed.find(key);
      if (it == other_seed.end() || it->second != value) seed_matters = true;
    }
    if (!seed_matters) {
      std::cout << "FAIL " << name << ": the runs with seeds " << kSeed << " and " << kOtherSeed
                << " are identical; the pipeline's randomness does not reach its output\n";
      return 1;
    }
    for (const auto& v : found) std::cout << "FAIL " << name << ": " << v.describe() << "\n";
    if (!found.empty()) {
      std::cout << name << ": " << found.size()
                << " undeclared differences (each field above is released but is not a declared "
                   "DP output of the tuner)\n";
      return 1;
    }
    std::cout << name << ": every differing field is a declared DP output or a function of n\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 1;
  }
}
