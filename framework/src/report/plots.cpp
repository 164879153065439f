#include "dptune/host/plots.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "base/output_files.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/format.hpp"

namespace dptune::host {

namespace {

/// 10^e for an integer e, exact for |e| <= 22 (a power of ten below 1 as a division, so that
/// 0.01 is the double nearest to 1/100).
double pow10(int e) {
  double p = 1;
  for (int i = 0; i < std::abs(e); ++i) p *= 10;
  return e >= 0 ? p : 1 / p;
}

/// m × 10^e, correctly rounded (5e-2 is the double nearest to 0.05).
double scaled(double m, int e) { return e >= 0 ? m * pow10(e) : m / pow10(-e); }

/// The tick at k × step, exact when the step is a nice number below 1 (7 × 0.01 is 0.07, not
/// 0.07000000000000001): k ÷ (1 / step), whose divisor is an integer for 1, 2, 5 × 10^-n.
double tick_at(long long k, double step) {
  if (step >= 1) return static_cast<double>(k) * step;
  return static_cast<double>(k) / std::round(1 / step);
}

/// The largest 1, 2, 5 × 10^n not above v (down) or the smallest not below it (up).
double nice_bound(double v, bool up) {
  const int e = static_cast<int>(std::floor(std::log10(v)));
  const double mantissas[] = {1, 2, 5, 10};
  if (up) {
    for (double m : mantissas)
      if (scaled(m, e) >= v * (1 - 1e-12)) return scaled(m, e);
    return scaled(1, e + 1);
  }
  for (int i = 3; i >= 0; --i)
    if (scaled(mantissas[i], e) <= v * (1 + 1e-12)) return scaled(mantissas[i], e);
  return scaled(5, e - 1);
}

}  // namespace

// ---- axes -------------------------------------------------------------------------------------

double nice_number(double x, bool round) {
  const int e = static_cast<int>(std::floor(std::log10(x)));
  const double f = x / pow10(e);
  double m = 10;
  if (round)
    m = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  else
    m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return scaled(m, e);
}

Axis linear_axis(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo <= 1e-12 * std::max(std::abs(lo), std::abs(hi))) {
    const double d = lo == 0 ? 1 : 0.1 * std::abs(lo);
    lo -= d;
    hi += d;
  }
  // Heckbert (1990): a nice range, then a nice step dividing it into about `target` intervals.
  const double step = nice_number(nice_number(hi - lo, false) / std::max(target, 1), true);
  const auto k_lo = static_cast<long long>(std::floor(lo / step + 1e-9));
  const auto k_hi = static_cast<long long>(std::ceil(hi / step - 1e-9));
  Axis axis;
  axis.step = step;
  axis.lo = tick_at(k_lo, step);
  axis.hi = tick_at(k_hi, step);
  for (long long k = k_lo; k <= k_hi; ++k) axis.ticks.push_back(k == 0 ? 0.0 : tick_at(k, step));
  return axis;
}

Axis log_axis(double lo, double hi) {
  if (!(lo > 0) || !std::isfinite(lo) || !std::isfinite(hi)) lo = 1, hi = 10;
  if (hi < lo) std::swap(lo, hi);
  Axis axis;
  axis.log = true;
  axis.lo = nice_bound(lo, false);
  axis.hi = nice_bound(hi, true);
  if (axis.hi <= axis.lo) {  // one value that is itself a nice number: its neighbours
    axis.lo = nice_bound(axis.lo * 0.99, false);
    axis.hi = nice_bound(axis.hi * 1.01, true);
  }
  const double decades = std::log10(axis.hi / axis.lo);
  const int e_lo = static_cast<int>(std::floor(std::log10(axis.lo) + 1e-9));
  const int e_hi = static_cast<int>(std::ceil(std::log10(axis.hi) - 1e-9));
  const int stride = decades > 16 ? 3 : decades > 8 ? 2 : 1;
  for (int e = e_lo; e <= e_hi; ++e) {
    if (decades <= 2) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = scaled(m, e);
        if (v >= axis.lo * (1 - 1e-12) && v <= axis.hi * (1 + 1e-12)) axis.ticks.push_back(v);
      }
    } else if (e % stride == 0) {
      const double v = scaled(1, e);
      if (v >= axis.lo * (1 - 1e-12) && v <= axis.hi * (1 + 1e-12)) axis.ticks.push_back(v);
    }
  }
  return axis;
}

bool wants_log(const std::vector<double>& values, bool epsilon, bool geometric) {
  std::vector<double> v;
  for (double x : values)
    if (std::isfinite(x)) {
      if (x <= 0) return false;
      v.push_back(x);
    }
  if (v.empty()) return false;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  const double ratio = v.back() / v.front();
  if (ratio >= 100 || (epsilon && ratio >= 10)) return true;
  if (!geometric || v.size() < 3) return false;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] < 1.9 * v[i - 1]) return false;
  return true;
}

std::string tick_label(double value, const Axis& axis) {
  if (axis.log)
    return value >= 1e-3 && value < 1e5 ? significant_short_exponent(value, 6)
                                        : scientific_one_figure(value);
  if (std::abs(value) < axis.step * 1e-6) return "0";
  const double biggest = std::max(std::abs(axis.lo), std::abs(axis.hi));
  if (axis.step < 1e-4 || biggest >= 1e6) return significant_short_exponent(value, 6);
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(axis.step) - 1e-9)));
  return fixed_decimals(value, decimals);
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

bool has_tradeoff(const std::vector<dptune::Trial>& trials) {
  std::set<double> epsilons;
  for (const auto& t : trials)
    if (std::isfinite(t.privacy.epsilon)) epsilons.insert(t.privacy.epsilon);
  return epsilons.size() >= 2;
}

// ---- the run's plots ----------------------------------------------------------------------------

namespace {

/// A budget axis: ε compares by ratio (wants_log's `epsilon`).
bool mentions_epsilon(const std::string& label) {
  return label.find("epsilon") != std::string::npos;
}

}  // namespace

std::string pareto_svg(const std::vector<dptune::Trial>& trials,
                       const std::vector<std::size_t>& front, const std::string& title,
                       double delta) {
  Figure f;
  f.title = title;
  f.x_label = "epsilon of one run (delta = " + significant_short_exponent(delta, 6) + ")";
  f.y_label = "error = 1 - utility (mean over the runs)";
  f.x_epsilon = true;
  Layer others{"other trials", {}, {}, false, false, true};
  Layer best{"Pareto front", {}, {}, true, true, false};
  const std::set<std::size_t> on_front(front.begin(), front.end());
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (on_front.count(i) || !std::isfinite(trials[i].privacy.epsilon)) continue;
    others.x.push_back(trials[i].privacy.epsilon);
    others.y.push_back(1 - trials[i].utility_mean);
  }
  // The front as a staircase: each point dominates the region to its upper right.
  for (std::size_t i : front) {
    best.x.push_back(trials[i].privacy.epsilon);
    best.y.push_back(1 - trials[i].utility_mean);
  }
  if (!others.x.empty()) f.layers.push_back(std::move(others));
  f.layers.push_back(std::move(best));
  return render_svg(f);
}

void check_series(const dptune::Series& series) {
  const bool name_ok =
      !series.name.empty() && series.name.front() != '.' &&
      std::all_of(series.name.begin(), series.name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
      });
  if (!name_ok)
    throw dptune::Error("tuner series name '" + series.name +
                        "' is not a file stem (letters, digits, '_', '-', '.')");
  if (series.x.size() != series.y.size())
    throw dptune::Error("tuner series '" + series.name + "': " + std::to_string(series.x.size()) +
                        " x values but " + std::to_string(series.y.size()) + " y values");
}

std::string series_csv(const dptune::Series& series) {
  std::ostringstream s;
  s << csv_cell(series.x_label.empty() ? "x" : series.x_label) << ','
    << csv_cell(series.y_label.empty() ? "y" : series.y_label) << '\n';
  for (std::size_t i = 0; i < series.x.size(); ++i)
    s << full_precision(series.x[i]) << ',' << full_precision(series.y[i]) << '\n';
  return s.str();
}

std::string series_group_csv(const std::vector<const dptune::Series*>& group,
                             const std::vector<std::string>& members) {
  std::ostringstream s;
  s << "member,x,y,x_label,y_label\n";
  for (std::size_t g = 0; g < group.size(); ++g) {
    const dptune::Series& series = *group[g];
    const std::string tail = "," + csv_cell(series.x_label) + "," + csv_cell(series.y_label);
    for (std::size_t i = 0; i < series.x.size(); ++i)
      s << csv_cell(g < members.size() ? members[g] : series.name) << ','
        << full_precision(series.x[i]) << ',' << full_precision(series.y[i]) << tail << '\n';
  }
  return s.str();
}

std::string series_svg(const dptune::Series& series, const std::string& title) {
  return series_group_svg({&series}, {}, title);
}

std::string series_group_svg(const std::vector<const dptune::Series*>& group,
                             const std::vector<std::string>& legend, const std::string& title) {
  Figure f;
  f.title = title;
  if (!group.empty()) {
    f.x_label = group.front()->x_label;
    f.y_label = group.front()->y_label;
  }
  f.x_epsilon = mentions_epsilon(f.x_label);
  for (std::size_t g = 0; g < group.size(); ++g)
    f.layers.push_back({g < legend.size() ? legend[g] : "", group[g]->x, group[g]->y});
  return render_svg(f);
}

std::string series_file_stem(const std::string& name) {
  const auto dot = name.find('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

std::vector<WrittenFigure> write_series(const std::filesystem::path& dir,
                                        const std::string& run_name,
                                        const std::vector<dptune::Series>& series, bool plot,
                                        std::vector<std::string>& files) {
  std::vector<std::string> stems;
  for (const auto& s : series) {
    check_series(s);
    if (std::find(stems.begin(), stems.end(), series_file_stem(s.name)) == stems.end())
      stems.push_back(series_file_stem(s.name));
  }
  // One question, one figure: the members of a group share a CSV and a plot.
  std::vector<WrittenFigure> figures;
  for (const auto& stem : stems) {
    std::vector<const dptune::Series*> members;
    // The CSV (a machine file) names each member by its identifier; the legend in words.
    std::vector<std::string> identifiers, legend;
    for (const auto& s : series)
      if (series_file_stem(s.name) == stem) {
        members.push_back(&s);
        identifiers.push_back(s.name.size() > stem.size() + 1 ? s.name.substr(stem.size() + 1)
                                                              : s.name);
        legend.push_back(legend_words(identifiers.back()));
      }
    const bool single = members.size() == 1 && members.front()->name == stem;
    write_text_file(dir / (stem + ".csv"),
                    single ? series_csv(*members.front()) : series_group_csv(members, identifiers));
    files.push_back(stem + ".csv");
    if (!plot) continue;
    std::string title = run_name;
    title.append(": ").append(stem);
    figures.push_back({stem + ".svg", single ? series_svg(*members.front(), title)
                                             : series_group_svg(members, legend, title)});
    write_text_file(dir / figures.back().file, figures.back().svg);
    files.push_back(figures.back().file);
  }
  return figures;
}

std::string legend_words(const std::string& identifier) {
  std::string words = identifier;
  std::replace(words.begin(), words.end(), '_', ' ');
  return words;
}

namespace {

/// A dimension's value in a trial as a number, if it is one (a string category is not).
std::optional<double> numeric_value(const dptune::Trial& t, const std::string& name) {
  if (!t.params.contains(name)) return std::nullopt;
  const dptune::Value& v = t.params.at(name);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

/// The dimensions every trial gives a number for (float, int, numeric categories).
std::vector<const dptune::Dimension*> numeric_dimensions(const std::vector<dptune::Trial>& trials,
                                                         const dptune::SearchSpace& space) {
  std::vector<const dptune::Dimension*> out;
  for (const auto& d : space.dimensions())
    if (std::all_of(trials.begin(), trials.end(),
                    [&](const dptune::Trial& t) { return numeric_value(t, d.name).has_value(); }))
      out.push_back(&d);
  return out;
}

/// The trials grouped by ε for a slice plot's colours: each distinct finite ε its own layer when
/// there are at most 6, else 5 ranges of equal count; a trial without a finite ε (non-private)
/// in a layer of its own.
std::vector<std::pair<std::string, std::vector<std::size_t>>> epsilon_groups(
    const std::vector<dptune::Trial>& trials) {
  std::vector<std::size_t> order, none;
  for (std::size_t i = 0; i < trials.size(); ++i)
    (std::isfinite(trials[i].privacy.epsilon) ? order : none).push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return trials[a].privacy.epsilon < trials[b].privacy.epsilon;
  });
  std::vector<double> distinct;
  for (std::size_t i : order)
    if (distinct.empty() || distinct.back() != trials[i].privacy.epsilon)
      distinct.push_back(trials[i].privacy.epsilon);
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
  if (distinct.size() <= 6) {
    for (double e : distinct) {
      groups.push_back({"epsilon " + significant(e, 3), {}});
      for (std::size_t i : order)
        if (trials[i].privacy.epsilon == e) groups.back().second.push_back(i);
    }
  } else {
    constexpr std::size_t kRanges = 5;
    for (std::size_t r = 0; r < kRanges; ++r) {
      const std::size_t from = r * order.size() / kRanges, to = (r + 1) * order.size() / kRanges;
      if (from == to) continue;
      groups.push_back({"epsilon " + significant(trials[order[from]].privacy.epsilon, 3) + ".." +
                            significant(trials[order[to - 1]].privacy.epsilon, 3),
                        {order.begin() + static_cast<std::ptrdiff_t>(from),
                         order.begin() + static_cast<std::ptrdiff_t>(to)}});
    }
  }
  if (!none.empty()) groups.push_back({"no epsilon (non-private)", none});
  return groups;
}

/// A file-name part for a dimension: its name when it is a file stem, else its index.
std::string file_part(const std::string& name, std::size_t index) {
  const bool stem = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return stem ? name : "dimension" + std::to_string(index);
}

std::string slice_svg(const std::vector<dptune::Trial>& trials, const dptune::Dimension& d,
                      const std::string& title, const std::string& utility) {
  Figure f;
  f.title = title;
  f.x_label = d.name + (d.log ? " (log scale)" : "");
  f.y_label = utility + " (mean over the runs)";
  if (d.log) f.x_log = true;
  for (const auto& [label, members] : epsilon_groups(trials)) {
    Layer layer{label, {}, {}, false};
    for (std::size_t i : members) {
      layer.x.push_back(*numeric_value(trials[i], d.name));
      layer.y.push_back(trials[i].utility_mean);
    }
    f.layers.push_back(std::move(layer));
  }
  return render_svg(f);
}

/// The best utility at each pair of values of two dimensions (over ε and the other trials).
std::string heatmap_svg(const std::vector<dptune::Trial>& trials, const dptune::Dimension& a,
                        const dptune::Dimension& b, const std::string& title,
                        const std::string& utility) {
  std::map<std::pair<double, double>, double> best;
  for (const auto& t : trials) {
    const std::pair key{*numeric_value(t, a.name), *numeric_value(t, b.name)};
    const auto at = best.find(key);
    if (at == best.end() || t.utility_mean > at->second) best[key] = t.utility_mean;
  }
  HeatMap m;
  m.title = title;
  m.x_label = a.name + (a.log ? " (log scale)" : "");
  m.y_label = b.name + (b.log ? " (log scale)" : "");
  m.value_label = "best " + utility;
  if (a.log) m.x_log = true;
  if (b.log) m.y_log = true;
  for (const auto& [key, value] : best) {
    m.x.push_back(key.first);
    m.y.push_back(key.second);
    m.value.push_back(value);
  }
  return render_heatmap_svg(m);
}

}  // namespace

std::vector<WrittenFigure> write_search_space_plots(const std::filesystem::path& dir,
                                                    const std::string& run_name,
                                                    const std::vector<dptune::Trial>& trials,
                                                    const dptune::SearchSpace& space,
                                                    const std::string& utility,
                                                    std::vector<std::string>& files) {
  std::vector<WrittenFigure> figures;
  if (trials.empty()) return figures;
  const auto dims = numeric_dimensions(trials, space);
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const std::string file = "slice_" + file_part(dims[k]->name, k) + ".svg";
    std::string title = run_name;
    title.append(": ").append(utility).append(" against ").append(dims[k]->name);
    figures.push_back({file, slice_svg(trials, *dims[k], title, utility)});
  }
  if (dims.size() == 2 && space.dimensions().size() == 2)
    figures.push_back({"heatmap.svg", heatmap_svg(trials, *dims[0], *dims[1],
                                                  run_name + ": best " + utility + " over " +
                                                      dims[0]->name + " and " + dims[1]->name,
                                                  utility)});
  for (const auto& f : figures) {
    write_text_file(dir / f.file, f.svg);
    files.push_back(f.file);
  }
  return figures;
}

}  // namespace dptune::host
