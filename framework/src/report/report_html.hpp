// dptune host (internal): report.html, one self-contained page per run (no server, no external
// assets): the guarantee, the release or the front, the plots inline, what is and is not released,
// the notes, the files and the resolved config.
#pragma once

#include <string>
#include <vector>

#include "dptune/host/plots.hpp"
#include "report/report_input.hpp"

namespace dptune::host {

/// The HTML comments around the one part of a private tuner's page that may depend on the data
/// (its DP outputs): tests/neighbouring compares every other line of report.html.
inline constexpr const char* kHtmlReleaseBegin = "<!-- dptune:release:begin -->";
inline constexpr const char* kHtmlReleaseEnd = "<!-- dptune:release:end -->";

/// What write_report decided, handed to the page.
struct HtmlReport {
  const ReportInput& in;
  bool private_tuner = false;
  bool baseline = false;
  std::string warning;  // the trusted-analyst or non-private warning of the console
  const std::vector<std::size_t>& front;  // indices into the trials (maps only)
  double hypervolume = 0;
  const std::vector<std::string>& public_notes;
  const std::vector<std::string>& dp_notes;  // private tuners: the declared DP outputs
  std::string model_note;                    // maps: the model file's note
  const std::vector<WrittenFigure>& figures;
  std::vector<std::string> files;  // the public list of files
  /// A private tuner's released model file ("" when none): listed inside the release markers,
  /// since whether a model was released can depend on a DP output.
  std::string released_file{};
};

std::string report_html(const HtmlReport& page);

}  // namespace dptune::host
