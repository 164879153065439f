// The SVG renderer of plots.hpp: a Figure to a standalone SVG document.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "dptune/host/plots.hpp"

namespace dptune::host {

namespace {

// Okabe & Ito (2008), "Color universal design": distinguishable under every common colour-vision
// deficiency.  Their yellow is left out (too faint on white); 7 colours against 6 markers repeat a
// (colour, marker) pair only after 42 layers.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000"};
constexpr int kMarkers = 6;
constexpr const char* kMuted = "#9a9a9a";

// Text metrics (pixels) of the 12-pixel sans-serif the plots use: a conservative mean advance.
constexpr double kCharWidth = 7.2, kLine = 15;
constexpr double kPlotWidth = 560, kPlotHeight = 340, kTick = 5;

/// `text` broken at spaces into at most `max_lines` lines of at most `chars` characters; the last
/// line ends in an ellipsis when text is left over.
std::vector<std::string> wrap(const std::string& text, std::size_t chars, std::size_t max_lines) {
  std::vector<std::string> lines(1);
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > chars) {
      if (lines.size() == max_lines) {
        lines.back() = lines.back().substr(0, chars - 3) + "...";
        return lines;
      }
      lines.emplace_back();
    }
    lines.back() += (lines.back().empty() ? "" : " ") + word;
  }
  for (auto& l : lines)
    if (l.size() > chars) l = l.substr(0, chars - 3) + "...";
  return lines;
}

/// Marker `shape` of radius r at (x, y).
void marker(std::ostream& s, int shape, double x, double y, double r, const char* colour) {
  s << std::fixed << std::setprecision(1);
  switch (shape % kMarkers) {
    case 0:
      s << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"" << r << "\" fill=\"" << colour
        << "\"/>";
      break;
    case 1:
      s << "<rect x=\"" << x - r * 0.9 << "\" y=\"" << y - r * 0.9 << "\" width=\"" << r * 1.8
        << "\" height=\"" << r * 1.8 << "\" fill=\"" << colour << "\"/>";
      break;
    case 2:
    case 4: {
      const double d = shape % kMarkers == 2 ? 1 : -1;
      s << "<polygon points=\"" << x << ',' << y - d * r * 1.2 << ' ' << x - r * 1.1 << ','
        << y + d * r * 0.8 << ' ' << x + r * 1.1 << ',' << y + d * r * 0.8 << "\" fill=\"" << colour
        << "\"/>";
      break;
    }
    case 3:
      s << "<polygon points=\"" << x << ',' << y - r * 1.3 << ' ' << x + r * 1.1 << ',' << y << ' '
        << x << ',' << y + r * 1.3 << ' ' << x - r * 1.1 << ',' << y << "\" fill=\"" << colour
        << "\"/>";
      break;
    default:
      s << "<path d=\"M" << x - r * 1.2 << ' ' << y << "H" << x + r * 1.2 << "M" << x << ' '
        << y - r * 1.2 << "V" << y + r * 1.2 << "\" stroke=\"" << colour
        << "\" stroke-width=\"2.2\"/>";
  }
  s << '\n';
}

/// The axes of a figure, fitted to every finite point of its layers.
std::pair<Axis, Axis> fit_axes(const Figure& f) {
  std::vector<double> xs, ys;
  for (const auto& l : f.layers)
    for (std::size_t i = 0; i < l.x.size() && i < l.y.size(); ++i)
      if (std::isfinite(l.x[i]) && std::isfinite(l.y[i])) {
        xs.push_back(l.x[i]);
        ys.push_back(l.y[i]);
      }
  auto fit = [](const std::vector<double>& v, bool log) {
    if (v.empty()) return linear_axis(0, 1);
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    if (!log) return linear_axis(*lo, *hi);
    double pos = INFINITY;  // a forced log axis drops the non-positive values
    for (double x : v)
      if (x > 0) pos = std::min(pos, x);
    return std::isfinite(pos) ? log_axis(pos, *hi) : linear_axis(*lo, *hi);
  };
  const bool x_log = f.x_log.value_or(wants_log(xs, f.x_epsilon, true));
  // y: only three decades or more (accuracies of 0.001 to 0.9 read better on a linear axis).
  const bool y_log = f.y_log.value_or(wants_log(ys, false, false) &&
                                      *std::max_element(ys.begin(), ys.end()) >=
                                          1000 * *std::min_element(ys.begin(), ys.end()));
  return {fit(xs, x_log), fit(ys, y_log)};
}

/// Pixel position of v on `axis` mapped onto [p0, p1].
double place(const Axis& axis, double v, double p0, double p1) {
  const double t = axis.log ? std::log(v / axis.lo) / std::log(axis.hi / axis.lo)
                            : (v - axis.lo) / (axis.hi - axis.lo);
  return p0 + t * (p1 - p0);
}

struct Layout {
  double left, top, plot_w, plot_h, legend_x, width, height;
  std::vector<std::string> title, x_label, y_label, legend;
};

Layout lay_out(const Figure& f, const Axis& y) {
  Layout L{};
  L.plot_w = kPlotWidth;
  std::size_t tick_chars = 1;
  for (double t : y.ticks) tick_chars = std::max(tick_chars, tick_label(t, y).size());
  for (const auto& l : f.layers)
    if (!l.label.empty())
      L.legend.push_back(l.label.size() > 40 ? l.label.substr(0, 37) + "..." : l.label);
  std::size_t legend_chars = 0;
  for (const auto& l : L.legend) legend_chars = std::max(legend_chars, l.size());
  L.plot_h = std::max(kPlotHeight, 20.0 * static_cast<double>(L.legend.size()) + 10);
  L.y_label =
      wrap(f.y_label.empty() ? "y" : f.y_label, static_cast<std::size_t>(L.plot_h / kCharWidth), 3);
  L.x_label =
      wrap(f.x_label.empty() ? "x" : f.x_label, static_cast<std::size_t>(L.plot_w / kCharWidth), 2);
  L.left = 12 + kLine * static_cast<double>(L.y_label.size()) + 10 +
           kCharWidth * static_cast<double>(tick_chars) + kTick + 4;
  const double legend_w =
      L.legend.empty() ? 0 : 40 + kCharWidth * static_cast<double>(legend_chars);
  L.width = L.left + L.plot_w + 24 + legend_w + 10;
  L.title = wrap(f.title, static_cast<std::size_t>((L.width - 20) / 8.6), 3);
  L.top = 12 + 19 * static_cast<double>(L.title.size()) + 12;
  L.legend_x = L.left + L.plot_w + 24;
  L.height = L.top + L.plot_h + kTick + 18 + 10 + kLine * static_cast<double>(L.x_label.size()) + 8;
  return L;
}

/// Title, grid, ticks, tick labels and axis labels.
void frame(std::ostream& s, const Figure& f, const Layout& L, const Axis& x, const Axis& y) {
  const double bottom = L.top + L.plot_h, right = L.left + L.plot_w;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << L.width << "\" height=\"" << L.height
    << "\" viewBox=\"0 0 " << L.width << ' ' << L.height
    << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
    << "<title>" << xml_escape(f.title) << "</title>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (std::size_t i = 0; i < L.title.size(); ++i)
    s << "<text x=\"" << L.width / 2 << "\" y=\"" << 12 + 15 + 19 * static_cast<double>(i)
      << "\" text-anchor=\"middle\" font-size=\"15\">" << xml_escape(L.title[i]) << "</text>\n";
  for (double t : x.ticks) {
    const double px = place(x, t, L.left, right);
    s << "<line x1=\"" << px << "\" y1=\"" << L.top << "\" x2=\"" << px << "\" y2=\"" << bottom
      << "\" stroke=\"#e6e6e6\"/><line x1=\"" << px << "\" y1=\"" << bottom << "\" x2=\"" << px
      << "\" y2=\"" << bottom + kTick << "\" stroke=\"black\"/><text x=\"" << px << "\" y=\""
      << bottom + kTick + 13 << "\" text-anchor=\"middle\">" << tick_label(t, x) << "</text>\n";
  }
  for (double t : y.ticks) {
    const double py = place(y, t, bottom, L.top);
    s << "<line x1=\"" << L.left << "\" y1=\"" << py << "\" x2=\"" << right << "\" y2=\"" << py
      << "\" stroke=\"#e6e6e6\"/><line x1=\"" << L.left - kTick << "\" y1=\"" << py << "\" x2=\""
      << L.left << "\" y2=\"" << py << "\" stroke=\"black\"/><text x=\"" << L.left - kTick - 3
      << "\" y=\"" << py + 4 << "\" text-anchor=\"end\">" << tick_label(t, y) << "</text>\n";
  }
  s << "<rect x=\"" << L.left << "\" y=\"" << L.top << "\" width=\"" << L.plot_w << "\" height=\""
    << L.plot_h << "\" fill=\"none\" stroke=\"black\"/>\n";
  for (std::size_t i = 0; i < L.x_label.size(); ++i)
    s << "<text x=\"" << L.left + L.plot_w / 2 << "\" y=\""
      << bottom + kTick + 18 + 10 + 11 + kLine * static_cast<double>(i)
      << "\" text-anchor=\"middle\">" << xml_escape(L.x_label[i]) << "</text>\n";
  for (std::size_t i = 0; i < L.y_label.size(); ++i)
    s << "<text transform=\"translate(" << 12 + 11 + kLine * static_cast<double>(i) << ","
      << L.top + L.plot_h / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
      << xml_escape(L.y_label[i]) << "</text>\n";
}

}  // namespace

std::string render_svg(const Figure& f) {
  const auto [x, y] = fit_axes(f);
  const Layout L = lay_out(f, y);
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  frame(s, f, L, x, y);
  const double bottom = L.top + L.plot_h, right = L.left + L.plot_w;
  // The axes' scales by value: clang before 16 cannot capture structured bindings.
  auto visible = [x_log = x.log, y_log = y.log](double vx, double vy) {
    return std::isfinite(vx) && std::isfinite(vy) && (!x_log || vx > 0) && (!y_log || vy > 0);
  };
  // Muted layers first (context), then the others in order, each its own colour and marker.
  std::size_t style = 0;
  std::vector<std::pair<const char*, int>> styles(f.layers.size());
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t k = 0; k < f.layers.size(); ++k) {
      const Layer& l = f.layers[k];
      if (l.muted != (pass == 0)) continue;
      const char* colour = l.muted ? kMuted : kColours[style % std::size(kColours)];
      const int shape = l.muted ? 0 : static_cast<int>(style % kMarkers);
      if (!l.muted) ++style;
      styles[k] = {colour, shape};
      std::vector<std::pair<double, double>> pts;
      for (std::size_t i = 0; i < l.x.size() && i < l.y.size(); ++i)
        if (visible(l.x[i], l.y[i]))
          pts.emplace_back(place(x, l.x[i], L.left, right), place(y, l.y[i], bottom, L.top));
      if (l.line && pts.size() > 1) {
        s << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.6\" points=\"";
        for (std::size_t i = 0; i < pts.size(); ++i) {
          if (l.step && i > 0) s << pts[i].first << ',' << pts[i - 1].second << ' ';
          s << pts[i].first << ',' << pts[i].second << ' ';
        }
        s << "\"/>\n";
      }
      for (const auto& [px, py] : pts) marker(s, shape, px, py, l.muted ? 2.2 : 3.5, colour);
    }
  // The legend, right of the data area.
  double ly = L.top + 14;
  for (std::size_t k = 0, n = 0; k < f.layers.size(); ++k) {
    if (f.layers[k].label.empty()) continue;
    const auto [colour, shape] = styles[k];
    if (f.layers[k].line)
      s << "<line x1=\"" << L.legend_x << "\" y1=\"" << ly - 4 << "\" x2=\"" << L.legend_x + 26
        << "\" y2=\"" << ly - 4 << "\" stroke=\"" << colour << "\" stroke-width=\"1.6\"/>\n";
    marker(s, shape, L.legend_x + 13, ly - 4, f.layers[k].muted ? 2.2 : 3.5, colour);
    s << "<text x=\"" << L.legend_x + 34 << "\" y=\"" << ly << "\">" << xml_escape(L.legend[n++])
      << "</text>\n";
    ly += 20;
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace dptune::host
