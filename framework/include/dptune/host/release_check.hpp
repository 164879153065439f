// The neighbouring-release checker ("The test that catches the class"): flattens every
// public artifact of a `dptune run` (stdout, stderr, summary.json, model.json, every other file of
// the output folder except the opt-in SENSITIVE ones) into field -> value, and checks that every
// field differing between runs on neighbouring datasets (or with another seed) is a declared DP
// output of the private tuner, or, for the removal of a record, a function of the public size n.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dptune::host::release_check {

/// Field name -> value text.  Field names: `stdout:<label>#<k>` (the k-th line outside the release
/// block whose label, the text before an early ':', is <label>: `stdout:note#2`),
/// `stdout.release:<line>` (the block that starts `Released (differentially private):`, numbered
/// from 1), `stderr:<label>#<k>`, `<file>.json:<key.path[i]>`, `<file>:<line>` (other text files),
/// `files:<name>` (present).
using Fields = std::map<std::string, std::string>;

/// JSON text (valid YAML flow; yaml-cpp parses it) flattened to `prefix + key.path[i]` -> scalar.
/// Only for files dptune wrote: yaml-cpp 0.7 can hang on some malformed input.
Fields flatten_json(const std::string& prefix, const std::string& text);

/// Console text as `stream:<label>#<k>` lines; the release block (only on stdout) as
/// `stream.release:<n>`.
Fields flatten_console(const std::string& stream, const std::string& text);

/// report.html as `<name>:<k>` lines (k counts the lines outside the release) and, between the
/// markers `<!-- dptune:release:begin -->` and `<!-- dptune:release:end -->` (a private tuner's DP
/// outputs), `<name>.release:<n>`.
Fields flatten_html(const std::string& name, const std::string& text);

/// One run's public artifacts: `run_dir`/stdout.txt, stderr.txt and every file under
/// `run_dir`/`output_dir` except names containing "SENSITIVE" (the user's opt-in).
Fields collect_run(const std::filesystem::path& run_dir, const std::string& output_dir);

/// The seed a run was given is a public input: "seeded with 3", "seed=3", "seed: 3" (and the
/// summary's randomness.seed) read "<seed>" after this.
Fields normalise_seed(Fields fields);

/// True for a field a private tuner declares as a DP output: the `release` object of summary.json
/// and model.json, model.json's weights and biases, the console's and report.html's release
/// blocks, and whether model.json exists (a private tuner may output its data-independent default
/// instead); for a model kept in files (the command trainer's), the files under model/ and
/// model.json's trainer_params (the released candidate among the fixed parameters).
bool declared_dp_output(const std::string& field);

struct Violation {
  std::string field, pair, left, right;
  std::string describe() const;
};

/// Fields of `a` and `b` that differ and are not declared DP outputs (a missing field reads
/// "<absent>").  `pair` names the two runs in the messages, e.g. "(D,s) vs (D',s)".
std::vector<Violation> undeclared_differences(const Fields& a, const Fields& b,
                                              const std::string& pair);

/// Removal: a field that differs between D and D-i is allowed when it is equal in D-i and D-j (a
/// function of n = |D| - 1, the public size), or when it is a declared DP output.
std::vector<Violation> undeclared_removal_differences(const Fields& d, const Fields& minus_i,
                                                      const Fields& minus_j);

/// `s` as one single-quoted shell word.
std::string shell_quote(const std::string& s);

/// A run kept by run_in_fixed_folder: its folder and the command's exit status (std::system's).
struct FixedFolderRun {
  std::filesystem::path folder;
  int status = 0;
};

/// Runs `command` (a shell command line) in WORK/run, always the same path so that the paths a
/// run writes into its outputs agree between the runs compared, after `prepare` has written the
/// run's inputs there; its stdout and stderr go to stdout.txt and stderr.txt in that folder, which
/// is then moved to WORK/<label> (replacing an older one).
FixedFolderRun run_in_fixed_folder(
    const std::filesystem::path& work, const std::string& label,
    const std::function<void(const std::filesystem::path& folder)>& prepare,
    const std::string& command);

}  // namespace dptune::host::release_check
