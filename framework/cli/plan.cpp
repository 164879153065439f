// `dptune plan repetition`: choose the distribution of the number of runs of a repeat-and-select
// tuner before spending any data (Papernot & Steinke 2022, §3.6 and Appendix A.2.1).  For a base
// event and m candidates it tabulates, per distribution and mean: the final ε at δ (the accountant
// on RepeatAndSelect), E[K], the expected quantile of the best run 1 − ∫₀¹ f(x) dx (eq. 8) and the
// probability that the best of m candidates is tried, 1 − f(1 − 1/m).  A fixed K is shown as the
// honest naive baseline (K-fold composition; not recommended, Papernot & Steinke 2022 §3.2,
// Appendix D).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>

#include <filesystem>
#include <fstream>

#include "cli_common.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/host/event_yaml.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/plots.hpp"
#include "dptune/host/runner.hpp"
#include "dptune/host/test_score_noise.hpp"
#include "dptune/params.hpp"
#include "dptune/plugin.hpp"

namespace po = boost::program_options;

namespace dptune::cli {

namespace {

std::vector<double> parse_means(const std::string& text) {
  std::vector<double> means;
  try {
    means = dptune::parse_number_list(text, "--means");
  } catch (const dptune::InvalidArgument& e) {
    throw UsageError(e.what());
  }
  for (double v : means)
    if (!(v > 1)) throw UsageError("--means: '" + significant(v, 4) + "' is not a number > 1");
  return means;
}

struct Row {
  std::string distribution;
  double mean, epsilon, expected_k, quantile, success;
};

// Papernot & Steinke 2022, Figures 5 and 6: one line per distribution, the final epsilon on the x
// axis.
void write_plots(const std::string& dir, const std::vector<Row>& rows, double delta) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw dptune::Error("cannot create plot folder " + dir + ": " + ec.message());
  const std::string x_label = "epsilon at delta = " + significant(delta, 4);
  for (const bool quantile : {true, false}) {
    std::vector<dptune::Series> series;
    for (const auto& r : rows) {
      if (series.empty() || series.back().name != r.distribution)
        series.push_back(
            {r.distribution,
             x_label,
             quantile ? "expected quantile of the best run" : "P[best candidate tried]",
             {},
             {}});
      series.back().x.push_back(r.epsilon);
      series.back().y.push_back(quantile ? r.quantile : r.success);
    }
    std::vector<const dptune::Series*> group;
    std::vector<std::string> legend;
    for (const auto& s : series) {
      group.push_back(&s);
      legend.push_back(s.name);
    }
    const std::string name = quantile ? "expected_quantile.svg" : "success_probability.svg";
    std::ofstream out(fs::path(dir) / name);
    out << dptune::host::series_group_svg(
        group, legend,
        quantile ? "repetition: expected quantile against epsilon (Papernot & Steinke 2022, Fig. 5)"
                 : "repetition: success probability against epsilon (Fig. 6)");
    if (!out) throw dptune::Error("cannot write " + (fs::path(dir) / name).string());
  }
}

/// Composes the repetition tuner's scoring event into `base` when scoring is private, and says
/// which scoring the table assumes.  From a pipeline: its repetition tuner's `scoring` and
/// `score_epsilon` (the tuner's defaults for another tuner), --score-epsilon overriding the
/// epsilon; from an EVENT: only with --score-epsilon (the EVENT is otherwise the whole base).
std::string compose_scoring(DpEvent& base, const po::variables_map& vm,
                            const dptune::host::ComponentConfig* tuner,
                            const dptune::host::PluginRegistry& registry) {
  std::optional<double> epsilon;
  if (vm.count("score-epsilon")) {
    epsilon = vm["score-epsilon"].as<double>();
    if (!(*epsilon > 0 && std::isfinite(*epsilon)))
      throw UsageError("--score-epsilon must be a positive number");
  }
  if (tuner) {
    const auto* schema = registry.schema(dptune::host::ComponentKind::Tuner, "repetition");
    if (!schema) throw UsageError("plan repetition: the repetition tuner plugin is not loaded");
    const dptune::Params params =
        schema->complete(tuner->use == "repetition" ? tuner->params : dptune::Params{});
    if (params.get_string("scoring") == "public_validation") {
      if (epsilon)
        throw UsageError(
            "--score-epsilon: the pipeline declares scoring: public_validation (no score noise)");
      return "public_validation (assumes the validation split is public, declared by the user)";
    }
    if (!epsilon) epsilon = params.get_double("score_epsilon");
  }
  if (!epsilon) return "not included (the EVENT is the whole base; --score-epsilon E adds it)";
  // As the tuner does: the leaf is stated for the base's relation (the host's utility sensitivity
  // bounds a replaced, added or removed record alike).
  const DpEvent leaf = DpEvent::laplace(1 / *epsilon);
  const bool replace_one = dptune::neighbouring_of(base) == dptune::Neighbouring::ReplaceOne;
  base = DpEvent::composed({base, replace_one ? DpEvent::replace_one(leaf) : leaf});
  return "private: laplace noise multiplier 1/" + significant(*epsilon, 4) +
         " composed into the base" +
         (replace_one ? " (stated for replace-one, the base's relation)" : "");
}

/// What `dptune plan repetition` was given: the option values bound to its command line.
struct PlanArgs {
  std::string event_text, means_text = "2,5,10,20,50,100", accountant_name = "rdp";
  std::vector<std::string> plugin_paths, sets, words;
  std::string pipeline, plot_dir;
};

/// The visible options of `dptune plan`, bound to `a`.
po::options_description plan_options(PlanArgs& a) {
  po::options_description opts(
      "dptune plan repetition [EVENT] --candidates M --delta D [options]\n"
      "dptune plan repetition --pipeline PIPELINE [--points P] [options]\n\n"
      "Tabulates the repetition tuner's distributions (logarithmic, eta = 0.5, geometric, eta = "
      "5,\n"
      "Poisson, and the naive fixed K) for a base event: final epsilon, E[K], expected quantile of "
      "the\n"
      "best run and the probability that the best of M candidates is tried (Papernot "
      "& Steinke 2022).\nWith --pipeline, the base event is the worst (one_of) of the pipeline's "
      "grid "
      "candidates' "
      "events,\nM is the grid's size and delta and the accountant are the pipeline's.\n\noptions");
  opts.add_options()("help,h", "this help")("event", po::value(&a.event_text),
                                            "the base event as inline YAML instead of a file")(
      "pipeline", po::value(&a.pipeline),
      "take the base event, M, delta and the accountant from a pipeline's grid (nothing is run)")(
      "points", po::value<std::int64_t>(),
      "with --pipeline: grid points per continuous dimension (default: the repetition tuner's "
      "points_per_dimension, else 5)")("set", po::value(&a.sets)->composing(),
                                       "with --pipeline: override a pipeline key (key.path=value)")(
      "plot", po::value(&a.plot_dir),
      "also write expected_quantile.svg and success_probability.svg against epsilon (Papernot & "
      "Steinke 2022, "
      "Figures 5 and 6) into this folder")("candidates", po::value<std::int64_t>(),
                                           "number m of candidates in the search space")(
      "delta", po::value<double>(), "delta of the final guarantee, in (0, 1)")(
      "means", po::value(&a.means_text), "comma-separated E[K] values (default 2,5,10,20,50,100)")(
      "accountant", po::value(&a.accountant_name), "accountant plugin (default rdp)")(
      "score-epsilon", po::value<double>(),
      "compose a private score, Laplace noise of scale sensitivity / E (laplace: "
      "{noise_multiplier: "
      "1/E}), into the base event as the repetition tuner's scoring: private does (with "
      "--pipeline: default the pipeline's repetition score_epsilon)")(
      "json", "machine-readable output")("plugin-path", po::value(&a.plugin_paths)->composing(),
                                         "extra plugin folder or file (repeatable)");
  return opts;
}

/// What the table is computed for: the base event, the candidates m, δ, the accountant, the
/// pipeline's repetition tuner and its private test score (when planned from a pipeline).
struct PlanBase {
  DpEvent base;
  std::int64_t m = 0;
  double delta = 0;
  std::shared_ptr<const dptune::Accountant> accountant;
  std::optional<dptune::host::ComponentConfig> tuner;
  std::optional<dptune::host::TestScoreNoise> test_noise;
};

/// --pipeline: the worst (one_of) of the grid candidates' events, m the grid's size, and the
/// pipeline's δ (unless --delta), accountant and test score.
PlanBase base_from_pipeline(PlanArgs& a, const po::variables_map& vm,
                            dptune::host::PluginRegistry& registry) {
  if (a.words.size() == 2 || vm.count("event") || vm.count("candidates") || vm.count("accountant"))
    throw UsageError(
        "--pipeline takes the base event, --candidates and the accountant from the pipeline");
  const auto config = load(a.pipeline, a.sets, a.plugin_paths, registry);
  PlanBase plan;
  plan.tuner = config.tuner;
  std::size_t points = 5;
  if (vm.count("points")) {
    if (vm["points"].as<std::int64_t>() < 1) throw UsageError("--points must be >= 1");
    points = static_cast<std::size_t>(vm["points"].as<std::int64_t>());
  } else if (config.tuner.use == "repetition" &&
             config.tuner.params.contains("points_per_dimension")) {
    points = static_cast<std::size_t>(config.tuner.params.get_int("points_per_dimension"));
  }
  const auto grid = config.space.grid(points);
  std::vector<DpEvent> events;
  for (auto& e : dptune::host::candidate_events(config, registry, grid))
    if (std::find(events.begin(), events.end(), e) == events.end()) events.push_back(e);
  plan.base = events.size() == 1 ? events.front() : DpEvent::one_of(events);
  plan.m = static_cast<std::int64_t>(grid.size());
  plan.delta = vm.count("delta") ? vm["delta"].as<double>() : config.delta;
  plan.accountant = registry.create_accountant(config.accountant.use, config.accountant.params);
  a.accountant_name = config.accountant.use;
  if (config.output.test_score && config.output.test_score->epsilon)
    plan.test_noise = dptune::host::planned_test_score_noise(config, registry);
  return plan;
}

/// An EVENT file or --event, with --candidates, --delta and --accountant.
PlanBase base_from_event(const PlanArgs& a, const po::variables_map& vm,
                         dptune::host::PluginRegistry& registry) {
  if (!vm.count("candidates") || !vm.count("delta"))
    throw UsageError("plan repetition needs --candidates and --delta (or --pipeline)");
  PlanBase plan;
  plan.m = vm["candidates"].as<std::int64_t>();
  plan.delta = vm["delta"].as<double>();
  if (plan.m < 1) throw UsageError("--candidates must be >= 1");
  if ((a.words.size() == 2) == (vm.count("event") > 0))
    throw UsageError(
        "give the base event as an EVENT file ('-' for stdin), with --event, or "
        "--pipeline");
  const bool from_file = a.words.size() == 2;
  const std::string shown = !from_file ? "--event" : (a.words[1] == "-" ? "<stdin>" : a.words[1]);
  const std::string text = from_file ? read_event_file(a.words[1]) : a.event_text;
  plan.base = dptune::host::parse_event(text, shown);
  scan_plugins(registry, a.plugin_paths, {});
  plan.accountant = create_accountant(registry, a.accountant_name);
  return plan;
}

/// The table: per distribution and mean, the final ε (the tuning's guarantee, with the pipeline's
/// private test score composed in as the run composes it, compose_test_score), E[K], the expected
/// quantile of the best run and the probability that the best candidate is tried.
std::vector<Row> plan_rows(const PlanBase& plan, const std::vector<double>& means) {
  const dptune::Accountant& accountant = *plan.accountant;
  auto final_epsilon = [&](const DpEvent& tuning) {
    const dptune::PrivacyGuarantee g = accountant.epsilon(tuning, plan.delta);
    return plan.test_noise
               ? dptune::host::compose_test_score(g, *plan.test_noise, accountant, plan.delta)
                     .epsilon
               : g.epsilon;
  };
  std::vector<Row> rows;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<std::string, double>> shapes{{"logarithmic (eta = 0)", 0.0},
                                                           {"eta = 0.5", 0.5},
                                                           {"geometric (eta = 1)", 1.0},
                                                           {"eta = 5", 5.0},
                                                           {"Poisson", inf}};
  for (const auto& [name, shape] : shapes)
    for (double mean : means) {
      const auto dist = dptune::RepetitionDistribution::from_mean(mean, shape);
      const double eps = final_epsilon(DpEvent::repeat_and_select(plan.base, mean, shape));
      rows.push_back({name, mean, eps, dist.mean(), dist.expected_best_quantile(),
                      dist.success_probability(plan.m)});
    }
  for (double mean : means) {
    // A fixed K: every run is released to the selection, so the cost is K-fold composition.
    const auto k = static_cast<std::int64_t>(std::llround(mean));
    const double eps = final_epsilon(DpEvent::self_composed(plan.base, k));
    const double kk = static_cast<double>(k);
    const double success = 1 - std::pow(1 - 1.0 / static_cast<double>(plan.m), kk);
    rows.push_back({"fixed K (naive; not recommended)", kk, eps, kk, kk / (kk + 1), success});
  }
  return rows;
}

/// The table's header lines: the base, its scoring, the test score, one run's ε, m.
struct PlanHeader {
  std::string scoring, test_score, accountant_name;
  double base_epsilon = 0;
};

void print_plan_json(const PlanBase& plan, const PlanHeader& h, const std::vector<Row>& rows) {
  dptune::host::JsonWriter w(std::cout);
  w.begin_object()
      .key("base_event")
      .value(plan.base.to_string())
      .key("base_epsilon")
      .value(h.base_epsilon);
  w.key("scoring").value(h.scoring);
  w.key("test_score").value(h.test_score);
  w.key("candidates").value(plan.m).key("delta").value(plan.delta).key("rows").begin_array();
  for (const auto& r : rows)
    w.begin_object()
        .key("distribution")
        .value(r.distribution)
        .key("mean")
        .value(r.mean)
        .key("epsilon")
        .value(r.epsilon)
        .key("expected_runs")
        .value(r.expected_k)
        .key("expected_best_quantile")
        .value(r.quantile)
        .key("success_probability")
        .value(r.success)
        .end_object();
  w.end_array().end_object();
  std::cout << "\n";
}

void print_plan_text(const PlanBase& plan, const PlanHeader& h, const std::vector<Row>& rows) {
  std::cout << "base event: " << plan.base.to_string() << "\n"
            << "scoring:    " << h.scoring << "\n"
            << "test score: " << h.test_score << "\n"
            << "one run:    epsilon " << significant(h.base_epsilon, 4) << " at delta "
            << plan.delta << " (" << h.accountant_name << ")\n"
            << "candidates: " << plan.m << "\n\n"
            << std::left << std::setw(34) << "distribution" << std::right << std::setw(8) << "E[K]"
            << std::setw(12) << "epsilon" << std::setw(16) << "E[best quant.]" << std::setw(16)
            << "P[best tried]"
            << "\n";
  for (const auto& r : rows)
    std::cout << std::left << std::setw(34) << r.distribution << std::right << std::setw(8)
              << significant(r.expected_k, 4) << std::setw(12) << significant(r.epsilon, 4)
              << std::setw(16) << significant(r.quantile, 4) << std::setw(16)
              << significant(r.success, 4) << "\n";
  std::cout << "\nepsilon is the accountant's bound on releasing the best run (Papernot & Steinke "
               "2022 Thm 2, Thm 6; "
               "fixed K: composition).\n";
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
  PlanArgs a;
  const po::options_description opts = plan_options(a);
  po::options_description hidden;
  hidden.add_options()("words", po::value(&a.words));
  po::positional_options_description pos;
  pos.add("words", -1);
  const auto vm = parse(opts, pos, args, hidden);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return kOk;
  }
  if (a.words.empty() || a.words[0] != "repetition")
    throw UsageError("plan: expected 'dptune plan repetition ...' (see --help)");
  if (a.words.size() > 2) throw UsageError("plan repetition takes at most one EVENT file");
  const auto means = parse_means(a.means_text);
  dptune::host::PluginRegistry registry;
  PlanBase plan =
      a.pipeline.empty() ? base_from_event(a, vm, registry) : base_from_pipeline(a, vm, registry);
  if (!(plan.delta > 0 && plan.delta < 1)) throw UsageError("--delta must be in (0, 1)");
  // The repetition tuner's base also scores each run: with scoring: private its Laplace event is
  // composed into the base before the repetition theorem (issue 13, finding 6).
  PlanHeader header;
  header.accountant_name = a.accountant_name;
  header.scoring = compose_scoring(plan.base, vm, plan.tuner ? &*plan.tuner : nullptr, registry);
  if (const auto why = plan.accountant->unsupported_reason(plan.base); !why.empty())
    throw UsageError("accountant " + a.accountant_name + " cannot account the base event: " + why);
  header.base_epsilon = plan.accountant->epsilon(plan.base, plan.delta).epsilon;
  header.test_score = plan.test_noise
                          ? "composed into every epsilon below: " + plan.test_noise->describe()
                          : "none (output.test_score: {epsilon: E} adds a private one)";
  const std::vector<Row> rows = plan_rows(plan, means);
  if (!a.plot_dir.empty()) write_plots(a.plot_dir, rows, plan.delta);
  if (vm.count("json"))
    print_plan_json(plan, header, rows);
  else
    print_plan_text(plan, header, rows);
  return kOk;
}

}  // namespace dptune::cli
