// The report of a private tuner: its DP outputs in summary.json's `release` object and
// in the console's release block, and nothing that depends on K, the run count or run times
// elsewhere.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "report/report.hpp"
#include "temp_dir.hpp"

namespace {

using dptune_test::slurp;

/// A repetition-like result: K = 7 sensitive runs, the best one selected.
dptune::TuningResult private_result() {
  dptune::TuningResult r;
  for (std::size_t k = 0; k < 7; ++k) {
    dptune::Trial t;
    t.id = k;
    t.params = dptune::Params{{"lr", static_cast<double>(k + 1) / 10.0}};
    t.privacy.epsilon = 2.0;
    t.privacy.delta = 1e-5;
    t.utility_mean = t.utility_min = t.utility_max = 0.5 + 0.01 * static_cast<double>(k);
    t.repetitions = 1;
    t.seconds = 0.25;
    r.trials.push_back(t);
  }
  r.trials_sensitive = true;
  r.selected = r.trials[6];
  dptune::PrivacyGuarantee g;
  g.epsilon = 3.0;
  g.delta = 1e-5;
  r.guarantee = g;
  r.notes = {"K drawn from logarithmic",
             std::string(dptune::kDpOutputNote) + "stopped at level 0.56"};
  return r;
}

}  // namespace

TEST_CASE("a private tuner's summary.json holds its DP outputs only under release") {
  dptune_test::TempDir dir;
  dptune::host::PipelineConfig config;
  config.name = "release_test";
  config.output.dir = dir.path() / "out";
  const dptune::TuningResult result = private_result();
  std::ostringstream terminal;
  const dptune::host::ReportInput in{config, result, "seeded", false, "inline", 12.5, "data"};
  dptune::host::write_report(in, terminal);

  const YAML::Node json = YAML::Load(slurp(config.output.dir / "summary.json"));
  CHECK(json["release"]["selected"]["params"]["lr"].as<double>() == doctest::Approx(0.7));
  CHECK(json["release"]["selected"]["score"].as<double>() == doctest::Approx(0.56));
  REQUIRE(json["release"]["notes"].size() == 1);
  CHECK(json["release"]["notes"][0].as<std::string>() == "DP output: stopped at level 0.56");
  // K (7 trials), the run time and the selected run's index are nowhere else.
  CHECK_FALSE(json["selected"].IsDefined());
  CHECK_FALSE(json["trials_count"].IsDefined());
  CHECK_FALSE(json["seconds"].IsDefined());
  CHECK_FALSE(json["pareto_front"].IsDefined());
  REQUIRE(json["notes"].size() == 1);
  CHECK(json["notes"][0].as<std::string>() == "K drawn from logarithmic");

  const std::string out = terminal.str();
  CHECK(out.find("trials in") == std::string::npos);
  CHECK(out.find("12.5") == std::string::npos);
  CHECK(out.find("Released (differentially private):\n  selected: {lr: 0.7}  utility 0.56\n"
                 "  DP output: stopped at level 0.56\n\n") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(config.output.dir / "trials.SENSITIVE.csv"));
  CHECK_FALSE(std::filesystem::exists(config.output.dir / "run.SENSITIVE.json"));
}

TEST_CASE("a private tuner's run count and time go only to the opt-in SENSITIVE files") {
  dptune_test::TempDir dir;
  dptune::host::PipelineConfig config;
  config.name = "release_test";
  config.output.dir = dir.path() / "out";
  config.output.sensitive_trials = true;
  const dptune::TuningResult result = private_result();
  std::ostringstream terminal;
  const dptune::host::ReportInput in{config, result, "seeded", false, "inline", 12.5, "data"};
  dptune::host::write_report(in, terminal);

  const YAML::Node run = YAML::Load(slurp(config.output.dir / "run.SENSITIVE.json"));
  CHECK(run["trials_count"].as<int>() == 7);
  CHECK(run["seconds"].as<double>() == 12.5);
  CHECK(std::filesystem::exists(config.output.dir / "trials.SENSITIVE.csv"));
  // No public Pareto front or hypervolume built from the sensitive runs.
  CHECK_FALSE(std::filesystem::exists(config.output.dir / "pareto_front.csv"));
  CHECK_FALSE(std::filesystem::exists(config.output.dir / "pareto.svg"));
  const YAML::Node json = YAML::Load(slurp(config.output.dir / "summary.json"));
  CHECK_FALSE(json["pareto_front"].IsDefined());
  CHECK_FALSE(json["trials_count"].IsDefined());
  CHECK(terminal.str().find("Pareto front") == std::string::npos);
}

TEST_CASE("a map (trusted analysts) keeps its trial count, run time and selected trial") {
  dptune_test::TempDir dir;
  dptune::host::PipelineConfig config;
  config.name = "map_test";
  config.output.dir = dir.path() / "out";
  dptune::TuningResult result = private_result();
  result.trusted_analyst_only = true;
  result.trials_sensitive = false;
  std::ostringstream terminal;
  const dptune::host::ReportInput in{config, result, "seeded", false, "inline", 12.5, "data"};
  dptune::host::write_report(in, terminal);
  const YAML::Node json = YAML::Load(slurp(config.output.dir / "summary.json"));
  CHECK(json["trials_count"].as<int>() == 7);
  CHECK(json["seconds"].as<double>() == 12.5);
  CHECK(json["selected"]["id"].as<int>() == 6);
  CHECK_FALSE(json["release"].IsDefined());
  CHECK(terminal.str().find("7 trials in 12.5 s") != std::string::npos);
}

TEST_CASE("a simulation (no selection, no guarantee, no private data) is reported like a map") {
  dptune_test::TempDir dir;
  dptune::host::PipelineConfig config;
  config.name = "simulation_test";
  config.output.dir = dir.path() / "out";
  dptune::TuningResult result = private_result();
  result.selected.reset();
  result.guarantee.reset();
  result.trials_sensitive = false;
  std::ostringstream terminal;
  const dptune::host::ReportInput in{config, result, "seeded", false, "inline", 12.5, "data"};
  dptune::host::write_report(in, terminal);
  const YAML::Node json = YAML::Load(slurp(config.output.dir / "summary.json"));
  CHECK(json["trials_count"].as<int>() == 7);
  CHECK_FALSE(json["release"].IsDefined());
  CHECK(terminal.str().find("Released (differentially private):") == std::string::npos);
}

TEST_CASE(
    "the console: 5 significant figures, wrapped derivations under --verbose, loose epsilon") {
  dptune_test::TempDir dir;
  dptune::host::PipelineConfig config;
  config.name = "console_test";
  config.output.dir = dir.path() / "out";
  dptune::TuningResult result = private_result();
  result.selected->params =
      dptune::Params{{"lr", 0.09999999999999998}, {"epochs", std::int64_t{4}}};
  std::string derivation;
  for (int i = 0; i < 40; ++i) derivation += "step" + std::to_string(i) + " of the derivation; ";
  result.guarantee->derivation = derivation;
  result.guarantee->accountant = "rdp";
  result.guarantee->epsilon = 13.156789;
  auto console = [&](bool verbose) {
    std::ostringstream terminal;
    dptune::host::ReportInput in{config, result, "seeded", false, "inline", 12.5, "data"};
    in.verbose = verbose;
    dptune::host::write_report(in, terminal);
    return terminal.str();
  };
  const std::string quiet = console(false), loud = console(true);
  // Full precision stays in the files; the console shows 5 significant figures.
  CHECK(quiet.find("selected: {epochs: 4, lr: 0.1}") != std::string::npos);
  CHECK(quiet.find("0.09999999999999998") == std::string::npos);
  CHECK(slurp(config.output.dir / "summary.json").find("0.09999999999999998") != std::string::npos);
  CHECK(quiet.find("(epsilon, delta) = (13.157, 1e-05), accountant rdp\n") != std::string::npos);
  CHECK(quiet.find("step0 of") == std::string::npos);
  CHECK(quiet.find("dptune run --verbose") != std::string::npos);
  // Verbose: every word of the derivation, in lines of at most 100 characters.
  std::istringstream lines(loud);
  std::string line, joined;
  bool in_how = false;
  while (std::getline(lines, line)) {
    INFO(line);
    // The results line holds the output folder, whose length is the user's (here the test's
    // TMPDIR), not the report's.
    if (line.rfind("results: ", 0) != 0) CHECK(line.size() <= 100);
    if (line.rfind("  how: ", 0) == 0)
      in_how = true;
    else if (in_how && line.rfind("       ", 0) != 0)
      in_how = false;
    if (in_how) joined += line.substr(7) + " ";
  }
  CHECK(joined == derivation);
  // ε above 10 is explained: e^13.157 ≈ 5.2e5.
  CHECK(quiet.find("WARNING: epsilon = 13.16 > 10") != std::string::npos);
  CHECK(quiet.find("e^epsilon = 5.2e+05") != std::string::npos);
  result.guarantee->epsilon = 9.99;
  CHECK(console(false).find("WARNING: epsilon") == std::string::npos);
}
