// The report's writer of tuner series (TuningResult::series): CSV, SVG, summary.json, validation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "dptune/host/plots.hpp"
#include "report/report.hpp"
#include "temp_dir.hpp"

namespace {

using dptune_test::slurp;

dptune::Series hv_series() {
  dptune::Series s;
  s.name = "hypervolume";
  s.x_label = "evaluations";
  s.y_label = "hypervolume, (10, 1)";
  s.x = {16, 17, 18};
  s.y = {1.25, 1.5, 1.5};
  return s;
}

}  // namespace

TEST_CASE("series CSV: quoted labels, one row per point") {
  CHECK(dptune::host::series_csv(hv_series()) ==
        "evaluations,\"hypervolume, (10, 1)\"\n16.0,1.25\n17.0,1.5\n18.0,1.5\n");
}

TEST_CASE("series SVG: one marker per finite point, labels, a polyline") {
  auto s = hv_series();
  s.x.push_back(19);
  s.y.push_back(NAN);  // skipped
  const std::string svg = dptune::host::series_svg(s, "run: hypervolume");
  std::size_t circles = 0;
  for (std::size_t at = svg.find("<circle"); at != std::string::npos;
       at = svg.find("<circle", at + 1))
    ++circles;
  CHECK(circles == 3);
  CHECK(svg.find("<polyline") != std::string::npos);
  CHECK(svg.find(">evaluations</text>") != std::string::npos);
  CHECK(svg.find("run: hypervolume") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
}

TEST_CASE("series validation: file-stem names and equal lengths") {
  auto s = hv_series();
  CHECK_NOTHROW(dptune::host::check_series(s));
  for (const char* bad : {"", "../x", "a/b", ".hidden", "a b"}) {
    s.name = bad;
    CHECK_THROWS_AS(dptune::host::check_series(s), dptune::Error);
  }
  s = hv_series();
  s.y.pop_back();
  CHECK_THROWS_WITH_AS(dptune::host::check_series(s),
                       doctest::Contains("3 x values but 2 y values"), dptune::Error);
}

TEST_CASE("write_report writes each series as CSV and SVG and lists it in summary.json") {
  dptune_test::TempDir dir;
  dptune::host::PipelineConfig config;
  config.name = "series_test";
  config.output.dir = dir.path() / "out";
  dptune::TuningResult result;
  result.series.push_back(hv_series());
  std::ostringstream terminal;
  const dptune::host::ReportInput in{config, result, "seeded", false, "inline", 0.5, "none"};
  const auto summary = dptune::host::write_report(in, terminal);
  CHECK(slurp(config.output.dir / "hypervolume.csv") == dptune::host::series_csv(hv_series()));
  CHECK(slurp(config.output.dir / "hypervolume.svg").find("<svg") == 0);
  const std::string json = slurp(config.output.dir / "summary.json");
  CHECK(json.find("\"series\"") != std::string::npos);
  CHECK(json.find("hypervolume.csv") != std::string::npos);
  CHECK(json.find("hypervolume.svg") != std::string::npos);
  CHECK(std::find(summary.files.begin(), summary.files.end(), "hypervolume.csv") !=
        summary.files.end());
  // Without plots, only the CSV.
  config.output.dir = dir.path() / "noplot";
  config.output.plot = false;
  dptune::host::write_report(in, terminal);
  CHECK(std::filesystem::exists(config.output.dir / "hypervolume.csv"));
  CHECK_FALSE(std::filesystem::exists(config.output.dir / "hypervolume.svg"));
  // A bad series is an error naming it, not a file outside the folder.
  result.series[0].name = "../escape";
  CHECK_THROWS_WITH_AS(dptune::host::write_report(in, terminal), doctest::Contains("../escape"),
                       dptune::Error);
}

TEST_CASE("series named GROUP.MEMBER are drawn together as GROUP.svg with a legend, in GROUP.csv") {
  dptune_test::TempDir dir;
  dptune::host::PipelineConfig config;
  config.name = "group_test";
  config.output.dir = dir.path() / "out";
  dptune::TuningResult result;
  for (const char* member : {"logarithmic", "poisson"}) {
    auto s = hv_series();
    s.name = std::string("fig7.") + member;
    result.series.push_back(s);
  }
  result.series.push_back(hv_series());  // ungrouped: no group plot of its own
  std::ostringstream terminal;
  const dptune::host::ReportInput in{config, result, "seeded", false, "inline", 0.5, "none"};
  const auto summary = dptune::host::write_report(in, terminal);
  const std::string svg = slurp(config.output.dir / "fig7.svg");
  REQUIRE(svg.find("<svg") == 0);
  std::size_t lines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1))
    ++lines;
  CHECK(lines == 2);
  CHECK(svg.find(">logarithmic</text>") != std::string::npos);
  CHECK(svg.find(">poisson</text>") != std::string::npos);
  // One figure per question: the members share one CSV (long format) and one plot, no file each.
  CHECK(slurp(config.output.dir / "fig7.csv") ==
        "member,x,y,x_label,y_label\n"
        "logarithmic,16.0,1.25,evaluations,\"hypervolume, (10, 1)\"\n"
        "logarithmic,17.0,1.5,evaluations,\"hypervolume, (10, 1)\"\n"
        "logarithmic,18.0,1.5,evaluations,\"hypervolume, (10, 1)\"\n"
        "poisson,16.0,1.25,evaluations,\"hypervolume, (10, 1)\"\n"
        "poisson,17.0,1.5,evaluations,\"hypervolume, (10, 1)\"\n"
        "poisson,18.0,1.5,evaluations,\"hypervolume, (10, 1)\"\n");
  CHECK_FALSE(std::filesystem::exists(config.output.dir / "fig7.logarithmic.csv"));
  CHECK_FALSE(std::filesystem::exists(config.output.dir / "fig7.poisson.svg"));
  CHECK(std::count(summary.files.begin(), summary.files.end(), "fig7.svg") == 1);
  CHECK(std::count(summary.files.begin(), summary.files.end(), "report.html") == 1);
  // report.html inlines both plots.
  const std::string html = slurp(config.output.dir / "report.html");
  CHECK(html.find("<figcaption>fig7.svg</figcaption>") != std::string::npos);
  CHECK(html.find("<figcaption>hypervolume.svg</figcaption>") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(config.output.dir / "hypervolume..svg"));
}
