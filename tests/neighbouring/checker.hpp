// The neighbouring-release runners' side of the checker: the product's checker
// (dptune/host/release_check.hpp, also what `dptune check release` runs) and the runners'
// synthetic data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "dptune/host/release_check.hpp"

namespace dptune::neighbouring {

using namespace dptune::host::release_check;  // NOLINT(google-build-using-namespace)

/// Standard normals from a fixed splitmix64 stream (Steele, Lea & Flood 2014) by Box-Muller: the
/// runners' data is the same on every machine.
class FixedNormals {
 public:
  explicit FixedNormals(std::uint64_t seed) : state_(seed) {}
  double operator()();

 private:
  double uniform();
  std::uint64_t state_;
};

/// A record of the runners' synthetic classification data: three features and a label.
struct Row {
  double x0, x1, x2;
  int label;
};

/// Writes `rows` as a CSV file with the header x0,x1,x2,label (features to 6 decimals).
void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows);

/// `dptune run pipeline.yaml --seed SEED` in WORK/run (run_in_fixed_folder: the same path for every
/// run compared), after `prepare` has written pipeline.yaml and its data there; returns the kept
/// folder WORK/<label>.  A failed run prints its stderr and throws.
std::filesystem::path run_pipeline(
    const std::filesystem::path& dptune, const std::filesystem::path& work,
    const std::string& label, std::uint64_t seed,
    const std::function<void(const std::filesystem::path& folder)>& prepare);

}  // namespace dptune::neighbouring
