#include "checker.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace dptune::neighbouring {

double FixedNormals::uniform() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
}

double FixedNormals::operator()() {
  // The expression the runners had, so that the compiler draws in the same order and the data
  // does not change.
  return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform());
}

void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  f << "x0,x1,x2,label\n";
  char line[128];
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%.6f,%.6f,%.6f,%d\n", r.x0, r.x1, r.x2, r.label);
    f << line;
  }
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace dptune::neighbouring
