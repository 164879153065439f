// `dptune study show DIR` and `dptune ledger show FILE`.
#include <boost/program_options.hpp>
#include <iomanip>
#include <iostream>

#include "cli_common.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/json.hpp"
#include "dptune/host/ledger.hpp"
#include "dptune/host/study_status.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dptune::cli {

namespace {

/// Parses "<command> show TARGET [--json] [extra]"; empty when --help was printed.
std::optional<std::string> parse_show(const std::string& command, po::options_description& opts,
                                      const std::vector<std::string>& args, po::variables_map& vm) {
  std::vector<std::string> words;
  auto parsed = parse_command(opts, args, {{"words", po::value(&words), -1}});
  if (!parsed) return std::nullopt;
  vm = std::move(*parsed);
  if (words.size() != 2 || words[0] != "show")
    throw UsageError(command + ": expected `dptune " + command + " show " +
                     (command == "study" ? "DIR" : "FILE") + "` (see --help)");
  return words[1];
}

}  // namespace

int cmd_study(const std::vector<std::string>& args) {
  if (!args.empty() && args.front() == "list") return study_list({args.begin() + 1, args.end()});
  po::options_description opts(
      "dptune study show DIR [--json]  (or: dptune study list [DIR])\n\nThe study kept in "
      "DIR/study.db: status, progress, "
      "randomness, ledger charge.\nstudy.db and study-models/ are SENSITIVE (per-run scores and "
      "models, a private tuner's secret draws): never publish them.\n\noptions");
  opts.add_options()("help,h", "this help")("json", "machine-readable output");
  po::variables_map vm;
  const auto dir = parse_show("study", opts, args, vm);
  if (!dir) return kOk;
  const auto status = dptune::host::read_study(*dir);
  const auto meta = [&](const std::string& key) {
    const auto it = status.meta.find(key);
    return it == status.meta.end() ? std::string() : it->second;
  };
  const char* keys[] = {"study_id",   "status",     "tuner",    "randomness",
                        "started_at", "resumed_at", "progress", "ledger"};
  if (vm.count("json")) {
    dptune::host::JsonWriter w(std::cout);
    w.begin_object();
    for (const char* key : keys)
      if (!meta(key).empty()) w.key(key).value(meta(key));
    w.key("stored_evaluations").value(status.evaluations);
    w.key("recorded_random_words").value(status.random_words);
    w.key("stored_failures").value(status.failures);
    w.key("pipeline").value(meta("pipeline"));
    w.end_object();
    std::cout << "\n";
    return kOk;
  }
  std::cout << "study " << (fs::path(*dir) / "study.db").string() << "\n";
  for (const char* key : keys)
    if (!meta(key).empty())
      std::cout << "  " << std::left << std::setw(20) << key << meta(key) << "\n";
  std::cout << "  " << std::setw(20) << "stored evaluations" << status.evaluations
            << " (SENSITIVE for a private tuner: the count can reveal its secret K)\n";
  std::cout << "  " << std::setw(20) << "recorded words" << status.random_words
            << " (secret draws replayed on --resume)\n";
  if (status.failures > 0)
    std::cout << "  " << std::setw(20) << "stored failures" << status.failures
              << " (a private tuner's failure is replayed on --resume, never run again; its text "
                 "is SENSITIVE: failure.SENSITIVE.txt)\n";
  if (meta("ledger").empty())
    std::cout << "  no ledger: the pipeline has no ledger section, so nothing was charged\n";
  return kOk;
}

int cmd_ledger(const std::vector<std::string>& args) {
  po::options_description opts(
      "dptune ledger show FILE [--dataset NAME] [--json]\n\nEvery row of a privacy ledger "
      "(charges, maps recorded as not DP) and each dataset's composed epsilon\n\noptions");
  std::string dataset;
  opts.add_options()("help,h", "this help")("dataset", po::value(&dataset), "only this dataset")(
      "json", "machine-readable output");
  po::variables_map vm;
  const auto file = parse_show("ledger", opts, args, vm);
  if (!file) return kOk;
  if (!fs::exists(*file)) throw dptune::ConfigError(*file + ": no ledger here");
  dptune::host::Ledger ledger(*file);
  const auto datasets = ledger.read(dataset);
  if (!dataset.empty() && datasets.empty())
    throw dptune::ConfigError(*file + ": no dataset '" + dataset + "' in this ledger");
  if (vm.count("json")) {
    dptune::host::JsonWriter w(std::cout);
    w.begin_object().key("datasets").begin_array();
    for (const auto& d : datasets) {
      double spent = d.entries.empty() ? 0.0 : d.entries.back().total_epsilon;
      w.begin_object().key("dataset").value(d.name);
      w.key("budget").begin_object().key("epsilon").value(d.budget.epsilon);
      w.key("delta").value(d.budget.delta).end_object();
      w.key("spent_epsilon").value(spent);
      w.key("remaining_epsilon").value(std::max(0.0, d.budget.epsilon - spent));
      w.key("entries").begin_array();
      for (const auto& e : d.entries) {
        w.begin_object().key("id").value(e.id).key("time").value(e.time).key("kind").value(e.kind);
        w.key("study_id").value(e.study_id).key("study_dir").value(e.study_dir);
        if (e.kind == "charge" || e.kind == "supplement" || e.kind == "reservation") {
          w.key("event").value(e.event).key("epsilon").value(e.epsilon);
          w.key("delta").value(e.delta);
        }
        w.key("total_epsilon").value(e.total_epsilon).key("note").value(e.note).end_object();
      }
      w.end_array().end_object();
    }
    w.end_array().end_object();
    std::cout << "\n";
    return kOk;
  }
  for (const auto& d : datasets) {
    const double spent = d.entries.empty() ? 0.0 : d.entries.back().total_epsilon;
    std::cout << "dataset '" << d.name << "': budget (epsilon, delta) = ("
              << significant(d.budget.epsilon) << ", " << significant(d.budget.delta)
              << "), composed epsilon " << significant(spent) << ", remaining "
              << significant(std::max(0.0, d.budget.epsilon - spent)) << "\n";
    for (const auto& e : d.entries) {
      std::cout << "  #" << e.id << " " << e.time << " " << e.kind << " study " << e.study_id
                << " (" << e.study_dir << ")\n";
      if (e.kind == "charge" || e.kind == "supplement" || e.kind == "reservation")
        std::cout << "      epsilon " << significant(e.epsilon) << " at delta "
                  << significant(e.delta) << ": " << e.event << "; composed total "
                  << significant(e.total_epsilon) << "\n";
      else
        std::cout << "      " << e.note << "\n";
    }
  }
  return kOk;
}

}  // namespace dptune::cli
