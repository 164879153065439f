// `dptune audit trainer PIPELINE`: an empirical lower bound on the ε of the pipeline's trainer from
// one training run with canaries (dptune/host/trainer_audit.hpp; docs/audit.md, "Auditing a
// trainer").  Exit 0 when the bound stays within the claim, 3 when it exceeds it (a certified
// violation), 2 for usage or configuration errors.
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "audit_common.hpp"
#include "cli_common.hpp"
#include "dptune/abi.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/plots.hpp"
#include "dptune/host/trainer_audit.hpp"

namespace po = boost::program_options;

namespace dptune::cli {

namespace {

constexpr int kViolation = 3;
using dptune::host::TrainerAuditResult;

std::string verdict(const TrainerAuditResult& r) {
  return r.violation ? "VIOLATION certified: the trainer does not keep its claim"
                     : "no violation found (a lower bound below the claim proves nothing; see "
                       "docs/audit.md)";
}

std::string canary_description(const TrainerAuditResult& r) {
  return r.canary_kind == "gradient"
             ? "gradient (white-box: Dirac canary gradients in the clipped sums, scored on the "
               "released noisy sums)"
             : "input (black-box: canary rows, scored on the trained model)";
}

std::string dimensions(const TrainerAuditResult& r) {
  const double m = static_cast<double>(r.canaries.size());
  if (r.canary_kind == "gradient")
    return std::to_string(r.parameters) +
           " parameters (p/m = " + significant(double(r.parameters) / m) + ")";
  return std::to_string(r.features) + " features (d/m = " + significant(double(r.features) / m) +
         ")";
}

void print_text(const TrainerAuditResult& r, double confidence) {
  std::size_t in = 0;
  for (const auto& c : r.canaries) in += c.included ? 1 : 0;
  std::cout << "audit of trainer " << r.trainer << " " << r.trainer_version << " (" << r.library
            << ", sha256 " << r.sha256 << ")\nparams: " << r.params.to_string()
            << "\ncanaries: " << canary_description(r) << "\ngame: " << r.neighbouring << ", "
            << r.canaries.size() << " canaries (" << in << " in), norm "
            << significant(r.canary_norm) << ", " << dimensions(r) << ", " << r.real_rows
            << " real rows, " << r.trained_rows << " rows trained on\n"
            << (r.canary_kind == "input" && r.features < r.canaries.size()
                    ? "warning: fewer features than canaries: canaries interfere with each other "
                      "and the bound is weak (docs/audit.md, \"Interference\")\n"
                    : "")
            << "score: " << r.score_kind << "\nreported event: " << r.event.to_string()
            << "\nclaimed privacy: epsilon = " << significant(r.epsilon_claimed)
            << " at delta = " << significant(r.delta) << " (" << r.accountant
            << ")\nanalysis: " << r.analysis << "\n";
  const auto& snj = r.bounds.snj;
  const auto& fdp = r.bounds.fdp;
  std::cout << "empirical epsilon lower bound: " << significant(r.epsilon_lower) << " (confidence "
            << significant(confidence) << ")\n  Steinke et al.: " << significant(snj.epsilon_lower)
            << " (" << snj.correct << " of the top " << snj.guesses << " guesses right, level "
            << significant(snj.level)
            << ")\n  Mahloujifar et al.: " << significant(fdp.epsilon_lower) << " (" << fdp.correct
            << " of the top " << fdp.guesses << " guesses right, level " << significant(fdp.level)
            << "); the claimed profile is "
            << (r.bounds.fdp_rejects_claim
                    ? "REJECTED (" + std::to_string(r.bounds.rejecting_correct) + " of the top " +
                          std::to_string(r.bounds.rejecting_guesses) + " right)"
                    : std::string("not rejected"))
            << "\n";
  if (std::isfinite(r.epsilon_claimed) && r.epsilon_claimed > 0)
    std::cout << "tightness (lower bound / claim): "
              << significant(r.epsilon_lower / r.epsilon_claimed) << "\n";
  std::cout << "randomness: " << r.randomness << "\nresult: " << verdict(r)
            << "\ntime: " << significant(r.seconds) << " s\n";
}

void print_json(const TrainerAuditResult& r, double confidence) {
  dptune::host::JsonWriter w(std::cout);
  w.begin_object().key("trainer").value(r.trainer).key("version").value(r.trainer_version);
  w.key("library").value(r.library).key("sha256").value(r.sha256).key("params").value(r.params);
  w.key("dptune_version").value(DPTUNE_VERSION_STRING);
  w.key("neighbouring").value(r.neighbouring).key("event").value(r.event.to_string());
  w.key("delta").value(r.delta).key("epsilon_claimed").value(r.epsilon_claimed);
  w.key("accountant").value(r.accountant).key("analysis").value(r.analysis);
  w.key("confidence").value(confidence).key("epsilon_lower_bound").value(r.epsilon_lower);
  for (const auto& [name, b] :
       {std::pair{"steinke", &r.bounds.snj}, {"mahloujifar", &r.bounds.fdp}}) {
    w.key(name).begin_object().key("epsilon_lower_bound").value(b->epsilon_lower);
    w.key("guesses").value(b->guesses).key("correct").value(b->correct);
    w.key("tests").value(b->tests).key("level").value(b->level).end_object();
  }
  w.key("claimed_profile_rejected").value(r.bounds.fdp_rejects_claim);
  w.key("canary_kind").value(r.canary_kind).key("parameters").value(r.parameters);
  w.key("canaries").value(r.canaries.size()).key("canary_norm").value(r.canary_norm);
  w.key("real_rows").value(r.real_rows).key("trained_rows").value(r.trained_rows);
  w.key("features").value(r.features).key("score").value(r.score_kind);
  w.key("scores_in").begin_array();
  for (const auto& c : r.canaries)
    if (c.included) w.value(c.score);
  w.end_array().key("scores_out").begin_array();
  for (const auto& c : r.canaries)
    if (!c.included) w.value(c.score);
  w.end_array();
  w.key("randomness").value(r.randomness).key("violation").value(r.violation);
  w.key("seconds").value(r.seconds).end_object();
  std::cout << "\n";
}

/// The in and out canaries' scores as two histograms over 20 common bins (SVG).
std::string score_histogram(const TrainerAuditResult& r) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& c : r.canaries) {
    if (!std::isfinite(c.score)) continue;
    lo = std::min(lo, c.score);
    hi = std::max(hi, c.score);
  }
  if (!(lo < hi)) hi = lo + 1;
  constexpr int kBins = 20;
  const double width = (hi - lo) / kBins;
  dptune::host::Figure figure;
  figure.title = "Canary scores (" + r.score_kind + ")";
  figure.x_label = "score (higher: guessed in)";
  figure.y_label = "canaries";
  figure.x_log = false;
  figure.y_log = false;
  for (const bool in : {true, false}) {
    dptune::host::Layer layer;
    layer.label = in ? "in (trained on)" : "out";
    layer.step = true;
    std::vector<double> counts(kBins, 0);
    for (const auto& c : r.canaries)
      if (c.included == in && std::isfinite(c.score))
        counts[std::min(kBins - 1, static_cast<int>((c.score - lo) / width))] += 1;
    for (int b = 0; b < kBins; ++b) {
      layer.x.push_back(lo + (b + 0.5) * width);
      layer.y.push_back(counts[b]);
    }
    figure.layers.push_back(std::move(layer));
  }
  return dptune::host::render_svg(figure);
}

void write_html(const TrainerAuditResult& r, double confidence, const std::string& file) {
  using dptune::host::xml_escape;
  std::ostringstream s;
  const auto row = [&](const std::string& k, const std::string& v) {
    s << "<tr><th>" << xml_escape(k) << "</th><td>" << xml_escape(v) << "</td></tr>\n";
  };
  s << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Trainer audit: "
    << xml_escape(r.trainer) << "</title>\n<style>body{font-family:sans-serif;max-width:60em;"
    << "margin:2em auto}th{text-align:left;padding-right:1em}.violation{color:#b00}</style>"
    << "</head><body>\n<h1>Trainer audit: " << xml_escape(r.trainer) << "</h1>\n<p class=\""
    << (r.violation ? "violation" : "pass") << "\">" << xml_escape(verdict(r)) << "</p>\n<table>\n";
  row("claimed epsilon", significant(r.epsilon_claimed) + " at delta = " + significant(r.delta) +
                             " (" + r.accountant + ")");
  row("empirical lower bound",
      significant(r.epsilon_lower) + " at confidence " + significant(confidence));
  row("analysis", r.analysis);
  for (const auto& [name, b] :
       {std::pair{"Steinke et al.", &r.bounds.snj}, {"Mahloujifar et al.", &r.bounds.fdp}})
    row(name, significant(b->epsilon_lower) + " (" + std::to_string(b->correct) + " of the top " +
                  std::to_string(b->guesses) + " guesses right, level " + significant(b->level) +
                  ")");
  row("claimed profile (f-DP test)", r.bounds.fdp_rejects_claim ? "rejected" : "not rejected");
  row("canaries", canary_description(r));
  row("game", r.neighbouring + ", " + std::to_string(r.canaries.size()) + " canaries of norm " +
                  significant(r.canary_norm) + ", " + std::to_string(r.trained_rows) +
                  " rows trained on");
  row("reported event", r.event.to_string());
  row("trainer", r.trainer + " " + r.trainer_version + " (" + r.library + ")");
  row("sha256", r.sha256);
  row("params", r.params.to_string());
  row("randomness", r.randomness);
  s << "</table>\n" << score_histogram(r) << "\n</body></html>\n";
  std::ofstream out(file);
  if (!(out << s.str())) throw UsageError("--html " + file + ": cannot write the file");
}

void record(const TrainerAuditResult& r, const dptune::host::TrainerAuditOptions& options) {
  dptune::host::AuditRecord rec;
  rec.plugin = r.trainer;
  rec.version = r.trainer_version;
  rec.library = r.library;
  rec.sha256 = r.sha256;
  rec.dptune_version = DPTUNE_VERSION_STRING;
  rec.params = r.params.to_string();
  rec.configuration = dptune::host::audit_configuration(r.params);
  // A gradient audit is another test of the same configuration: its own record.
  if (r.canary_kind != "input") rec.configuration["canary_kind"] = r.canary_kind;
  rec.samples = r.canaries.size();
  rec.seed = options.seed ? std::to_string(*options.seed) : std::string();
  rec.alpha = 1 - options.confidence;
  rec.result = r.violation ? "violation certified" : "no violation found";
  rec.epsilon_claimed = r.epsilon_claimed;
  rec.delta = r.delta;
  rec.epsilon_lower_bound = r.epsilon_lower;
  rec.date = dptune::host::utc_now_iso8601();
  dptune::host::save_audit_record(rec, dptune::host::audit_store_path());
}

}  // namespace

int cmd_audit_trainer(const std::vector<std::string>& args) {
  po::options_description opts(
      "dptune audit trainer PIPELINE [options]\n\n"
      "Trains the pipeline's trainer ONCE on its training rows plus m canaries, each included\n"
      "independently with probability 1/2, scores every canary from the trained model, and turns\n"
      "the correct guesses of the most confident into an empirical lower bound on epsilon\n"
      "(Steinke, Nasr & Jagielski 2023; and the f-DP test of Mahloujifar, Melis & Chaudhuri\n"
      "2025), reported beside the epsilon the pipeline's accountant claims for that run.\n"
      "The trainer's params: the pipeline's algorithm section, --param values for the search\n"
      "space's (or other) parameters, schema defaults for the rest.\n"
      "Exit codes: 0 no violation found, 3 violation certified, 2 usage or configuration error, "
      "1 failure.\n\noptions");
  std::vector<std::string> sets, plugin_paths, param_texts;
  dptune::host::TrainerAuditOptions options;
  std::string html;
  opts.add_options()("help,h", "this help")("param", po::value(&param_texts)->composing(),
                                            "trainer parameter NAME=VALUE (repeatable)")(
      "set", po::value(&sets)->composing(), "override a pipeline value KEY.PATH=VALUE")(
      "plugin-path", po::value(&plugin_paths)->composing(), "extra plugin folder or file")(
      "canaries", po::value(&options.canaries), "m, the number of canaries (default 200)")(
      "guesses", po::value<std::size_t>(),
      "fixed k: guess only the top k scores (default: k = m/2, m/4, ..., Bonferroni)")(
      "split", "choose k on a random half of the canaries, test on the other half")(
      "confidence", po::value(&options.confidence), "confidence of the bound (default 0.95)")(
      "canary-kind", po::value(&options.canary_kind),
      "input (canary rows, any trainer; default) or gradient (canary gradients in the clipped "
      "sums of a trainer that takes them: dp_sgd, dp_adam)")(
      "canary-scale", po::value(&options.canary_scale),
      "input: canary norm / largest training row norm (default 3, norm at most 1000); gradient: "
      "canary norm / the clipping norm (default 1)")(
      "seed", po::value<std::uint64_t>(),
      "deterministic xoshiro256** streams (default: libsodium CSPRNG)")(
      "json", "machine-readable output")("html", po::value(&html),
                                         "also write the report as an HTML page")(
      "no-record", "do not write the result to the audit record store");
  std::string pipeline;
  const auto parsed = parse_command(opts, args, {{"pipeline", po::value(&pipeline)}});
  if (!parsed) return kOk;
  const po::variables_map& vm = *parsed;
  if (pipeline.empty()) throw UsageError("audit trainer: missing PIPELINE (see --help)");
  if (!(options.confidence > 0 && options.confidence < 1))
    throw UsageError("--confidence must be in (0, 1)");
  if (options.canaries < 8) throw UsageError("--canaries must be at least 8");
  if (options.canary_kind != "input" && options.canary_kind != "gradient")
    throw UsageError("--canary-kind must be input or gradient, not '" + options.canary_kind + "'");
  if (options.canary_kind == "gradient" && !vm.count("canary-scale")) options.canary_scale = 1.0;
  if (!(options.canary_scale > 0)) throw UsageError("--canary-scale must be positive");
  if (vm.count("guesses")) {
    options.guesses = vm["guesses"].as<std::size_t>();
    if (*options.guesses < 1 || *options.guesses > options.canaries)
      throw UsageError("--guesses must be in [1, --canaries]");
  }
  if (vm.count("split")) {
    if (options.guesses) throw UsageError("--split and --guesses exclude each other");
    if (options.canaries < 16) throw UsageError("--split needs at least 16 --canaries");
    options.split = true;
  }
  if (vm.count("seed")) options.seed = vm["seed"].as<std::uint64_t>();
  dptune::host::PluginRegistry registry;
  const auto config = load(pipeline, sets, plugin_paths, registry);
  if (const auto* schema = registry.schema(config.algorithm.kind, config.algorithm.use))
    options.candidate = typed_params(*schema, "algorithm " + config.algorithm.use, param_texts);
  const auto result = options.canary_kind == "gradient"
                          ? dptune::host::run_gradient_trainer_audit(config, registry, options)
                          : dptune::host::run_trainer_audit(config, registry, options);
  if (vm.count("json"))
    print_json(result, options.confidence);
  else
    print_text(result, options.confidence);
  if (!html.empty()) write_html(result, options.confidence, html);
  if (!vm.count("no-record")) record(result, options);
  return result.violation ? kViolation : kOk;
}

}  // namespace dptune::cli
