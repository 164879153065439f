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
#include "dptune/host/dry_run.hpp"
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

/// P[best tried] without a finite number of candidates (JSON null, "-" in the table).
constexpr double kNotDefined = std::numeric_limits<double>::quiet_NaN();

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
    if (!quantile && std::isnan(rows.front().success)) continue;  // no finite m: nothing to draw
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

/// --score-epsilon's value, checked.
std::optional<double> score_epsilon_option(const po::variables_map& vm) {
  if (!vm.count("score-epsilon")) return std::nullopt;
  const double epsilon = vm["score-epsilon"].as<double>();
  if (!(epsilon > 0 && std::isfinite(epsilon)))
    throw UsageError("--score-epsilon must be a positive number");
  return epsilon;
}

/// How the table's private score enters the base: Laplace noise of multiplier 1/epsilon, stated
/// for replace-one when the base is.
std::string private_scoring_note(double epsilon, bool replace_one) {
  return "private: laplace noise multiplier 1/" + significant(epsilon, 4) +
         " composed into the base" +
         (replace_one ? " (stated for replace-one, the base's relation)" : "");
}

/// From an EVENT with --score-epsilon E: composes the private score's event into `base` as the
/// repetition tuner does (the leaf is stated for the base's relation: the host's utility
/// sensitivity bounds a replaced, added or removed record alike), and says which scoring the
/// table assumes.  Without --score-epsilon the EVENT is the whole base.
std::string compose_scoring(DpEvent& base, const po::variables_map& vm) {
  const std::optional<double> epsilon = score_epsilon_option(vm);
  if (!epsilon) return "not included (the EVENT is the whole base; --score-epsilon E adds it)";
  const DpEvent leaf = DpEvent::laplace(1 / *epsilon);
  const bool replace_one = dptune::neighbouring_of(base) == dptune::Neighbouring::ReplaceOne;
  base = DpEvent::composed({base, replace_one ? DpEvent::replace_one(leaf) : leaf});
  return private_scoring_note(*epsilon, replace_one);
}

/// From a pipeline the tuner composes its scoring itself; this only says which scoring it is.
std::string pipeline_scoring(const dptune::Params& tuner, const DpEvent& base) {
  if (tuner.contains("scoring") && tuner.get_string("scoring") == "public_validation")
    return "public_validation (assumes the validation split is public, declared by the user)";
  if (!tuner.contains("score_epsilon")) return "as the tuner composes it (it has no score_epsilon)";
  return private_scoring_note(tuner.get_double("score_epsilon"),
                              dptune::neighbouring_of(base) == dptune::Neighbouring::ReplaceOne);
}

/// What `dptune plan repetition` was given: the option values bound to its command line.
struct PlanArgs {
  /// The command's first word: the tuner plugin whose repetition is planned (`dptune plan
  /// repetition`).  The host knows no tuner by name: whichever tuner the word names is asked, and
  /// its dry run must price a repetition of one base event (base_of).
  std::string tuner;
  std::string event_text, means_text = "2,5,10,20,50,100", accountant_name = kDefaultAccountant;
  std::vector<std::string> plugin_paths, sets, words;
  std::string pipeline, plot_dir;
};

/// The visible options of `dptune plan`, bound to `a`.
po::options_description plan_options(PlanArgs& a) {
  // clang-format off
  po::options_description opts(
      "dptune plan repetition [EVENT] --candidates M --delta D [options]\n"
      "dptune plan repetition --pipeline PIPELINE [--points P] [options]\n\n"
      "Tabulates the repetition tuner's distributions (logarithmic, eta = 0.5, geometric, eta = 5,\n"
      "Poisson, and the naive fixed K) for a base event: final epsilon, E[K], expected quantile of the\n"
      "best run and the probability that the best of M candidates is tried (Papernot & Steinke 2022).\n"
      "With --pipeline, the pipeline's repetition tuner is asked (run dry: nothing trains): the base\n"
      "event and M are those of the search it would run (M: its grid's size; none with candidates:\n"
      "space), delta and the accountant are the pipeline's.\n\n"
      "options");
  opts.add_options()
      ("help,h", "this help")
      ("event", po::value(&a.event_text), "the base event as inline YAML instead of a file")
      ("pipeline", po::value(&a.pipeline),
       "take the base event, M, delta and the accountant from the pipeline's repetition tuner "
       "(its defaults for another tuner), run dry")
      ("points", po::value<std::int64_t>(),
       "with --pipeline: the tuner's points_per_dimension (candidates: grid only)")
      ("set", po::value(&a.sets)->composing(),
       "with --pipeline: override a pipeline key (key.path=value)")
      ("plot", po::value(&a.plot_dir),
       "also write expected_quantile.svg and success_probability.svg against epsilon (Papernot & "
       "Steinke 2022, Figures 5 and 6) into this folder")
      ("candidates", po::value<std::int64_t>(), "number m of candidates in the search space")
      ("delta", po::value<double>(), "delta of the final guarantee, in (0, 1)")
      ("means", po::value(&a.means_text), "comma-separated E[K] values (default 2,5,10,20,50,100)")
      ("accountant", po::value(&a.accountant_name), (std::string("accountant plugin (default ") + kDefaultAccountant + ")").c_str())
      ("score-epsilon", po::value<double>(),
       "compose a private score, Laplace noise of scale sensitivity / E (laplace: "
       "{noise_multiplier: 1/E}), into the base event as the repetition tuner's scoring: private "
       "does (with --pipeline: the tuner's score_epsilon)")
      ("json", "machine-readable output")
      ("plugin-path", po::value(&a.plugin_paths)->composing(),
       "extra plugin folder or file (repeatable)");
  // clang-format on
  return opts;
}

/// What the table is computed for: the base event, the candidates m (none when the tuner draws
/// from the search space itself: then no finite m), δ, the accountant, the pipeline's repetition
/// tuner's parameters and its private test score (when planned from a pipeline).
struct PlanBase {
  DpEvent base;
  std::optional<std::int64_t> m;
  double delta = 0;
  std::shared_ptr<const dptune::Accountant> accountant;
  std::optional<dptune::Params> tuner;
  std::optional<dptune::host::TestScoreNoise> test_noise;
};

/// The parameters of the repetition tuner the plan asks: the pipeline's when it uses repetition
/// (else the tuner's defaults), with --points and --score-epsilon applied as the tuner's own
/// points_per_dimension and score_epsilon.
dptune::Params planned_tuner_params(const std::string& tuner,
                                    const dptune::host::PipelineConfig& config,
                                    const po::variables_map& vm,
                                    const dptune::host::PluginRegistry& registry) {
  const auto* schema = registry.schema(dptune::host::ComponentKind::Tuner, tuner);
  if (!schema) throw UsageError("plan " + tuner + ": no tuner plugin '" + tuner + "' is loaded");
  dptune::Params params =
      schema->complete(config.tuner.use == tuner ? config.tuner.params : dptune::Params{});
  if (vm.count("points")) {
    if (!schema->find("points_per_dimension"))
      throw UsageError("--points: tuner '" + tuner + "' has no parameter points_per_dimension");
    if (params.contains("candidates") && params.get_string("candidates") == "space")
      throw UsageError(
          "--points: the pipeline's repetition tuner draws its candidates from the search space "
          "(candidates: space), not from a grid; --points sets points_per_dimension of "
          "candidates: grid");
    if (vm["points"].as<std::int64_t>() < 1) throw UsageError("--points must be >= 1");
    params.set("points_per_dimension", vm["points"].as<std::int64_t>());
  }
  if (const auto epsilon = score_epsilon_option(vm)) {
    if (!schema->find("score_epsilon"))
      throw UsageError("--score-epsilon: tuner '" + tuner + "' has no parameter score_epsilon");
    if (params.contains("scoring") && params.get_string("scoring") == "public_validation")
      throw UsageError(
          "--score-epsilon: the pipeline declares scoring: public_validation (no score noise)");
    params.set("score_epsilon", *epsilon);
  }
  return params;
}

/// The base event of the tuner's dry run: the event its guarantee was priced from is a repetition
/// (RepeatAndSelect, the fixed K's SelfComposed or RepeatUntilAccepted) of one base event.
DpEvent base_of(const dptune::host::TunerDryRun& run) {
  if (!run.guarantee)
    throw UsageError("plan repetition: the pipeline's repetition tuner claims no guarantee");
  for (auto it = run.priced.rbegin(); it != run.priced.rend(); ++it) {
    if (it->guarantee.epsilon != run.guarantee->epsilon ||
        it->guarantee.delta != run.guarantee->delta)
      continue;
    const auto kind = it->event.kind();
    if (kind == DpEvent::Kind::RepeatAndSelect || kind == DpEvent::Kind::SelfComposed ||
        kind == DpEvent::Kind::RepeatUntilAccepted ||
        kind == DpEvent::Kind::AdaptiveRepeatAndSelect)
      return it->event.inner();
    break;
  }
  throw dptune::PluginError(
      "plan repetition: the repetition tuner's guarantee is not the price of a repetition of one "
      "base event; nothing to plan");
}

/// --pipeline: the base event, the candidates m, the accountant and the test score of the
/// pipeline's repetition tuner, learnt by running that tuner dry (as `dptune run` does to charge
/// a ledger); δ is the pipeline's unless --delta.
PlanBase base_from_pipeline(PlanArgs& a, const po::variables_map& vm,
                            dptune::host::PluginRegistry& registry) {
  if (a.words.size() == 2 || vm.count("event") || vm.count("candidates") || vm.count("accountant"))
    throw UsageError(
        "--pipeline takes the base event, --candidates and the accountant from the pipeline");
  auto config = load(a.pipeline, a.sets, a.plugin_paths, registry);
  PlanBase plan;
  plan.tuner = planned_tuner_params(a.tuner, config, vm, registry);
  if (config.tuner.use != a.tuner) {
    config.tuner.use = a.tuner;
    config.tuner.traits = registry.traits(dptune::host::ComponentKind::Tuner, a.tuner, *plan.tuner);
    config.tuner_traits = config.tuner.traits.tuner.value_or(dptune::TunerTraits{});
  }
  config.tuner.params = *plan.tuner;
  const dptune::host::TunerDryRun run = dptune::host::dry_run_tuner(config, registry);
  plan.base = base_of(run);
  // Candidates drawn from the grid: the grid is what the tuner declared (asked the events of)
  // before its first run.  Drawn from the search space: no finite m.
  if (!plan.tuner->contains("candidates") || plan.tuner->get_string("candidates") != "space")
    plan.m = static_cast<std::int64_t>(run.declared.size());
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
  if (*plan.m < 1) throw UsageError("--candidates must be >= 1");
  if ((a.words.size() == 2) == (vm.count("event") > 0))
    throw UsageError(
        "give the base event as an EVENT file ('-' for stdin), with --event, or "
        "--pipeline");
  const bool from_file = a.words.size() == 2;
  const std::string shown = !from_file ? "--event" : (a.words[1] == "-" ? "<stdin>" : a.words[1]);
  const std::string text = from_file ? read_event_file(a.words[1]) : a.event_text;
  plan.base = dptune::host::parse_event(text, shown);
  scan_plugins(registry, a.plugin_paths, {});
  if (!registry.schema(dptune::host::ComponentKind::Tuner, a.tuner))
    throw UsageError("plan " + a.tuner + ": no tuner plugin '" + a.tuner + "' is loaded");
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
    return plan.test_noise ? dptune::host::compose_test_score(g, tuning, *plan.test_noise,
                                                              accountant, plan.delta)
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
                      plan.m ? dist.success_probability(*plan.m) : kNotDefined});
    }
  for (double mean : means) {
    // A fixed K: every run is released to the selection, so the cost is K-fold composition.
    const auto k = static_cast<std::int64_t>(std::llround(mean));
    const double eps = final_epsilon(DpEvent::self_composed(plan.base, k));
    const double kk = static_cast<double>(k);
    const double success =
        plan.m ? 1 - std::pow(1 - 1.0 / static_cast<double>(*plan.m), kk) : kNotDefined;
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
  w.key("candidates");
  if (plan.m)
    w.value(*plan.m);
  else
    w.null();
  w.key("delta").value(plan.delta).key("rows").begin_array();
  for (const auto& r : rows) {
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
        .key("success_probability");
    if (std::isnan(r.success))
      w.null();
    else
      w.value(r.success);
    w.end_object();
  }
  w.end_array().end_object();
  std::cout << "\n";
}

void print_plan_text(const PlanBase& plan, const PlanHeader& h, const std::vector<Row>& rows) {
  std::cout << "base event: " << plan.base.to_string() << "\n"
            << "scoring:    " << h.scoring << "\n"
            << "test score: " << h.test_score << "\n"
            << "one run:    epsilon " << significant(h.base_epsilon, 4) << " at delta "
            << plan.delta << " (" << h.accountant_name << ")\n"
            << "candidates: "
            << (plan.m ? std::to_string(*plan.m)
                       : "drawn from the search space (no finite number: P[best tried] is not "
                         "defined)")
            << "\n\n"
            << std::left << std::setw(34) << "distribution" << std::right << std::setw(8) << "E[K]"
            << std::setw(12) << "epsilon" << std::setw(16) << "E[best quant.]" << std::setw(16)
            << "P[best tried]"
            << "\n";
  for (const auto& r : rows)
    std::cout << std::left << std::setw(34) << r.distribution << std::right << std::setw(8)
              << significant(r.expected_k, 4) << std::setw(12) << significant(r.epsilon, 4)
              << std::setw(16) << significant(r.quantile, 4) << std::setw(16)
              << (std::isnan(r.success) ? "-" : significant(r.success, 4)) << "\n";
  std::cout << "\nepsilon is the accountant's bound on releasing the best run (Papernot & Steinke "
               "2022 Thm 2, Thm 6; fixed K: composition).\n";
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
  PlanArgs a;
  const po::options_description opts = plan_options(a);
  const auto parsed = parse_command(opts, args, {{"words", po::value(&a.words), -1}});
  if (!parsed) return kOk;
  const po::variables_map& vm = *parsed;
  if (a.words.empty()) throw UsageError("plan: expected 'dptune plan repetition ...' (see --help)");
  a.tuner = a.words[0];
  if (a.words.size() > 2) throw UsageError("plan " + a.tuner + " takes at most one EVENT file");
  const auto means = parse_means(a.means_text);
  dptune::host::PluginRegistry registry;
  PlanBase plan =
      a.pipeline.empty() ? base_from_event(a, vm, registry) : base_from_pipeline(a, vm, registry);
  if (!(plan.delta > 0 && plan.delta < 1)) throw UsageError("--delta must be in (0, 1)");
  // The repetition tuner's base also scores each run: with scoring: private its Laplace event is
  // part of the base (Papernot & Steinke 2022, Sec. 3.1).  A pipeline's tuner composed it itself;
  // an EVENT gets it here with --score-epsilon.
  PlanHeader header;
  header.accountant_name = a.accountant_name;
  header.scoring =
      plan.tuner ? pipeline_scoring(*plan.tuner, plan.base) : compose_scoring(plan.base, vm);
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
