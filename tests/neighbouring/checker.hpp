// The neighbouring-release runners' side of the checker: the product's checker
// (dptune/host/release_check.hpp, also what `dptune check release` runs) and the runners'
// synthetic data.
#pragma once

#include <cstdint>
#include <filesystem>
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

}  // namespace dptune::neighbouring
