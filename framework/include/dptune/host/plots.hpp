// dptune host: the plots a run writes — axis ticks, the SVG renderer, the
// privacy-utility scatter and the tuners' series — and the files that hold them (one figure per
// question).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dptune/plugin.hpp"

namespace dptune::host {

// ---- axes -------------------------------------------------------------------------------------

/// An axis fitted to the data: its range [lo, hi] and its tick positions (inside the range).
struct Axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  bool log = false;
  /// Linear axes: the tick spacing (decides the decimals of the tick labels); log axes: 0.
  double step = 0;
};

/// Heckbert's nice number (Graphics Gems, 1990): the 1, 2 or 5 × 10^n nearest to `x` > 0 (`round`)
/// or the smallest not below it.
double nice_number(double x, bool round);

/// A linear axis over the data range [lo, hi] with about `target` intervals of a nice step (1, 2,
/// 5 × 10^n), extended outward to the nearest multiples of the step.  A degenerate range (lo == hi)
/// is widened by 10% of |lo| (by 1 when lo == 0); non-finite bounds give [0, 1].
Axis linear_axis(double lo, double hi, int target = 5);

/// A log axis over [lo, hi] (0 < lo <= hi), extended outward to the nearest 1, 2, 5 × 10^n.  Ticks:
/// every 1, 2, 5 × 10^n in range when the range spans at most two decades, else every power of ten
/// (every second one beyond eight decades, every third beyond sixteen).
Axis log_axis(double lo, double hi);

/// Whether values deserve a log axis: all positive and spanning two decades or more (max/min >=
/// 100, e.g. k = 1…100); for a privacy budget (`epsilon`), one decade, since budgets compare by
/// ratio; for `geometric` (an x axis), also a geometric grid of at least three values (each at
/// least 1.9 times the previous, e.g. |H_good| = 1, 2, 4, 8).
bool wants_log(const std::vector<double>& values, bool epsilon, bool geometric);

/// A tick's label: as many decimals as the step needs (0.05, 0.1, 20), powers of ten as 0.01 … 1e4
/// and beyond as 1e-5, 1e6.
std::string tick_label(double value, const Axis& axis);

// ---- figures ------------------------------------------------------------------------------------

/// One set of points on a figure.
struct Layer {
  std::string label;  // legend entry; empty: not in the legend
  std::vector<double> x, y;
  bool line = true;    // join the points (in order)
  bool step = false;   // join them as a staircase (a Pareto front)
  bool muted = false;  // small grey markers, drawn first (context, e.g. every trial)
};

struct Figure {
  std::string title, x_label, y_label;
  std::vector<Layer> layers;
  /// Unset: decided from the data (wants_log).
  std::optional<bool> x_log, y_log;
  /// The x axis is a privacy budget (wants_log's `epsilon`).
  bool x_epsilon = false;
};

/// Escapes &, <, >, " and ' for XML and HTML text and attributes.
std::string xml_escape(const std::string& text);

/// The figure as a standalone SVG: axes fitted to the data, nice ticks, a colour-blind-safe palette
/// (Okabe & Ito 2008) with a distinct marker per layer, and the legend outside the data area.
std::string render_svg(const Figure& figure);

/// Points coloured by a value (a heat map over two hyperparameters): each point a square filled
/// from a sequential colour-blind-safe scale (viridis; Smith & van der Walt 2015), with a colour
/// bar.
struct HeatMap {
  std::string title, x_label, y_label, value_label;
  std::vector<double> x, y, value;
  std::optional<bool> x_log, y_log;  // unset: decided from the data (wants_log)
};
std::string render_heatmap_svg(const HeatMap& map);

/// A bar per value (x = its 0-based position), the `labelled` largest labelled "#position" above
/// their bars (a DP-Hype vote vector: Liebenow et al. 2025, Alg. 1).
std::string render_bars_svg(const std::string& title, const std::string& x_label,
                            const std::string& y_label, const std::vector<double>& values,
                            std::size_t labelled = 3);

/// The released candidate on the search space: one row per dimension, its range (a log scale for
/// a log dimension) or its choices, and the released value marked on it.
std::string render_candidate_svg(const std::string& title, const dptune::SearchSpace& space,
                                 const dptune::Params& candidate);

// ---- the run's plots ----------------------------------------------------------------------------

/// SVG scatter of (ε, 1 − utility), every trial muted and the front as a staircase.
std::string pareto_svg(const std::vector<dptune::Trial>& trials,
                       const std::vector<std::size_t>& front, const std::string& title,
                       double delta);

/// Throws dptune::Error unless `series` has a file-stem name and x, y of equal length.
void check_series(const dptune::Series& series);
/// A tuner's series as CSV: a header `x_label,y_label`, then one row per point.
std::string series_csv(const dptune::Series& series);
/// The series of one group (GROUP.MEMBER names) as one long CSV: `member,x,y,x_label,y_label`.
std::string series_group_csv(const std::vector<const dptune::Series*>& group,
                             const std::vector<std::string>& members);
/// SVG line plot of a series.
std::string series_svg(const dptune::Series& series, const std::string& title);
/// Several series on one plot (axis labels of the first), one colour and marker each, a legend.
std::string series_group_svg(const std::vector<const dptune::Series*>& group,
                             const std::vector<std::string>& legend, const std::string& title);

/// The file stem a series is written under: its group (the part before the first '.') or its name.
std::string series_file_stem(const std::string& name);

/// A figure a run wrote: its file and its SVG text (report.html inlines it).
struct WrittenFigure {
  std::string file, svg;
};

/// Writes the tuner's series into `dir`, one CSV and (with `plot`) one SVG per group or ungrouped
/// series, and appends their names to `files`.  Returns the figures.
std::vector<WrittenFigure> write_series(const std::filesystem::path& dir,
                                        const std::string& run_name,
                                        const std::vector<dptune::Series>& series, bool plot,
                                        std::vector<std::string>& files);

/// A map's view of the search space (Optuna's slice and contour plots): for each numeric tuned
/// hyperparameter, utility against its value with each trial's ε as its colour and marker (a log
/// axis for a log-scaled dimension); for exactly two numeric tuned hyperparameters, a heat map of
/// the best utility at each pair of values.  Written to `dir` (slice_NAME.svg, heatmap.svg; a
/// dimension whose name is no file stem gets its index), their names appended to `files`.
std::vector<WrittenFigure> write_search_space_plots(const std::filesystem::path& dir,
                                                    const std::string& run_name,
                                                    const std::vector<dptune::Trial>& trials,
                                                    const dptune::SearchSpace& space,
                                                    const std::string& utility,
                                                    std::vector<std::string>& files);

/// The legend entry of a group member: its identifier in words ("worst_run" → "worst run").
std::string legend_words(const std::string& identifier);

/// Whether the trials make a privacy-utility trade-off worth plotting: at least two distinct finite
/// ε (runs that all share one ε have no trade-off to show).
bool has_tradeoff(const std::vector<dptune::Trial>& trials);

}  // namespace dptune::host
