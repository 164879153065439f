#include "report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <set>
#include <sstream>

#include "dptune/abi.hpp"
#include "dptune/errors.hpp"
#include "dptune/pareto.hpp"
#include "json.hpp"
#include "model_file.hpp"

namespace dptune::host {

namespace {

// The canvas both plots share (pixels): room on the left and at the bottom for tick labels.
namespace plot {
constexpr double width = 720, height = 480, left = 70, right = 20, top = 40, bottom = 60;
}  // namespace plot

/// Opens an SVG plot: the element, a white background, the title and both axis lines.
void svg_begin(std::ostream& s, const std::string& title) {
  using namespace plot;
  s << std::fixed << std::setprecision(2);
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << width / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << title
    << "</text>\n";
  s << "<line x1=\"" << left << "\" y1=\"" << height - bottom << "\" x2=\"" << width - right
    << "\" y2=\"" << height - bottom << "\" stroke=\"black\"/>\n";
  s << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\""
    << height - bottom << "\" stroke=\"black\"/>\n";
}

constexpr const char* kTrustedAnalystWarning =
    "This is a privacy-utility map for trusted analysts: the per-trial results below were computed "
    "on "
    "the private data and are NOT differentially private outputs. Each epsilon is the cost of ONE "
    "run "
    "with that candidate; releasing the choice of a candidate is not covered by it.";

constexpr const char* kNonPrivateWarning =
    "NON-PRIVATE BASELINE: every run below trained WITHOUT differential privacy (the tuner's "
    "private: false). The results carry no privacy guarantee and no epsilon; they were computed on "
    "the private data and are for trusted analysts only.";

/// A trial of a non-private run: the evaluator's "no guarantee" (ε = ∞, δ = 1), never a price.
bool non_private(const dptune::Trial& t) {
  return std::isinf(t.privacy.epsilon) && t.privacy.epsilon > 0 && t.privacy.delta >= 1;
}

std::string fmt(double v, int digits = 6) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

/// A candidate as the console shows it: numbers to 5 significant figures ({lr: 0.1}, not
/// 0.09999999999999998); files keep full precision.
std::string console_params(const dptune::Params& params) {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : params.values()) {
    out += (first ? "" : ", ") + name + ": ";
    first = false;
    out += std::holds_alternative<double>(value) ? fmt(std::get<double>(value), 5)
                                                 : dptune::to_string(value);
  }
  return out + "}";
}

/// `text` broken at spaces into lines of at most `width` characters: the first after `first`,
/// the others after `indent` (a word longer than a line stays whole).
std::string wrapped(const std::string& text, const std::string& first, const std::string& indent,
                    std::size_t width = 100) {
  std::string out, line;
  const std::string* prefix = &first;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!line.empty() && prefix->size() + line.size() + 1 + word.size() > width) {
      out += *prefix + line + "\n";
      line.clear();
      prefix = &indent;
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += *prefix + line + "\n";
  return out;
}

/// What ε means when it is large: the bound on an adversary's odds ratio, e^ε.
std::string loose_epsilon_warning(double epsilon) {
  return "WARNING: epsilon = " + fmt(epsilon, 4) + " > " + fmt(kLooseEpsilon) +
         ": an observer's odds that any one record is in the data may grow by a factor up to "
         "e^epsilon = " +
         fmt(std::exp(epsilon), 2) +
         ", so this guarantee protects little; use more noise, fewer steps or a smaller sampling "
         "rate (dptune privacy --calibrate) for a budget of a few units";
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw dptune::Error("cannot write " + path.string());
  f << content;
  if (!f) throw dptune::Error("error while writing " + path.string());
}

std::vector<std::string> param_names(const PipelineConfig& config) {
  std::vector<std::string> names;
  for (const auto& d : config.space.dimensions()) names.push_back(d.name);
  return names;
}

/// With `fitted_preprocessing` (the fitted_standardize opt-in), a last column
/// epsilon_covers_preprocessing = false on every row.
std::string trials_csv(const std::vector<dptune::Trial>& trials,
                       const std::vector<std::string>& names, const std::set<std::size_t>& on_front,
                       bool fitted_preprocessing) {
  std::ostringstream s;
  s << "id";
  // Hyperparameter columns are prefixed so a parameter named like a result column (e.g. a
  // mechanism's `epsilon`) cannot collide with it.
  for (const auto& n : names) s << ',' << csv_cell("param." + n);
  s << ",epsilon,delta,utility_mean,utility_min,utility_max,repetitions,seconds,on_front"
    << (fitted_preprocessing ? ",epsilon_covers_preprocessing" : "") << '\n';
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const auto& t = trials[i];
    s << t.id;
    for (const auto& n : names)
      s << ',' << (t.params.contains(n) ? csv_cell(dptune::to_string(t.params.at(n))) : "");
    // A non-private run has no ε or δ: empty cells rather than a number that looks like a price.
    if (non_private(t))
      s << ",,";
    else
      s << ',' << dptune::to_string(dptune::Value{t.privacy.epsilon}) << ','
        << dptune::to_string(dptune::Value{t.privacy.delta});
    s << ',' << dptune::to_string(dptune::Value{t.utility_mean}) << ','
      << dptune::to_string(dptune::Value{t.utility_min}) << ','
      << dptune::to_string(dptune::Value{t.utility_max}) << ',' << t.repetitions << ','
      << fmt(t.seconds) << ',' << (on_front.count(i) ? "true" : "false")
      << (fitted_preprocessing ? ",false" : "") << '\n';
  }
  return s.str();
}

void json_trial(JsonWriter& w, const dptune::Trial& t) {
  w.begin_object();
  w.key("id").value(t.id);
  w.key("params").value(t.params);
  if (non_private(t)) {
    w.key("non_private").value(true);
  } else {
    w.key("epsilon").value(t.privacy.epsilon);
    w.key("delta").value(t.privacy.delta);
  }
  w.key("utility_mean").value(t.utility_mean);
  w.key("utility_min").value(t.utility_min);
  w.key("utility_max").value(t.utility_max);
  w.key("repetitions").value(t.repetitions);
  w.end_object();
}

void json_guarantee(JsonWriter& w, const dptune::PrivacyGuarantee& g) {
  w.begin_object();
  w.key("epsilon").value(g.epsilon);
  w.key("delta").value(g.delta);
  w.key("accountant").value(g.accountant);
  w.key("derivation").value(g.derivation);
  w.end_object();
}

// ---- the preprocessing statement (issue 13, finding 1) ----------------------------------------

constexpr const char* kFittedNote =
    "does not cover the fitted scaling: preprocessing fitted_standardize fitted mean and scale on "
    "the private training split, and every epsilon printed here covers the training runs given "
    "that scaling, not the scaling itself";

/// summary.json's "preprocessing": what ran, what it assumes public, whether the ε cover it.
void json_preprocessing(JsonWriter& w, const Preprocessing& p) {
  w.key("preprocessing").begin_object();
  w.key("kind").value(p.name());
  w.key("description").value(p.describe());
  w.key("assumed_public")
      .value(p.fitted()                   ? "nothing; the scaling is private and not covered"
             : p.assumed_public().empty() ? "nothing (record-local)"
                                          : p.assumed_public());
  w.key("epsilon_covers_preprocessing").value(!p.fitted());
  if (p.fitted()) w.key("warning").value(kFittedNote);
  w.end_object();
}

/// The console's statement of the same.
void print_preprocessing(std::ostream& out, const Preprocessing& p) {
  out << "preprocessing: " << p.describe() << "\n";
  if (p.fitted()) out << "WARNING: every epsilon below " << kFittedNote << "\n";
}

/// A note that declares a DP output of a private tuner (TuningResult::notes, kDpOutputNote).
bool is_dp_output_note(const std::string& note) {
  return note.rfind(dptune::kDpOutputNote, 0) == 0;
}

/// What a private tuner releases, exactly: the selected candidate (null when the tuner output its
/// data-independent default instead), its private score, the released model's file and the notes
/// the tuner declares as DP outputs.  Everything else a private tuner's report writes must not
/// depend on the data or on secret randomness (K, run counts, attempt indices, run times: paper
/// 004, Papernot & Steinke 2022, Thms 2 and 6 cover the best run with K hidden).
void json_release(JsonWriter& w, const dptune::TuningResult& result, const std::string& model_file,
                  const std::vector<std::string>& dp_notes) {
  w.begin_object();
  w.key("covered_by").value("guarantee");
  w.key("selected");
  if (result.selected) {
    w.begin_object();
    w.key("params").value(result.selected->params);
    w.key("score").value(result.selected->utility_mean);
    w.end_object();
  } else {
    w.null();
  }
  if (!model_file.empty()) w.key("model").value(model_file);
  if (!dp_notes.empty()) {
    w.key("notes").begin_array();
    for (const auto& n : dp_notes) w.value(n);
    w.end_array();
  }
  w.end_object();
}

}  // namespace

std::vector<std::size_t> trial_front(const std::vector<dptune::Trial>& trials) {
  std::vector<dptune::Point> points;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (!std::isfinite(trials[i].privacy.epsilon)) continue;
    points.push_back({trials[i].privacy.epsilon, 1.0 - trials[i].utility_mean});
    index.push_back(i);
  }
  std::vector<std::size_t> front;
  for (std::size_t k : dptune::pareto_front(points)) front.push_back(index[k]);
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    return trials[a].privacy.epsilon < trials[b].privacy.epsilon;
  });
  return front;
}

std::string pareto_svg(const std::vector<dptune::Trial>& trials,
                       const std::vector<std::size_t>& front, const std::string& title,
                       double delta) {
  using namespace plot;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& t : trials)
    if (std::isfinite(t.privacy.epsilon) && t.privacy.epsilon > 0) {
      lo = std::min(lo, t.privacy.epsilon);
      hi = std::max(hi, t.privacy.epsilon);
    }
  if (!(lo < hi)) {
    lo = std::isfinite(lo) ? lo / 10 : 0.01;
    hi = std::isfinite(hi) ? hi * 10 : 100;
  }
  const double llo = std::floor(std::log10(lo)), lhi = std::ceil(std::log10(hi));
  auto x_of = [&](double eps) {
    return left + (std::log10(std::max(eps, std::pow(10.0, llo))) - llo) / (lhi - llo) *
                      (width - left - right);
  };
  auto y_of = [&](double err) {
    return top + (1.0 - std::clamp(err, 0.0, 1.0)) * (height - top - bottom);
  };
  std::ostringstream s;
  svg_begin(s, title);
  // Ticks.
  for (auto e = static_cast<int>(llo); e <= static_cast<int>(lhi); ++e) {
    const double x = x_of(std::pow(10.0, e));
    s << "<line x1=\"" << x << "\" y1=\"" << height - bottom << "\" x2=\"" << x << "\" y2=\""
      << height - bottom + 5 << "\" stroke=\"black\"/><text x=\"" << x << "\" y=\""
      << height - bottom + 18 << "\" text-anchor=\"middle\">1e" << e << "</text>\n";
  }
  for (int k = 0; k <= 5; ++k) {
    const double err = k / 5.0, y = y_of(err);
    s << "<line x1=\"" << left - 5 << "\" y1=\"" << y << "\" x2=\"" << left << "\" y2=\"" << y
      << "\" stroke=\"black\"/><text x=\"" << left - 8 << "\" y=\"" << y + 4
      << "\" text-anchor=\"end\">" << fmt(err, 2) << "</text>\n";
  }
  s << "<text x=\"" << (left + width - right) / 2 << "\" y=\"" << height - 15
    << "\" text-anchor=\"middle\">epsilon (delta = " << fmt(delta) << ", log scale)</text>\n";
  s << "<text transform=\"translate(18," << (top + height - bottom) / 2
    << ") rotate(-90)\" text-anchor=\"middle\">1 - utility</text>\n";
  std::set<std::size_t> on_front(front.begin(), front.end());
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (on_front.count(i) || !std::isfinite(trials[i].privacy.epsilon)) continue;
    s << "<circle cx=\"" << x_of(trials[i].privacy.epsilon) << "\" cy=\""
      << y_of(1 - trials[i].utility_mean)
      << "\" r=\"2.5\" fill=\"#9aa5b1\" fill-opacity=\"0.7\"/>\n";
  }
  // The front as a staircase: each point dominates the region to its upper right.
  if (!front.empty()) {
    s << "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"";
    for (std::size_t k = 0; k < front.size(); ++k) {
      const auto& t = trials[front[k]];
      const double x = x_of(t.privacy.epsilon), y = y_of(1 - t.utility_mean);
      if (k > 0) s << x << ',' << y_of(1 - trials[front[k - 1]].utility_mean) << ' ';
      s << x << ',' << y << ' ';
    }
    s << "\"/>\n";
    for (std::size_t i : front)
      s << "<circle cx=\"" << x_of(trials[i].privacy.epsilon) << "\" cy=\""
        << y_of(1 - trials[i].utility_mean) << "\" r=\"4\" fill=\"#d62728\"/>\n";
  }
  s << "<text x=\"" << width - right - 5 << "\" y=\"" << top + 12
    << "\" text-anchor=\"end\" fill=\"#d62728\">red: empirical Pareto front</text>\n";
  s << "</svg>\n";
  return s.str();
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
    s << dptune::to_string(dptune::Value{series.x[i]}) << ','
      << dptune::to_string(dptune::Value{series.y[i]}) << '\n';
  return s.str();
}

std::string series_svg(const dptune::Series& series, const std::string& title) {
  return series_group_svg({&series}, {}, title);
}

std::string series_group_svg(const std::vector<const dptune::Series*>& group,
                             const std::vector<std::string>& legend, const std::string& title) {
  using namespace plot;
  static const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                         "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto* series : group)
    for (std::size_t i = 0; i < series->x.size(); ++i) {
      if (!std::isfinite(series->x[i]) || !std::isfinite(series->y[i])) continue;
      xlo = std::min(xlo, series->x[i]);
      xhi = std::max(xhi, series->x[i]);
      ylo = std::min(ylo, series->y[i]);
      yhi = std::max(yhi, series->y[i]);
    }
  if (!(xlo <= xhi)) xlo = 0, xhi = 1;
  if (!(ylo <= yhi)) ylo = 0, yhi = 1;
  if (xlo == xhi) xlo -= 0.5, xhi += 0.5;
  if (ylo == yhi) ylo -= 0.5, yhi += 0.5;
  auto x_of = [&](double x) { return left + (x - xlo) / (xhi - xlo) * (width - left - right); };
  auto y_of = [&](double y) {
    return height - bottom - (y - ylo) / (yhi - ylo) * (height - top - bottom);
  };
  std::ostringstream s;
  svg_begin(s, title);
  for (int k = 0; k <= 5; ++k) {
    const double xv = xlo + (xhi - xlo) * k / 5.0, x = x_of(xv);
    s << "<line x1=\"" << x << "\" y1=\"" << height - bottom << "\" x2=\"" << x << "\" y2=\""
      << height - bottom + 5 << "\" stroke=\"black\"/><text x=\"" << x << "\" y=\""
      << height - bottom + 18 << "\" text-anchor=\"middle\">" << fmt(xv, 4) << "</text>\n";
    const double yv = ylo + (yhi - ylo) * k / 5.0, y = y_of(yv);
    s << "<line x1=\"" << left - 5 << "\" y1=\"" << y << "\" x2=\"" << left << "\" y2=\"" << y
      << "\" stroke=\"black\"/><text x=\"" << left - 8 << "\" y=\"" << y + 4
      << "\" text-anchor=\"end\">" << fmt(yv, 4) << "</text>\n";
  }
  const dptune::Series& first = *group.front();
  s << "<text x=\"" << (left + width - right) / 2 << "\" y=\"" << height - 15
    << "\" text-anchor=\"middle\">" << (first.x_label.empty() ? "x" : first.x_label) << "</text>\n";
  s << "<text transform=\"translate(18," << (top + height - bottom) / 2
    << ") rotate(-90)\" text-anchor=\"middle\">" << (first.y_label.empty() ? "y" : first.y_label)
    << "</text>\n";
  for (std::size_t g = 0; g < group.size(); ++g) {
    const dptune::Series& series = *group[g];
    const char* colour = kColours[g % std::size(kColours)];
    s << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\" points=\"";
    for (std::size_t i = 0; i < series.x.size(); ++i)
      if (std::isfinite(series.x[i]) && std::isfinite(series.y[i]))
        s << x_of(series.x[i]) << ',' << y_of(series.y[i]) << ' ';
    s << "\"/>\n";
    for (std::size_t i = 0; i < series.x.size(); ++i)
      if (std::isfinite(series.x[i]) && std::isfinite(series.y[i]))
        s << "<circle cx=\"" << x_of(series.x[i]) << "\" cy=\"" << y_of(series.y[i])
          << "\" r=\"2.5\" fill=\"" << colour << "\"/>\n";
    if (g < legend.size())
      s << "<text x=\"" << width - right - 8 << "\" y=\"" << top + 14 + 16 * g
        << "\" text-anchor=\"end\" fill=\"" << colour << "\">" << legend[g] << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

RunSummary write_report(const ReportInput& in, std::ostream& out) {
  const PipelineConfig& config = in.config;
  const dptune::TuningResult& result = in.result;
  RunSummary summary;
  summary.output_dir = config.output.dir;
  summary.trials = result.trials.size();
  std::error_code ec;
  std::filesystem::create_directories(config.output.dir, ec);
  if (ec)
    throw dptune::Error("cannot create output folder " + config.output.dir.string() + ": " +
                        ec.message());

  const bool write_trials = !result.trials_sensitive || config.output.sensitive_trials;
  // A private tuner's public outputs are its release (json_release) and what does not depend on
  // the data or secret randomness; the maps (trusted analysts) report everything.  A private
  // tuner's trials (and its run count and times) go only to files marked SENSITIVE, on opt-in.
  // A run with neither a selection nor a guarantee (a tuner's simulation mode, which reads no
  // private data) releases nothing and is reported like a map.
  const bool private_tuner =
      !result.trusted_analyst_only && (result.selected.has_value() || result.guarantee.has_value());
  const bool map_trials = write_trials && !private_tuner;
  std::vector<std::string> public_notes, dp_notes;
  for (const auto& n : result.notes)
    (private_tuner && is_dp_output_note(n) ? dp_notes : public_notes).push_back(n);
  // Every trial non-private (grid or random with private: false): a non-private baseline, shown by
  // utility alone; there is no privacy-utility trade-off, front or hypervolume to report.
  const bool baseline = map_trials && !result.trials.empty() &&
                        std::all_of(result.trials.begin(), result.trials.end(), non_private);
  std::vector<std::size_t> by_utility;
  if (baseline) {
    for (std::size_t i = 0; i < result.trials.size(); ++i) by_utility.push_back(i);
    std::stable_sort(by_utility.begin(), by_utility.end(), [&](std::size_t a, std::size_t b) {
      return result.trials[a].utility_mean > result.trials[b].utility_mean;
    });
  }
  const std::vector<std::size_t> front =
      map_trials ? trial_front(result.trials) : std::vector<std::size_t>{};
  const std::set<std::size_t> on_front(front.begin(), front.end());
  std::vector<dptune::Point> front_points;
  front_points.reserve(front.size());
  for (std::size_t i : front)
    front_points.push_back({result.trials[i].privacy.epsilon, 1.0 - result.trials[i].utility_mean});
  const double hv = dptune::hypervolume(front_points, {kReferenceEpsilon, kReferenceError});
  const auto names = param_names(config);

  write_file(config.output.dir / "resolved_config.yaml", to_yaml(config));
  summary.files.push_back("resolved_config.yaml");
  // A private tuner's opt-in file is written even without trials, so that the list of files does
  // not tell whether any run happened.
  const bool sensitive_opt_in = private_tuner && result.trials_sensitive && write_trials;
  if (write_trials && (!result.trials.empty() || sensitive_opt_in)) {
    const std::string trials_name = result.trials_sensitive ? "trials.SENSITIVE.csv" : "trials.csv";
    write_file(config.output.dir / trials_name,
               trials_csv(result.trials, names, on_front, in.preprocessing.fitted()));
    summary.files.push_back(trials_name);
  }
  if (sensitive_opt_in) {
    // The run count and run time of a private tuner reveal K (paper 004 hides it): opt-in only.
    std::ostringstream rs;
    JsonWriter rw(rs);
    rw.begin_object();
    rw.key("warning").value(
        "SENSITIVE: the run count and run time of a private tuner depend on its secret "
        "randomness (e.g. the repetition tuner's K) and on the data; not covered by the guarantee");
    rw.key("trials_count").value(result.trials.size());
    rw.key("seconds").value(in.seconds);
    rw.end_object();
    rs << '\n';
    write_file(config.output.dir / "run.SENSITIVE.json", rs.str());
    summary.files.push_back("run.SENSITIVE.json");
  }
  if (map_trials && !result.trials.empty() && !baseline) {
    std::vector<dptune::Trial> front_trials;
    front_trials.reserve(front.size());
    for (std::size_t i : front) front_trials.push_back(result.trials[i]);
    std::set<std::size_t> all;
    for (std::size_t k = 0; k < front_trials.size(); ++k) all.insert(k);
    write_file(config.output.dir / "pareto_front.csv",
               trials_csv(front_trials, names, all, in.preprocessing.fitted()));
    summary.files.push_back("pareto_front.csv");
    if (config.output.plot) {
      write_file(config.output.dir / "pareto.svg",
                 pareto_svg(result.trials, front, config.name + ": privacy-utility trade-off",
                            config.delta));
      summary.files.push_back("pareto.svg");
    }
  }

  for (const auto& series : result.series) {
    check_series(series);
    write_file(config.output.dir / (series.name + ".csv"), series_csv(series));
    summary.files.push_back(series.name + ".csv");
    if (config.output.plot) {
      write_file(config.output.dir / (series.name + ".svg"),
                 series_svg(series, config.name + ": " + series.name));
      summary.files.push_back(series.name + ".svg");
    }
  }
  // Series named GROUP.MEMBER are also drawn together, one plot per group: GROUP.svg.
  if (config.output.plot) {
    std::vector<std::string> groups;
    for (const auto& series : result.series)
      if (const auto dot = series.name.find('.'); dot != std::string::npos && dot > 0) {
        const std::string g = series.name.substr(0, dot);
        if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
      }
    for (const auto& g : groups) {
      std::vector<const dptune::Series*> members;
      std::vector<std::string> legend;
      for (const auto& series : result.series)
        if (series.name.size() > g.size() && series.name.compare(0, g.size() + 1, g + ".") == 0) {
          members.push_back(&series);
          legend.push_back(series.name.substr(g.size() + 1));
        }
      write_file(config.output.dir / (g + ".svg"),
                 series_group_svg(members, legend, config.name + ": " + g));
      summary.files.push_back(g + ".svg");
    }
  }

  // The released model: the selected run's, the one model a private tuner releases.  Its export
  // is empty for models of ABI 2.1 plugins (or models that cannot export): said in the summary.
  std::string model_note;
  if (in.released_model) {
    const std::optional<dptune::ModelExport> exported = in.released_model->export_model();
    if (!exported) {
      model_note = "the released model (" + in.released_model->describe() +
                   ") cannot be exported by its plugin (ABI 2.1, or no Model::export_model)";
    } else {
      std::ostringstream ms;
      JsonWriter mw(ms);
      mw.begin_object();
      mw.key("format").value(kModelFileFormat);
      mw.key("released").value(true);
      mw.key("note").value(
          "the model of the tuner's selected run, the only model the tuning releases; its "
          "privacy is the tuning's guarantee");
      mw.key("pipeline").value(config.name);
      mw.key("algorithm").value(config.algorithm.use);
      if (private_tuner) {
        mw.key("release");
        json_release(mw, result, "", {});
      } else if (result.selected) {
        mw.key("selected");
        json_trial(mw, *result.selected);
      }
      if (result.guarantee) {
        mw.key("guarantee");
        json_guarantee(mw, *result.guarantee);
      }
      write_model_fields(mw, ExportedModel{*exported, in.preprocessing});
      mw.end_object();
      ms << '\n';
      write_file(config.output.dir / "model.json", ms.str());
      summary.files.push_back("model.json");
      model_note = "released model: model.json (" + exported->description + ")";
    }
  }

  // Whether a private tuner released a model can depend on its DP output (the threshold variant's
  // default): the model's file and note belong to the release, not to the public file list.
  std::string model_file;
  if (private_tuner && !model_note.empty()) {
    if (std::find(summary.files.begin(), summary.files.end(), "model.json") != summary.files.end())
      model_file = "model.json";
    dp_notes.push_back(
        model_file.empty() ? model_note : "model: " + model_note.substr(model_note.find(':') + 2));
    model_note.clear();
  }
  auto listed = [&](const std::string& file) { return !(private_tuner && file == model_file); };

  std::ostringstream js;
  JsonWriter w(js);
  w.begin_object();
  w.key("dptune_version").value(DPTUNE_VERSION_STRING);
  w.key("pipeline").value(config.name);
  w.key("pipeline_file").value(config.file.string());
  w.key("data").value(in.data_description);
  json_preprocessing(w, in.preprocessing);
  w.key("algorithm").value(config.algorithm.use);
  w.key("accountant").value(config.accountant.use);
  w.key("utility").value(config.utility.use);
  w.key("tuner").value(config.tuner.use);
  w.key("delta").value(config.delta);
  w.key("repetitions").value(config.repetitions);
  w.key("randomness").begin_object();
  w.key("source").value(in.randomness);
  w.key("cryptographically_secure").value(in.randomness_secure);
  if (config.execution.seed) w.key("seed").value(static_cast<std::int64_t>(*config.execution.seed));
  w.end_object();
  w.key("executor").value(in.executor);
  // Run times and counts of a private tuner depend on K and on the data: never public.
  if (!private_tuner) w.key("seconds").value(in.seconds);
  w.key("trusted_analyst_only").value(result.trusted_analyst_only);
  if (baseline)
    w.key("warning").value(kNonPrivateWarning);
  else if (result.trusted_analyst_only)
    w.key("warning").value(kTrustedAnalystWarning);
  if (baseline) {
    w.key("non_private_baseline").value(true);
    w.key("best");
    json_trial(w, result.trials[by_utility.front()]);
  }
  if (!private_tuner) w.key("trials_count").value(result.trials.size());
  w.key("trials_sensitive").value(result.trials_sensitive);
  w.key("trials_written").value(write_trials);
  if (map_trials && !baseline) {
    w.key("pareto_front").begin_array();
    for (std::size_t i : front) json_trial(w, result.trials[i]);
    w.end_array();
    w.key("hypervolume").begin_object();
    w.key("value").value(hv);
    w.key("objectives").value("(epsilon, 1 - utility_mean), both minimised");
    w.key("reference").begin_array().value(kReferenceEpsilon).value(kReferenceError).end_array();
    w.end_object();
  }
  if (private_tuner) {
    w.key("release");
    json_release(w, result, model_file, dp_notes);
  } else if (result.selected) {
    w.key("selected");
    json_trial(w, *result.selected);
  }
  if (result.guarantee) {
    w.key("guarantee");
    json_guarantee(w, *result.guarantee);
  }
  w.key("series").begin_array();
  for (const auto& series : result.series) {
    w.begin_object();
    w.key("name").value(series.name);
    w.key("x_label").value(series.x_label);
    w.key("y_label").value(series.y_label);
    w.key("points").value(series.x.size());
    w.key("csv").value(series.name + ".csv");
    if (config.output.plot) w.key("svg").value(series.name + ".svg");
    if (!series.y.empty()) w.key("last").value(series.y.back());
    w.end_object();
  }
  w.end_array();
  w.key("notes").begin_array();
  for (const auto& n : public_notes) w.value(n);
  if (!model_note.empty()) w.value(model_note);
  w.end_array();
  w.key("files").begin_array();
  for (const auto& f : summary.files)
    if (listed(f)) w.value(f);
  w.value("summary.json");
  w.end_array();
  w.end_object();
  write_file(config.output.dir / "summary.json", js.str());
  summary.files.push_back("summary.json");

  // Terminal summary.
  out << "dptune " << DPTUNE_VERSION_STRING << ": pipeline '" << config.name << "', tuner "
      << config.tuner.use;
  if (!private_tuner)
    out << ", " << result.trials.size() << " trials in " << fmt(in.seconds, 3) << " s";
  out << " (" << in.executor << ")\n";
  out << "randomness: " << in.randomness << "\n";
  print_preprocessing(out, in.preprocessing);
  if (baseline)
    out << "NOTE: " << kNonPrivateWarning << "\n";
  else if (result.trusted_analyst_only)
    out << "NOTE: " << kTrustedAnalystWarning << "\n";
  for (const auto& n : public_notes) out << wrapped(n, "note: ", "      ");
  if (baseline) {
    const std::size_t shown = std::min<std::size_t>(by_utility.size(), 10);
    out << "Non-private baseline, best " << shown << " of " << by_utility.size() << " trials ("
        << config.utility.use << " over R = " << config.repetitions
        << " runs; no privacy guarantee, no epsilon):\n";
    out << "  " << std::left << std::setw(10) << "utility" << std::setw(18) << "utility min..max"
        << "params\n";
    for (std::size_t k = 0; k < shown; ++k) {
      const auto& t = result.trials[by_utility[k]];
      out << "  " << std::setw(10) << fmt(t.utility_mean, 4) << std::setw(18)
          << (fmt(t.utility_min, 3) + ".." + fmt(t.utility_max, 3)) << console_params(t.params)
          << "\n";
    }
  } else if (map_trials && !front.empty()) {
    out << "Pareto front (epsilon at delta = " << fmt(config.delta) << ", error = 1 - "
        << config.utility.use << " over R = " << config.repetitions << " runs):\n";
    out << "  " << std::left << std::setw(12) << "epsilon" << std::setw(10) << "error"
        << std::setw(18) << "utility min..max"
        << "params\n";
    for (std::size_t i : front) {
      const auto& t = result.trials[i];
      out << "  " << std::setw(12) << fmt(t.privacy.epsilon, 5) << std::setw(10)
          << fmt(1 - t.utility_mean, 4) << std::setw(18)
          << (fmt(t.utility_min, 3) + ".." + fmt(t.utility_max, 3)) << console_params(t.params)
          << "\n";
    }
    out << "hypervolume w.r.t. (epsilon, error) = (" << fmt(kReferenceEpsilon) << ", "
        << fmt(kReferenceError) << "): " << fmt(hv, 6) << "\n";
  } else if (sensitive_opt_in) {
    out << wrapped(
        "per-trial results of private runs, their count and run times: "
        "trials.SENSITIVE.csv and run.SENSITIVE.json (SENSITIVE: not covered by the "
        "guarantee; keep them private)",
        "", "  ");
  } else if (result.trials_sensitive && !write_trials) {
    out << "per-trial results of private runs are withheld (output.sensitive_trials: true writes\n"
           "  them, marked SENSITIVE)\n";
  }
  if (private_tuner) {
    // The one block of the console that may depend on the data (tests/neighbouring checks it).
    out << "Released (differentially private):\n";
    if (result.selected)
      out << "  selected: " << console_params(result.selected->params)
          << (std::isnan(result.selected->utility_mean)
                  ? std::string("  (its utility is not released)")
                  : "  utility " + fmt(result.selected->utility_mean, 4))
          << "\n";
    else
      out << "  selected: none (no run is released)\n";
    for (const auto& n : dp_notes) out << wrapped(n, "  ", "    ");
    out << "\n";
  } else if (result.selected) {
    out << "selected: " << console_params(result.selected->params) << "  utility "
        << fmt(result.selected->utility_mean, 4);
    if (!result.guarantee && std::isfinite(result.selected->privacy.epsilon))
      out << "  epsilon " << fmt(result.selected->privacy.epsilon, 5);
    out << "\n";
    if (!result.guarantee && result.selected->privacy.epsilon > kLooseEpsilon &&
        std::isfinite(result.selected->privacy.epsilon))
      out << wrapped(loose_epsilon_warning(result.selected->privacy.epsilon), "", "  ");
  }
  if (result.guarantee) {
    const auto& g = *result.guarantee;
    out << "guarantee of the whole tuning run: (epsilon, delta) = (" << fmt(g.epsilon, 5) << ", "
        << fmt(g.delta, 3) << "), accountant " << g.accountant << "\n";
    if (in.verbose)
      out << wrapped(g.derivation, "  how: ", "       ");
    else
      out << "  how it is derived: summary.json guarantee.derivation, or dptune run --verbose\n";
    if (g.epsilon > kLooseEpsilon) out << wrapped(loose_epsilon_warning(g.epsilon), "", "  ");
  }
  out << "results: " << config.output.dir.string() << "/ (";
  bool first_file = true;
  for (const auto& f : summary.files)
    if (listed(f)) {
      out << (first_file ? "" : ", ") << f;
      first_file = false;
    }
  out << ")\n";
  return summary;
}

}  // namespace dptune::host
