// dptune host (internal): the one home of how a run's text outputs are written (report.cpp's
// trials.csv and summary files, plots.cpp's plot data).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "dptune/errors.hpp"

namespace dptune::host {

/// A CSV cell (RFC 4180): as is, or in double quotes with '"' doubled when it holds ',', '"' or a
/// line break.  What trials_csv.hpp's reader (split_trials_csv_line) reads back.
inline std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/// Writes `content` to `path` (replacing it); dptune::Error naming the path when it cannot.
inline void write_text_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw dptune::Error("cannot write " + path.string());
  f << content;
  if (!f) throw dptune::Error("error while writing " + path.string());
}

}  // namespace dptune::host
