// The fail-and-resume neighbour of the neighbouring-release test.  For one pipeline of the
// harness (any private tuner, any data layout) it swaps the algorithm for the test plugin
// flaky_trainer (tests/test_plugins/flaky_trainer.cpp: its second train() of a process throws) on
// a one-dimensional search space, adds a ledger, and runs `dptune run --seed S --threads 1`
//   on D: the study fails mid-study (one run trained, the second failed), then `--resume`: the
//         stored failure is replayed (no run trains again: the same draws), the public outputs
//         are the first process's (nothing released), and the ledger holds one charge;
//   on D' (one record replaced by an outlier): the same failure at the same point, and every
//         public field equal to D's unless it is a declared DP output (checker.hpp).
// With the mode `interrupt`, the flaky trainer's second train() raises SIGINT instead (an
// operator's Ctrl-C at a deterministic point) and nothing fails:
//   on D and on D': the study is interrupted (exit 130), then resumed with the command the first
//         process printed after "resume with:", verbatim, until it completes; what is printed and
//         stored after the interrupt, and after the resume, differs between D and D' only in
//         declared DP outputs, and the ledger holds one charge;
//   on D at its last run: the same study interrupted at its last train() instead (the secret
//         number of runs decides whether a signal comes after the last run started) looks the
//         same: exit 130, a hint that resumes it, outputs differing only in declared DP outputs.
// The mode `interrupt:KIND` runs the interrupt neighbour with the flaky trainer's kept model of
// that kind (class_zero by default; plain: not storable, numbers: exported, files: files that load
// back; files_removed: files, with the study's model copies removed before each resume).  The
// threshold kinds score the runs differently, so the selected run may lie on either side of the
// interrupt; the study interrupted at its second and at its last run must then be resumed to the
// same console, report and files, field by field (whether a resumed private study writes a model
// may not tell on which side of the interrupt the selected run lies), and the model must be
// written exactly when the kind is one the store keeps and its copies are there.
// Nothing here names a tuner: a pipeline added to pipelines/ or label_change/ gets this neighbour
// from the CMake glob.  A seed whose study finishes before its second run (a repetition tuner that
// drew K = 1) does not fail: the next seed is tried, on D only (the seed is public).
//
// Usage: dptune_neighbouring_fail_resume DPTUNE FLAKY_TRAINER_PLUGIN PIPELINE.yaml WORK_DIR
//        [fail|interrupt|interrupt:KIND]
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "checker.hpp"

namespace fs = std::filesystem;
using namespace dptune::neighbouring;

namespace {

constexpr std::size_t kRows = 160;
constexpr std::uint64_t kSeeds[] = {3, 11, 29, 41, 53, 67};

/// Gaussian classes from a fixed stream, labels cycling over the pipeline's declared classes.
std::vector<Row> base_data(const std::vector<int>& classes) {
  FixedNormals normal(20261128);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < kRows; ++i) {
    const int y = classes[i % classes.size()];
    rows.push_back({normal() + 1.5 * y, normal() - 1.0 * y, normal(), y});
  }
  return rows;
}

/// The pipeline with the flaky trainer on one float dimension and a ledger; everything else (data
/// and its layout, tuner, mechanism, accountant, utility, output) as the pipeline has it.
std::string failing_pipeline(const fs::path& pipeline, bool interrupt, std::int64_t interrupt_call,
                             const std::string& kept_model) {
  YAML::Node p = YAML::LoadFile(pipeline.string());
  YAML::Node algorithm;
  algorithm["use"] = "flaky_trainer";
  if (interrupt) {
    algorithm["params"]["interrupt_on_call"] = interrupt_call;
    algorithm["params"]["fail_on_call"] = 1000000;  // never
  } else {
    algorithm["params"]["fail_on_call"] = 2;
  }
  algorithm["params"]["calls_file"] = "calls.txt";
  if (kept_model != "class_zero") algorithm["params"]["kept_model"] = kept_model;
  p["algorithm"] = algorithm;
  YAML::Node space;
  space["x"]["float"].push_back(0.01);
  space["x"]["float"].push_back(1.0);
  space["x"]["log"] = true;
  p["search_space"] = space;
  p["ledger"]["path"] = "ledger.db";
  p["ledger"]["dataset"] = "neighbouring";
  p["ledger"]["budget"]["epsilon"] = 1.0e7;
  p["ledger"]["budget"]["delta"] = 1.0e-3;
  YAML::Emitter out;
  out << p;
  return out.c_str();
}

std::vector<int> declared_classes(const fs::path& pipeline) {
  const YAML::Node classes = YAML::LoadFile(pipeline.string())["data"]["params"]["classes"];
  std::vector<int> out;
  if (classes && classes.IsSequence())
    for (const auto& c : classes) out.push_back(c.as<int>());
  if (out.empty()) out = {0, 1};
  return out;
}

std::size_t lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Exit code of `command` run in `dir` (stdout and stderr to the files given).
int run_in(const fs::path& dir, const std::string& command, const std::string& out,
           const std::string& err) {
  const std::string full =
      "cd " + shell_quote(dir.string()) + " && " + command + " >" + out + " 2>" + err;
  const int status = std::system(full.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

struct Context {
  fs::path dptune, plugin, pipeline, work;
  std::string name;
  std::vector<std::string> failures;
  bool interrupt = false;
  std::int64_t interrupt_call = 2;        // the train() call that raises SIGINT (mode interrupt)
  std::string kept_model = "class_zero";  // the flaky trainer's kept_model
  bool remove_copies = false;             // the study's model copies removed before a resume
  void fail(const std::string& what) { failures.push_back(what); }
};

/// What resuming may change and nothing else: the markers that say so.
Fields without_resume_markers(Fields fields) {
  for (auto& [key, value] : fields)
    for (const std::string& marker :
         {std::string("(replayed from the study store, not run again) "),
          std::string(" when this study started (not again on resume)")})
      for (auto at = value.find(marker); at != std::string::npos; at = value.find(marker))
        value.erase(at, marker.size());
  return fields;
}

/// One study on `rows` with `seed` in WORK/run: the first process, then `--resume` when asked.
/// The folder is then kept as WORK/<label>.  Returns the first process's fields and exit code.
struct Study {
  int code = 0, resume_code = 0;
  std::size_t calls = 0, calls_after_resume = 0, charges = 0;
  Fields first, resumed;
  std::string resume_stderr;
  std::string resume_command;  // interrupt: what the first process printed after "resume with:"
};

/// The command after "resume with: " in `text` ("" when none), to run verbatim.
std::string resume_hint(const std::string& text) {
  const std::string marker = "resume with: ";
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) return {};
  const std::size_t end = text.find('\n', at);
  return text.substr(at + marker.size(),
                     end == std::string::npos ? std::string::npos : end - at - marker.size());
}

Study run_study(Context& c, const std::vector<Row>& rows, std::uint64_t seed, bool resume,
                const std::string& label) {
  const fs::path dir = c.work / "run";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "pipeline.yaml")
      << failing_pipeline(c.pipeline, c.interrupt, c.interrupt_call, c.kept_model);
  write_csv(dir / "data.csv", rows);
  const std::string run = shell_quote(c.dptune.string()) +
                          " run pipeline.yaml --no-progress --threads 1 --seed " +
                          std::to_string(seed) + " --plugin-path " + shell_quote(c.plugin.string());
  Study s;
  s.code = run_in(dir, run, "stdout.txt", "stderr.txt");
  s.calls = lines_of(dir / "calls.txt");
  s.first = normalise_seed(collect_run(dir, "out"));
  if (resume) {
    // The resumed process's console goes to the same names (the checker reads those), after the
    // first process's were collected.
    fs::rename(dir / "stdout.txt", dir / "stdout.first.txt");
    fs::rename(dir / "stderr.txt", dir / "stderr.first.txt");
    if (c.remove_copies) fs::remove_all(dir / "out" / "study-models");
    std::string resume_command = run + " --resume";
    if (c.interrupt) {
      // The hint the operator is told to follow, followed verbatim (it names dptune by the path
      // it was started with, which this folder resolves the same way).
      s.resume_command =
          resume_hint(text_of(dir / "stderr.first.txt") + "\n" + text_of(dir / "stdout.first.txt"));
      if (!s.resume_command.empty()) resume_command = s.resume_command;
    }
    s.resume_code = run_in(dir, resume_command, "stdout.txt", "stderr.txt");
    s.calls_after_resume = lines_of(dir / "calls.txt");
    s.resumed = normalise_seed(collect_run(dir, "out"));
    s.resume_stderr = text_of(dir / "stderr.txt");
    const std::string ledger = shell_quote(c.dptune.string()) + " ledger show ledger.db --json";
    run_in(dir, ledger, "ledger.json", "ledger.err");
    const std::string rows_text = text_of(dir / "ledger.json");
    for (auto at = rows_text.find("\"kind\""); at != std::string::npos;
         at = rows_text.find("\"kind\"", at + 1))
      ++s.charges;
  }
  const fs::path kept = c.work / label;
  fs::remove_all(kept);
  fs::rename(dir, kept);
  return s;
}

/// The seed of kSeeds whose study on D reaches its second run, and that study.
std::pair<std::uint64_t, Study> first_reaching_seed(Context& c, const std::vector<Row>& rows,
                                                    bool resume, int expected_code) {
  for (std::uint64_t candidate : kSeeds) {
    Study s = run_study(c, rows, candidate, resume, "D_s");
    if (s.code == expected_code || s.calls >= 2) return {candidate, s};
  }
  throw std::runtime_error("no seed made the study reach its second run");
}

constexpr int kSigintExit = 130;  // 128 + SIGINT, as a shell reports it

/// `fields` with the flaky trainer's interrupt_on_call value blanked: the one setting in which the
/// studies interrupted at different runs differ on purpose (it shows in the resolved config).
Fields without_interrupt_call(Fields fields) {
  const std::string key = "interrupt_on_call: ";
  for (auto& [name, value] : fields) {
    // model.json's trainer_params (a model kept in files names the trainer's parameters)
    if (name.size() >= 18 && name.compare(name.size() - 18, 18, ".interrupt_on_call") == 0)
      value = "N";
    for (auto at = value.find(key); at != std::string::npos; at = value.find(key, at + 1)) {
      std::size_t end = at + key.size();
      while (end < value.size() && std::isdigit(static_cast<unsigned char>(value[end]))) ++end;
      value.replace(at + key.size(), end - at - key.size(), "N");
    }
  }
  return fields;
}

/// A resumed study writes model.json exactly when the tuner releases one (the uninterrupted study
/// `whole` wrote one), its kept model is of a kind the store keeps, and the copies were not
/// removed.
void check_model_written(Context& c, const Study& whole, const Study& s, const std::string& which) {
  if (c.kept_model == "class_zero") return;
  const bool expected = whole.first.count("files:model.json") > 0 &&
                        (c.kept_model == "numbers" || c.kept_model == "files") && !c.remove_copies;
  const bool written = s.resumed.count("files:model.json") > 0;
  if (written != expected)
    c.fail("the study on D " + which + (written ? " wrote" : " did not write") +
           " model.json after the resume, kept_model " + c.kept_model +
           (c.remove_copies ? " with its copies removed" : ""));
}

/// The same study on D interrupted at its last run instead of its second.  Whether a signal comes
/// before or after the last run started depends on the tuner's secret number of runs K, so the
/// two must look alike: the same exit code and hint, public outputs that differ only in declared
/// DP outputs, and the same outputs once resumed with the printed hint.  (A study whose whole run
/// trains twice compares the second run with itself.)
void interrupted_at_last_run(Context& c, const std::vector<Row>& d, std::uint64_t seed,
                             const Study& at_second) {
  c.interrupt_call = 1000000;  // never: how many runs the whole study trains
  const Study whole = run_study(c, d, seed, false, "D_whole");
  c.interrupt_call = static_cast<std::int64_t>(whole.calls);
  const Study at_last = run_study(c, d, seed, true, "D_last");
  c.interrupt_call = 2;
  const std::string which =
      "the study on D interrupted at its last run (" + std::to_string(whole.calls) + ")";
  if (whole.code != 0) c.fail("the uninterrupted study on D exited " + std::to_string(whole.code));
  if (at_last.code != kSigintExit)
    c.fail(which + " exited " + std::to_string(at_last.code) +
           ", expected 130 as when interrupted at its second: the exit code tells K");
  if (at_last.resume_command.empty()) c.fail(which + " printed no \"resume with:\" command");
  if (at_last.resume_code != 0)
    c.fail("the printed resume command of " + which + " exited " +
           std::to_string(at_last.resume_code) + ": " + at_last.resume_stderr);
  for (const auto& v : undeclared_differences(
           without_interrupt_call(at_second.first), without_interrupt_call(at_last.first),
           "(D,s) interrupted at its second and at its last run"))
    c.fail(v.describe());
  // The same data and seed: the same runs and the same selected run, so every field, declared DP
  // outputs included (model.json's presence among them), must be the same after either resume.
  const Fields second = without_interrupt_call(without_resume_markers(at_second.resumed));
  const Fields last = without_interrupt_call(without_resume_markers(at_last.resumed));
  for (const auto& [key, value] : second) {
    const auto it = last.find(key);
    if (it == last.end() || it->second != value)
      c.fail("field '" + key +
             "' differs between (D,s) resumed after the interrupt at its second " +
             "and at its last run: '" + value + "' and '" +
             (it == last.end() ? std::string("<absent>") : it->second) + "'");
  }
  for (const auto& [key, value] : last)
    if (second.count(key) == 0)
      c.fail("field '" + key + "' is written only when (D,s) is resumed after the interrupt at " +
             "its last run");
  check_model_written(c, whole, at_second, "interrupted at its second run");
  check_model_written(c, whole, at_last, "interrupted at its last run");
}

/// The interrupt neighbour (mode `interrupt`, see the top of the file).
int interrupt_neighbour(Context& c) {
  fs::create_directories(c.work);
  const std::vector<Row> d = base_data(declared_classes(c.pipeline));
  std::vector<Row> outlier = d;
  outlier[0] = {40.0, -40.0, 40.0, d[1].label};
  const auto [seed, on_d] = first_reaching_seed(c, d, true, kSigintExit);
  const Study on_neighbour = run_study(c, outlier, seed, true, "Dprime_s");
  for (const Study* s : {&on_d, &on_neighbour}) {
    const std::string which = s == &on_d ? "D" : "D'";
    if (s->code != kSigintExit)
      c.fail("the interrupted study on " + which + " exited " + std::to_string(s->code) +
             ", expected 130");
    if (s->resume_command.empty())
      c.fail("the interrupted study on " + which + " printed no \"resume with:\" command");
    if (s->resume_code != 0)
      c.fail("the printed resume command on " + which + " exited " +
             std::to_string(s->resume_code) + ": " + s->resume_stderr);
    if (s->charges != 1)
      c.fail("the ledger on " + which + " holds " + std::to_string(s->charges) +
             " rows after the resume, not 1");
  }
  for (const auto& v :
       undeclared_differences(on_d.first, on_neighbour.first, "(D,s) and (D',s), both interrupted"))
    c.fail(v.describe());
  for (const auto& v : undeclared_differences(without_resume_markers(on_d.resumed),
                                              without_resume_markers(on_neighbour.resumed),
                                              "(D,s) and (D',s), both resumed"))
    c.fail(v.describe());
  interrupted_at_last_run(c, d, seed, on_d);
  std::cout << c.name << ": seed " << seed << ", " << on_d.first.size()
            << " public fields after the interrupt, " << on_d.resumed.size()
            << " after the resume, in " << c.work.string() << "/{D_s,Dprime_s}\n";
  for (const auto& f : c.failures) std::cout << "FAIL " << c.name << ": " << f << "\n";
  if (!c.failures.empty()) return 1;
  std::cout << c.name
            << ": interrupted and resumed with the printed command, the outputs on D and D' "
               "differ only in declared DP outputs\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::cerr << "usage: dptune_neighbouring_fail_resume DPTUNE FLAKY_TRAINER PIPELINE.yaml WORK "
                 "[fail|interrupt]\n";
    return 2;
  }
  Context c{fs::absolute(argv[1]),
            fs::absolute(argv[2]),
            fs::absolute(argv[3]),
            fs::absolute(argv[4]),
            fs::path(argv[3]).stem().string(),
            {},
            argc == 6 && std::string(argv[5]).rfind("interrupt", 0) == 0};
  if (c.interrupt && std::string(argv[5]).size() > 10) {
    c.kept_model = std::string(argv[5]).substr(10);
    if (c.kept_model == "files_removed") {
      c.kept_model = "files";
      c.remove_copies = true;
    }
    c.name += " (" + std::string(argv[5]).substr(10) + ")";
  }
  try {
    if (c.interrupt) return interrupt_neighbour(c);
    fs::create_directories(c.work);
    const std::vector<Row> d = base_data(declared_classes(c.pipeline));
    std::vector<Row> outlier = d;
    outlier[0] = {40.0, -40.0, 40.0, d[1].label};  // far out, with another record's label

    // A public seed whose study on D reaches its second run (the one that fails).
    std::uint64_t seed = 0;
    Study on_d;
    for (std::uint64_t candidate : kSeeds) {
      on_d = run_study(c, d, candidate, true, "D_s");
      if (on_d.code != 0 || on_d.calls >= 2) {
        seed = candidate;
        break;
      }
    }
    if (seed == 0) throw std::runtime_error("no seed made the study reach its second run");
    if (on_d.code != 1)
      c.fail("the study on D exited " + std::to_string(on_d.code) + ", expected 1 (failed)");
    if (on_d.calls != 2)
      c.fail("the study on D trained " + std::to_string(on_d.calls) +
             " times, expected 2 (one run stored, the second failed)");
    // Resume replays the stored failure: the same exit, no run trained again, one charge, and
    // the same public outputs but for the markers that say it was replayed.
    if (on_d.resume_code != on_d.code)
      c.fail("--resume exited " + std::to_string(on_d.resume_code) + ", the first process " +
             std::to_string(on_d.code));
    if (on_d.calls_after_resume != on_d.calls)
      c.fail("--resume trained again (" + std::to_string(on_d.calls_after_resume - on_d.calls) +
             " calls): a failed private run was redrawn");
    if (on_d.resume_stderr.find("replayed from the study store") == std::string::npos)
      c.fail("--resume does not say that it replayed the stored failure");
    if (on_d.charges != 1)
      c.fail("the ledger holds " + std::to_string(on_d.charges) + " rows after the resume, not 1");
    for (const auto& v :
         undeclared_differences(without_resume_markers(on_d.first),
                                without_resume_markers(on_d.resumed), "(D,s) and its --resume"))
      c.fail(v.describe());

    // The neighbour: the same failure at the same point, nothing else that differs.
    const Study on_neighbour = run_study(c, outlier, seed, false, "Dprime_s");
    if (on_neighbour.code != on_d.code || on_neighbour.calls != on_d.calls)
      c.fail("on D' the study exited " + std::to_string(on_neighbour.code) + " after " +
             std::to_string(on_neighbour.calls) + " runs, on D " + std::to_string(on_d.code) +
             " after " + std::to_string(on_d.calls));
    for (const auto& v : undeclared_differences(on_d.first, on_neighbour.first,
                                                "(D,s) and (D',s), both failing mid-study"))
      c.fail(v.describe());

    std::cout << c.name << ": seed " << seed << ", " << on_d.first.size()
              << " public fields of the failed study in " << c.work.string() << "/{D_s,Dprime_s}\n";
    for (const auto& f : c.failures) std::cout << "FAIL " << c.name << ": " << f << "\n";
    if (!c.failures.empty()) return 1;
    std::cout << c.name
              << ": the failure is replayed on resume (no run trained again, one charge) and "
                 "the failed study's outputs on D and D' differ only in declared DP outputs\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << c.name << ": " << e.what() << "\n";
    return 1;
  }
}
