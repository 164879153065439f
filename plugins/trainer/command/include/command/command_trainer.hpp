// The command trainer's logic, apart from its export (command.cpp) so that tests can drive it.
// SDK only.
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "command/protocol.hpp"
#include "dptune/model_files.hpp"
#include "dptune/plugin.hpp"

namespace dptune::command {

/// The protocol version dptune speaks (the request's "protocol"); docs/command-trainer.md.
inline constexpr int kProtocolVersion = 1;

/// A file the program consists of, with its SHA-256, for the report's trust statement.
struct ProgramFile {
  std::string path;
  std::string sha256;
};

/// Everything fixed for one candidate: what the plugin's constructor validated.
struct Config {
  std::vector<std::string> argv;  // resolved: file arguments made absolute
  std::string executable;         // argv[0] resolved (PATH or the pipeline's folder)
  std::vector<ProgramFile> files;
  EventTemplate event;
  double timeout = 600;
  std::string pipeline_dir;               // the program's working directory; empty: dptune's
  std::string keep_dir;                   // empty: run folders are temporary
  Params hyperparameters;                 // the vocabulary's values, sent to the program
  std::map<std::string, double> numbers;  // numeric hyperparameters, for the template
  std::string noise;                      // "fast" or "secure": what the program draws
  Params params;                          // as the trainer received them (ModelExport)

  /// "privacy depends on the external program honouring the declared event" with the files.
  std::string trust_statement() const;
};

/// The candidate hyperparameters dptune passes through (a schema cannot accept arbitrary names).
const std::vector<std::string>& vocabulary();
/// Public sizes a template may use besides the vocabulary's numbers.
const std::set<std::string>& public_size_names();

ParamSchema command_schema();
/// Validates `params` (program found, template parsed, variables known).  Throws InvalidArgument.
std::shared_ptr<const Config> make_config(const Params& params);
/// The event one private run on `train_rows` rows declares.
DpEvent declared_event(const Config& config, std::size_t train_rows);
/// One run of the program on `data`.
TrainedModel train(const std::shared_ptr<const Config>& config, const Dataset& data,
                   TrainingContext& context);
/// A released model back from its files (Trainer::load_model): predicts by starting the program
/// with action "predict" on them.  Throws InvalidArgument for a release that is not this
/// trainer's kind or whose files are missing.
std::shared_ptr<const Model> load_model(const std::shared_ptr<const Config>& config,
                                        const ModelFiles& released);

/// Most files a program may declare as its model, and their largest total size.
inline constexpr std::size_t kMaxModelFiles = 64;
inline constexpr std::uintmax_t kMaxModelBytes = std::uintmax_t{1} << 30;

/// The train answer's "model_files" (docs/command-trainer.md, "train"): names relative to the run
/// folder `dir`, without "..", of regular files (not links) in it, at most kMaxModelFiles of at
/// most kMaxModelBytes together, no name twice.  Empty when the answer has none.  Throws
/// InvalidArgument naming the offending entry.
std::vector<std::string> model_files_of(const Json& answer, const std::filesystem::path& dir);

/// Removes the run folders `parent`/dptune-command-* that belong to no living process: owned by
/// this user, real folders (not links), and not locked — every dptune process holds an flock on
/// each of its temporary run folders until it ends, and the kernel releases it however the
/// process ends (kill -9 included).  A folder is removed while holding its lock, so a process
/// creating it at that moment notices and makes another.  Returns how many were removed.
std::size_t remove_stale_run_folders(const std::filesystem::path& parent);

/// Turns the program's standard output into its answer: the last non-empty line, a JSON object.
/// Throws InvalidArgument saying what is wrong.
Json answer_of(const std::string& out);

}  // namespace dptune::command
