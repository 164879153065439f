#include "report/report_html.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "dptune/abi.hpp"
#include "dptune/host/console_text.hpp"
#include "dptune/host/format.hpp"

namespace dptune::host {

namespace {

std::string esc(const std::string& text) { return xml_escape(text); }

/// Numbers on the page to 5 significant figures (the CSV and JSON files keep full precision).
std::string num(double v) { return std::isnan(v) ? "not released" : significant(v, 5); }

std::string params_text(const dptune::Params& params) {
  std::string out;
  for (const auto& [name, value] : params.values())
    out += (out.empty() ? "" : ", ") + name + " = " +
           (std::holds_alternative<double>(value) ? num(std::get<double>(value))
                                                  : dptune::to_string(value));
  return out;
}

constexpr const char* kStyle =
    "body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;"
    "padding:0 1em;color:#111;line-height:1.45}h1{font-size:1.6em}h2{font-size:1.25em;"
    "border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}table{border-collapse:"
    "collapse;font-size:.92em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
    "th{background:#f2f2f2}pre{background:#f6f6f6;padding:.8em;overflow-x:auto;white-space:"
    "pre-wrap;font-size:.88em}.warning{background:#fff4e0;border-left:4px solid #D55E00;padding:"
    ".6em .9em}.meta td:first-child{font-weight:bold}figure{margin:1em 0}figure svg{width:"
    "100%;height:auto;display:block}figcaption{font-size:.85em;color:#555}details{margin:.6em 0}"
    "summary{cursor:pointer;color:#333}";

void meta(std::ostream& s, const HtmlReport& p) {
  const PipelineConfig& c = p.in.config;
  s << "<table class=\"meta\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    s << "<tr><td>" << esc(k) << "</td><td>" << esc(v) << "</td></tr>\n";
  };
  row("dptune", DPTUNE_VERSION_STRING);
  row("tuner", c.tuner.use);
  row("algorithm", c.algorithm.use);
  row("accountant", c.accountant.use);
  row("utility", c.utility.use + " (R = " + std::to_string(c.repetitions) + " runs per trial)");
  row("data", p.in.data_description);
  row("preprocessing", p.in.preprocessing.describe());
  row("randomness", p.in.randomness);
  row("executor", p.in.executor);
  // A private tuner's run count and run time depend on its secret randomness: never on the page.
  if (!p.private_tuner)
    row("trials", std::to_string(p.in.result.trials.size()) + " in " + num(p.in.seconds) + " s");
  s << "</table>\n";
}

void guarantee(std::ostream& s, const HtmlReport& p) {
  s << "<section id=\"guarantee\">\n<h2>Privacy guarantee</h2>\n";
  if (const auto& g = p.in.result.guarantee) {
    s << "<p>The whole tuning run is (&epsilon;, &delta;) = (" << num(g->epsilon) << ", "
      << num(g->delta) << ")-differentially private, by the accountant <code>" << esc(g->accountant)
      << "</code>.</p>\n";
    s << "<p class=\"words\">In words: "
      << esc(guarantee_in_words(*g, p.in.config.tuner_traits.unit)) << "</p>\n";
    if (g->epsilon > kLooseEpsilon)
      s << "<p class=\"warning\">&epsilon; = " << num(g->epsilon) << " &gt; " << num(kLooseEpsilon)
        << ": an observer's odds that any one record is in the data may grow by a factor up to "
           "e<sup>&epsilon;</sup>, so this guarantee protects little.</p>\n";
    s << "<details><summary>How it is derived</summary>\n<pre>" << esc(short_numbers(g->derivation))
      << "</pre></details>\n";
  } else if (p.baseline) {
    s << "<p>None: a non-private baseline.</p>\n";
  } else if (p.in.result.trusted_analyst_only) {
    s << "<p>None for the run as a whole: each trial's &epsilon; (at &delta; = "
      << num(p.in.config.delta)
      << ") is what releasing that one run would cost; choosing among them is not covered.</p>\n";
  } else {
    s << "<p>None: a simulation that releases nothing.</p>\n";
  }
  s << "</section>\n";
}

/// The rows of a table of trials: ε (unless non-private), error or utility, the range over R
/// runs, params.
void trial_rows(std::ostream& s, const std::vector<dptune::Trial>& trials,
                const std::vector<std::size_t>& rows, bool with_epsilon) {
  s << "<table>\n<tr>" << (with_epsilon ? "<th>&epsilon;</th><th>error</th>" : "")
    << "<th>utility</th><th>utility min..max</th><th>params</th></tr>\n";
  for (std::size_t i : rows) {
    const auto& t = trials[i];
    s << "<tr>";
    if (with_epsilon)
      s << "<td>" << num(t.privacy.epsilon) << "</td><td>" << num(1 - t.utility_mean) << "</td>";
    s << "<td>" << num(t.utility_mean) << "</td><td>" << num(t.utility_min) << ".."
      << num(t.utility_max) << "</td><td>" << esc(params_text(t.params)) << "</td></tr>\n";
  }
  s << "</table>\n";
}

/// A table of trials: the first kShownRows rows, the others in a collapsed section below.
void trial_table(std::ostream& s, const std::vector<dptune::Trial>& trials,
                 const std::vector<std::size_t>& rows, bool with_epsilon) {
  constexpr std::size_t kShownRows = 10;
  const auto cut = rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), kShownRows));
  trial_rows(s, trials, {rows.begin(), cut}, with_epsilon);
  if (cut == rows.end()) return;
  s << "<details><summary>the other " << (rows.end() - cut) << " rows</summary>\n";
  trial_rows(s, trials, {cut, rows.end()}, with_epsilon);
  s << "</details>\n";
}

/// A private tuner's DP outputs, each on its own line between the release markers.
void release(std::ostream& s, const HtmlReport& p) {
  const auto& r = p.in.result;
  s << "<h2>Released (differentially private)</h2>\n" << kHtmlReleaseBegin << "\n";
  if (r.selected) {
    s << "<p>selected: <code>" << esc(params_text(r.selected->params)) << "</code></p>\n";
    if (!std::isnan(r.selected->utility_mean))
      s << "<p>its private score: " << esc(num(r.selected->utility_mean)) << "</p>\n";
  } else {
    s << "<p>selected: none (no run is released)</p>\n";
  }
  // Numbers at 5 digits and a long vector as its largest entries (drawn in full above; every
  // digit in summary.json).
  for (const auto& n : p.dp_notes)
    s << "<p>" << esc(summarise_long_vectors(short_numbers(n))) << "</p>\n";
  s << kHtmlReleaseEnd << "\n";
}

void results(std::ostream& s, const HtmlReport& p) {
  const auto& r = p.in.result;
  // A simulation has neither a release, a baseline, a front nor a selection: no section.
  if (!p.private_tuner && !p.baseline && p.front.empty() && !r.selected) return;
  s << "<section id=\"results\">\n";
  if (p.private_tuner) {
    release(s, p);
  } else if (p.baseline) {
    std::vector<std::size_t> rows(r.trials.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
      return r.trials[a].utility_mean > r.trials[b].utility_mean;
    });
    rows.resize(std::min<std::size_t>(rows.size(), 10));
    s << "<h2>Non-private baseline: the best " << rows.size() << " of " << r.trials.size()
      << " trials</h2>\n";
    trial_table(s, r.trials, rows, false);
  } else if (!p.front.empty()) {
    s << "<h2>Pareto front</h2>\n<p>Trials no other trial beats in both &epsilon; (at &delta; = "
      << num(p.in.config.delta) << ") and error = 1 &minus; " << esc(p.in.config.utility.use)
      << " (mean over R = " << p.in.config.repetitions
      << " runs). Hypervolume of the front with respect to the anti-ideal point "
         "(&epsilon;, error) = ("
      << num(kReferenceEpsilon) << ", " << num(kReferenceError) << "): " << num(p.hypervolume)
      << " (the area it dominates; larger is better).</p>\n";
    trial_table(s, r.trials, p.front, true);
  }
  if (!p.private_tuner && r.selected) {
    s << "<h2>Selected</h2>\n<p><code>" << esc(params_text(r.selected->params))
      << "</code>, utility " << num(r.selected->utility_mean) << "</p>\n";
  }
  s << "</section>\n";
}

/// A DP output listing at least this many numbers is drawn as bars.
constexpr std::size_t kBarsFrom = 5;

/// The bracketed lists of at least kBarsFrom numbers in `note` (a DP output such as DP-Hype's noisy
/// vote vector), each with the words before it as its title.
std::vector<std::pair<std::string, std::vector<double>>> long_vectors(const std::string& note) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  std::size_t from = 0;
  for (std::size_t open; (open = note.find('[', from)) != std::string::npos;) {
    const std::size_t close = note.find(']', open);
    if (close == std::string::npos) break;
    std::vector<double> values;
    std::istringstream items(note.substr(open + 1, close - open - 1));
    bool numbers = true;
    for (std::string item; std::getline(items, item, ',');) {
      char* end = nullptr;
      const double v = std::strtod(item.c_str(), &end);
      while (end && std::isspace(static_cast<unsigned char>(*end))) ++end;
      if (end == item.c_str() || (end && *end != '\0')) numbers = false;
      values.push_back(v);
    }
    if (numbers && values.size() >= kBarsFrom) {
      std::string title = note.substr(0, open);
      if (title.rfind(dptune::kDpOutputNote, 0) == 0)
        title = title.substr(std::string(dptune::kDpOutputNote).size());
      while (!title.empty() && (title.back() == ' ' || title.back() == ':')) title.pop_back();
      out.push_back({title.empty() ? "a released vector" : title, std::move(values)});
    }
    from = close + 1;
  }
  return out;
}

/// A private tuner's plots of its release, between the release markers: the released candidate
/// on the search space and every long vector among its DP outputs as bars.
void release_plots(std::ostream& s, const HtmlReport& p) {
  const auto& r = p.in.result;
  s << kHtmlReleaseBegin << "\n";
  if (r.selected)
    s << "<figure>\n"
      << render_candidate_svg(p.in.config.name + ": the released candidate on the search space",
                              p.in.config.space, r.selected->params)
      << "<figcaption>the released candidate (differentially private)</figcaption>\n</figure>\n";
  else
    s << "<p>No candidate was released.</p>\n";
  for (const auto& n : p.dp_notes)
    for (const auto& [title, values] : long_vectors(n))
      s << "<figure>\n"
        << render_bars_svg(p.in.config.name + ": " + title, "position (0-based)", "value", values)
        << "<figcaption>" << esc(title)
        << " (differentially private; the largest three labelled)</figcaption>\n</figure>\n";
  s << kHtmlReleaseEnd << "\n";
}

/// The plots, each the page's full width; no section at all when the run drew none.
void plots(std::ostream& s, const HtmlReport& p) {
  if (p.figures.empty() && !p.private_tuner) return;
  s << "<section id=\"plots\">\n<h2>Plots</h2>\n";
  if (p.private_tuner) release_plots(s, p);
  for (const auto& f : p.figures)
    s << "<figure>\n" << f.svg << "<figcaption>" << esc(f.file) << "</figcaption>\n</figure>\n";
  s << "</section>\n";
}

void disclosure(std::ostream& s, const HtmlReport& p) {
  s << "<section id=\"disclosure\">\n<h2>What is released and what is not</h2>\n<ul>\n";
  if (p.private_tuner) {
    // What was released can depend on a DP output (the threshold variant may release no model):
    // inside the release markers.
    const auto& selected = p.in.result.selected;
    std::string released = selected ? "the selected candidate" : "that no candidate was selected";
    if (selected && !std::isnan(selected->utility_mean)) released += ", its private score";
    if (!p.released_file.empty())
      released += ", the released model (<code>" + esc(p.released_file) + "</code>)";
    s << kHtmlReleaseBegin << "\n<li>Released, covered by the guarantee: " << released
      << " and the DP outputs listed above.</li>\n"
      << kHtmlReleaseEnd << "\n"
      << "<li>Not released: per-run results, the number of runs, attempt indices and run times "
         "(they depend on the data and on the tuner's secret randomness); with "
         "<code>output.sensitive_trials: true</code> they are written to files marked "
         "SENSITIVE, not covered by the guarantee.</li>\n"
         "<li>Everything else on this page depends neither on the data nor on secret "
         "randomness.</li>\n";
  } else if (!p.warning.empty()) {
    s << "<li class=\"warning\">" << esc(p.warning) << "</li>\n";
  } else {
    s << "<li>A simulation: it reads no private data and releases nothing.</li>\n";
  }
  s << "</ul>\n</section>\n";
}

/// The notes: warnings in view, every other note in a collapsed list; no section without a note.
void notes(std::ostream& s, const HtmlReport& p) {
  std::vector<std::string> warnings, others;
  if (p.in.preprocessing.fitted())
    warnings.push_back(p.in.preprocessing.describe() +
                       ": every epsilon covers the training runs given the fitted scaling, not "
                       "the scaling itself.");
  for (const auto& n : p.public_notes) (is_warning_note(n) ? warnings : others).push_back(n);
  if (!p.model_note.empty()) others.push_back(p.model_note);
  if (warnings.empty() && others.empty()) return;
  s << "<section id=\"notes\">\n<h2>Notes</h2>\n";
  if (!warnings.empty()) {
    s << "<ul>\n";
    for (const auto& n : warnings)
      s << "<li class=\"warning\">" << esc(short_numbers(n)) << "</li>\n";
    s << "</ul>\n";
  }
  if (!others.empty()) {
    s << "<details><summary>" << others.size() << (others.size() == 1 ? " note" : " notes")
      << " on how the run worked</summary>\n<ul>\n";
    for (const auto& n : others) s << "<li>" << esc(short_numbers(n)) << "</li>\n";
    s << "</ul></details>\n";
  }
  s << "</section>\n";
}

void notes_and_files(std::ostream& s, const HtmlReport& p) {
  notes(s, p);
  s << "<section id=\"files\">\n<h2>Files</h2>\n<ul>\n";
  for (const auto& f : p.files) s << "<li><code>" << esc(f) << "</code></li>\n";
  if (!p.released_file.empty())
    s << kHtmlReleaseBegin << "\n<li><code>" << esc(p.released_file)
      << "</code> (the released model, part of the release)</li>\n"
      << kHtmlReleaseEnd << "\n";
  s << "</ul>\n</section>\n";
}

}  // namespace

std::string report_html(const HtmlReport& p) {
  const PipelineConfig& c = p.in.config;
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dptune: "
    << esc(c.name) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<h1>"
    << esc(c.name) << "</h1>\n";
  // Shows before it tells: the plot first, at the page's full width, then the guarantee and the
  // results; the run's details below them.
  if (!p.warning.empty()) s << "<p class=\"warning\">" << esc(p.warning) << "</p>\n";
  plots(s, p);
  guarantee(s, p);
  results(s, p);
  s << "<section id=\"run\">\n<h2>The run</h2>\n";
  meta(s, p);
  s << "</section>\n";
  disclosure(s, p);
  notes_and_files(s, p);
  s << "<section id=\"config\">\n<h2>Resolved configuration</h2>\n<pre>"
    << esc(resolved_config(p.in)) << "</pre>\n</section>\n</body>\n</html>\n";
  return s.str();
}

}  // namespace dptune::host
