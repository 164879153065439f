// What report.html shows before it tells: the plots of a map's search space (slices, a heat map),
// a private tuner's release drawn (the candidate on the search space, a long DP vector as bars),
// the axis and legend fixes of the series' plots, and the resolved config of what ran
// (framework/src/report).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include "dptune/host/plots.hpp"
#include "report/report.hpp"

namespace {

namespace fs = std::filesystem;
using dptune::host::Figure;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// A fresh folder under the temporary directory, removed at the end of the test.
struct Folder {
  fs::path path;
  Folder() {
    std::random_device seed;
    path = fs::temp_directory_path() / ("dptune_report_plots_" + std::to_string(seed()));
    fs::create_directories(path);
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// The texts of the <text> elements of an SVG.
std::vector<std::string> texts(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex text("<text[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

/// A 3 x 2 grid map over a log-scaled learning rate and a noise multiplier, each noise its own ε.
std::vector<dptune::Trial> grid_trials() {
  std::vector<dptune::Trial> trials;
  std::size_t id = 0;
  for (double lr : {0.01, 0.1, 1.0})
    for (double noise : {1.0, 2.0}) {
      dptune::Trial t;
      t.id = id++;
      t.params = dptune::Params{{"learning_rate", lr}, {"noise", noise}};
      t.privacy.epsilon = 4.0 / noise;
      t.privacy.delta = 1e-5;
      t.utility_mean = t.utility_min = t.utility_max = 0.5 + 0.1 * lr + 0.01 * noise;
      t.repetitions = 1;
      trials.push_back(t);
    }
  return trials;
}

dptune::SearchSpace grid_space() {
  dptune::SearchSpace space;
  space.add_float("learning_rate", 0.01, 1.0, true);
  space.add_float("noise", 1.0, 2.0);
  return space;
}

}  // namespace

TEST_CASE("a map's search space: a slice plot per hyperparameter, a heat map over two") {
  Folder dir;
  std::vector<std::string> files;
  const auto figures = dptune::host::write_search_space_plots(dir.path, "m", grid_trials(),
                                                              grid_space(), "accuracy", files);
  CHECK(files ==
        std::vector<std::string>{"slice_learning_rate.svg", "slice_noise.svg", "heatmap.svg"});
  REQUIRE(figures.size() == 3);
  for (const auto& f : files) CHECK(slurp(dir.path / f) == figures[&f - files.data()].svg);
  const std::string& lr = figures[0].svg;
  // ε as colour: one legend entry per ε (4 / 1 and 4 / 2), each with its 3 trials; the
  // log-scaled learning rate on a log axis (ticks 0.01, 0.1, 1 as powers of ten apart).
  const auto lr_texts = texts(lr);
  CHECK(std::count(lr_texts.begin(), lr_texts.end(), "epsilon 2") == 1);
  CHECK(std::count(lr_texts.begin(), lr_texts.end(), "epsilon 4") == 1);
  CHECK(std::count(lr_texts.begin(), lr_texts.end(), "learning_rate (log scale)") == 1);
  for (const char* tick : {"0.01", "0.1", "1"})
    CHECK(std::count(lr_texts.begin(), lr_texts.end(), tick) == 1);
  CHECK(count(lr, "<circle") == 3 + 1);  // 3 trials and the legend marker of the first layer
  // The heat map: one cell per pair (6), the colour bar's 20 steps, its range 0.52 .. 0.62.
  const std::string& heat = figures[2].svg;
  CHECK(count(heat, "stroke=\"white\"") == 6);
  const auto heat_texts = texts(heat);
  CHECK(std::count(heat_texts.begin(), heat_texts.end(), "0.511") == 1);
  CHECK(std::count(heat_texts.begin(), heat_texts.end(), "0.62") == 1);
  CHECK(std::count(heat_texts.begin(), heat_texts.end(), "best accuracy") == 1);
}

TEST_CASE("no heat map for one or three tuned hyperparameters, and string choices get no slice") {
  Folder dir;
  dptune::SearchSpace space;
  space.add_float("learning_rate", 0.01, 1.0, true);
  space.add_categorical("model", {std::string("logistic"), std::string("svm")});
  auto trials = grid_trials();
  for (auto& t : trials)
    t.params = dptune::Params{{"learning_rate", t.params.get_double("learning_rate")},
                              {"model", std::string("svm")}};
  std::vector<std::string> files;
  dptune::host::write_search_space_plots(dir.path, "m", trials, space, "accuracy", files);
  CHECK(files == std::vector<std::string>{"slice_learning_rate.svg"});
}

TEST_CASE(
    "a tuple in an axis label is never broken, and an axis does not start far below the data") {
  Figure f;
  f.title = "hv";
  f.x_label = "evaluations";
  // 58 characters on a 340-pixel axis (47 a line): the old wrap broke it after "(epsilon,".
  f.y_label = "hypervolume of the front w.r.t. (epsilon, error) = (10, 1)";
  f.layers.push_back({"", {16, 32, 48, 64, 80}, {0.1, 0.2, 0.3, 0.35, 0.4}});
  const std::string svg = dptune::host::render_svg(f);
  const auto t = texts(svg);
  // The label's lines: each parenthesised group whole.
  CHECK(std::count(t.begin(), t.end(), "hypervolume of the front w.r.t.") == 1);
  CHECK(std::count(t.begin(), t.end(), "(epsilon, error) = (10, 1)") == 1);
  // Evaluations 16..80: ticks 20..80, no 0 (the old axis started at 0).
  CHECK(std::count(t.begin(), t.end(), "20") == 1);
  CHECK(std::count(t.begin(), t.end(), "0") == 0);
}

TEST_CASE("a group's legend shows words, not identifiers") {
  CHECK(dptune::host::legend_words("worst_run") == "worst run");
  Folder dir;
  dptune::Series worst{"variability_front.worst_run", "epsilon", "error", {1, 2}, {0.3, 0.2}};
  dptune::Series mean{"variability_front.mean", "epsilon", "error", {1, 2}, {0.25, 0.15}};
  std::vector<std::string> files;
  const auto figures = dptune::host::write_series(dir.path, "d", {worst, mean}, true, files);
  REQUIRE(figures.size() == 1);
  const auto t = texts(figures[0].svg);
  CHECK(std::count(t.begin(), t.end(), "worst run") == 1);
  CHECK(std::count(t.begin(), t.end(), "worst_run") == 0);
  // The CSV is a machine file: its member column keeps the identifiers.
  std::ifstream csv(dir.path / "variability_front.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  CHECK(text.find("\nworst_run,") != std::string::npos);
  CHECK(text.find("worst run") == std::string::npos);
}

TEST_CASE("a released vector as bars, its three largest labelled by position") {
  const std::vector<double> votes{1, 9, -2, 4, 12, 0, 3, 8, 2, 1, 5, 7};
  const std::string svg = dptune::host::render_bars_svg("votes", "candidate", "votes", votes);
  CHECK(count(svg, "<rect x=") == 12 + 1);  // a bar each and the plot frame
  const auto t = texts(svg);
  for (const char* label : {"#4", "#1", "#7"}) CHECK(std::count(t.begin(), t.end(), label) == 1);
  CHECK(std::count(t.begin(), t.end(), "#11") == 0);
}

TEST_CASE("the released candidate marked on the search space") {
  dptune::SearchSpace space;
  space.add_float("learning_rate", 0.001, 1.0, true);
  space.add_categorical("momentum", {0.0, 0.9});
  const std::string svg = dptune::host::render_candidate_svg(
      "c", space, dptune::Params{{"learning_rate", 0.01}, {"momentum", 0.9}});
  const auto t = texts(svg);
  CHECK(count(svg, "<circle") == 2);                   // one mark per dimension
  CHECK(std::count(t.begin(), t.end(), "0.9") == 2);   // a choice and the mark's value
  CHECK(std::count(t.begin(), t.end(), "0.01") == 2);  // a tick and the mark's value
  // The mark of 0.01 on 0.001 .. 1 (log): a third of the way along the 640-pixel line at 170.
  CHECK(svg.find("<circle cx=\"383.3\"") != std::string::npos);
}

TEST_CASE("a warning the console printed before the report is not repeated among its notes") {
  Folder dir;
  dptune::host::PipelineConfig config;
  config.name = "dedup";
  config.output.dir = dir.path / "out";
  dptune::TuningResult result;
  dptune::Trial t;
  t.params = dptune::Params{{"lr", 0.1}};
  t.privacy.epsilon = 1;
  t.utility_mean = t.utility_min = t.utility_max = 0.9;
  result.trials = {t};
  result.selected = t;
  dptune::PrivacyGuarantee g;
  g.epsilon = 1;
  g.delta = 1e-5;
  result.guarantee = g;
  result.notes = {"WARNING: the vote noise swamps the votes", "WARNING: another warning",
                  "how the run worked"};
  dptune::host::ReportInput in{config, result, "seeded", false, "inline", 1.0, "data"};
  in.printed_warnings = {"the vote noise swamps the votes"};
  std::ostringstream console;
  dptune::host::write_report(in, console);
  CHECK(console.str().find("swamps") == std::string::npos);
  CHECK(console.str().find("note: WARNING: another warning\n") != std::string::npos);
  CHECK(console.str().find("note: how the run worked\n") != std::string::npos);
  // report.html and summary.json keep every note.
  CHECK(slurp(config.output.dir / "report.html").find("swamps the votes") != std::string::npos);
  CHECK(slurp(config.output.dir / "summary.json").find("swamps the votes") != std::string::npos);
}

TEST_CASE(
    "the resolved config is what ran: the preprocessing that ran, no parameter set at run time") {
  dptune::host::PipelineConfig config;
  config.name = "ran";
  dptune::host::ComponentConfig mechanism;
  mechanism.kind = dptune::host::ComponentKind::Mechanism;
  mechanism.use = "gaussian";
  mechanism.params = dptune::Params{{"noise", std::string("secure")}, {"noise_multiplier", 1.0}};
  config.mechanism = mechanism;
  config.preprocessing.kind = dptune::host::Preprocessing::Kind::NormalizeRows;
  const dptune::TuningResult result;
  dptune::host::ReportInput in{config, result, "seeded", false, "inline", 1.0, "data"};
  in.preprocessing.kind = dptune::host::Preprocessing::Kind::None;  // what ran
  in.mechanism_set_at_run_time = {"noise_multiplier"};
  const std::string yaml = dptune::host::resolved_config(in);
  CHECK(yaml.find("preprocessing: {use: none}") != std::string::npos);
  CHECK(yaml.find("normalize_rows") == std::string::npos);
  CHECK(yaml.find("params: {noise: secure}") != std::string::npos);
  CHECK(yaml.find("  # noise_multiplier: set for every run by the algorithm or the tuner") !=
        std::string::npos);
  // Nothing set at run time: every parameter, no comment.
  in.mechanism_set_at_run_time.clear();
  const std::string all = dptune::host::resolved_config(in);
  CHECK(all.find("noise_multiplier: 1") != std::string::npos);
  CHECK(all.find("# noise_multiplier") == std::string::npos);
  // A fitted scaling's statistics are never written out: the pipeline's own section stays.
  in.preprocessing.kind = dptune::host::Preprocessing::Kind::FittedStandardize;
  in.preprocessing.mean = {123.456};
  in.preprocessing.scale = {7.0};
  const std::string fitted = dptune::host::resolved_config(in);
  CHECK(fitted.find("123.456") == std::string::npos);
  CHECK(fitted.find("preprocessing: {use: normalize_rows}") != std::string::npos);
}
