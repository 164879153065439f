#include "report/report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <set>
#include <sstream>

#include "base/output_files.hpp"
#include "dptune/abi.hpp"
#include "dptune/errors.hpp"
#include "dptune/helpers/pareto.hpp"
#include "dptune/helpers/trials_csv.hpp"
#include "dptune/host/console_text.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/model_file.hpp"
#include "report/report_html.hpp"

namespace dptune::host {

namespace {

constexpr const char* kTrustedAnalystWarning =
    "This is a privacy-utility map for trusted analysts: the per-trial results below were computed "
    "on the private data and are NOT differentially private outputs. Each epsilon is the cost of "
    "ONE run with that candidate; releasing the choice of a candidate is not covered by it.";

/// Where the console puts what a private tuner computes from its release but does not guarantee
/// (svt_doubling's nominal bound): after the Released block, as a block of its own.
constexpr const char* kNominalHeader = "Computed from the release, NOT a guarantee:";

constexpr const char* kNonPrivateWarning =
    "NON-PRIVATE BASELINE: every run below trained WITHOUT differential privacy (the tuner's "
    "private: false). The results carry no privacy guarantee and no epsilon; they were computed on "
    "the private data and are for trusted analysts only.";

/// A trial of a non-private run: the evaluator's "no guarantee" (ε = ∞, δ = 1), never a price.
bool non_private(const dptune::Trial& t) {
  return std::isinf(t.privacy.epsilon) && t.privacy.epsilon > 0 && t.privacy.delta >= 1;
}

/// A candidate as the console shows it: numbers to 5 significant figures ({lr: 0.1}, not
/// 0.09999999999999998); files keep full precision.
std::string console_params(const dptune::Params& params) {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : params.values()) {
    out += (first ? "" : ", ") + name + ": ";
    first = false;
    out += std::holds_alternative<double>(value) ? significant(std::get<double>(value), 5)
                                                 : dptune::to_string(value);
  }
  return out + "}";
}

/// What ε means when it is large: the bound on an adversary's odds ratio, e^ε.
std::string loose_epsilon_warning(double epsilon) {
  return "WARNING: epsilon = " + significant(epsilon, 4) + " > " + significant(kLooseEpsilon) +
         ": an observer's odds that any one record is in the data may grow by a factor up to "
         "e^epsilon = " +
         significant(std::exp(epsilon), 2) +
         ", so this guarantee protects little; use more noise, fewer steps or a smaller sampling "
         "rate (dptune privacy --calibrate) for a budget of a few units";
}

std::vector<std::string> param_names(const PipelineConfig& config) {
  std::vector<std::string> names;
  for (const auto& d : config.space.dimensions()) names.push_back(d.name);
  return names;
}

/// With `fitted_preprocessing` (the fitted_standardize opt-in), a last column
/// epsilon_covers_preprocessing = false on every row.
/// `on_front` null: no front was computed (an interrupted map), and the column stays empty.
std::string trials_csv(const std::vector<dptune::Trial>& trials,
                       const std::vector<std::string>& names, const std::set<std::size_t>* on_front,
                       bool fitted_preprocessing) {
  std::ostringstream s;
  s << "id";
  // Hyperparameter columns are prefixed so a parameter named like a result column (e.g. a
  // mechanism's `epsilon`) cannot collide with it.
  for (const auto& n : names) s << ',' << csv_cell(dptune::trials_csv_column(n));
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
      s << ',' << full_precision(t.privacy.epsilon) << ',' << full_precision(t.privacy.delta);
    s << ',' << full_precision(t.utility_mean) << ',' << full_precision(t.utility_min) << ','
      << full_precision(t.utility_max) << ',' << t.repetitions << ',' << significant(t.seconds)
      << ','
      << (!on_front            ? ""
          : on_front->count(i) ? "true"
                               : "false")
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

// ---- the preprocessing statement ----------------------------------------

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

/// every report names the sampler of each component with a `noise` parameter; one that
/// draws floating-point noise (`noise: fast`) is flagged insecure, because such noise reveals
/// low-order bits of the noiseless value (Mironov 2012).
std::vector<std::string> noise_notes(const PipelineConfig& config) {
  std::vector<std::string> notes;
  auto check = [&](const ComponentConfig* c, const char* section) {
    if (c == nullptr || !c->params.contains("noise")) return;
    const dptune::Value& v = c->params.at("noise");
    const auto* text = std::get_if<std::string>(&v);
    if (text != nullptr && *text == "secure")
      notes.push_back(std::string("noise: ") + section + " '" + c->use +
                      "' draws exact discrete noise on a power-of-two grid (noise: secure; "
                      "Canonne, Kamath & Steinke 2020; docs/noise.md)");
    if (text != nullptr && *text == "fast")
      notes.push_back(std::string("INSECURE NOISE: ") + section + " '" + c->use +
                      "' draws floating-point noise (noise: fast), whose low-order bits can "
                      "reveal the noiseless value (Mironov 2012); the epsilon reported assumes "
                      "ideal real-valued noise.  Use noise: secure for releases (the built-in "
                      "plugins' default; a command program must draw it itself).");
  };
  check(&config.algorithm, "algorithm");
  check(config.mechanism ? &*config.mechanism : nullptr, "mechanism");
  check(&config.tuner, "tuner");
  return notes;
}

/// summary.json's and model.json's "test_score": the score of the released model on held-out data.
void json_test_score(JsonWriter& w, const TestScore& t, const std::string& utility) {
  w.begin_object();
  w.key("utility").value(utility);
  w.key("on").value(t.source);
  w.key("value");
  if (t.value)
    w.value(*t.value);
  else
    w.null();
  w.key("noisy").value(t.noise.has_value());
  if (t.noise) {
    w.key("epsilon").value(t.noise->epsilon);
    w.key("mechanism").value("laplace (exact discrete Laplace on a power-of-two grid)");
    w.key("sensitivity").value(t.noise->sensitivity);
    w.key("noise_scale").value(t.noise->scale());
  } else {
    w.key("assumed_public").value(t.public_file);
  }
  w.end_object();
}

/// What a private tuner releases, exactly: the selected candidate (null when the tuner output its
/// data-independent default instead), its private score, the released model's file and the notes
/// the tuner declares as DP outputs.  Everything else a private tuner's report writes must not
/// depend on the data or on secret randomness (K, run counts, attempt indices, run times:
/// Papernot & Steinke 2022, Thms 2 and 6 cover the best run with K hidden).
void json_release(JsonWriter& w, const ReportInput& in, const std::string& model_file,
                  const std::vector<std::string>& dp_notes,
                  const std::vector<std::string>& model_files = {}) {
  const dptune::TuningResult& result = in.result;
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
  if (!model_file.empty() && !model_files.empty()) {
    w.key("model_files").begin_array();
    for (const auto& f : model_files) w.value(f);
    w.end_array();
  }
  if (in.test_score) {
    w.key("test_score");
    json_test_score(w, *in.test_score, in.config.utility.use);
  }
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

namespace {

/// What a report states, decided once from the tuner's result and shared by every file and the
/// console: which trials are public, which notes are DP outputs, the front of a map.
struct Outline {
  /// A private tuner's public outputs are its release (json_release) and what does not depend on
  /// the data or secret randomness; the maps (trusted analysts) report everything.  A private
  /// tuner's trials (and its run count and times) go only to files marked SENSITIVE, on opt-in.  A
  /// run with neither a selection nor a guarantee (a tuner's simulation mode, which reads no
  /// private data) releases nothing and is reported like a map.
  bool private_tuner = false;
  bool write_trials = false;
  bool map_trials = false;
  /// A private tuner's opt-in file is written even without trials, so that the list of files
  /// does not tell whether any run happened.
  bool sensitive_opt_in = false;
  /// Every trial non-private (grid or random with private: false): a non-private baseline, shown
  /// by utility alone; there is no privacy-utility trade-off, front or hypervolume to report.
  bool baseline = false;
  std::vector<std::size_t> by_utility;  // baseline: the trials by decreasing utility
  std::vector<std::size_t> front;       // maps: the Pareto front, by ε
  double hypervolume = 0;
  std::vector<std::string> public_notes, dp_notes;
  std::string model_note;  // a map's released model (a private tuner's joins dp_notes)
  std::string model_file;  // a private tuner's released model file, when written
  std::vector<std::string> model_files;  // the released model's own files (model/...), if any
  /// Whether `file` is in the public list (a private tuner's model files belong to its release).
  bool listed(const std::string& file) const {
    return !(private_tuner &&
             (file == model_file ||
              std::find(model_files.begin(), model_files.end(), file) != model_files.end()));
  }
};

Outline outline_of(const ReportInput& in) {
  const dptune::TuningResult& result = in.result;
  Outline o;
  o.write_trials = !result.trials_sensitive || in.config.output.sensitive_trials;
  o.private_tuner =
      !result.trusted_analyst_only && (result.selected.has_value() || result.guarantee.has_value());
  o.map_trials = o.write_trials && !o.private_tuner;
  o.sensitive_opt_in = o.private_tuner && result.trials_sensitive && o.write_trials;
  for (const auto& n : result.notes)
    (o.private_tuner && is_dp_output_note(n) ? o.dp_notes : o.public_notes).push_back(n);
  for (auto& n : noise_notes(in.config)) o.public_notes.push_back(std::move(n));
  // How the test score is made is public (the split, ε, the noise scale, the file declared
  // public); its value depends on the release.
  if (in.test_score) o.public_notes.push_back(in.test_score->method(in.config.utility.use));
  o.baseline = o.map_trials && !result.trials.empty() &&
               std::all_of(result.trials.begin(), result.trials.end(), non_private);
  if (o.baseline) {
    for (std::size_t i = 0; i < result.trials.size(); ++i) o.by_utility.push_back(i);
    std::stable_sort(o.by_utility.begin(), o.by_utility.end(), [&](std::size_t a, std::size_t b) {
      return result.trials[a].utility_mean > result.trials[b].utility_mean;
    });
  }
  if (o.map_trials) o.front = trial_front(result.trials);
  std::vector<dptune::Point> front_points;
  front_points.reserve(o.front.size());
  for (std::size_t i : o.front)
    front_points.push_back({result.trials[i].privacy.epsilon, 1.0 - result.trials[i].utility_mean});
  o.hypervolume = dptune::hypervolume(front_points, {kReferenceEpsilon, kReferenceError});
  return o;
}

/// run.SENSITIVE.json: the run count and run time of a private tuner reveal K (Papernot &
/// Steinke 2022 hides it): opt-in only.
std::string sensitive_run_json(const ReportInput& in) {
  std::ostringstream rs;
  JsonWriter rw(rs);
  rw.begin_object();
  rw.key("warning").value(
      "SENSITIVE: the run count and run time of a private tuner depend on its secret "
      "randomness (e.g. the repetition tuner's K) and on the data; not covered by the guarantee");
  rw.key("trials_count").value(in.result.trials.size());
  rw.key("seconds").value(in.seconds);
  rw.end_object();
  rs << '\n';
  return rs.str();
}

}  // namespace

std::string resolved_config(const ReportInput& in) {
  PipelineConfig ran = in.config;
  // A fitted scaling's statistics come from the private rows: never written out (its kind is).
  if (!in.preprocessing.fitted()) ran.preprocessing = in.preprocessing;
  std::string set_at_run_time;
  if (ran.mechanism) {
    dptune::Params kept;
    for (const auto& [name, value] : ran.mechanism->params)
      if (in.mechanism_set_at_run_time.count(name))
        set_at_run_time += (set_at_run_time.empty() ? "" : ", ") + name;
      else
        kept.set(name, value);
    ran.mechanism->params = kept;
  }
  std::string yaml = to_yaml(ran);
  // The public statistics are written inline; where they came from is said beside them.
  const std::string preprocessing = "\n  preprocessing: ";
  if (const auto at = yaml.find(preprocessing); at != std::string::npos &&
                                                !ran.preprocessing.source.empty() &&
                                                ran.preprocessing.source != "given inline")
    yaml.insert(at + 1, "  # preprocessing statistics from " + ran.preprocessing.source + "\n");
  const std::string section = "\nmechanism:\n";
  if (const auto at = yaml.find(section); at != std::string::npos && !set_at_run_time.empty())
    yaml.insert(at + section.size(), "  # " + set_at_run_time +
                                         ": set for every run by the algorithm or the tuner, not "
                                         "read from here (the guarantee's derivation states it)\n");
  return yaml;
}

namespace {

/// resolved_config.yaml, the trials (trials.csv, or trials.SENSITIVE.csv and run.SENSITIVE.json
/// on opt-in), a map's front (pareto_front.csv, pareto.svg) and the tuner's series.  Returns the
/// figures for report.html.
std::vector<WrittenFigure> write_trial_files(const ReportInput& in, const Outline& o,
                                             RunSummary& summary) {
  const PipelineConfig& config = in.config;
  const dptune::TuningResult& result = in.result;
  const auto names = param_names(config);
  const std::set<std::size_t> on_front(o.front.begin(), o.front.end());
  write_text_file(config.output.dir / "resolved_config.yaml", resolved_config(in));
  summary.files.push_back("resolved_config.yaml");
  if (o.write_trials && (!result.trials.empty() || o.sensitive_opt_in)) {
    const std::string trials_name = result.trials_sensitive ? "trials.SENSITIVE.csv" : "trials.csv";
    write_text_file(config.output.dir / trials_name,
                    trials_csv(result.trials, names, &on_front, in.preprocessing.fitted()));
    summary.files.push_back(trials_name);
  }
  if (o.sensitive_opt_in) {
    write_text_file(config.output.dir / "run.SENSITIVE.json", sensitive_run_json(in));
    summary.files.push_back("run.SENSITIVE.json");
  }
  std::vector<WrittenFigure> figures;
  if (o.map_trials && !result.trials.empty() && !o.baseline) {
    std::vector<dptune::Trial> front_trials;
    front_trials.reserve(o.front.size());
    for (std::size_t i : o.front) front_trials.push_back(result.trials[i]);
    std::set<std::size_t> all;
    for (std::size_t k = 0; k < front_trials.size(); ++k) all.insert(k);
    write_text_file(config.output.dir / "pareto_front.csv",
                    trials_csv(front_trials, names, &all, in.preprocessing.fitted()));
    summary.files.push_back("pareto_front.csv");
    // One figure per question: a trade-off only where runs differ in ε, never for a simulation.
    if (config.output.plot && result.trusted_analyst_only && has_tradeoff(result.trials)) {
      figures.push_back(
          {"pareto.svg", pareto_svg(result.trials, o.front,
                                    config.name + ": privacy-utility trade-off", config.delta)});
      write_text_file(config.output.dir / "pareto.svg", figures.back().svg);
      summary.files.push_back("pareto.svg");
    }
  }
  // A map's view of the search space: utility against each hyperparameter (and over two).
  if (config.output.plot && o.map_trials && (result.trusted_analyst_only || o.baseline))
    for (auto& f : write_search_space_plots(config.output.dir, config.name, result.trials,
                                            config.space, config.utility.use, summary.files))
      figures.push_back(std::move(f));
  for (auto& f : write_series(config.output.dir, config.name, result.series, config.output.plot,
                              summary.files))
    figures.push_back(std::move(f));
  return figures;
}

/// model.json: the released model with what released it (the release or the selection, the
/// guarantee) and its preprocessing.
std::string model_json(const ReportInput& in, bool private_tuner, const ExportedModel& exported) {
  const dptune::TuningResult& result = in.result;
  std::ostringstream ms;
  JsonWriter mw(ms);
  mw.begin_object();
  mw.key("format").value(kModelFileFormat);
  mw.key("released").value(true);
  mw.key("note").value(
      "the model of the tuner's selected run, the only model the tuning releases; its "
      "privacy is the tuning's guarantee");
  mw.key("pipeline").value(in.config.name);
  mw.key("algorithm").value(in.config.algorithm.use);
  if (private_tuner) {
    mw.key("release");
    json_release(mw, in, "", {});
  } else if (result.selected) {
    mw.key("selected");
    json_trial(mw, *result.selected);
    if (in.test_score) {
      mw.key("test_score");
      json_test_score(mw, *in.test_score, in.config.utility.use);
    }
  }
  if (result.guarantee) {
    mw.key("guarantee");
    json_guarantee(mw, *result.guarantee);
  }
  write_model_fields(mw, exported);
  mw.end_object();
  ms << '\n';
  return ms.str();
}

/// A released model kept in files (an external program's, dptune/model_files.hpp): its files,
/// of the released run only, copied under model/ and named by model.json, which a trainer of the
/// same parameters reads back for `dptune predict`.  Every other run's folder is gone with its
/// model; keep_folder receives the released run's folder under one fixed name, so that nothing
/// kept reveals how many runs there were.
void write_released_files(const ReportInput& in, Outline& o, RunSummary& summary,
                          const dptune::ModelFiles& files) {
  ExportedModel exported{{}, in.preprocessing, in.feature_names, in.categorical};
  exported.model.kind = kFilesModelKind;
  exported.model.description = files.description;
  exported.model.features = files.features;
  exported.model.num_classes = files.num_classes;
  exported.algorithm = in.config.algorithm.use;
  exported.trainer_params = files.trainer_params;
  exported.files = copy_released_files(files, in.config.output.dir);
  write_text_file(in.config.output.dir / "model.json", model_json(in, o.private_tuner, exported));
  summary.files.push_back("model.json");
  std::string names;
  for (const auto& f : exported.files) {
    summary.files.push_back(f);
    o.model_files.push_back(f);
    names += ", " + f;
  }
  o.model_note = "released model: model.json" + names + " (" + files.description + ")";
  if (const auto kept = keep_released_run(files); !kept.empty())
    o.model_note += "; the released run's folder is copied to " + kept.string() +
                    " (keep_dir; SENSITIVE: it holds that run's private training rows)";
}

/// The released model: the selected run's, the one model a private tuner releases, written as
/// model.json.  Its export is empty for models that cannot export themselves: said in the note.
/// Whether a private tuner released a model can depend on its DP output (the threshold variant's
/// default): its file and note belong to the release, not to the public list. Then the test score's
/// statement: a DP output of a private tuner, a public note of a map.
void write_released_model(const ReportInput& in, Outline& o, RunSummary& summary) {
  const auto* kept_in_files = dynamic_cast<const dptune::FileModel*>(in.released_model.get());
  const dptune::ModelFiles files =
      kept_in_files ? kept_in_files->model_files() : dptune::ModelFiles{};
  if (!files.files.empty()) {
    write_released_files(in, o, summary, files);
  } else if (in.released_model) {
    const std::optional<dptune::ModelExport> exported = in.released_model->export_model();
    if (!exported) {
      o.model_note = "the released model (" + in.released_model->describe() +
                     ") cannot be written out: its algorithm gives no exportable form of it";
    } else {
      write_text_file(
          in.config.output.dir / "model.json",
          model_json(in, o.private_tuner,
                     ExportedModel{*exported, in.preprocessing, in.feature_names, in.categorical}));
      summary.files.push_back("model.json");
      o.model_note = "released model: model.json (" + exported->description + ")";
    }
  }
  if (o.private_tuner && !o.model_note.empty()) {
    if (std::find(summary.files.begin(), summary.files.end(), "model.json") != summary.files.end())
      o.model_file = "model.json";
    o.dp_notes.push_back(o.model_file.empty()
                             ? o.model_note
                             : "model: " + o.model_note.substr(o.model_note.find(':') + 2));
    o.model_note.clear();
  }
  if (in.test_score && o.private_tuner)
    o.dp_notes.push_back(in.test_score->statement(in.config.utility.use));
  else if (in.test_score)
    o.public_notes.push_back(in.test_score->statement(in.config.utility.use));
}

/// A note of the tuner's that cites one of its opt-in SENSITIVE files by name ("the selected
/// candidate's row in trials.SENSITIVE.csv has id 77") is dropped when that file was not written
/// (output.sensitive_trials is off): no report cites a file that is not there.
void drop_notes_citing_unwritten_files(Outline& o, const RunSummary& summary) {
  auto cites_unwritten = [&summary](const std::string& note) {
    for (const char* file : {"trials.SENSITIVE.csv", "run.SENSITIVE.json"})
      if (note.find(std::string(file) + " has") != std::string::npos &&
          std::find(summary.files.begin(), summary.files.end(), file) == summary.files.end())
        return true;
    return false;
  };
  std::erase_if(o.dp_notes, cites_unwritten);
  std::erase_if(o.public_notes, cites_unwritten);
}

/// report.html: one self-contained page (report_html.cpp), listed before summary.json.
void write_html(const ReportInput& in, const Outline& o, const std::vector<WrittenFigure>& figures,
                RunSummary& summary) {
  std::vector<std::string> page_files;
  for (const auto& f : summary.files)
    if (o.listed(f)) page_files.push_back(f);
  page_files.insert(page_files.end(), {"report.html", "summary.json"});
  const char* warning = o.baseline                       ? kNonPrivateWarning
                        : in.result.trusted_analyst_only ? kTrustedAnalystWarning
                                                         : "";
  write_text_file(
      in.config.output.dir / "report.html",
      report_html({in, o.private_tuner, o.baseline, warning, o.front, o.hypervolume, o.public_notes,
                   o.dp_notes, o.model_note, figures, page_files, o.model_file}));
  summary.files.push_back("report.html");
}

/// summary.json's description of the run: versions, the pipeline's components, randomness.
void json_run(JsonWriter& w, const ReportInput& in, const Outline& o) {
  const PipelineConfig& config = in.config;
  w.key("dptune_version").value(DPTUNE_VERSION_STRING);
  w.key("pipeline").value(config.name);
  w.key("pipeline_file").value(config.file.string());
  w.key("data").value(in.data_description);
  json_preprocessing(w, in.preprocessing);
  w.key("algorithm").value(config.algorithm.use);
  w.key("accountant").value(config.accountant.use);
  w.key("utility").value(config.utility.use);
  w.key("tuner").value(config.tuner.use);
  w.key("mechanism_audits").begin_array();
  for (const auto& t : in.mechanism_trust) w.value(t);
  w.end_array();
  w.key("delta").value(config.delta);
  w.key("repetitions").value(config.repetitions);
  w.key("randomness").begin_object();
  w.key("source").value(in.randomness);
  w.key("cryptographically_secure").value(in.randomness_secure);
  if (config.execution.seed) w.key("seed").value(static_cast<std::int64_t>(*config.execution.seed));
  w.end_object();
  w.key("executor").value(in.executor);
  // Run times and counts of a private tuner depend on K and on the data: never public.
  if (!o.private_tuner) w.key("seconds").value(in.seconds);
}

/// summary.json's results: the baseline's best or a map's front, the release or the selection,
/// the test score and the guarantee.
void json_results(JsonWriter& w, const ReportInput& in, const Outline& o) {
  const dptune::TuningResult& result = in.result;
  w.key("trusted_analyst_only").value(result.trusted_analyst_only);
  if (o.baseline)
    w.key("warning").value(kNonPrivateWarning);
  else if (result.trusted_analyst_only)
    w.key("warning").value(kTrustedAnalystWarning);
  if (o.baseline) {
    w.key("non_private_baseline").value(true);
    w.key("best");
    json_trial(w, result.trials[o.by_utility.front()]);
  }
  if (!o.private_tuner) w.key("trials_count").value(result.trials.size());
  w.key("trials_sensitive").value(result.trials_sensitive);
  w.key("trials_written").value(o.write_trials);
  if (o.map_trials && !o.baseline) {
    w.key("pareto_front").begin_array();
    for (std::size_t i : o.front) json_trial(w, result.trials[i]);
    w.end_array();
    w.key("hypervolume").begin_object();
    w.key("value").value(o.hypervolume);
    w.key("objectives").value("(epsilon, 1 - utility_mean), both minimised");
    w.key("reference").begin_array().value(kReferenceEpsilon).value(kReferenceError).end_array();
    w.end_object();
  }
  if (o.private_tuner) {
    w.key("release");
    json_release(w, in, o.model_file, o.dp_notes, o.model_files);
  } else if (result.selected) {
    w.key("selected");
    json_trial(w, *result.selected);
  }
  if (!o.private_tuner && in.test_score) {
    w.key("test_score");
    json_test_score(w, *in.test_score, in.config.utility.use);
  }
  if (result.guarantee) {
    w.key("guarantee");
    json_guarantee(w, *result.guarantee);
  }
}

/// summary.json: the run, the results, the series, the public notes and the public files.
std::string summary_json(const ReportInput& in, const Outline& o, const RunSummary& summary) {
  std::ostringstream js;
  JsonWriter w(js);
  w.begin_object();
  json_run(w, in, o);
  json_results(w, in, o);
  w.key("series").begin_array();
  for (const auto& series : in.result.series) {
    w.begin_object();
    w.key("name").value(series.name);
    w.key("x_label").value(series.x_label);
    w.key("y_label").value(series.y_label);
    w.key("points").value(series.x.size());
    w.key("csv").value(series_file_stem(series.name) + ".csv");
    if (in.config.output.plot) w.key("svg").value(series_file_stem(series.name) + ".svg");
    if (!series.y.empty()) w.key("last").value(series.y.back());
    w.end_object();
  }
  w.end_array();
  w.key("notes").begin_array();
  for (const auto& n : o.public_notes) w.value(n);
  if (!o.model_note.empty()) w.value(o.model_note);
  w.end_array();
  w.key("files").begin_array();
  for (const auto& f : summary.files)
    if (o.listed(f)) w.value(f);
  w.value("summary.json");
  w.end_array();
  w.end_object();
  return js.str();
}

/// The public notes on the console (console_notes: at most kConsoleNoteLines lines without
/// --verbose; report.html and summary.json hold them all).
void print_public_notes(std::ostream& out, const ReportInput& in, const Outline& o) {
  std::vector<std::string> notes = o.public_notes;
  std::erase_if(notes, [&](const std::string& note) {
    return std::any_of(in.printed_warnings.begin(), in.printed_warnings.end(),
                       [&](const std::string& w) { return note == "WARNING: " + w; });
  });
  out << console_notes(notes, in.verbose);
}

/// A private tuner's DP notes as the console shows them: a long passage repeated from an earlier
/// note said once (the command trainer's provenance in the model's note), and without --verbose
/// numbers at 5 digits, event dumps elided and long vectors summarised.
std::vector<std::string> console_dp_notes(const std::vector<std::string>& notes, bool verbose) {
  std::vector<std::string> shown = without_repeated_passages(notes);
  if (!verbose)
    for (auto& note : shown) note = console_note(note);
  return shown;
}

/// The console's first lines: the run, its randomness, audits, preprocessing, warnings, notes.
void print_header(std::ostream& out, const ReportInput& in, const Outline& o) {
  const PipelineConfig& config = in.config;
  out << "dptune " << DPTUNE_VERSION_STRING << ": pipeline '" << config.name << "', tuner "
      << config.tuner.use;
  if (!o.private_tuner)
    out << ", " << in.result.trials.size() << " trials in " << significant(in.seconds, 3) << " s";
  out << " (" << in.executor << ")\n";
  out << "randomness: " << in.randomness << "\n";
  for (const auto& t : in.mechanism_trust) out << "audit: " << t << "\n";
  print_preprocessing(out, in.preprocessing);
  if (o.baseline)
    out << "NOTE: " << kNonPrivateWarning << "\n";
  else if (in.result.trusted_analyst_only)
    out << "NOTE: " << kTrustedAnalystWarning << "\n";
  print_public_notes(out, in, o);
}

/// The console's table: a baseline's best trials by utility, or a map's front; for a private
/// tuner, where its trials went (SENSITIVE files) or that they are withheld.
void print_trials(std::ostream& out, const ReportInput& in, const Outline& o) {
  const PipelineConfig& config = in.config;
  const dptune::TuningResult& result = in.result;
  if (o.baseline) {
    const std::size_t shown = std::min<std::size_t>(o.by_utility.size(), 10);
    out << "Non-private baseline, best " << shown << " of " << o.by_utility.size() << " trials ("
        << config.utility.use << " over R = " << config.repetitions
        << " runs; no privacy guarantee, no epsilon):\n";
    out << "  " << std::left << std::setw(10) << "utility" << std::setw(18) << "utility min..max"
        << "params\n";
    for (std::size_t k = 0; k < shown; ++k) {
      const auto& t = result.trials[o.by_utility[k]];
      out << "  " << std::setw(10) << significant(t.utility_mean, 4) << std::setw(18)
          << (significant(t.utility_min, 3) + ".." + significant(t.utility_max, 3))
          << console_params(t.params) << "\n";
    }
  } else if (o.map_trials && !o.front.empty()) {
    out << "Pareto front (epsilon at delta = " << significant(config.delta) << ", error = 1 - "
        << config.utility.use << " over R = " << config.repetitions << " runs):\n";
    out << "  " << std::left << std::setw(12) << "epsilon" << std::setw(10) << "error"
        << std::setw(18) << "utility min..max"
        << "params\n";
    for (std::size_t i : o.front) {
      const auto& t = result.trials[i];
      out << "  " << std::setw(12) << significant(t.privacy.epsilon, 5) << std::setw(10)
          << significant(1 - t.utility_mean, 4) << std::setw(18)
          << (significant(t.utility_min, 3) + ".." + significant(t.utility_max, 3))
          << console_params(t.params) << "\n";
    }
    out << "hypervolume w.r.t. (epsilon, error) = (" << significant(kReferenceEpsilon) << ", "
        << significant(kReferenceError) << "): " << significant(o.hypervolume, 6) << "\n";
  } else if (o.sensitive_opt_in) {
    out << wrapped(
        "per-trial results of private runs, their count and run times: "
        "trials.SENSITIVE.csv and run.SENSITIVE.json (SENSITIVE: not covered by the "
        "guarantee; keep them private)",
        "", "  ");
  } else if (result.trials_sensitive && !o.write_trials) {
    out << "per-trial results of private runs are withheld (output.sensitive_trials: true writes\n"
           "  them, marked SENSITIVE)\n";
  }
}

/// The console's selection: a private tuner's release (the one block that may depend on the
/// data; tests/neighbouring checks it), or a map's selected trial.
void print_selection(std::ostream& out, const ReportInput& in, const Outline& o) {
  const dptune::TuningResult& result = in.result;
  if (o.private_tuner) {
    out << "Released (differentially private):\n";
    if (result.selected)
      out << "  selected: " << console_params(result.selected->params)
          << (std::isnan(result.selected->utility_mean)
                  ? std::string("  (its utility is not released)")
                  : "  utility " + significant(result.selected->utility_mean, 4))
          << "\n";
    else
      out << "  selected: none (no run is released)\n";
    // A nominal figure computed from the release is no part of the guarantee: said apart.
    std::vector<std::string> nominal;
    for (const auto& n : console_dp_notes(o.dp_notes, in.verbose)) {
      const std::string body =
          is_dp_output_note(n) ? n.substr(std::string(dptune::kDpOutputNote).size()) : n;
      if (body.rfind("NOMINAL", 0) == 0)
        nominal.push_back(body);
      else
        out << wrapped(n, "  ", "    ");
    }
    out << "\n";
    if (!nominal.empty()) {
      out << kNominalHeader << "\n";
      for (const auto& n : nominal) out << wrapped(n, "  ", "    ");
      out << "\n";
    }
  } else if (result.selected) {
    const double epsilon = result.selected->privacy.epsilon;
    out << "selected: " << console_params(result.selected->params) << "  utility "
        << significant(result.selected->utility_mean, 4);
    if (!result.guarantee && std::isfinite(epsilon)) out << "  epsilon " << significant(epsilon, 5);
    out << "\n";
    if (!result.guarantee && epsilon > kLooseEpsilon && std::isfinite(epsilon))
      out << wrapped(loose_epsilon_warning(epsilon), "", "  ");
  }
}

/// The console's last lines: the guarantee of the whole run and the public files.
void print_guarantee_and_files(std::ostream& out, const ReportInput& in, const Outline& o,
                               const RunSummary& summary) {
  if (in.result.guarantee) {
    const auto& g = *in.result.guarantee;
    out << "guarantee of the whole tuning run: (epsilon, delta) = (" << significant(g.epsilon, 5)
        << ", " << significant(g.delta, 3) << "), accountant " << g.accountant << "\n";
    out << wrapped(guarantee_in_words(g, in.config.tuner_traits.unit), "  in words: ", "    ");
    if (in.verbose)
      out << wrapped(g.derivation, "  how: ", "       ");
    else
      out << "  how it is derived: summary.json guarantee.derivation, or dptune run --verbose\n";
    if (g.epsilon > kLooseEpsilon) out << wrapped(loose_epsilon_warning(g.epsilon), "", "  ");
  }
  out << "results: " << in.config.output.dir.string() << "/ (";
  bool first_file = true;
  for (const auto& f : summary.files)
    if (o.listed(f)) {
      out << (first_file ? "" : ", ") << f;
      first_file = false;
    }
  out << ")\n";
}

}  // namespace

RunSummary write_report(const ReportInput& in, std::ostream& out) {
  const PipelineConfig& config = in.config;
  RunSummary summary;
  summary.output_dir = config.output.dir;
  summary.trials = in.result.trials.size();
  std::error_code ec;
  std::filesystem::create_directories(config.output.dir, ec);
  if (ec)
    throw dptune::Error("cannot create output folder " + config.output.dir.string() + ": " +
                        ec.message());
  Outline outline = outline_of(in);
  const std::vector<WrittenFigure> figures = write_trial_files(in, outline, summary);
  write_released_model(in, outline, summary);
  drop_notes_citing_unwritten_files(outline, summary);
  write_html(in, outline, figures, summary);
  write_text_file(config.output.dir / "summary.json", summary_json(in, outline, summary));
  summary.files.push_back("summary.json");
  print_header(out, in, outline);
  print_trials(out, in, outline);
  print_selection(out, in, outline);
  print_guarantee_and_files(out, in, outline, summary);
  return summary;
}

std::string partial_trials_csv(const PipelineConfig& config,
                               const std::vector<dptune::Trial>& trials,
                               bool fitted_preprocessing) {
  return trials_csv(trials, param_names(config), nullptr, fitted_preprocessing);
}

}  // namespace dptune::host
