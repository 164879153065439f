#include "checker.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
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

std::filesystem::path run_pipeline(
    const std::filesystem::path& dptune, const std::filesystem::path& work,
    const std::string& label, std::uint64_t seed,
    const std::function<void(const std::filesystem::path& folder)>& prepare) {
  const FixedFolderRun run = run_in_fixed_folder(
      work, label, prepare,
      shell_quote(dptune.string()) + " run pipeline.yaml --seed " + std::to_string(seed));
  if (run.status != 0) {
    std::ifstream err(run.folder / "stderr.txt");
    std::cerr << "run " << label << " failed (" << run.status << "): " << err.rdbuf() << "\n";
    throw std::runtime_error("dptune run failed on " + label);
  }
  return run.folder;
}

}  // namespace dptune::neighbouring
