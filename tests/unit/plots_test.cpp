// The plots' axes (dptune/host/plots.hpp): Heckbert's nice numbers, linear and log ticks fitted
// to the data, degenerate ranges, tick labels, and the renderer's palette, legend and escaping.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "dptune/host/plots.hpp"

using dptune::host::Axis;
using dptune::host::linear_axis;
using dptune::host::log_axis;
using dptune::host::nice_number;
using dptune::host::tick_label;
using dptune::host::wants_log;

namespace {

std::vector<std::string> labels(const Axis& a) {
  std::vector<std::string> out;
  for (double t : a.ticks) out.push_back(tick_label(t, a));
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("nice numbers: 1, 2, 5 x 10^n, rounded or not below") {
  CHECK(nice_number(0.0425, false) == 0.05);
  CHECK(nice_number(0.0125, true) == 0.01);
  CHECK(nice_number(44, false) == 50);
  CHECK(nice_number(1, false) == 1);
  CHECK(nice_number(2.9, true) == 2);
  CHECK(nice_number(3, true) == 5);
  CHECK(nice_number(7.1, true) == 10);
  CHECK(nice_number(1200, false) == 2000);
}

TEST_CASE("linear axis: fitted to the data, not 0-1 (a DP-SGD front near 0.05)") {
  const Axis a = linear_axis(0.0468, 0.0893);
  CHECK(a.lo == 0.04);
  CHECK(a.hi == 0.09);
  CHECK(a.step == 0.01);
  CHECK(a.ticks == std::vector<double>{0.04, 0.05, 0.06, 0.07, 0.08, 0.09});
  CHECK(labels(a) == std::vector<std::string>{"0.04", "0.05", "0.06", "0.07", "0.08", "0.09"});
  CHECK(linear_axis(0, 1).ticks == std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1});
  // Evaluations 16..80: whole numbers every 20, never "28.8 evaluations".
  const Axis e = linear_axis(16, 80);
  CHECK(e.ticks == std::vector<double>{0, 20, 40, 60, 80});
  CHECK(labels(e) == std::vector<std::string>{"0", "20", "40", "60", "80"});
  CHECK(labels(linear_axis(-0.93, 0.41)) == std::vector<std::string>{"-1.0", "-0.5", "0", "0.5"});
}

TEST_CASE("linear axis: degenerate and non-finite ranges") {
  const Axis one = linear_axis(3, 3);  // widened by 10% of |3|
  CHECK(one.ticks == std::vector<double>{2.6, 2.8, 3, 3.2, 3.4});
  const Axis zero = linear_axis(0, 0);  // widened by 1
  CHECK(zero.ticks == std::vector<double>{-1, -0.5, 0, 0.5, 1});
  CHECK(labels(zero) == std::vector<std::string>{"-1.0", "-0.5", "0", "0.5", "1.0"});
  const Axis bad = linear_axis(NAN, 1);
  CHECK(bad.lo == 0);
  CHECK(bad.hi == 1);
  CHECK(linear_axis(5, 1).ticks == linear_axis(1, 5).ticks);
}

TEST_CASE("log axis: 1-2-5 ticks over two decades, powers of ten beyond") {
  const Axis k = log_axis(1, 100);  // k = 1...100
  CHECK(k.log);
  CHECK(k.ticks == std::vector<double>{1, 2, 5, 10, 20, 50, 100});
  const Axis eps = log_axis(0.058473, 4654.8);  // a quickstart front
  CHECK(eps.lo == 0.05);
  CHECK(eps.hi == 5000);
  CHECK(eps.ticks == std::vector<double>{0.1, 1, 10, 100, 1000});
  CHECK(labels(eps) == std::vector<std::string>{"0.1", "1", "10", "100", "1000"});
  CHECK(log_axis(3, 3).ticks == std::vector<double>{2, 5});
  CHECK(log_axis(1, 1).ticks == std::vector<double>{0.5, 1, 2});
  const Axis wide = log_axis(1e-10, 1e10);  // every third decade beyond sixteen
  CHECK(wide.ticks == std::vector<double>{1e-9, 1e-6, 1e-3, 1, 1e3, 1e6, 1e9});
  CHECK(labels(wide) ==
        std::vector<std::string>{"1e-9", "1e-6", "0.001", "1", "1000", "1e6", "1e9"});
  const Axis mid = log_axis(2e-5, 3e-1);
  CHECK(mid.ticks == std::vector<double>{1e-4, 1e-3, 1e-2, 1e-1});
  CHECK(labels(mid) == std::vector<std::string>{"1e-4", "0.001", "0.01", "0.1"});
}

TEST_CASE("log axes where the data span decades") {
  CHECK(wants_log({1, 2, 5, 10, 20, 50, 100}, false, false));  // k = 1...100
  CHECK_FALSE(wants_log({16, 17, 40, 80}, false, true));       // evaluations
  CHECK(wants_log({1, 2, 4, 8}, false, true));                 // a geometric grid on x
  CHECK_FALSE(wants_log({1, 2, 4, 8}, false, false));
  CHECK(wants_log({0.5, 2, 8}, true, false));  // budgets compare by ratio: one decade
  CHECK_FALSE(wants_log({0.5, 2, 8}, false, false));
  CHECK_FALSE(wants_log({0, 1, 100}, false, false));  // not all positive
  CHECK_FALSE(wants_log({}, true, true));
}

TEST_CASE("render: distinct colour-marker pairs, legend right of the data, escaped text") {
  dptune::host::Figure f;
  f.title = "a <b> & \"c\"";
  f.x_label = "k (votes per client)";
  f.y_label = "accuracy";
  for (int i = 0; i < 12; ++i)
    f.layers.push_back({"curve " + std::to_string(i), {1, 10, 100}, {0.1 * i, 0.2, 0.3}});
  const std::string svg = dptune::host::render_svg(f);
  CHECK(svg.find("a &lt;b&gt; &amp; &quot;c&quot;") != std::string::npos);
  CHECK(svg.find("<b>") == std::string::npos);
  CHECK(svg.find(">100</text>") != std::string::npos);  // k = 1...100 on a log axis
  CHECK(svg.find(">50</text>") != std::string::npos);
  // 12 legend entries, each a distinct (colour, marker) pair, all right of the plot frame.
  std::set<std::string> styles;
  for (int i = 0; i < 12; ++i) {
    const auto at = svg.find(">curve " + std::to_string(i) + "</text>");
    REQUIRE(at != std::string::npos);
    const auto line = svg.rfind("\n", svg.rfind("\n", at) - 1);
    const std::string entry = svg.substr(line, at - line);
    // The marker's element and colour (circle, rect, polygon up or down, path; #RRGGBB).
    const auto colour = entry.find('#');
    REQUIRE(colour != std::string::npos);
    const std::string marker = entry.substr(1, entry.find('\n', 1) - 1);
    const std::string element = marker.substr(0, marker.find(' '));
    styles.insert(entry.substr(colour, 7) + element + std::to_string(count(marker, ",")));
  }
  CHECK(styles.size() == 12);
  CHECK(count(svg, "<polyline") == 12);
  CHECK(svg.find("nan") == std::string::npos);
}

TEST_CASE("written series: one CSV and one SVG per group") {
  CHECK(dptune::host::series_file_stem("svt_iterations.keps_0.5") == "svt_iterations");
  CHECK(dptune::host::series_file_stem("hypervolume") == "hypervolume");
  dptune::Trial a, b;
  a.privacy.epsilon = b.privacy.epsilon = 1.5;
  CHECK_FALSE(dptune::host::has_tradeoff({a, b}));  // all runs share one epsilon
  b.privacy.epsilon = 3;
  CHECK(dptune::host::has_tradeoff({a, b}));
}
