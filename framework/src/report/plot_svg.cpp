// The SVG renderer of plots.hpp: a Figure to a standalone SVG document.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <sstream>

#include "dptune/host/format.hpp"
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

/// The words of `text` for wrapping: a parenthesised group ("(epsilon, error)") is one word, so
/// that a line never breaks inside a tuple, unless the group alone is longer than a line.
std::vector<std::string> unbreakable_words(const std::string& text, std::size_t chars) {
  std::vector<std::string> words;
  std::istringstream in(text);
  std::string word;
  int depth = 0;
  while (in >> word) {
    if (depth > 0 && !words.empty() && words.back().size() + 1 + word.size() <= chars)
      words.back() += " " + word;
    else
      words.push_back(word);
    for (char c : word) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    depth = std::max(depth, 0);
  }
  return words;
}

/// `text` broken at spaces (not inside parentheses) into at most `max_lines` lines of at most
/// `chars` characters; the last line ends in an ellipsis when text is left over.
std::vector<std::string> wrap(const std::string& text, std::size_t chars, std::size_t max_lines) {
  std::vector<std::string> lines(1);
  for (const std::string& word : unbreakable_words(text, chars)) {
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
  // A linear axis is extended to the tick below the data; when that leaves a wide empty margin
  // (evaluations 16..80 on an axis from 0), it starts just below the data instead.
  auto trimmed = [](Axis axis, const std::vector<double>& v) {
    if (axis.log || v.empty()) return axis;
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    const double span = *hi - *lo, pad = 0.03 * span;
    if (!(span > 0)) return axis;
    if (*lo - axis.lo > 0.15 * span) axis.lo = *lo - pad;
    if (axis.hi - *hi > 0.15 * span) axis.hi = *hi + pad;
    Axis full = axis;
    std::erase_if(axis.ticks,
                  [&](double t) { return t < axis.lo - 1e-9 * span || t > axis.hi + 1e-9 * span; });
    return axis.ticks.size() >= 3 ? axis : full;
  };
  const bool x_log = f.x_log.value_or(wants_log(xs, f.x_epsilon, true));
  // y: only three decades or more (accuracies of 0.001 to 0.9 read better on a linear axis).
  const bool y_log = f.y_log.value_or(wants_log(ys, false, false) &&
                                      *std::max_element(ys.begin(), ys.end()) >=
                                          1000 * *std::min_element(ys.begin(), ys.end()));
  return {trimmed(fit(xs, x_log), xs), trimmed(fit(ys, y_log), ys)};
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

/// Viridis (Smith & van der Walt 2015) at t in [0, 1], interpolated between 5 of its colours:
/// sequential, readable in grey and under the common colour-vision deficiencies.
std::string viridis(double t) {
  static constexpr double stops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  char hex[8];
  std::snprintf(hex, sizeof hex, "#%02X%02X%02X",
                static_cast<int>(std::lround(stops[i][0] + f * (stops[i + 1][0] - stops[i][0]))),
                static_cast<int>(std::lround(stops[i][1] + f * (stops[i + 1][1] - stops[i][1]))),
                static_cast<int>(std::lround(stops[i][2] + f * (stops[i + 1][2] - stops[i][2]))));
  return hex;
}

}  // namespace

std::string render_heatmap_svg(const HeatMap& m) {
  Figure f;
  f.title = m.title;
  f.x_label = m.x_label;
  f.y_label = m.y_label;
  f.x_log = m.x_log;
  f.y_log = m.y_log;
  f.layers.push_back({"", m.x, m.y});
  const auto [x, y] = fit_axes(f);
  Layout L = lay_out(f, y);
  constexpr double kBarWidth = 16, kBarRoom = 110;
  L.width += kBarRoom;
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  frame(s, f, L, x, y);
  const double bottom = L.top + L.plot_h, right = L.left + L.plot_w;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : m.value)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  const double range = hi > lo ? hi - lo : 1;
  // A cell's size: the plot divided by the number of distinct values on each axis (a grid's
  // cells then tile the plot), at most 40 pixels.
  auto distinct = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return static_cast<double>(std::unique(v.begin(), v.end()) - v.begin());
  };
  const double w = std::min(40.0, L.plot_w / std::max(1.0, distinct(m.x)) * 0.9);
  const double h = std::min(40.0, L.plot_h / std::max(1.0, distinct(m.y)) * 0.9);
  // Cells at the edges are cut at the plot's frame (one heat map per page: the id is unique).
  s << "<clipPath id=\"dptune-heatmap-cells\"><rect x=\"" << L.left << "\" y=\"" << L.top
    << "\" width=\"" << L.plot_w << "\" height=\"" << L.plot_h << "\"/></clipPath>\n"
    << "<g clip-path=\"url(#dptune-heatmap-cells)\">\n";
  for (std::size_t i = 0; i < m.x.size() && i < m.y.size() && i < m.value.size(); ++i) {
    if (!std::isfinite(m.x[i]) || !std::isfinite(m.y[i]) || !std::isfinite(m.value[i])) continue;
    if ((x.log && m.x[i] <= 0) || (y.log && m.y[i] <= 0)) continue;
    const double px = place(x, m.x[i], L.left, right), py = place(y, m.y[i], bottom, L.top);
    s << "<rect x=\"" << px - w / 2 << "\" y=\"" << py - h / 2 << "\" width=\"" << w
      << "\" height=\"" << h << "\" fill=\"" << viridis((m.value[i] - lo) / range)
      << "\" stroke=\"white\"/>\n";
  }
  s << "</g>\n";
  // The colour bar, right of the plot: the value's range, low at the bottom.
  const double bar_x = right + 30;
  constexpr int kSteps = 20;
  for (int k = 0; k < kSteps; ++k) {
    const double y0 = bottom - (k + 1) * L.plot_h / kSteps;
    s << "<rect x=\"" << bar_x << "\" y=\"" << y0 << "\" width=\"" << kBarWidth << "\" height=\""
      << L.plot_h / kSteps + 0.5 << "\" fill=\"" << viridis((k + 0.5) / kSteps) << "\"/>\n";
  }
  if (std::isfinite(lo))
    for (const auto& [value, py] : {std::pair{lo, bottom}, std::pair{hi, L.top}})
      s << "<text x=\"" << bar_x + kBarWidth + 4 << "\" y=\"" << py + 4 << "\">"
        << significant(value, 4) << "</text>\n";
  s << "<text transform=\"translate(" << bar_x + kBarWidth + 66 << "," << L.top + L.plot_h / 2
    << ") rotate(-90)\" text-anchor=\"middle\">" << xml_escape(m.value_label) << "</text>\n";
  s << "</svg>\n";
  return s.str();
}

std::string render_bars_svg(const std::string& title, const std::string& x_label,
                            const std::string& y_label, const std::vector<double>& values,
                            std::size_t labelled) {
  Figure f;
  f.title = title;
  f.x_label = x_label;
  f.y_label = y_label;
  f.x_log = f.y_log = false;
  Layer extent{"", {-0.5, static_cast<double>(values.size()) - 0.5}, {0, 0}};
  for (std::size_t i = 0; i < values.size(); ++i) {
    extent.x.push_back(static_cast<double>(i));
    extent.y.push_back(values[i]);
  }
  f.layers.push_back(extent);
  const Axis y = fit_axes(f).second;
  // The x axis holds the positions exactly: half a bar's room either side, whole-number ticks.
  Axis x = linear_axis(0, std::max(1.0, static_cast<double>(values.size()) - 1));
  x.step = std::max(1.0, x.step);
  x.lo = -0.5;
  x.hi = static_cast<double>(values.size()) - 0.5;
  std::erase_if(x.ticks, [&](double t) { return t < 0 || t > x.hi || t != std::round(t); });
  const Layout L = lay_out(f, y);
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  frame(s, f, L, x, y);
  const double bottom = L.top + L.plot_h, right = L.left + L.plot_w;
  const double zero = place(y, std::clamp(0.0, y.lo, y.hi), bottom, L.top);
  const double half = 0.4 * L.plot_w / std::max<double>(1, static_cast<double>(x.hi - x.lo));
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] > values[b]; });
  order.resize(std::min(order.size(), labelled));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    const double px = place(x, static_cast<double>(i), L.left, right);
    const double py = place(y, values[i], bottom, L.top);
    const bool top = std::find(order.begin(), order.end(), i) != order.end();
    s << "<rect x=\"" << px - half << "\" y=\"" << std::min(py, zero) << "\" width=\"" << 2 * half
      << "\" height=\"" << std::max(0.5, std::abs(zero - py)) << "\" fill=\""
      << (top ? kColours[1] : kColours[0]) << "\"/>\n";
    if (top)
      s << "<text x=\"" << px << "\" y=\"" << std::min(py, zero) - 4
        << "\" text-anchor=\"middle\" font-size=\"11\">#" << i << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string render_candidate_svg(const std::string& title, const dptune::SearchSpace& space,
                                 const dptune::Params& candidate) {
  constexpr double kLeft = 20, kRowHeight = 64, kLineWidth = 640, kNameWidth = 150;
  const auto& dims = space.dimensions();
  const double width = kLeft + kNameWidth + kLineWidth + 60;
  const double height = 52 + kRowHeight * static_cast<double>(dims.size()) + 10;
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << ' ' << height
    << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n<title>"
    << xml_escape(title) << "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << width / 2 << "\" y=\"27\" text-anchor=\"middle\" font-size=\"15\">"
    << xml_escape(title) << "</text>\n";
  const double x0 = kLeft + kNameWidth, x1 = x0 + kLineWidth;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const dptune::Dimension& d = dims[k];
    const double row = 52 + kRowHeight * static_cast<double>(k) + 24;
    s << "<text x=\"" << kLeft << "\" y=\"" << row + 4 << "\">" << xml_escape(d.name)
      << "</text>\n<line x1=\"" << x0 << "\" y1=\"" << row << "\" x2=\"" << x1 << "\" y2=\"" << row
      << "\" stroke=\"" << kMuted << "\" stroke-width=\"3\"/>\n";
    const bool has = candidate.contains(d.name);
    // Positions: a choice's index over the choices, a number's place on the range's axis.
    std::vector<std::pair<double, std::string>> ticks;
    std::optional<double> chosen;
    if (d.kind == dptune::Dimension::Kind::Categorical) {
      const double n = static_cast<double>(d.choices.size());
      for (std::size_t c = 0; c < d.choices.size(); ++c) {
        const double px = x0 + kLineWidth * (static_cast<double>(c) + 0.5) / n;
        const dptune::Value& v = d.choices[c];
        ticks.push_back({px, std::holds_alternative<double>(v) ? significant(std::get<double>(v), 5)
                                                               : dptune::to_string(v)});
        if (has && candidate.at(d.name) == v) chosen = px;
      }
    } else {
      // The line spans the dimension's range exactly, with the nice ticks inside it.
      Axis axis = d.log ? log_axis(d.low, d.high) : linear_axis(d.low, d.high);
      axis.lo = d.low;
      axis.hi = d.high;
      std::erase_if(axis.ticks, [&](double t) {
        const double slack = 1e-9 * (d.high - d.low);
        return t < d.low - slack || t > d.high + slack;
      });
      for (double t : axis.ticks) ticks.push_back({place(axis, t, x0, x1), tick_label(t, axis)});
      if (has) {
        const dptune::Value& v = candidate.at(d.name);
        const double value = std::holds_alternative<double>(v)
                                 ? std::get<double>(v)
                                 : static_cast<double>(std::get<std::int64_t>(v));
        chosen = place(axis, value, x0, x1);
      }
    }
    for (const auto& [px, label] : ticks)
      s << "<line x1=\"" << px << "\" y1=\"" << row - 5 << "\" x2=\"" << px << "\" y2=\"" << row + 5
        << "\" stroke=\"black\"/><text x=\"" << px << "\" y=\"" << row + 20
        << "\" text-anchor=\"middle\" font-size=\"11\">" << xml_escape(label) << "</text>\n";
    if (chosen && has) {
      const dptune::Value& v = candidate.at(d.name);
      s << "<circle cx=\"" << *chosen << "\" cy=\"" << row << "\" r=\"7\" fill=\"" << kColours[1]
        << "\"/><text x=\"" << *chosen << "\" y=\"" << row - 12
        << "\" text-anchor=\"middle\" font-weight=\"bold\">"
        << xml_escape(std::holds_alternative<double>(v) ? significant(std::get<double>(v), 5)
                                                        : dptune::to_string(v))
        << "</text>\n";
    }
  }
  s << "</svg>\n";
  return s.str();
}

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
